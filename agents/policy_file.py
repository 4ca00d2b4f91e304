"""Exported policy networks as plain agents: a ``.rllib`` file that ``agents.load`` opens.

The format is read here, in the agents layer, so ``agents.load`` needs no integration;
``mendikot_env.integrations.rllib`` writes it (and re-exports this module as
``mendikot_env.integrations.policy_file``).

An RLlib-trained policy is saved as the weights of its actor (an MLP torso and a linear
policy head) plus the rules it was trained for, in one ``numpy.savez`` archive. Playing it
needs only numpy: no ray and no torch, so the arena, the AEC env and ``mendikot play``
take it like any other agent::

    agent = agents.load("runs/band/agent.rllib", Rules.preset("band"))

File layout: ``meta`` (a JSON string: format, version, rules, activation, layer count),
then ``w0, b0, w1, b1, ...`` with ``w_k`` of shape (in, out); the last layer is the
policy head (53 logits).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mendikot_env.cards import NUM_ACTIONS, is_integer
from mendikot_env.observation import observation_layout
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

from .base import check_batch, check_trained_for

SUFFIX = ".rllib"
FORMAT = "mendikot-policy-mlp"
VERSION = 1
# What the meta must hold besides its format tag (an older file may lack the version: 0).
META_KEYS = ("rules", "activation", "n_layers")
# The meta's values, as save_policy_file writes them: (key, test its value passes, the rule a
# failing value breaks, said after "{path} has {key} {value}; "). The activation is checked
# with the layers, by MLPPolicyAgent.
META_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("version", lambda v: is_integer(v) and v <= VERSION, f"this package reads whole numbers up to {VERSION}"),
    ("rules", lambda v: isinstance(v, dict), "they must be a JSON object of Rules fields"),
    ("n_layers", lambda v: is_integer(v) and v >= 1, "a policy has a whole number of layers, at least 1"),
)
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

    Raises:
        PolicyFileError: an unknown activation, no layers, or layers that are not finite numbers
            chaining the rules' observation to 53 logits (checked here, not at the first act).
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
        self.obs_size = observation_layout(rules).size
        _check_layers(layers, activation, self.obs_size)
        self.layers = [(np.array(w, np.float32), np.array(b, np.float32)) for w, b in layers]
        self.rules = rules
        self.activation = activation
        self.greedy = greedy
        self.name = name
        self.rng = make_rng(seed)

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


def _check_layers(layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str, obs_size: int) -> None:
    """Refuse ``layers`` and ``activation`` that cannot play, naming the first thing found.

    The layers must be finite numbers that chain ``obs_size`` inputs to 53 logits: a bad file
    would otherwise fail at its first act with a numpy shape error naming nothing.
    """
    if problem := _layers_problem(layers, activation, obs_size):
        raise PolicyFileError(problem)


def _layers_problem(layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str, obs_size: int) -> str:
    """What makes ``layers`` unplayable (the first thing found), or "" when nothing does."""
    if activation not in ACTIVATIONS:
        return f"unknown activation {activation!r}; known: {list(ACTIVATIONS)}"
    if len(layers) == 0:
        return "a policy needs at least one layer (the last gives the 53 logits), got none"
    width = obs_size
    for k, (weight, bias) in enumerate(layers):
        w, b = np.asarray(weight), np.asarray(bias)
        if not all(np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer) for a in (w, b)):
            return f"layer {k} holds {w.dtype} weights and {b.dtype} biases; both must be numbers"
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            return f"layer {k} holds NaN or infinite weights (a diverged network); it cannot play"
        last = k == len(layers) - 1
        out = NUM_ACTIONS if last else (w.shape[1] if w.ndim == 2 else "n")
        if w.shape != (width, out) or b.shape != (out,):
            source = "the observation's width" if k == 0 else f"layer {k - 1}'s outputs"
            return (
                f"layer {k} has weight {w.shape} and bias {b.shape}; it needs weight ({width}, {out}) and bias "
                f"({out},): {width} inputs ({source}){', 53 logits out (the last layer)' if last else ''}"
            )
        width = out
    return ""


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
    """The metadata and the (weight, bias) layers of a policy file (the layers' shapes are
    checked by :class:`MLPPolicyAgent`).

    Raises:
        PolicyFileError: a missing, corrupt or foreign file, or meta without what a policy needs.
    """
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            problem = _meta_problem(meta)
            layers = [] if problem else [(data[f"w{k}"], data[f"b{k}"]) for k in range(meta["n_layers"])]
    except (OSError, KeyError, ValueError, json.JSONDecodeError, zipfile.BadZipFile) as error:
        problem = f"is not a readable policy file: {_read_failure(error)}"
    if problem is not None:
        raise PolicyFileError(f"{path} {problem}")
    return meta, layers


def _meta_problem(meta: object) -> str | None:
    """What is wrong with a file's meta (the first thing found), or None: a hand-edited or
    foreign file fails when it is loaded, naming itself, not with a KeyError or at the first act."""
    if not isinstance(meta, dict):
        return f"is not a {FORMAT} file (its meta is a JSON {type(meta).__name__}, not an object)"
    if meta.get("format") != FORMAT:
        return f"is not a {FORMAT} file (format {meta.get('format')!r})"
    if missing := [key for key in META_KEYS if key not in meta]:
        return f"lacks {missing} in its meta; it was not written by save_policy_file"
    for key, test, rule in META_FIELDS:
        value = meta.get(key, 0)  # only the version may be absent
        if not test(value):
            return f"has {key} {value!r}; {rule}"
    return None


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
    try:
        trained = Rules.from_dict(meta["rules"])
    except (TypeError, ValueError) as error:
        raise PolicyFileError(f"{path} has rules this package cannot play: {error}") from None
    check_trained_for(path, trained, rules, PolicyFileError)
    try:
        return MLPPolicyAgent(
            layers, rules or trained, activation=meta["activation"], seed=seed, name=Path(path).parent.name or "rllib"
        )
    except PolicyFileError as error:
        raise PolicyFileError(f"{path} does not hold a usable policy: {error}") from None
