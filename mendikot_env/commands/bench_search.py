"""``mendikot bench --search``: the search agent's strength and cost against K.

For each K, the win rate of ``search:k=K`` against an opponent in the duplicate arena (95%
interval on per-deal-pair scores) and its CPU time per decision at batch one: seeded hands
played one game at a time through the core, the search at the even seats and the opponent at
the odd ones, every ``act()`` call of the search on its single observation timed with
``time.process_time`` (CPU time of the process, so a loaded machine slows it less than wall
time would), forced moves included.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import core
from ..arena import duplicate_arena, play_hands
from ..observation import reads_history
from ..rules import Rules

COLUMNS = ("K", "win rate", "CI low", "CI high", "ms/decision", "deals")


@dataclass(frozen=True)
class SearchRow:
    """One K of the table: strength against the opponent and cost per decision."""

    k: int
    win_rate: float
    ci_low: float
    ci_high: float
    ms_per_decision: float
    deals: int


def ms_per_decision(rules: Rules, search: object, opponent: object, hands: int = 2, seed: int = 1) -> float:
    """CPU milliseconds per ``search.act()`` call on one observation, over ``hands`` seeded hands.

    Args:
        rules: the rules played.
        search: the agent timed (at the even seats).
        opponent: the agent at the odd seats (not timed).
        hands: hands played, one at a time (hand ``i`` is dealt from ``seed + i``).
        seed: seed of the first hand's deal.

    Returns:
        The mean process CPU time of the search's decisions, in milliseconds.
    """
    timed = _Timed(search)
    for hand in range(hands):
        play_hands(core.new_hands(rules, 1, rng=seed + hand), [timed, opponent], np.array([[0, 1]]))
    return 1000 * timed.spent / max(timed.calls, 1)


class _Timed:
    """An agent that plays as ``agent`` does and sums the CPU time of its ``act`` calls."""

    def __init__(self, agent: object) -> None:
        self.agent, self.name = agent, getattr(agent, "name", "search")
        self.reads_history = reads_history(agent)  # so play_hands gives it what the agent reads
        self.spent, self.calls = 0.0, 0

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        start = time.process_time()
        actions = self.agent.act(observations, masks)  # type: ignore[attr-defined]
        self.spent += time.process_time() - start
        self.calls += 1
        return actions


def sweep(rules: Rules, ks: list[int], deals: int, opponent: str, seed: int = 1, hands: int = 2) -> list[SearchRow]:
    """One :class:`SearchRow` per K: ``search:k=K`` against ``opponent`` on ``deals`` deal pairs.

    Args:
        rules: the rules played.
        ks: the deals per decision to measure.
        deals: duplicate deal pairs per K.
        opponent: the opponent's agent name (``agents.make``).
        seed: seed of the arena's deals, of the agents and of the timed hands.
        hands: seeded hands timed at batch one per K.

    Returns:
        The rows, in the order of ``ks``.
    """
    from agents import make

    rows = []
    for k in ks:
        search, other = make(f"search:k={k}", rules, seed=seed), make(opponent, rules, seed=seed)
        result = duplicate_arena(rules, search, other, deals, seed=seed)
        ms = ms_per_decision(rules, search, make(opponent, rules, seed=seed), hands, seed)
        rows.append(SearchRow(k, result.win_rate, result.ci_low, result.ci_high, ms, result.deals))
        print(format_row(rows[-1]), flush=True)
    return rows


def header() -> str:
    """The table's column names, aligned as :func:`format_row` prints the rows."""
    return f"{COLUMNS[0]:>5}" + "".join(f"{name:>12}" for name in COLUMNS[1:])


def format_row(row: SearchRow) -> str:
    """One line of the table: rates in percent, time in ms."""
    rates = "".join(f"{100 * x:>11.1f}%" for x in (row.win_rate, row.ci_low, row.ci_high))
    return f"{row.k:>5}{rates}{row.ms_per_decision:>12.1f}{row.deals:>12}"


def figure_classes() -> tuple[type, type]:
    """matplotlib's Agg canvas and Figure: no pyplot, so a notebook's backend is left alone.

    Raises:
        ValueError: matplotlib is not installed (the command prints it as one line).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ValueError(f"--plot needs matplotlib ({error}): pip install matplotlib") from error
    return FigureCanvasAgg, Figure


def plot(rows: list[SearchRow], path: Path, title: str) -> Path:
    """Win rate (with its 95% interval) and ms per decision against K, one PNG of two panels.

    Raises:
        ValueError: matplotlib is not installed (see :func:`figure_classes`).
    """
    canvas_class, figure_class = figure_classes()
    ks = [row.k for row in rows]
    fig = figure_class(figsize=(9, 4))
    canvas_class(fig)
    rate, cost = fig.subplots(1, 2)
    rate.plot(ks, [row.win_rate for row in rows], marker="o")
    rate.fill_between(ks, [row.ci_low for row in rows], [row.ci_high for row in rows], alpha=0.2)
    rate.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    rate.set(xscale="log", xlabel="K (deals per decision)", ylabel="duplicate win rate (95% CI)", ylim=(0, 1))
    cost.plot(ks, [row.ms_per_decision for row in rows], marker="o")
    cost.set_ylim(0, 1.1 * max(row.ms_per_decision for row in rows))
    cost.set(xscale="log", xlabel="K (deals per decision)", ylabel="CPU ms per decision (batch 1)")
    for ax in (rate, cost):
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
    fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # as --json and --save make theirs
    fig.savefig(path, dpi=100)
    return Path(path)


def run(rules: Rules, ks: list[int], deals: int, opponent: str, seed: int, plot_path: Path | None) -> int:
    """The ``--search`` mode: print the table (a row as each K finishes), then save the plot."""
    if plot_path is not None:
        figure_classes()  # a missing matplotlib is an error before the sweep, not after it
    from agents import make

    make(opponent, rules)  # an unknown opponent too
    from agents.search import parse_search_spec

    for k in ks:  # a K the spec refuses, before the smaller ones have run
        parse_search_spec(f"search:k={k}")
    print(f"search:k=K against {opponent}: {deals} duplicate deal pairs per K (seed {seed}); CPU ms per decision")
    print(header())
    rows = sweep(rules, ks, deals, opponent, seed)
    if plot_path is not None:
        print(f"plot: {plot(rows, plot_path, f'search:k=K against {opponent}, trump={rules.trump!r}')}")
    return 0
