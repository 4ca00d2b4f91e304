"""Agents for mendikot_env: one batched interface (see ``agents.base``) and a factory.

>>> from mendikot_env import Rules
>>> agent = make("hard", Rules())          # or "random", "easy", "medium"
>>> agent = load("medium", Rules(), seed=3)  # a name, a run folder or a checkpoint path
"""

from .base import Agent, RandomAgent, check_plays, masked_uniform, seed_agent
from .ensemble import EnsembleAgent
from .registry import AGENT_NAMES, CHECKPOINT_LOADERS, load, make, register_checkpoint_loader
from .rule_based import LEVELS, RuleBasedAgent

__all__ = [
    "AGENT_NAMES",
    "CHECKPOINT_LOADERS",
    "LEVELS",
    "Agent",
    "EnsembleAgent",
    "RandomAgent",
    "RuleBasedAgent",
    "check_plays",
    "load",
    "make",
    "masked_uniform",
    "register_checkpoint_loader",
    "seed_agent",
]
