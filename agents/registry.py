"""Agents by name (``"random"``, ``"easy"``, ``"medium"``, ``"hard"``) or, later, by checkpoint path.

``make(name, rules, seed)`` builds a named agent. ``load(spec, rules, seed)`` also accepts a
path to a trained checkpoint: training code registers a loader for its file suffix with
:func:`register_checkpoint_loader` (the hook for trained agents), and ``load`` dispatches
to it, so the arena, the league and ``mendikot play`` take checkpoints without changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mendikot_env.rules import Rules

from .base import Agent, RandomAgent
from .rule_based import LEVELS, RuleBasedAgent

AGENT_NAMES = ("random", *LEVELS)

# File suffix (e.g. ".pt") -> function(path, rules, seed) returning an Agent.
CheckpointLoader = Callable[[Path, Rules, int | None], Agent]
CHECKPOINT_LOADERS: dict[str, CheckpointLoader] = {}


def register_checkpoint_loader(suffix: str, loader: CheckpointLoader) -> None:
    """Let :func:`load` open checkpoints whose file name ends in ``suffix`` (e.g. ``".pt"``)."""
    if not suffix.startswith("."):
        raise ValueError(f"checkpoint suffix must start with a dot, got {suffix!r}")
    CHECKPOINT_LOADERS[suffix] = loader


def make(name: str, rules: Rules, seed: int | None = None) -> Agent:
    """A named agent: ``random`` or a rule-based level (``easy``, ``medium``, ``hard``).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    key = name.strip().lower()
    if key == "random":
        return RandomAgent(seed=seed)
    if key in LEVELS:
        return RuleBasedAgent(rules, key, seed=seed)
    raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENT_NAMES)} (or a checkpoint path)")


def load(spec: str, rules: Rules, seed: int | None = None) -> Agent:
    """An agent from a name (see :func:`make`) or a checkpoint path (see the module docstring)."""
    if spec.strip().lower() in AGENT_NAMES:
        return make(spec, rules, seed)
    path = Path(spec)
    looks_like_path = path.suffix != "" or "/" in spec or path.exists()
    if not looks_like_path:
        return make(spec, rules, seed)  # raises with the list of names
    loader = CHECKPOINT_LOADERS.get(path.suffix)
    if loader is None:
        known = ", ".join(sorted(CHECKPOINT_LOADERS)) or "none registered yet"
        raise ValueError(
            f"no checkpoint loader for {spec!r} (suffix {path.suffix or '(none)'!r}; loaders: {known}); "
            f"known agent names: {', '.join(AGENT_NAMES)}"
        )
    if not path.exists():
        raise ValueError(f"checkpoint {spec!r} does not exist")
    agent = loader(path, rules, seed)
    if not hasattr(agent, "name"):
        agent.name = path.stem  # type: ignore[attr-defined]
    return agent
