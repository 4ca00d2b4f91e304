"""Bridges to outside RL libraries, each behind an optional extra.

* ``mendikot_env.integrations.rllib`` (extra ``rllib``): the env, a masked PPO module and
  league self-play on Ray RLlib; ``mendikot train-rllib``. It writes its policy as a
  ``.rllib`` file, which :func:`agents.load` reads with numpy alone (:mod:`agents.policy_file`,
  also importable as ``mendikot_env.integrations.policy_file``).
"""
