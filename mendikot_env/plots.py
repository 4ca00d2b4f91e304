"""Matplotlib figures of the notebooks (every interval drawn, every axis labelled).

Kept in the package, beside :mod:`mendikot_env.analysis`, so that the notebooks only
call and read and the figures are tested. Needs matplotlib (the ``train`` or ``dev``
extra); each function draws on a given axis or makes its own and returns the axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .analysis import wilson
from .arena import Z95, LeagueResult
from .cards import RANK_LETTERS, SUIT_SYMBOLS
from .observation import Layout

PieceSpec = str | tuple[str, int]
REL_SEATS = ("me", "next", "partner", "previous")  # relative seats for four players


def _axis(ax: Any = None, figsize: tuple[float, float] = (7, 4)) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    return ax


def card_grid(plane: np.ndarray) -> np.ndarray:
    """A (52,) card plane as a (4, 13) grid: rows spades, hearts, diamonds, clubs; ranks 2..A."""
    return np.asarray(plane, dtype=np.float64).reshape(4, 13)[::-1]


def _piece_title(spec: PieceSpec, n: int) -> str:
    if isinstance(spec, str):
        return spec
    name, k = spec
    seat = REL_SEATS[k] if n == 4 and k < 4 else f"+{k}"
    return f"{name} ({seat})"


def plot_card_planes(layout: Layout, observation: np.ndarray, pieces: Sequence[PieceSpec], columns: int = 3) -> Any:
    """Heat-maps of card planes of one observation vector: a piece name (``"hand"``) or a
    piece and a relative seat (``("played", 1)``) per panel. Returns the figure."""
    import matplotlib.pyplot as plt

    rows = int(np.ceil(len(pieces) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 1.7 * rows), squeeze=False)
    n = layout.pieces["trick"].shape[0]
    for ax, spec in zip(axes.flat, pieces, strict=False):
        name, k = (spec, None) if isinstance(spec, str) else spec
        plane = layout.view(observation, name)
        plane = plane if k is None else plane[k]
        ax.imshow(card_grid(plane), cmap="Greens", vmin=0, vmax=1, aspect="auto")
        ax.set_title(_piece_title(spec, n), fontsize=10)
        ax.set_xticks(range(13), list(RANK_LETTERS), fontsize=8)
        ax.set_yticks(range(4), list(SUIT_SYMBOLS[::-1]), fontsize=10)
        ax.set_xticks(np.arange(-0.5, 13), minor=True)
        ax.set_yticks(np.arange(-0.5, 4), minor=True)
        ax.grid(which="minor", color="white", linewidth=1)
        ax.tick_params(which="minor", length=0)
    for ax in list(axes.flat)[len(pieces) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_action_mask(mask: np.ndarray, ax: Any = None) -> Any:
    """The 53 actions: the 52 cards as a grid (1 = legal), and whether asking is legal."""
    ax = _axis(ax, (5, 1.8))
    mask = np.asarray(mask)
    ax.imshow(card_grid(mask[:52]), cmap="Oranges", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(13), list(RANK_LETTERS))
    ax.set_yticks(range(4), list(SUIT_SYMBOLS[::-1]))
    ax.set_title(f"legal actions (ask for the band card: {'legal' if mask[52] else 'not legal'})", fontsize=10)
    return ax


def interval_bars(
    labels: Sequence[str],
    intervals: Sequence[tuple[float, float, float]],
    ax: Any = None,
    percent: bool = True,
    reference: float | None = None,
    colour: str | Sequence[str] = "tab:blue",
    xlabel: str = "",
) -> Any:
    """Horizontal bars of means with their 95% intervals (error bars), one per label."""
    ax = _axis(ax, (7, 0.45 * len(labels) + 1.2))
    scale = 100 if percent else 1
    m = np.array([i[0] for i in intervals]) * scale
    lo = np.array([i[1] for i in intervals]) * scale
    hi = np.array([i[2] for i in intervals]) * scale
    y = np.arange(len(labels))[::-1]
    ax.barh(y, m, color=colour, alpha=0.75)
    ax.errorbar(m, y, xerr=np.maximum([m - lo, hi - m], 0), fmt="none", ecolor="black", capsize=4)
    ax.set_yticks(y, labels)
    if reference is not None:
        ax.axvline(reference * scale, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel or ("%" if percent else ""))
    return ax


def plot_win_matrix(result: LeagueResult, ax: Any = None) -> Any:
    """Win rate of each row agent against each column agent, with its 95% interval."""
    ax = _axis(ax, (1.5 * len(result.names) + 2, 1.2 * len(result.names) + 1.5))
    rate = np.where(np.isnan(result.win_rate), 0.5, result.win_rate)
    image = ax.imshow(100 * rate, cmap="RdBu", vmin=0, vmax=100)
    k = len(result.names)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            low, high = 100 * result.ci_low[i, j], 100 * result.ci_high[i, j]
            text = f"{100 * result.win_rate[i, j]:.1f}%\n[{low:.1f}, {high:.1f}]"
            dark = abs(result.win_rate[i, j] - 0.5) > 0.3
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(k), result.names)
    ax.set_yticks(range(k), result.names)
    ax.set_xlabel("column agent (opponent)")
    ax.set_ylabel("row agent")
    ax.set_title(f"duplicate win rate of the row agent, 95% CI ({result.deals} deal pairs per cell)")
    ax.figure.colorbar(image, ax=ax, label="win rate of the row agent (%)")
    return ax


def plot_ci_width(comparisons: Sequence[Any], ax: Any = None, max_pairs: int = 6000) -> Any:
    """Half-width of the 95% interval of a win rate against the deal pairs played, duplicate
    (solid) and plain random deals (dashed), from each comparison's measured spread."""
    ax = _axis(ax, (7, 4))
    pairs = np.geomspace(50, max_pairs, 60)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for c, comp in zip(colours, comparisons, strict=False):
        dup, plain = comp.std()
        name = f"{comp.a} vs {comp.b}"
        ax.plot(pairs, 100 * Z95 * dup / np.sqrt(pairs), color=c, label=f"{name}: duplicate")
        ax.plot(pairs, 100 * Z95 * plain / np.sqrt(pairs), color=c, linestyle="--", label=f"{name}: plain")
    for level in (1, 2):
        ax.axhline(level, color="grey", linewidth=0.7, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("deal pairs played (2 hands each)")
    ax.set_ylabel("95% CI half-width of the win rate (points)")
    ax.legend(fontsize=8)
    return ax


def plot_learning_curve(curve: Any, baselines: dict[str, dict[str, tuple[float, float, float]]] | None = None) -> Any:
    """Duplicate win rate of the learner (with its 95% band) against each evaluation
    opponent over training time, and the rule-based bots' rates as horizontal bands."""
    import matplotlib.pyplot as plt

    names = list(curve.rates)
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 3.8), squeeze=False)
    for ax, opp in zip(axes[0], names, strict=True):
        r = curve.rates[opp]
        ax.plot(curve.minutes, 100 * r[:, 0], marker="o", color="black", label="learner")
        ax.fill_between(curve.minutes, 100 * r[:, 1], 100 * r[:, 2], color="black", alpha=0.15)
        bots = (baselines or {}).items()
        for (bot, rates), colour in zip(bots, ["tab:green", "tab:orange", "tab:red"], strict=False):
            if opp in rates:
                m, lo, hi = rates[opp]
                ax.axhline(100 * m, color=colour, linewidth=1, label=f"{bot} (bot)")
                ax.axhspan(100 * lo, 100 * hi, color=colour, alpha=0.12)
        ax.axhline(50, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(f"against {opp}")
        ax.set_xlabel("training minutes")
        ax.set_ylabel("duplicate win rate (%), 95% CI")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_reveals(counts: Any, ax: Any = None, title: str = "") -> Any:
    """Stacked bars: hands whose face-down card came up in each trick, by who and how."""
    ax = _axis(ax, (7, 3.5))
    colours = {
        "opponents asked": "tab:red",
        "hider's side asked": "tab:blue",
        "opponents, automatically": "salmon",
        "hider's side, automatically": "lightblue",
    }
    tricks = np.arange(1, len(next(iter(counts.counts.values()))) + 1)
    bottom = np.zeros(tricks.size)
    for name, values in counts.counts.items():
        share = 100 * values / counts.hands
        if share.sum() == 0:
            continue
        ax.bar(tricks, share, bottom=bottom, color=colours.get(name), label=name)
        bottom += share
    # 95% Wilson interval on the share of hands revealed in each trick (all ways together).
    p, lo, hi = wilson(sum(counts.counts.values()), counts.hands)
    yerr = np.maximum([100 * (p - lo), 100 * (hi - p)], 0)  # rounding can make a zero-length side negative
    ax.errorbar(tricks, 100 * p, yerr=yerr, fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(tricks)
    ax.set_xlabel("trick in which the face-down card came up")
    ax.set_ylabel("% of hands")
    ax.set_title(title or f"when the band card is revealed ({counts.hands} hands)")
    ax.legend(fontsize=8)
    return ax


def plot_tens_histogram(outcomes: Any, ax: Any = None) -> Any:
    """Share of hands in which each side took 0..4 tens (with Wilson 95% intervals)."""
    ax = _axis(ax, (6, 3.5))
    width = 0.38
    for side, (name, colour) in enumerate(((outcomes.a, "tab:blue"), (outcomes.b, "tab:orange"))):
        counts = outcomes.tens_hist[side]
        total = counts.sum()
        iv = [wilson(c, int(total)) for c in counts]
        m = np.array([100 * i[0] for i in iv])
        lo = np.array([100 * i[1] for i in iv])
        hi = np.array([100 * i[2] for i in iv])
        x = np.arange(5) + (side - 0.5) * width
        ax.bar(x, m, width, color=colour, alpha=0.8, label=name)
        ax.errorbar(x, m, yerr=np.maximum([m - lo, hi - m], 0), fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(range(5))
    ax.set_xlabel("tens taken in a hand")
    ax.set_ylabel("% of hands")
    ax.legend()
    return ax
