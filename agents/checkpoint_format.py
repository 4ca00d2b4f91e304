"""The checkpoint format of ``mendikot train``, and its reader (which agents and the trainer share).

A checkpoint is one ``torch.save`` dict of tensors and plain Python values, tagged with
``FORMAT`` and ``VERSION``, so it loads with ``torch.load(..., weights_only=True)`` (no
pickled code runs). ``kind`` is ``"agent"`` (weights, rules and the network's spec: what
:func:`agents.load` plays) or ``"training"`` (also the optimiser, the generators, the
counters, the opponent pool and the settings: what a resume continues). The trainer writes
them atomically (:mod:`mendikot_env.training.checkpoint`); this module reads and checks them,
once, at the boundary: everything inside trusts a payload it returned.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

FORMAT = "mendikot-checkpoint"
VERSION = 1
# The entries every checkpoint holds, and the type of each that the loaders read.
REQUIRED_KEYS = ("format", "version", "kind", "rules", "network", "model")
AGENT_ENTRIES = {"rules": dict, "network": dict, "model": dict}  # model: parameter name -> tensor
# What a resume reads besides (kind "training"): the entries, the type of those a resume takes
# apart, and the counters it continues. "agent_rngs" is optional: older runs lack it.
TRAINING_KEYS = ("optimizer", "numpy_rng", "torch_rng", "torch_global_rng", "counters", "pool", "args")
TRAINING_ENTRIES = {"counters": dict, "args": dict, "pool": list}
COUNTERS = ("iteration", "samples", "hands", "decisions", "seconds")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, foreign or of the wrong version."""


def load_checkpoint(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Load and check a checkpoint (``weights_only=True``).

    Args:
        path: the checkpoint file.
        kind: expected kind (``"training"`` or ``"agent"``; a training checkpoint also plays),
            or None for either.

    Returns:
        The payload, which every caller then trusts: the entries its kind needs are there and
        of the types above, and the weights are finite tensors.

    Raises:
        CheckpointError: naming the file and the first thing wrong with it.
    """
    path = Path(path)
    payload, problem = _read(path)
    problem = problem or next(_payload_problems(path, payload, kind), "")
    if problem:
        raise CheckpointError(problem)
    return payload


def _read(path: Path) -> tuple[Any, str]:
    """The payload of ``path`` and ``""``, or None and why it could not be read.

    Every member's CRC is checked first: ``torch.load`` does not, so flipped bytes inside a
    tensor would load silently and change weights or optimiser state. Files that are not zip
    archives are left to ``torch.load``, which says what is wrong with them.
    """
    if not path.is_file():
        return None, f"no checkpoint at {path}"
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
        except Exception as error:  # zipfile raises several types for damaged headers
            return None, f"{path} is not a readable mendikot checkpoint (corrupt archive: {error})"
        if bad is not None:
            return None, f"{path} is corrupt: member {bad!r} fails its CRC check (damaged on disk or in transfer)"
    try:
        return torch.load(path, map_location="cpu", weights_only=True), ""
    except Exception as error:  # torch raises many types for a damaged file
        return None, f"{path} is not a readable mendikot checkpoint (corrupt or foreign file): {_load_failure(error)}"


def _load_failure(error: Exception) -> str:
    """What ``torch.load`` found wrong, without its advice to retry with ``weights_only=False``
    or to allowlist globals (either would run any code a foreign file holds): a mendikot
    checkpoint holds only tensors and plain data, so it never needs them."""
    text = str(error)
    if "weights_only" not in text and "Weights only" not in text:
        return (text.strip().splitlines() or [type(error).__name__])[0]
    found = re.search(r"((?:Unsupported|Trying to load unsupported)[^\n]*?)(?:\. Please|\.?\n|\.?$)", text)
    what = f" ({found.group(1).strip()})" if found else ""
    if what.startswith(" (Unsupported operand"):  # not a pickle at all: bytes torch cannot read
        return f"not a file torch.save wrote{what}: damaged, or another kind of file"
    return f"it holds more than tensors and plain data{what}, which a mendikot checkpoint never does"


def _payload_problems(path: Path, payload: Any, kind: str | None) -> Iterator[str]:
    """What a loaded payload breaks of the format's rules, in the format's order: the caller
    takes the first, so each rule may assume that the ones before it held. A hand-edited or
    foreign-tool file fails with its name, not with a KeyError or an AttributeError deep in a
    loader or the training loop."""
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        yield f"{path} is not a mendikot checkpoint (no '{FORMAT}' format tag)"
    if payload.get("version") != VERSION:
        yield f"{path} has checkpoint version {payload.get('version')!r}; this package reads {VERSION}"
    if missing := [key for key in REQUIRED_KEYS if key not in payload]:
        yield f"{path} lacks {missing}; it was not written by mendikot train"
    if kind not in (None, payload["kind"]) and (kind, payload["kind"]) != ("agent", "training"):
        yield f"{path} is a {payload['kind']!r} checkpoint, expected {kind!r}"
    if wrong := next((key for key, expected in AGENT_ENTRIES.items() if not isinstance(payload[key], expected)), None):
        actual = type(payload[wrong]).__name__
        yield f"{path} has a malformed {wrong!r}: it is of type {actual}, where a checkpoint holds a dict"
    model = payload["model"]
    if foreign := next((name for name, value in model.items() if not isinstance(value, torch.Tensor)), None):
        yield (
            f"{path} has a malformed 'model': its entry {foreign!r} is of type {type(model[foreign]).__name__}, "
            "where a model maps parameter names to tensors"
        )
    # A diverged network plays (its argmax over NaN is the first legal card) and would be
    # measured as if it were an agent; refused instead. A few milliseconds for a large model.
    if broken := next((name for name, value in model.items() if not bool(torch.isfinite(value).all())), None):
        yield f"{path} holds NaN or infinite weights in {broken!r} (a diverged network); it cannot play or resume"
    if kind == "training":  # what a resume needs beyond an agent's entries
        if missing := [key for key in TRAINING_KEYS if key not in payload]:
            yield f"{path} lacks {missing}; it cannot resume a training run"
        if wrong := [key for key, expected in TRAINING_ENTRIES.items() if not isinstance(payload[key], expected)]:
            yield f"{path} has malformed {wrong}; it cannot resume a training run"
        if absent := [key for key in COUNTERS if key not in payload["counters"]]:
            yield f"{path} has counters without {absent}; it cannot resume a training run"
