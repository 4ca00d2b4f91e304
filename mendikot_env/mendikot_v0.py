"""Versioned import name, PettingZoo style: ``from mendikot_env import mendikot_v0``."""

from .env import env, raw_env

__all__ = ["env", "raw_env"]
