"""Numbers behind the notebooks: batched experiments with the bots and their intervals.

The notebooks stay thin (they call, tabulate and plot); every experiment they run lives
here, tested, so a result in a notebook can be reproduced from a script:

* intervals: :func:`wilson` (proportions), :func:`mean_ci` (scores in [0, 1], the
  arena's win-rate interval), :func:`mean_interval` (the one interval of a mean, which
  ``mean_ci`` is with bounds; from :mod:`mendikot_env.arena`) and :func:`paired_difference`
  (means over deals; a paired difference on the same deals removes the luck of the cards
  from a comparison);
* per-hand facts of many hands played on the batched core (:func:`play_deals`), on the
  same cards under other rules (:func:`redeal`), for band hukum research (who revealed
  the face-down card, in which trick: :func:`reveal_counts`);
* the variance reduction of duplicate deals (:func:`duplicate_vs_plain`), per-hand
  outcomes of a duplicate match-up (:func:`duplicate_outcomes`), and the learning curve
  of a training run (:func:`learning_curve`).

Example:
    >>> from agents import make
    >>> rules = Rules.preset("band")
    >>> facts = play_deals(deal(rules, 64, seed=0), make("hard", rules))
    >>> facts.hands
    64
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import check_plays

from . import core
from .arena import Z95, ArenaResult, deal_cards, duplicate_arena, mean_ci, mean_interval, play_hands
from .observation import ObservationEncoder
from .rules import Rules, resolve_rules
from .run_folder import parse_metrics_lines
from .seeding import derived_seed, make_rng

CHUNK = 2048  # hands played at once (bounds the memory of observations and bots)

# ------------------------------------------------------------------------------ intervals


def wilson(successes: Any, n: Any, z: float = Z95) -> tuple[Any, Any, Any]:
    """Share and its Wilson 95% interval (sound near 0 and 1, unlike the normal one).
    Takes numbers or arrays (element-wise).

    Raises:
        ValueError: a count of successes below 0 or above its trials (the share would not
            be a share: nan with RuntimeWarnings, or an interval outside [0, 1]).
    """
    k = np.asarray(successes, dtype=np.float64)
    trials = np.asarray(n, dtype=np.float64)
    bad = ~((k >= 0) & (k <= trials))  # ~: nan counts are refused too
    if bad.any():
        where = np.flatnonzero(np.broadcast_to(bad, np.broadcast_shapes(k.shape, trials.shape)))[0]
        k_bad, n_bad = np.broadcast_to(k, bad.shape).flat[where], np.broadcast_to(trials, bad.shape).flat[where]
        raise ValueError(f"wilson needs 0 <= successes <= n, got successes={k_bad:g} of n={n_bad:g}")
    m = np.maximum(trials, 1e-300)
    p = k / m
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    low, high = np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)
    if p.ndim == 0:
        return float(p), float(low), float(high)
    return p, low, high


def paired_difference(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``x - y`` over the same deals, with its 95% interval: the cards cancel.

    Raises:
        ValueError: ``x`` and ``y`` of different shapes (numpy would broadcast one value
            against all the other's deals, which pairs nothing).
    """
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape:
        raise ValueError(
            f"paired_difference needs x and y for the same deals (equal shapes), got {x.shape} and {y.shape}"
        )
    return mean_interval(x - y)


# ------------------------------------------------------------------------- hands in bulk


def deal(rules: Rules, hands: int, seed: int = 0) -> core.State:
    """``hands`` new deals (cards and dealers from ``seed``)."""
    return core.new_hands(rules, hands, make_rng(seed))


def redeal(state: core.State, rules: Rules | str | dict[str, Any], seed: int = 0) -> core.State:
    """The same cards and dealers as ``state``, as new hands under other ``rules`` (same
    number of players; a preset name or a dict of fields will do). An open draw's card
    comes from ``seed``.

    Raises:
        ValueError: ``rules`` for another number of players (``core.new_hands`` refuses
            the deals' shape, naming the shape these rules need).
    """
    rules = resolve_rules(rules)
    return core.new_hands(rules, state.batch_size, make_rng(seed), deals=deal_cards(state), dealers=state.dealer)


@dataclass
class HandFacts:
    """What happened in B finished hands, one entry per hand (arrays with the batch axis first)."""

    rules: Rules
    dealer: np.ndarray  # (B,) seat that dealt
    first: np.ndarray  # (B,) seat that led the first trick (the hider in band hukum)
    winner: np.ndarray  # (B,) winning team, -1 for a drawn hand
    tens: np.ndarray  # (B, 2) tens taken by team 0 and team 1
    tricks: np.ndarray  # (B, 2) tricks taken by team 0 and team 1
    mendikot: np.ndarray  # (B,) one team took all four tens
    whitewash: np.ndarray  # (B,) one team took every trick
    trump: np.ndarray  # (B,) trump suit at the end, -1 for none
    hider: np.ndarray  # (B,) band hukum: seat that laid the card face down, else -1
    band_card: np.ndarray  # (B,) the face-down card, else -1
    reveal_trick: np.ndarray  # (B,) trick (0-based) in which it was turned up, else -1
    revealed_by: np.ndarray  # (B,) seat whose turn turned it up, else -1
    asked: np.ndarray  # (B,) it was turned up by asking (not automatically)

    @property
    def hands(self) -> int:
        return int(self.winner.shape[0])

    @property
    def first_team(self) -> np.ndarray:
        """(B,) team of the first player: the hider's team in band hukum."""
        return self.first % 2

    def team_score(self, team: np.ndarray) -> np.ndarray:
        """(B,) 1 if ``team`` won the hand, 0.5 for a drawn hand, 0 if it lost."""
        return np.where(self.winner < 0, 0.5, (self.winner == team).astype(np.float64))

    @property
    def first_team_score(self) -> np.ndarray:
        """(B,) result of the first player's (the hider's) team: 1 win, 0.5 drawn, 0 loss."""
        return self.team_score(self.first_team)

    def first_team_tens(self) -> np.ndarray:
        """(B,) tens taken by the first player's (the hider's) team."""
        return self.tens[np.arange(self.hands), self.first_team]

    @property
    def revealer_side(self) -> np.ndarray:
        """(B,) band hukum: 0 if the hider's side turned the card up, 1 the opponents, -1 never."""
        return np.where(self.revealed_by < 0, -1, (self.revealed_by % 2 != self.hider % 2).astype(np.int64))


def play_deals(
    state: core.State,
    agent: Any,
    other: Any | None = None,
    by_first_team: bool = False,
    chunk: int = CHUNK,
) -> HandFacts:
    """Play every hand of ``state`` to the end and return what happened.

    Args:
        state: the hands to play (left as dealt; they are copied).
        agent: plays team 0 (and team 1 too when ``other`` is None: self-play).
        other: plays team 1.
        by_first_team: ``agent`` plays the first player's team (the hider's, in band
            hukum) and ``other`` the other team, whichever seats they are.
        chunk: hands played at once.

    Raises:
        ValueError: an agent built for rules that play these hands otherwise (as the arena
            refuses it: it would fail, or quietly play the wrong game).
    """
    rules = state.rules
    check_plays(agent, rules, "agent")
    if other is not None:
        check_plays(other, rules, "other")
    encoder = ObservationEncoder(rules)
    agents = [agent] if other is None else [agent, other]
    if other is None:
        team_agent = np.zeros((state.batch_size, 2), dtype=np.int64)
    elif by_first_team:
        first_team = core.first_player(state) % 2
        team_agent = np.stack([first_team, 1 - first_team], axis=1)  # agent 0 on the first team
    else:
        team_agent = np.tile(np.array([0, 1]), (state.batch_size, 1))
    parts = []
    for start in range(0, state.batch_size, chunk):
        rows = np.arange(start, min(start + chunk, state.batch_size))
        part = state.select(rows)
        play_hands(part, agents, team_agent[rows], encoder)
        parts.append(part)
    results = [core.hand_results(p) for p in parts]

    def cat(get: Callable[[Any], np.ndarray], items: Sequence[Any]) -> np.ndarray:
        return np.concatenate([get(x) for x in items])

    return HandFacts(
        rules=rules,
        dealer=cat(lambda p: p.dealer, parts),
        first=cat(core.first_player, parts),
        winner=cat(lambda r: r.winner, results),
        tens=cat(lambda r: r.tens, results),
        tricks=cat(lambda r: r.tricks, results),
        mendikot=cat(lambda r: r.mendikot, results),
        whitewash=cat(lambda r: r.whitewash, results),
        trump=cat(lambda r: r.trump, results),
        hider=cat(lambda p: p.hider, parts),
        band_card=cat(lambda p: p.band_card, parts),
        reveal_trick=cat(lambda p: p.reveal_trick, parts),
        revealed_by=cat(lambda p: p.revealed_by, parts),
        asked=cat(lambda p: p.asked, parts),
    )


@dataclass
class RevealCounts:
    """Band hukum: in which trick the face-down card came up, split by who and how."""

    hands: int
    counts: dict[str, np.ndarray]  # category -> (n_tricks,) hands revealed in each trick
    never: int  # hands where it never came up

    def share(self, category: str) -> tuple[float, float, float]:
        """Share of all hands revealed in this way, with its Wilson interval."""
        return wilson(float(self.counts[category].sum()), self.hands)

    def mean_trick(self) -> float:
        """Average trick number (1-based) of the reveal."""
        total = sum(self.counts.values())
        return float((total * np.arange(1, total.size + 1)).sum() / max(total.sum(), 1))


REVEAL_CATEGORIES = ("opponents asked", "hider's side asked", "opponents, automatically", "hider's side, automatically")


def reveal_counts(facts: HandFacts) -> RevealCounts:
    """Count the reveals of band hukum hands by trick, side (the hider's or the opponents')
    and way (asked, or automatic: the hider's last card or, with ``reveal="auto"``, a void)."""
    if not facts.rules.has_face_down:
        raise ValueError("reveal_counts needs band hukum hands (rules.trump == 'band')")
    t = facts.rules.n_tricks
    side, asked, trick = facts.revealer_side, facts.asked, facts.reveal_trick
    counts = {}
    for name, (s, a) in zip(REVEAL_CATEGORIES, [(1, True), (0, True), (1, False), (0, False)], strict=True):
        chosen = (side == s) & (asked == a)
        counts[name] = np.bincount(trick[chosen], minlength=t)[:t]
    return RevealCounts(facts.hands, counts, int(np.count_nonzero(trick < 0)))


# -------------------------------------------------------------------- duplicate vs plain


@dataclass
class DuplicateVsPlain:
    """Per-pair scores of the same two agents on duplicate deals and on plain random deals.

    A pair is two hands with A on each team once: the same cards twice (duplicate), or two
    independent deals (plain). The interval of A's win rate shrinks as sigma / sqrt(pairs),
    so the variance of a pair's score says how many deals a given interval needs.
    """

    a: str
    b: str
    duplicate: np.ndarray  # (pairs,) A's mean score over each duplicate pair
    plain: np.ndarray  # (pairs,) A's mean score over each plain pair

    def std(self) -> tuple[float, float]:
        """Standard deviation of a pair's score: duplicate, plain."""
        return float(self.duplicate.std(ddof=1)), float(self.plain.std(ddof=1))

    def deals_needed(self, half_width: float) -> tuple[int, int]:
        """Deal pairs for a 95% interval of +- ``half_width``: duplicate, plain."""
        return tuple(math.ceil((Z95 * s / half_width) ** 2) for s in self.std())  # type: ignore[return-value]

    def variance_ratio(self, resamples: int = 1000, seed: int = 0) -> tuple[float, float, float]:
        """Plain variance / duplicate variance (how many times fewer deals duplicate needs),
        with a bootstrap 95% interval."""
        rng = make_rng(seed)
        d, p = self.duplicate, self.plain
        ratio = float(p.var(ddof=1) / d.var(ddof=1))
        i = rng.integers(0, d.size, size=(resamples, d.size))
        j = rng.integers(0, p.size, size=(resamples, p.size))
        boot = p[j].var(axis=1, ddof=1) / d[i].var(axis=1, ddof=1)
        low, high = np.quantile(boot, [0.025, 0.975])
        return ratio, float(low), float(high)


def duplicate_vs_plain(rules: Rules, agent_a: Any, agent_b: Any, deals: int, seed: int = 0) -> DuplicateVsPlain:
    """Play ``deals`` duplicate pairs and ``deals`` plain pairs of A against B."""
    dup = duplicate_arena(rules, agent_a, agent_b, deals, seed=seed)
    state = deal(rules, 2 * deals, seed=derived_seed(seed + 1_000_003))
    a_team = np.repeat(np.array([0, 1]), deals)
    team_agent = np.stack([a_team, 1 - a_team], axis=1)  # index 0 is A
    encoder = ObservationEncoder(rules)
    for start in range(0, 2 * deals, CHUNK):
        rows = np.arange(start, min(start + CHUNK, 2 * deals))
        part = state.select(rows)
        play_hands(part, [agent_a, agent_b], team_agent[rows], encoder)
        state.put(rows, part)
    winner = core.hand_results(state).winner
    score = np.where(winner < 0, 0.5, (winner == a_team).astype(np.float64))
    return DuplicateVsPlain(dup.a, dup.b, dup.pair_scores, (score[:deals] + score[deals:]) / 2)


# ------------------------------------------------------------------ duplicate outcomes


OUTCOME_METRICS = ("won", "tens", "tricks", "mendikot", "whitewash", "suffered mendikot", "suffered whitewash")
COUNT_METRICS = ("tens", "tricks")  # the metrics not in [0, 1]


@dataclass
class Outcomes:
    """Per deal pair, A's and B's average of each outcome over the pair's two hands."""

    a: str
    b: str
    arena: ArenaResult
    metrics: dict[str, np.ndarray] = field(default_factory=dict)  # metric -> (pairs, 2): A, B
    tens_hist: np.ndarray = field(default_factory=lambda: np.zeros((2, 5)))  # (2, 5): hands with k tens, A and B

    def interval(self, metric: str, side: int = 0) -> tuple[float, float, float]:
        """Mean over deal pairs of a metric for A (side 0) or B (side 1), with its 95% interval:
        the arena's :func:`mean_ci` for the metrics in [0, 1] (A's "won" interval is the
        arena's win-rate interval), the plain one for the counts (tens, tricks)."""
        values = self._metric(metric)[:, side]
        return mean_interval(values) if metric in COUNT_METRICS else mean_ci(values)

    def difference(self, metric: str) -> tuple[float, float, float]:
        """A minus B on the same deals, with its 95% interval."""
        m = self._metric(metric)
        return paired_difference(m[:, 0], m[:, 1])

    def _metric(self, metric: str) -> np.ndarray:
        """(pairs, 2) values of ``metric``, or a ValueError listing the metrics there are."""
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; choose one of {list(self.metrics)}")
        return self.metrics[metric]


def duplicate_outcomes(rules: Rules, agent_a: Any, agent_b: Any, deals: int, seed: int = 0) -> Outcomes:
    """Duplicate deals of A against B, keeping every hand's tens, tricks, mendikots and
    whitewashes (rates per hand, compared per deal pair)."""
    pairs = np.zeros((deals, 2, len(OUTCOME_METRICS)))  # summed over the pair's two hands
    hist = np.zeros((2, 5))

    def collect(state: core.State, log: Any, pair_index: np.ndarray, a_team: np.ndarray) -> None:
        r = core.hand_results(state)
        rows = np.arange(state.batch_size)
        for side, team in enumerate((a_team, 1 - a_team)):
            won = r.winner == team
            lost = (r.winner >= 0) & ~won
            values = [
                np.where(r.winner < 0, 0.5, won),
                r.tens[rows, team],
                r.tricks[rows, team],
                won & r.mendikot,
                won & r.whitewash,
                lost & r.mendikot,
                lost & r.whitewash,
            ]
            np.add.at(pairs[:, side], pair_index, np.stack(values, axis=1).astype(np.float64))
            np.add.at(hist[side], r.tens[rows, team], 1)

    arena = duplicate_arena(rules, agent_a, agent_b, deals, seed=seed, on_hand=collect)
    metrics = {name: pairs[:, :, k] / 2 for k, name in enumerate(OUTCOME_METRICS)}
    return Outcomes(arena.a, arena.b, arena, metrics, hist)


def baseline_rates(
    rules: Rules, agents: dict[str, Any], opponents: dict[str, Any], deals: int, seed: int
) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Duplicate win rate (with its interval) of each agent against each opponent:
    ``result[agent][opponent] = (rate, low, high)``."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for name, agent in agents.items():
        out[name] = {}
        for opp_name, opp in opponents.items():
            r = duplicate_arena(rules, agent, opp, deals, seed=seed)
            out[name][opp_name] = (r.win_rate, r.ci_low, r.ci_high)
    return out


# ---------------------------------------------------------------------- learning curves


@dataclass
class LearningCurve:
    """The evaluations of a training run, from its ``metrics.jsonl``."""

    minutes: np.ndarray  # (E,) wall-clock minutes at each evaluation
    samples: np.ndarray  # (E,) learner decisions trained on
    rates: dict[str, np.ndarray]  # opponent -> (E, 3): win rate, low, high
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (I,) every iteration
    pool_win_rate: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (I,) share won against the pool


def learning_curve(run: str | Path) -> LearningCurve:
    """Read a run folder's metrics: duplicate evaluations and the win rate against the pool.

    A last line cut short (a run killed while writing it) is dropped, as a resume drops it.

    Raises:
        FileNotFoundError: no metrics.jsonl in ``run``.
        ValueError: naming the file and line of a line that is not a metrics row, or of a
            row without a key the curve needs.
    """
    path = Path(run) / "metrics.jsonl"
    numbered = [(number, row) for number, _, row in parse_metrics_lines(path, torn_end_ok=True)]
    evals = [r for r in (row for _, row in numbered) if any(k.startswith("eval/win_rate_vs_") for k in r)]
    names = sorted({k.removeprefix("eval/win_rate_vs_") for r in evals for k in r if k.startswith("eval/win_rate_vs_")})
    for number, row in numbered:  # each evaluation row: its own opponents (a resume may change them)
        own = [k.removeprefix("eval/win_rate_vs_") for k in row if k.startswith("eval/win_rate_vs_")]
        needed = ["samples", "seconds"] + [f"eval/{m}_vs_{n}" for n in own for m in ("ci_low", "ci_high")]
        _check_keys(path, [(number, row)], "eval/win_rate_vs_", needed, "an evaluation row")
    _check_keys(path, numbered, "charts/win_rate_vs_pool", ["iteration"], "a training row")
    train_rows = [row for _, row in numbered if "charts/win_rate_vs_pool" in row]
    # The run evaluates once more at its end: drop an evaluation repeated at the same point.
    evals = [r for i, r in enumerate(evals) if i + 1 == len(evals) or evals[i + 1]["samples"] != r["samples"]]
    rates = {
        n: np.array(
            [[r.get(f"eval/{m}_vs_{n}", np.nan) for m in ("win_rate", "ci_low", "ci_high")] for r in evals]
        )  # nan where an evaluation did not play n
        for n in names
    }
    return LearningCurve(
        minutes=np.array([r["seconds"] / 60 for r in evals]),
        samples=np.array([r["samples"] for r in evals]),
        rates=rates,
        iterations=np.array([r["iteration"] for r in train_rows]),
        pool_win_rate=np.array([r["charts/win_rate_vs_pool"] for r in train_rows]),
    )


def _check_keys(
    path: Path, numbered: list[tuple[int, dict[str, Any]]], marker: str, keys: list[str], what: str
) -> None:
    """Refuse a row with a key starting with ``marker`` but without one of ``keys``: a bare
    KeyError later would name neither the file nor the line."""
    for number, row in numbered:
        missing = [k for k in keys if k not in row]
        if missing and any(k.startswith(marker) for k in row):
            raise ValueError(
                f"{path} line {number}: {what} needs {missing} (it has {sorted(row)}); repair or delete it"
            )


# ---------------------------------------------------------------------------- tables


class Table:
    """A small table that notebooks show as Markdown (and ``print`` shows as text)."""

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.headers = [str(h) for h in headers]
        self.rows = [[_cell(v) for v in row] for row in rows]

    def _repr_markdown_(self) -> str:
        lines = ["| " + " | ".join(self.headers) + " |", "|" + "---|" * len(self.headers)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) for i, h in enumerate(self.headers)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(self.headers, widths, strict=True))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in self.rows]
        return "\n".join(lines)

    __repr__ = __str__


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:.3f}"
    return str(value)


def pct(interval: tuple[float, float, float], digits: int = 1) -> str:
    """``(mean, low, high)`` as ``"55.1% [53.2, 57.0]"``."""
    m, lo, hi = interval
    return f"{100 * m:.{digits}f}% [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def num(interval: tuple[float, float, float], digits: int = 3) -> str:
    """``(mean, low, high)`` as ``"1.234 [1.200, 1.268]"``."""
    m, lo, hi = interval
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


__all__ = [
    "DuplicateVsPlain",
    "HandFacts",
    "LearningCurve",
    "Outcomes",
    "RevealCounts",
    "Table",
    "baseline_rates",
    "deal",
    "deal_cards",
    "duplicate_outcomes",
    "duplicate_vs_plain",
    "learning_curve",
    "mean_ci",
    "mean_interval",
    "num",
    "paired_difference",
    "pct",
    "play_deals",
    "redeal",
    "reveal_counts",
    "wilson",
]
