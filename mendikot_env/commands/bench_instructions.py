"""``mendikot bench --instructions``: machine instructions per step, counted by valgrind.

Timings on a shared or virtual machine drift by a factor of two from minute to minute with
the same code; an instruction count does not. Each measure replays a fixed set of hands
(the same actions every run) under ``valgrind --tool=callgrind`` twice, with ``hands`` and
with ``2 * hands`` hands, so that the difference leaves out Python's start and the
imports. Garbage collection is off during the replay, numpy's BLAS runs on one thread and
the hash seed is fixed: two runs of the same code agree within about 0.1% (tens to a few
hundred instructions per step). Fewer instructions is not always less time (memory
traffic is not counted), but at a batch of one, where numpy's fixed per-call cost
dominates, the two move together.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
from pettingzoo import AECEnv

from .. import core
from ..env import env as wrapped_env
from ..env import raw_env
from ..observation import ObservationEncoder
from ..rules import Rules

# What each measure replays for one step, as the speed table's B = 1 rows.
MEASURES = {
    "core": "core (legal set + recorded play)",
    "core+obs": "core + acting seat's observation",
    "raw": "AEC env.step, raw_env()",
    "wrapped": "AEC env.step, wrapped env()",
    "connect_four_v3": "PettingZoo connect_four_v3",
}
# PettingZoo's own classic env, stepped in the same loop as the AEC rows: the yardstick.
YARDSTICK = "connect_four_v3"


def connect_four() -> AECEnv:
    """PettingZoo's ``connect_four_v3`` env (imported here: only the bench needs it).

    Its module imports pygame, which only draws its renders; without pygame installed a
    stand-in module is lent for the import (the bench never renders).
    """
    name = "pettingzoo.classic.connect_four.connect_four"  # what connect_four_v3 gives, without its warning
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != "pygame":
            raise
        sys.modules["pygame"] = types.ModuleType("pygame")
        try:
            module = importlib.import_module(name)
        finally:
            del sys.modules["pygame"]
    return module.env()


PLANNED_DEALS = 3  # the replay cycles through this many recorded hands


def _planned_hands(rules: Rules) -> list[list[np.ndarray]]:
    """The actions of a few random legal hands at B = 1, deal seeds 0, 1, 2."""
    rng = np.random.default_rng(0)
    plans = []
    for seed in range(PLANNED_DEALS):
        state, actions = core.new_hand(rules, np.random.default_rng(seed)), []
        while not state.done.all():
            actions.append(core.random_legal_actions(core.legal_bits(state), rng))
            core.step(state, actions[-1])
        plans.append(actions)
    return plans


def _planned_games(env: AECEnv) -> list[list[np.ndarray]]:
    """The actions of a few random legal games of ``env`` (connect_four_v3), as for hands."""
    rng = np.random.default_rng(0)
    plans = []
    for seed in range(PLANNED_DEALS):
        env.reset(seed=seed)
        actions = []
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
            else:
                actions.append(rng.choice(np.flatnonzero(observation["action_mask"]), size=1))
                env.step(int(actions[-1][0]))
        plans.append(actions)
    return plans


def replay(rules: Rules, measure: str, hands: int) -> int:
    """Play ``hands`` planned hands through ``measure``; return the steps taken.

    The fixed work that valgrind counts: no timing, no randomness, collection off.
    ``measure`` is one of :data:`MEASURES` (the bench command runs each of them).
    """
    encoder = ObservationEncoder(rules)
    env = None
    if measure in ("raw", "wrapped", YARDSTICK):
        env = connect_four() if measure == YARDSTICK else raw_env(rules) if measure == "raw" else wrapped_env(rules)
        env.reset(seed=0)
    plans = _planned_games(env) if measure == YARDSTICK else _planned_hands(rules)
    gc.collect()
    gc.disable()
    steps = 0
    try:
        for hand in range(hands):
            seed = hand % PLANNED_DEALS
            if env is not None:
                env.reset(seed=seed)
                for action in plans[seed]:
                    env.last()
                    env.step(int(action[0]))
                for _ in env.agent_iter():  # every agent steps None at the end
                    env.last()
                    env.step(None)
                    steps += 1
                steps += len(plans[seed])
                continue
            state = core.new_hand(rules, np.random.default_rng(seed))
            for action in plans[seed]:
                bits = core.legal_bits(state)
                if measure == "core+obs":
                    encoder.encode(state, state.current, legal=bits)
                core.step(state, action, check=False)
            steps += len(plans[seed])
    finally:
        gc.enable()
    return steps


def count(rules: Rules, measure: str, hands: int) -> tuple[int, int]:
    """(instructions, steps) of a whole Python run of :func:`replay` under callgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise FileNotFoundError("--instructions needs valgrind on the PATH (Debian/Ubuntu: apt install valgrind)")
    # The worker imports this very package, first on its path: `python -c` would otherwise
    # put the current directory first, and another checkout there would be measured.
    package_root = str(Path(__file__).resolve().parents[2])  # the folder holding mendikot_env/
    worker = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from mendikot_env.rules import Rules; "
        "from mendikot_env.commands.bench_instructions import replay; "
        "print('steps', replay(Rules(**json.loads(sys.argv[2])), sys.argv[3], int(sys.argv[4])))"
    )
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    run = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", worker,
         package_root, json.dumps(dataclasses.asdict(rules)), measure, str(hands)],
        capture_output=True, text=True, env=environment, check=False,
    )  # fmt: skip
    return parse_counts(run.stdout, run.stderr, run.returncode)


def parse_counts(stdout: str, stderr: str, returncode: int) -> tuple[int, int]:
    """(instructions, steps) from a callgrind run's output; a clear error if it failed."""
    collected = re.search(r"Collected\s*:\s*(\d+)", stderr)
    steps = re.search(r"^steps (\d+)$", stdout, re.M)
    if returncode != 0 or collected is None or steps is None:
        program_lines = [line for line in (stdout + stderr).splitlines() if line and not line.startswith("==")]
        tail = "\n".join(program_lines[-10:])  # valgrind's own "==pid==" lines left out
        raise ChildProcessError(f"the callgrind run failed (exit status {returncode}):\n{tail}")
    return int(collected.group(1)), int(steps.group(1))


def instructions_per_step(rules: Rules, measure: str, hands: int = 6) -> float:
    """Instructions per step of ``measure``: the runs with ``2 * hands`` and ``hands`` hands,
    subtracted, so Python's start and the imports cancel out."""
    small, small_steps = count(rules, measure, hands)
    large, large_steps = count(rules, measure, 2 * hands)
    return (large - small) / (large_steps - small_steps)
