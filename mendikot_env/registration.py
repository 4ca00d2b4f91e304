"""Gymnasium ids for the single-agent views, so ``gymnasium.make`` and the libraries that
take an env id (SB3's ``make_vec_env``, RL Zoo, CleanRL scripts) reach them by name.

Importing ``mendikot_env`` registers them:

* ``"mendikot_env/Mendikot-v0"``: :class:`~mendikot_env.wrappers.MendikotGymEnv` from
  ``gymnasium.make`` (keywords as its constructor takes them: ``rules``, ``others``,
  ``seat``, ``control``, ``reward``, ``render_mode`` and rules fields), and
  :class:`~mendikot_env.wrappers.MendikotVectorEnv` from ``gymnasium.make_vec`` (one
  batched core for all ``num_envs`` games).

Example:
    >>> import gymnasium
    >>> import mendikot_env
    >>> env = gymnasium.make("mendikot_env/Mendikot-v0", rules="band")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, info["action_mask"].shape
    ((864,), (53,))
    >>> envs = gymnasium.make_vec("mendikot_env/Mendikot-v0", num_envs=8)
    >>> type(envs).__name__, envs.reset(seed=0)[0].shape
    ('MendikotVectorEnv', (8, 864))
"""

from __future__ import annotations

import gymnasium

GYM_ENV_ID = "mendikot_env/Mendikot-v0"


def register_gymnasium_envs() -> None:
    """Register :data:`GYM_ENV_ID` once (importing the package again leaves it as it is)."""
    if GYM_ENV_ID in gymnasium.registry:
        return
    gymnasium.register(
        id=GYM_ENV_ID,
        entry_point="mendikot_env.wrappers:MendikotGymEnv",
        vector_entry_point="mendikot_env.wrappers:MendikotVectorEnv",
    )
