"""Bridges to outside RL libraries, each behind an optional extra.

* ``mendikot_env.integrations.rllib`` (extra ``rllib``): the env, a masked PPO module and
  league self-play on Ray RLlib; ``mendikot train-rllib``.
* ``mendikot_env.integrations.policy_file`` (numpy only): exported ``.rllib`` policies as
  agents. Importing this package registers that suffix with ``agents.load``.
"""

from . import policy_file

__all__ = ["policy_file"]
