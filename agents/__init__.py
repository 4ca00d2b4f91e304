"""Agents for mendikot_env: one batched interface (see ``agents.base``)."""

from .base import Agent, RandomAgent, masked_uniform, seed_agent

__all__ = ["Agent", "RandomAgent", "masked_uniform", "seed_agent"]
