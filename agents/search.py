"""A determinised search agent: sample the unseen cards, play every legal move out, keep the best.

For each decision the agent draws K deals consistent with its observation
(:class:`mendikot_env.belief.Belief`, uniform over the consistent deals, face-down band card
included), plays each legal move in each deal and finishes the hand with a rollout policy
(the ``hard`` rule-based bot by default) for all four seats, and plays the move with the best
mean outcome for its team. All decisions of a batch, all K deals and all moves are one batch
on the core. Asking for the band card (action 52) is a move like the others: its value is what
the reveal shows in the sampled deals, never the true face-down card, which the agent cannot
see (it reads only its observation and mask, as every agent does).

Spec syntax (``agents.make``, ``--a`` in the arena): ``search`` or ``search:k=64,rollout=medium,budget_ms=40``
with keys ``k`` (deals per decision, an integer >= 1), ``rollout`` (a rule-based or ``random``
agent name), ``budget_ms`` (a time budget per decision: rounds of deals stop once it is spent;
it must hold at least one rollout) and ``z`` (how many standard errors a move must gain over the
rollout policy's own choice, on the same deals, to be played instead; 0: the best mean).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

import numpy as np

from mendikot_env import core
from mendikot_env.belief import Belief, InfoState
from mendikot_env.cards import NUM_ACTIONS, unpack_sets
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

from .base import Agent, check_batch

ROLLOUT_NAMES = ("random", "easy", "medium", "hard")


@dataclass(frozen=True)
class SearchSpec:
    """The settings of a search agent, as its spec names them."""

    k: int = 64  # deals sampled per decision
    rollout: str = "hard"  # the policy that finishes every hand
    budget_ms: float | None = None  # time budget per decision (None: always K deals)
    z: float = 1.0  # standard errors a move must gain over the rollout policy's own move


def parse_search_spec(spec: str) -> SearchSpec:
    """A :class:`SearchSpec` from ``"search"`` or ``"search:k=64,rollout=medium,budget_ms=40"``.

    Raises:
        ValueError: an unknown key, a value that is not one of the key's, or a malformed item,
            naming it and what is allowed.
    """
    name, _, rest = spec.strip().partition(":")
    if name.strip().lower() != "search":
        raise ValueError(f"{spec!r} is not a search spec (search:k=64,rollout=hard,budget_ms=50)")
    values: dict[str, object] = {}
    keys = [f.name for f in fields(SearchSpec)]
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = (x.strip() for x in item.partition("="))
        if not eq or key not in keys:
            raise ValueError(f"search spec {spec!r}: {item!r} is not key=value with a key of {', '.join(keys)}")
        values[key] = _spec_value(spec, key, value)
    return SearchSpec(**values)  # type: ignore[arg-type]


def _spec_value(spec: str, key: str, value: str) -> object:
    """One checked value of a search spec."""
    if key == "rollout":
        if value.lower() not in ROLLOUT_NAMES:
            raise ValueError(f"search spec {spec!r}: rollout={value!r} is no rollout agent; one of {ROLLOUT_NAMES}")
        return value.lower()
    try:
        number = int(value) if key == "k" else float(value)
    except ValueError:
        number = -1
    if not (number >= 0 if key == "z" else number > 0):
        kind = {"k": "an integer >= 1", "z": "a number >= 0"}.get(key, "a number of milliseconds > 0")
        raise ValueError(f"search spec {spec!r}: {key}={value!r} must be {kind}")
    return number


class SearchAgent:
    """Determinised search (see the module docstring) over the rules' batched core.

    Args:
        rules: the rules played (the observations' layout and the game the deals play).
        rollout: the agent that plays every seat from the move to the end of the hand.
        spec: K, the rollout's name and the time budget.
        seed: seeds the deal sampler (None: fresh entropy).
        max_games: the most games stepped at once (decisions of a batch are grouped to fit).
        name: display name.
    """

    def __init__(
        self,
        rules: Rules,
        rollout: Agent,
        spec: SearchSpec = SearchSpec(),
        seed: int | None = None,
        max_games: int = 4096,
        name: str = "search",
    ) -> None:
        self.rules, self.rollout, self.spec, self.name = rules, rollout, spec, name
        self.encoder = ObservationEncoder(rules)
        self.max_games = max_games
        self.rng = make_rng(seed)
        if spec.budget_ms is not None:
            self._check_budget()

    def seed(self, seed: int | None) -> None:
        """Restart the sampler's generator (wrappers call this on ``reset(seed=...)``)."""
        self.rng = make_rng(seed)

    def _check_budget(self) -> None:
        """Refuse a budget that cannot hold one rollout of a whole hand at a batch of one."""
        state = core.new_hands(self.rules, 1, rng=0)
        start = time.perf_counter()
        self._play_out(state)
        took = (time.perf_counter() - start) * 1000
        if took > self.spec.budget_ms:
            raise ValueError(
                f"budget_ms={self.spec.budget_ms:g} cannot hold one rollout: a whole hand took {took:.1f} ms here"
            )

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B,) the move with the best mean outcome over the sampled deals, per row."""
        obs, legal = check_batch(observations, masks, self.encoder.size, self.rules.n_players)
        actions = np.argmax(legal, axis=1).astype(np.int64)
        choice = legal.sum(axis=1) > 1  # a forced move needs no search
        rows = np.flatnonzero(choice)
        per_row = self.spec.k * legal[rows].sum(axis=1)
        start = 0
        while start < rows.size:  # groups of decisions whose games fit in one batch
            stop = start + 1
            while stop < rows.size and per_row[start : stop + 1].sum() <= self.max_games:
                stop += 1
            group = rows[start:stop]
            actions[group] = self._search([InfoState(self.rules, obs[r], legal[r]) for r in group])
            start = stop
        return actions

    def _search(self, infos: list[InfoState]) -> np.ndarray:
        """The chosen move of each decision: rounds of deals until K (or the budget) is spent.

        Moves are compared with the rollout policy's own move on the same deals (paired
        differences); another move is played only when its mean gain exceeds ``z`` standard
        errors, so sampling noise falls back on the policy rather than on a lucky move.
        """
        moves = [np.flatnonzero(info.mask) for info in infos]
        beliefs = [Belief(info) for info in infos]
        own = self.rollout.act(np.stack([info.observation for info in infos]), np.stack([info.mask for info in infos]))
        own_index = [int(np.flatnonzero(move == mine)[0]) for move, mine in zip(moves, own, strict=True)]
        sums = [np.zeros(m.size) for m in moves]
        squares = [np.zeros(m.size) for m in moves]
        done, k = 0, self.spec.k
        budget = None if self.spec.budget_ms is None else self.spec.budget_ms * len(infos) / 1000
        k_round = k if budget is None else max(2, k // 4)
        start = time.perf_counter()
        while done < k:
            n = min(k_round, k - done)
            round_start = time.perf_counter()
            for i, value in enumerate(self._evaluate(beliefs, moves, n)):
                gain = value - value[:, own_index[i], None]
                sums[i] += gain.sum(axis=0)
                squares[i] += (gain**2).sum(axis=0)
            done += n
            now = time.perf_counter()
            if budget is not None and (now - start) + (now - round_start) > budget:
                break
        chosen = []
        for move, total, square, mine in zip(moves, sums, squares, own, strict=True):
            mean = total / done
            spread = np.sqrt(np.maximum(square / done - mean**2, 0.0) / max(done - 1, 1))
            score = np.where(move == mine, 0.0, mean - self.spec.z * spread)
            chosen.append(move[np.argmax(score)] if score.max() > 0 else mine)
        return np.array(chosen, dtype=np.int64)

    def _evaluate(self, beliefs: list[Belief], moves: list[np.ndarray], n: int) -> list[np.ndarray]:
        """(n, moves) outcome for the observer's team of every move in n sampled deals, per
        decision: all decisions, deals and moves stepped as one batch."""
        batches, actions = [], []
        for belief, move in zip(beliefs, moves, strict=True):
            worlds = belief.worlds(n, self.rng, seat=0)
            batches.append(worlds.select(np.repeat(np.arange(n), move.size)))  # deal-major: game = deal * L + move
            actions.append(np.tile(move, n))
        state = _concat(batches)
        core.step(state, np.concatenate(actions), check=False)
        self._play_out(state)
        value = _team_value(state)
        out, start = [], 0
        for move in moves:
            out.append(value[start : start + n * move.size].reshape(n, move.size))
            start += n * move.size
        return out

    def _play_out(self, state: core.State) -> None:
        """Finish every hand of ``state`` with the rollout policy at every seat (in place)."""
        actions = np.zeros(state.batch_size, dtype=np.int64)
        while True:
            live = np.flatnonzero(state.phase != core.OVER)
            if live.size == 0:
                return
            legal = core.legal_bits(state)
            obs = self.encoder.encode(state, state.current, legal=legal)
            masks = unpack_sets(legal[live], NUM_ACTIONS).view(bool)
            actions[live] = self.rollout.act(obs[live], masks)
            core.step(state, actions, check=False)


def _team_value(state: core.State) -> np.ndarray:
    """(B,) the hand's outcome for team 0 (the observer's in the sampled deals): the points it
    scores (tiered: 1, 2 for a mendikot, 3 for a whitewash) or loses, plus a tie-break of a
    hundredth for the tens and tricks margins."""
    results = core.hand_results(state)
    rules = state.rules
    points = np.ones(state.batch_size)
    if rules.scoring == "tiered":
        points = np.where(results.whitewash, 3.0, np.where(results.mendikot, 2.0, 1.0))
    sign = np.where(results.winner == 0, 1.0, np.where(results.winner == 1, -1.0, 0.0))
    margin = (results.tens[:, 0] - results.tens[:, 1]) / 4 + (
        results.tricks[:, 0] - results.tricks[:, 1]
    ) / rules.n_tricks
    return sign * points + 0.01 * margin


def _concat(states: list[core.State]) -> core.State:
    """One State holding the games of several (same rules), in order."""
    if len(states) == 1:
        return states[0]
    return core.State(
        **{
            f.name: states[0].rules if f.name == "rules" else np.concatenate([getattr(s, f.name) for s in states])
            for f in fields(core.State)
        }
    )
