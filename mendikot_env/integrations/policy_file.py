"""Exported policy networks as plain agents: a ``.rllib`` file that ``agents.load`` opens.

An RLlib-trained policy is saved as the weights of its actor (an MLP torso and a linear
policy head) plus the rules it was trained for, in one ``numpy.savez`` archive. Playing it
needs only numpy: no ray and no torch, so the arena, the AEC env and ``mendikot play``
take it like any other agent::

    import mendikot_env.integrations  # registers the ".rllib" loader
    agent = agents.load("runs/band/agent.rllib", Rules.preset("band"))

File layout: ``meta`` (a JSON string: format, version, rules, activation, layer count),
then ``w0, b0, w1, b1, ...`` with ``w_k`` of shape (in, out); the last layer is the
policy head (53 logits).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import check_batch
from agents.registry import register_checkpoint_loader
from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

SUFFIX = ".rllib"
FORMAT = "mendikot-policy-mlp"
VERSION = 1
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


class PolicyFileError(ValueError):
    """A policy file that is missing, corrupt, of another format or for other rules."""


class MLPPolicyAgent:
    """Plays a masked MLP policy (greedy by default) with numpy only.

    Args:
        layers: (weight (in, out), bias (out,)) pairs; the last one gives the 53 logits.
        rules: the rules the policy was trained for.
        activation: hidden-layer activation, ``"tanh"`` or ``"relu"``.
        greedy: play the most likely legal action; otherwise sample from the masked softmax.
        seed: seed of the sampling.
        name: the agent's name in arena tables.
    """

    def __init__(
        self,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        rules: Rules,
        activation: str = "tanh",
        greedy: bool = True,
        seed: int | None = None,
        name: str = "rllib",
    ) -> None:
        if activation not in ACTIVATIONS:
            raise PolicyFileError(f"unknown activation {activation!r}; known: {list(ACTIVATIONS)}")
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.rules = rules
        self.activation = activation
        self.greedy = greedy
        self.name = name
        self.rng = make_rng(seed)
        self.obs_size = obs_size = ObservationEncoder(rules).size
        if self.layers[0][0].shape[0] != obs_size or self.layers[-1][0].shape[1] != NUM_ACTIONS:
            raise PolicyFileError(
                f"network maps {self.layers[0][0].shape[0]} -> {self.layers[-1][0].shape[1]}, "
                f"but these rules need {obs_size} -> {NUM_ACTIONS}"
            )

    def logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) float32 logits with illegal actions at -inf.

        Raises:
            ValueError: observations or masks of the wrong shape, or a mask row with no
                legal action (its logits would all be -inf).
        """
        x, legal = check_batch(observations, masks, self.obs_size, self.rules.n_players)
        act = ACTIVATIONS[self.activation]
        for w, b in self.layers[:-1]:
            x = act(x @ w + b)
        w, b = self.layers[-1]
        return np.where(legal, x @ w + b, -np.inf).astype(np.float32)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.logits(observations, masks)
        if self.greedy:
            return logits.argmax(axis=1).astype(np.int64)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
        draws = self.rng.random((len(logits), 1))
        return np.minimum((cumulative < draws).sum(axis=1), NUM_ACTIONS - 1).astype(np.int64)

    def seed(self, seed: int | None) -> None:
        """Restart the sampling generator."""
        self.rng = make_rng(seed)


def save_policy_file(
    path: str | Path,
    layers: Sequence[tuple[np.ndarray, np.ndarray]],
    rules: Rules,
    activation: str = "tanh",
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``layers`` (weight (in, out), bias) and ``rules`` to ``path`` (suffix ``.rllib``)."""
    path = Path(path)
    if path.suffix != SUFFIX:
        raise ValueError(f"a policy file name must end in {SUFFIX!r}, got {path.name!r}")
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "rules": rules.to_dict(),
        "activation": activation,
        "n_layers": len(layers),
        **(extra or {}),
    }
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta))}
    for k, (w, b) in enumerate(layers):
        arrays[f"w{k}"] = np.asarray(w, np.float32)
        arrays[f"b{k}"] = np.asarray(b, np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:  # a file object: numpy adds no ".npz" to the name
        np.savez(handle, **arrays)
    return path


def read_policy_file(path: str | Path) -> tuple[dict[str, Any], list[tuple[np.ndarray, np.ndarray]]]:
    """The metadata and the (weight, bias) layers of a policy file."""
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("format") != FORMAT:
                raise PolicyFileError(f"{path} is not a {FORMAT} file (format {meta.get('format')!r})")
            if int(meta.get("version", 0)) > VERSION:
                raise PolicyFileError(f"{path} has version {meta['version']}; this package reads up to {VERSION}")
            layers = [(data[f"w{k}"], data[f"b{k}"]) for k in range(int(meta["n_layers"]))]
    except (OSError, KeyError, ValueError, json.JSONDecodeError, zipfile.BadZipFile) as error:
        if isinstance(error, PolicyFileError):
            raise
        raise PolicyFileError(f"{path} is not a readable policy file: {_read_failure(error)}") from None
    return meta, layers


def _read_failure(error: Exception) -> str:
    """Why numpy could not read the file, without its advice to load pickled data (which would
    run any code a foreign file holds): a policy file holds only arrays and JSON text."""
    if isinstance(error, zipfile.BadZipFile):
        return f"not an intact .npz archive ({error})"
    if isinstance(error, ValueError) and "pickle" in str(error):
        return "it holds pickled objects, which a policy file never does"
    return str(error)


def load_policy_file(path: str | Path, rules: Rules | None = None, seed: int | None = None) -> MLPPolicyAgent:
    """An agent from a policy file; ``rules`` (if given) must match the rules it was trained for.

    Raises:
        PolicyFileError: a missing, corrupt or foreign file, or rules whose hands differ
            (players, trump, reveal or collection; match scoring may differ).
    """
    meta, layers = read_policy_file(path)
    trained = Rules.from_dict(meta["rules"])
    differences = [] if rules is None else trained.hand_differences(rules)
    if differences:
        raise PolicyFileError(
            f"{path} was trained for hands played otherwise ({'; '.join(differences)}):"
            f" rules {trained.to_dict()}, not {rules.to_dict()}"
        )
    return MLPPolicyAgent(
        layers, rules or trained, activation=meta["activation"], seed=seed, name=Path(path).parent.name or "rllib"
    )


def _loader(path: Path, rules: Rules, seed: int | None) -> MLPPolicyAgent:
    return load_policy_file(path, rules, seed)


register_checkpoint_loader(SUFFIX, _loader)
