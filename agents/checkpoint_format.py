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
from pathlib import Path
from typing import Any

import torch

FORMAT = "mendikot-checkpoint"
VERSION = 1
REQUIRED_KEYS = ("format", "version", "kind", "rules", "network", "model")
# What a resume reads besides REQUIRED_KEYS ("agent_rngs" is optional: older runs lack it).
TRAINING_KEYS = ("optimizer", "numpy_rng", "torch_rng", "torch_global_rng", "counters", "pool", "args")
COUNTERS = ("iteration", "samples", "hands", "decisions", "seconds")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, foreign or of the wrong version."""


def load_checkpoint(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Load and check a checkpoint (``weights_only=True``).

    Args:
        path: the checkpoint file.
        kind: expected kind (``"training"`` or ``"agent"``), or None for either.

    Raises:
        CheckpointError: naming the file and what is wrong with it.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    verify_archive(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a damaged file
        raise CheckpointError(
            f"{path} is not a readable mendikot checkpoint (corrupt or foreign file): {_load_failure(error)}"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a mendikot checkpoint (no '{FORMAT}' format tag)")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{path} has checkpoint version {payload.get('version')!r}; this package reads {VERSION}")
    missing = [key for key in REQUIRED_KEYS if key not in payload]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}; it was not written by mendikot train")
    if kind is not None and payload["kind"] != kind and not (kind == "agent" and payload["kind"] == "training"):
        raise CheckpointError(f"{path} is a {payload['kind']!r} checkpoint, expected {kind!r}")
    check_network_payload(payload, path)
    if kind == "training":
        check_training_payload(payload, path)
    return payload


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


def verify_archive(path: Path) -> None:
    """Check every member's CRC: ``torch.load`` does not, so flipped bytes inside a tensor
    would load silently and change weights or optimiser state. Files that are not zip
    archives are left to ``torch.load``, which says what is wrong with them."""
    if not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except Exception as error:  # zipfile raises several types for damaged headers
        raise CheckpointError(f"{path} is not a readable mendikot checkpoint (corrupt archive: {error})") from None
    if bad is not None:
        raise CheckpointError(f"{path} is corrupt: member {bad!r} fails its CRC check (damaged on disk or in transfer)")


def check_network_payload(payload: dict[str, Any], path: Path) -> None:
    """What every loader reads (rules, network spec, weights), so a hand-edited or foreign-tool
    checkpoint fails here with its name, not with an AttributeError deep in the loader.

    Raises:
        CheckpointError: naming the file, the malformed entry and what it must be.
    """
    for key in ("rules", "network", "model"):
        if not isinstance(payload[key], dict):
            raise CheckpointError(
                f"{path} has a malformed {key!r}: it is of type {type(payload[key]).__name__}, "
                "where a checkpoint holds a dict"
            )
    foreign = next((name for name, value in payload["model"].items() if not isinstance(value, torch.Tensor)), None)
    if foreign is not None:
        value = payload["model"][foreign]
        raise CheckpointError(
            f"{path} has a malformed 'model': its entry {foreign!r} is of type {type(value).__name__}, "
            "where a model maps parameter names to tensors"
        )
    # A diverged network plays (its argmax over NaN is the first legal card) and would be
    # measured as if it were an agent; refused instead. A few milliseconds for a large model.
    broken = next((name for name, value in payload["model"].items() if not bool(torch.isfinite(value).all())), None)
    if broken is not None:
        raise CheckpointError(
            f"{path} holds NaN or infinite weights in {broken!r} (a diverged network); it cannot play or resume"
        )


def check_training_payload(payload: dict[str, Any], path: Path) -> None:
    """What a resume needs beyond an agent's keys, so a damaged or hand-edited training
    checkpoint fails here with its name, not with a KeyError deep in the loop."""
    missing = [key for key in TRAINING_KEYS if key not in payload]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}; it cannot resume a training run")
    shapes = {"counters": dict, "args": dict, "pool": list}  # network and model: check_network_payload
    wrong = [key for key, kind in shapes.items() if not isinstance(payload[key], kind)]
    if wrong:
        raise CheckpointError(f"{path} has malformed {wrong}; it cannot resume a training run")
    absent = [key for key in COUNTERS if key not in payload["counters"]]
    if absent:
        raise CheckpointError(f"{path} has counters without {absent}; it cannot resume a training run")
