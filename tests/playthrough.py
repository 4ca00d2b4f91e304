"""Golden playthroughs in OpenSpiel's style: one seeded hand per variant, as readable text.

Each transcript plays one hand through the wrapped AEC env (``mendikot_env.env``) with a
seeded random policy and writes, at every turn: the acting agent, its observation piece
by piece (named by ``env.unwrapped.observation_layout``), the legal actions, the action
taken, and the rewards and terminations after the step; then each agent's closing
``None`` step and the hand's result. ``tests/test_playthroughs.py`` compares them exactly
with the files in ``tests/playthroughs/``, so any change to dealing, the rules, the
observation or the env's rewards shows up as a readable diff.

After an intended change, regenerate every transcript with one command (from the
repository root) and review the diff before committing it:

    python tests/playthrough.py --regenerate

``python tests/playthrough.py`` alone compares and lists the transcripts that differ;
``python tests/playthrough.py --show NAME`` prints one transcript.

Card sets are written grouped by suit, spades first and high cards first (``S AQ9 H T``,
``-`` for none); the pieces of a relative seat (``trick``, ``played``, ``voids``) are
written per relative seat (``0`` = the acting agent, ``1`` = the next to play, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import mendikot_env
from mendikot_env.observation import SUIT_PIECES  # written as suit letters (voids per seat)

DIRECTORY = Path(__file__).resolve().parent / "playthroughs"
REGENERATE = "python tests/playthrough.py --regenerate"
SEED = 33

# One hand per variant: every rules preset with four players, and the standard game with
# six and eight. The app preset scores with the tiered tariff, so it shows reward="points".
VARIANTS: dict[str, dict[str, Any]] = {
    "standard": {"rules": "standard"},
    "standard_6p": {"rules": "standard", "n_players": 6},
    "standard_8p": {"rules": "standard", "n_players": 8},
    "band": {"rules": "band"},
    "band_auto": {"rules": "band_auto"},
    "open": {"rules": "open"},
    "app": {"rules": "app", "reward": "points"},
    "dehla_pakad": {"rules": "dehla_pakad"},
}

# Pieces holding numbers (fractions or flags of size one); every other non-card piece is
# 0/1 flags, written as the indices that are set. A new fractional piece must be added here
# (the generator refuses to write a fraction as flags).
SCALAR_PIECES = frozenset({"trick_tens", "asked", "tricks", "middle", "match_score"})

RANKS = "23456789TJQKA"
SUITS = "CDHS"
ASK = 52


def card_set(flags: np.ndarray) -> str:
    """52 card flags as ``S AQ9 H T C 52`` (spades first, high first), ``-`` for none."""
    groups = []
    for suit in reversed(range(4)):
        ranks = [RANKS[r] for r in reversed(range(13)) if flags[13 * suit + r]]
        if ranks:
            groups.append(SUITS[suit] + " " + "".join(ranks))
    return " ".join(groups) if groups else "-"


def action_name(action: int) -> str:
    """A card's name (``TS``) or ``ask`` for action 52."""
    return "ask" if action == ASK else RANKS[action % 13] + SUITS[action // 13]


def flags_text(name: str, flags: np.ndarray) -> str:
    """Indices of the set flags of one row (suit letters for a suit piece), ``-`` for none."""
    if not np.isin(flags, (0.0, 1.0)).all():
        raise ValueError(f"piece {name!r} holds {flags.tolist()}, not 0/1 flags: add it to SCALAR_PIECES")
    on = np.flatnonzero(flags).tolist()
    if not on:
        return "-"
    return "".join(SUITS[i] for i in on) if name in SUIT_PIECES else ",".join(str(i) for i in on)


def piece_text(name: str, value: np.ndarray) -> str:
    """One observation piece, compactly: card names, numbers, or the set flags' indices.

    Rows of a per-seat card piece read ``0: S AQ | 1: -``; rows or numbers of a small piece ``0/2``.
    """
    if name in SCALAR_PIECES:
        return "/".join(f"{float(x):.4g}" for x in value.reshape(-1))
    if value.shape[-1] == 52:
        return (
            card_set(value) if value.ndim == 1 else " | ".join(f"{k}: {card_set(row)}" for k, row in enumerate(value))
        )
    return "/".join(flags_text(name, row) for row in value.reshape(-1, value.shape[-1]))


def observation_lines(layout: Any, observation: np.ndarray, width: int = 110) -> Iterator[str]:
    """The pieces of an observation vector in layout order: a line per card piece holding a
    card, then the other pieces as ``name=text`` side by side, wrapped at ``width``."""
    small: list[str] = []
    for name, value in layout.split(observation).items():
        text = piece_text(name, value)
        if value.shape[-1] == 52 and value.any():
            yield f"    {name:<10}{text}"
        else:
            small.append(f"{name}={text}")
    line = ""
    for item in small:
        if line and len(line) + 2 + len(item) > width:
            yield "    " + line
            line = ""
        line = f"{line}  {item}" if line else item
    if line:
        yield "    " + line


def seat_values(env: Any, values: dict[str, Any]) -> str:
    """A per-agent dict in seat order, as ``1 -1 ...`` (``F``/``T`` for booleans)."""
    shown = []
    for agent in env.possible_agents:
        value = values.get(agent)
        shown.append("." if value is None else "TF"[not value] if isinstance(value, bool) else f"{float(value):g}")
    return " ".join(shown)


def header(name: str, kwargs: dict[str, Any], env: Any) -> list[str]:
    """The variant, its rules, the seed and policy, and the observation's pieces (name, shape
    and offset; their prose lives in the observation module and is not pinned here)."""
    raw = env.unwrapped
    options = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return [
        f"# Mendikot playthrough: {name}",
        f"# regenerate with: {REGENERATE}",
        f"env: mendikot_env.env({options})",
        f"rules: {raw.rules.to_dict()}",
        f"seed: {SEED}; policy: uniform random legal action, numpy default_rng({SEED}).integers",
        f"agents: {' '.join(env.possible_agents)}",
        f"observation: {raw.observation_layout.size} float32; action_mask: 53 int8",
        "",
        "pieces: " + " ".join(f"{p.name}{list(p.shape)}@{p.start}" for p in raw.observation_layout.pieces.values()),
        "",
    ]


def transcript(name: str) -> str:
    """The playthrough text of one variant (the content of ``playthroughs/NAME.txt``)."""
    kwargs = VARIANTS[name]
    env = mendikot_env.env(**kwargs)
    env.reset(seed=SEED)
    layout = env.unwrapped.observation_layout
    policy = np.random.default_rng(SEED)
    lines = header(name, kwargs, env)
    for turn, agent in enumerate(env.agent_iter()):
        observation, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            lines.append(f"turn {turn}: {agent} is done: reward {float(reward):g}, steps None")
            lines.append(f"    info {info}")
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        action = legal[int(policy.integers(len(legal)))]
        lines.append(f"turn {turn}: {agent}")
        lines.extend(observation_lines(layout, observation["observation"]))
        lines.append(f"    legal     {' '.join(action_name(a) for a in legal)}")
        lines.append(f"  action {action_name(action)} ({action})")
        env.step(action)
        lines.append(f"  rewards {seat_values(env, env.rewards)}; terminations {seat_values(env, env.terminations)}")
    lines.append(f"end: agents {env.agents}; result {env.unwrapped.result}")
    return "\n".join(lines) + "\n"


def path_of(name: str) -> Path:
    """Where the checked-in transcript of a variant lives."""
    return DIRECTORY / f"{name}.txt"


def main(argv: list[str] | None = None) -> int:
    """Regenerate, show, or (by default) compare the transcripts; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite every transcript in tests/playthroughs/")
    parser.add_argument("--show", choices=sorted(VARIANTS), help="print one transcript")
    args = parser.parse_args(argv)
    if args.show:
        sys.stdout.write(transcript(args.show))
        return 0
    if args.regenerate:
        DIRECTORY.mkdir(exist_ok=True)
        for name in VARIANTS:
            path_of(name).write_text(transcript(name), encoding="utf-8")
            print(f"wrote {path_of(name)}")
        return 0
    differ = [
        name for name in VARIANTS if not path_of(name).exists() or path_of(name).read_text("utf-8") != transcript(name)
    ]
    for name in differ:
        print(f"{path_of(name)} differs; review the change, then run: {REGENERATE}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
