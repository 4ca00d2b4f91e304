"""mendikot_env: Mendikot as a vectorised numpy rules core and a PettingZoo AEC environment.

>>> import mendikot_env
>>> env = mendikot_env.env("band")          # PettingZoo AEC env, wrapped
>>> rules = mendikot_env.Rules.preset("dehla_pakad", n_players=6)
>>> import gymnasium                          # single-agent views, registered on import
>>> gym_env = gymnasium.make("mendikot_env/Mendikot-v0", rules="band")
"""

from . import cards, core
from .env import env, raw_env
from .observation import ObservationEncoder, observation_layout
from .registration import GYM_ENV_ID, register_gymnasium_envs
from .rules import PRESETS, Rules

register_gymnasium_envs()

__all__ = [
    "GYM_ENV_ID",
    "PRESETS",
    "ObservationEncoder",
    "Rules",
    "cards",
    "core",
    "env",
    "observation_layout",
    "raw_env",
]
__version__ = "0.2.0"
