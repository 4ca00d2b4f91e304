"""A determinised search agent: sample the unseen cards, play every legal move out, keep the best.

For each decision the agent draws K deals consistent with its observation
(:class:`mendikot_env.belief.Belief`, face-down band card included; by default the likeliest
under the rollout policy's play of the moves seen, ``infer`` and ``weigh`` below), plays each distinct legal
move (one card of each run of equal cards, :func:`distinct_moves`) in each deal and finishes the
hand: a rollout policy (the ``hard`` rule-based bot by default, which reads the sampled deal's
core state from each seat's view, :meth:`RuleBasedAgent.act_state`; ``own`` below may play the
observer's team) plays every seat until the
outcome is settled (no play can change the winner or the points) or ``exact`` tricks are left,
and those last tricks are searched exactly, every line of play enumerated as a batch and
minimaxed (the observer's team maximising, the other minimising) with all cards open, as in the
sampled deal.
It plays the move with the best mean outcome for its team. All decisions of a batch, all K
deals and all moves are one batch on the core. Asking for the band card (action 52) is a move
like the others: its value is what the reveal shows in the sampled deals, never the true
face-down card, which the agent cannot see (it reads only its observation and mask, as every
agent does).
:meth:`SearchAgent.values` gives every legal move's mean value for a batch of decisions
instead of a move: what expert iteration learns from (:mod:`mendikot_env.training.exit`).

Spec syntax (``agents.make``, ``--a`` in the arena): ``search`` or
``search:k=64,rollout=medium,exact=2,budget_ms=40,z=1`` with keys

- ``k``: deals sampled per decision, an integer >= 1;
- ``rollout``: the policy that plays the hands out at every seat (the other team's, with
  ``own``): ``random``, a rule-based level (``easy``, ``medium``, ``hard``), ``trained`` or
  ``apprentice`` (the shipped networks; need torch), or a trained network's run folder or
  ``.pt`` file (``rollout=runs/exit``: what ``agents.load`` reads; a path that is missing or
  a network trained for other rules is an error naming it);
- ``exact``: tricks left (the current one included) from which every line of play is searched
  instead of rolled out, an integer from 0 (roll out to the end) to 3 (the tree grows about a
  hundredfold per trick);
- ``budget_ms``: a time budget per decision: a first round of 8 deals is timed, then each round
  takes as many deals as the time left holds at the last round's pace, up to K in all; it must
  hold at least one rollout of a whole hand;
- ``z``: how many standard errors a move must gain over the ``base`` agent's choice (the
  rollout policy's by default), on the same deals, to be played instead (0: the best mean);
- ``infer``: policy inference, by the weighing policy (``weigh``, the rollout policy by
  default). 0: uniform deals. 1: about a band card another seat hid: of 8 times as many deals
  drawn, those where the weighing policy, dealt the hider's hand, would have hidden the card
  drawn are kept first. 2: of ``draws`` times as many deals drawn, each replayed through the
  history with the weighing policy at every other seat
  (:meth:`Belief.weigh`), the K likeliest are kept (distinct deals, not resampled: duplicates
  would shrink the standard errors of the ``z`` gate). 3: as 2, weighing the opponents' moves
  only, and pairing one opponent's cards from one draw with the other's from another wherever
  they fit (a deal's weight is the product of its opponents', each seat's moves depending on
  its own cards alone), the K likeliest pairs kept (:meth:`Belief.likeliest` with ``mix``;
  four players, else as 2). 2 and 3 need the history pieces and fall back to uniform deals on a plain
  observation; 3 is the default;
- ``draws``: with ``infer`` 2 or 3, deals weighed per deal kept, an integer >= 1 (default 4);
- ``leaf``: a trained network's run folder or ``.pt`` file whose value head ends every rollout
  ``cut`` tricks after the move (the value, for the team of the seat to move, read from that
  seat's observation of the sampled deal): fewer steps a rollout, at the network's judgement;
- ``cut``: with ``leaf``, the tricks the rollout plays first, an integer >= 0 (default 1);
- ``prior``: a trained network's run folder or ``.pt`` file whose policy picks the moves
  searched: its ``top`` likeliest distinct moves and the ``base`` agent's (the baseline the
  others must beat; the rollout policy's by default), so the deals are spent on fewer moves;
- ``top``: with ``prior``, the network's moves searched, an integer >= 1 (default 3);
- ``base``: the agent whose move the others must beat by ``z`` standard errors, and the one
  played when none does (default: the rollout policy): a name as for ``rollout``
  (``apprentice`` too) or a trained network's run folder or ``.pt`` file. A network stronger
  than the rollout policy makes the search's fallback stronger at the cost of one forward
  pass a decision;
- ``weigh``: the policy whose play of the moves seen weighs the deals (``infer`` 1 to 3),
  default the rollout policy: a name as for ``rollout`` or a network's path. ``weigh=hard``
  keeps the inference at the rule-based bot's cost where a network plays the rollouts;
- ``own``: the policy that plays the seats of the observer's team in the rollouts, ``rollout``
  then playing the other team's (default: ``rollout`` plays all): a name as for ``rollout`` or
  a network's path. The observer's team plays like the search, so a stronger policy than the
  opponents' model rolls its seats out closer to how they will be played
  (``own=apprentice,rollout=hard``: the network for the team, the bot for the opponents). The
  moves seen are still weighed by ``weigh``; ``own`` is seeded as the rollout policy is.

A network named by ``rollout``, ``own``, ``base``, ``weigh``, ``leaf`` or ``prior`` may end in
``:views=24`` (its policy, or value, averaged over the suits' relabellings:
:mod:`agents.suit_symmetry`): cheap for ``base``, read once a decision; in the rollouts it
costs 24 times the network's time and memory at every step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from mendikot_env import core
from mendikot_env.belief import Belief, InfoState
from mendikot_env.belief.together import likeliest_together
from mendikot_env.cards import NUM_ACTIONS, NUM_CARDS, NUM_RANKS, TEN_RANK, unpack_sets
from mendikot_env.observation import ObservationEncoder, observation_layout
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

from .base import Agent, check_batch, seed_agent
from .network_options import split_views
from .rule_based import LEVELS

ROLLOUT_NAMES = ("random", *LEVELS, "trained", "apprentice")  # the agents a search may roll out with
AGENT_KEYS = ("rollout", "base", "weigh", "own")  # the spec's keys that name an agent (or a network's path)
NETWORK_KEYS = ("leaf", "prior")  # the spec's keys that name a trained network's path
# The most tricks searched exactly: the tree of the last three tricks has hundreds of lines per
# deal (about 1 ms a deal here), four tricks tens of thousands.
MAX_EXACT = 3
# The most deals per decision. Time grows with K (a band hand at batch one took 1.5 s at K = 112
# and 70 s at 4096 here), memory too until a round of deals fills max_games games (the process
# peaked at 54 MB at K = 112, 223 MB at 1024 and 726 MB at 4096).
MAX_K = 4096
INFER_DRAWS = 8  # with infer=1: deals drawn per deal kept
FIRST_ROUND = 8  # deals of the first round under a time budget, which times the rounds after it


@dataclass(frozen=True)
class SearchSpec:
    """The settings of a search agent, as its spec names them; ``k`` is at most ``MAX_K`` (4096): the
    belief samples K deals per decision, and time and memory grow with them."""

    k: int = 112  # deals sampled per decision (112: about the most that keeps to 50 ms a decision here)
    rollout: str = "hard"  # the policy that plays every seat (the opponents' with ``own``) until the exact search
    exact: int = 2  # tricks left (the current one included) searched exactly; 0: roll out to the end
    budget_ms: float | None = None  # time budget per decision (None: always K deals)
    z: float = 1.0  # standard errors a move must gain over the base agent's move
    infer: int = 3  # 0 uniform deals; 1 hide-only, 2 policy-weighted and 3 mixed inference (see _worlds)
    draws: int = 4  # with infer=2 or 3: deals weighed per deal kept
    leaf: str | None = None  # a trained network whose value head ends the rollouts (None: none)
    cut: int = 1  # with a leaf: tricks the rollout plays after the move's before the leaf value
    prior: str | None = None  # a trained network whose policy picks the moves searched (None: every move)
    top: int = 3  # with a prior: its likeliest moves searched, beside the base agent's
    base: str | None = None  # the agent whose move the others must beat (None: the rollout policy)
    weigh: str | None = None  # the policy whose play of the moves seen weighs the deals (None: the rollout)
    own: str | None = None  # the policy that rolls out the observer's team's seats (None: the rollout)


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
        key = key.lower()  # the value keeps its case: a rollout may be a path
        if not eq or key not in keys:
            raise ValueError(f"search spec {spec!r}: {item!r} is not key=value with a key of {', '.join(keys)}")
        values[key] = _spec_value(spec, key, value)
    return SearchSpec(**values)  # type: ignore[arg-type]


def _spec_value(spec: str, key: str, value: str) -> object:
    """One checked value of a search spec."""
    try:
        name = split_views(value)[0]  # a network may play its suit views: base=apprentice:views=24
    except ValueError as error:
        raise ValueError(f"search spec {spec!r}: {key}={value!r}: {error}") from None
    if key in AGENT_KEYS:
        if name.lower() in ROLLOUT_NAMES:
            return value.lower()
        if _is_path(name):
            return value  # a trained network, loaded (and checked) by agents.load
        raise ValueError(
            f"search spec {spec!r}: {key}={value!r} is no agent a search can use; one of {ROLLOUT_NAMES}, "
            "or a trained network's run folder or .pt file"
        )
    if key in NETWORK_KEYS:
        if not _is_path(name):
            raise ValueError(
                f"search spec {spec!r}: {key}={value!r} must be a trained network's run folder or .pt file"
            )
        return value
    try:
        number = int(value) if key in ("k", "exact", "infer", "draws", "cut", "top") else float(value)
    except ValueError:
        number = -1
    if key == "infer":
        if number not in (0, 1, 2, 3):
            raise ValueError(f"search spec {spec!r}: infer={value!r} must be 0, 1, 2 or 3")
        return number
    too_many = (key == "exact" and number > MAX_EXACT) or (key == "k" and number > MAX_K)
    if not (number >= 0 if key in ("z", "exact", "cut") else number > 0) or too_many:
        kind = {
            "k": f"an integer from 1 to {MAX_K}",
            "exact": f"an integer from 0 to {MAX_EXACT}",
            "z": "a number >= 0",
            "draws": "an integer >= 1",
            "cut": "an integer >= 0",
            "top": "an integer >= 1",
        }
        raise ValueError(
            f"search spec {spec!r}: {key}={value!r} must be {kind.get(key, 'a number of milliseconds > 0')}"
        )
    return number


class SearchAgent:
    """Determinised search (see the module docstring) over the rules' batched core.

    Args:
        rules: the rules played (the observations' layout and the game the deals play).
        rollout: the agent that plays every seat (the other team's with ``own``) from the move
            until the exact search.
        spec: K, the rollout's name, the tricks searched exactly, the time budget and z.
        seed: seeds the deal sampler (None: fresh entropy).
        max_games: the most games stepped at once (decisions of a batch are grouped to fit).
        name: display name.
        leaf: a value of states (the outcome for team 0 of each game, e.g. a trained network's
            :meth:`~agents.neural.NeuralAgent.state_values`) that ends every rollout ``spec.cut``
            tricks after the move (None: the rollouts play on).
        prior: an agent with ``probabilities()`` whose likeliest moves are the ones searched
            (None: every distinct move).
        base: the agent whose move the others must beat and which is played when none does
            (None: the rollout policy).
        weigh: the policy whose play of the moves seen weighs the deals (None: the rollout policy).
        own: the policy that plays the observer's team's seats in the rollouts, ``rollout`` the
            other team's (None: ``rollout`` plays every seat).

    It reads the history pieces (``reads_history``): the arena, the Gymnasium views and
    ``env(history=True)`` give it observations with them, and its belief then replays the moves
    seen (an asker who played no trump has none). A plain observation is taken too.
    """

    reads_history = True

    def __init__(
        self,
        rules: Rules,
        rollout: Agent,
        spec: SearchSpec = SearchSpec(),
        seed: int | None = None,
        max_games: int = 4096,
        name: str = "search",
        leaf: Callable[[core.State], np.ndarray] | None = None,
        prior: Agent | None = None,
        base: Agent | None = None,
        weigh: Agent | None = None,
        own: Agent | None = None,
    ) -> None:
        self.rules, self.rollout, self.spec, self.name = rules, rollout, spec, name
        self.base = rollout if base is None else base  # its move is the one the others must beat
        self.weigh = rollout if weigh is None else weigh  # its play of the moves seen weighs the deals
        self.own = own  # plays the observer's team (team 0 of the sampled deals) in the rollouts
        self.leaf = leaf  # (B,) outcome for team 0 of the games of a state: ends the rollouts ``cut`` tricks on
        self.prior = prior  # an agent with probabilities(): picks the moves searched
        self.encoder = ObservationEncoder(rules)  # the rollouts' plain observations
        # A rollout agent that reads the core state itself (the rule-based bots' act_state)
        # plays the same moves without an observation encoded and parsed back every step.
        self._act_state = getattr(rollout, "act_state", None)
        self._own_act_state = getattr(own, "act_state", None)
        self.history_size = observation_layout(rules, history=True).size
        self.max_games = max_games
        if spec.exact > 2 and rules.n_players > 4:
            raise ValueError(
                f"search exact={spec.exact} with {rules.n_players} players: the tree of the last "
                f"{spec.exact} tricks is too large to enumerate (at most exact=2 beyond four players)"
            )
        self.seed(seed)
        if spec.budget_ms is not None:
            self._check_budget()

    def seed(self, seed: int | None) -> None:
        """Restart the sampler's generator and the rollout agent's (wrappers call this on
        ``reset(seed=...)``)."""
        self.rng, rollout_seed = _split_seed(seed)
        if seed is not None:
            seed_agent(self.rollout, rollout_seed)
            for other in (self.base, self.weigh, self.own):
                if other is not None and other is not self.rollout:
                    seed_agent(other, rollout_seed)

    def with_rollout(
        self, rollout: Agent, leaf: Callable[[core.State], np.ndarray] | None, name: str, seed: int | None
    ) -> SearchAgent:
        """This search with another rollout policy and leaf value (expert iteration hands it each
        generation's network): the agents its spec names (``base``, ``weigh``, ``own``, the
        prior) stay, and the parts it leaves to the rollout policy follow the new one."""
        spec = self.spec
        return SearchAgent(
            self.rules,
            rollout,
            spec,
            seed=seed,
            max_games=self.max_games,
            name=name,
            leaf=leaf,
            prior=self.prior,
            base=None if spec.base is None else self.base,
            weigh=None if spec.weigh is None else self.weigh,
            own=self.own,
        )

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
        obs, legal = self._checked(observations, masks)
        actions = np.argmax(legal, axis=1).astype(np.int64)
        rows = np.flatnonzero(legal.sum(axis=1) > 1)  # a forced move needs no search
        for part in self._groups(self.spec.k * legal[rows].sum(axis=1)):
            actions[rows[part]] = self._search(obs[rows[part]], legal[rows[part]])
        return actions

    def _groups(self, games: np.ndarray) -> Iterator[slice]:
        """Consecutive groups of decisions (``games``: each one's games) whose games fit in one
        batch of ``max_games`` (at least one decision a group)."""
        ends = np.cumsum(games)  # games stepped up to each decision
        start = 0
        while start < ends.size:
            before = ends[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, before + self.max_games, side="right")))
            yield slice(start, stop)
            start = stop

    def values(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) float32: every legal move's mean outcome for the observer's team over K sampled
        deals (:func:`team_value`'s points), NaN on illegal moves and on forced decisions (one
        legal action: nothing to search): :meth:`labels`' ``values``."""
        return self.labels(observations, masks).values

    def labels(self, observations: np.ndarray, masks: np.ndarray) -> MoveLabels:
        """Every legal move's mean outcome over K sampled deals, how sure the search is of its
        gain over the base agent's move, and the move it plays by them (:class:`MoveLabels`):
        what expert iteration learns from (:mod:`mendikot_env.training.search_targets`).

        All moves of a decision are played out in the same K deals, so a move's gain over the
        base move is a paired difference with a standard error of its own; the move chosen is
        the one :meth:`act` would choose with those K deals (the ``z`` gate). One card of each
        run of equal cards is played out and the others take its value (:func:`equal_runs`);
        all decisions are searched together, in groups whose games fit ``max_games``."""
        obs, legal = self._checked(observations, masks)
        values = np.full(legal.shape, np.nan, dtype=np.float32)
        spreads = np.full(legal.shape, np.nan, dtype=np.float32)
        base = np.asarray(self.base.act(self.encoder.for_agent(obs, self.base), legal)).astype(np.int64)
        chosen = base.copy()
        rows = np.flatnonzero(legal.sum(axis=1) > 1)
        beliefs = [Belief(InfoState(self.rules, obs[row], legal[row])) for row in rows]
        moves = [np.flatnonzero(legal[row]) for row in rows]
        runs = [equal_runs(belief, move) for belief, move in zip(beliefs, moves, strict=True)]
        kept = [distinct for distinct, _ in runs]
        for part in self._groups(np.array([self.spec.k * distinct.size for distinct in kept], dtype=np.int64)):
            searched = self._evaluate(beliefs[part], kept[part], self.spec.k, self._worlds_together(beliefs[part]))
            for i, value in zip(range(rows.size)[part], searched, strict=True):
                row, (distinct, stands) = rows[i], runs[i]
                own = int(stands[np.searchsorted(moves[i], base[row])])  # the base move's run
                gain = value - value[:, own, None]
                mean = gain.mean(axis=0)
                spread = standard_error(mean, (gain**2).mean(axis=0), self.spec.k)
                values[row, moves[i]] = value.mean(axis=0)[stands]
                spreads[row, moves[i]] = spread[stands]
                best = gated(mean, spread, own, self.spec.z)
                chosen[row] = base[row] if best == own else distinct[best]
        return MoveLabels(values, spreads, base, chosen)

    def _checked(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A batch of plain observations or of observations with the history pieces, checked."""
        with_history = np.ndim(observations) == 2 and np.shape(observations)[1] == self.history_size
        size = self.history_size if with_history else self.encoder.size
        return check_batch(observations, masks, size, self.rules.n_players)

    def move_values(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every legal move of one decision and its mean outcome for the observer's team over
        K sampled deals (:func:`team_value`'s points): what the search weighs, for study.

        Args:
            observation: (D,) one seat's observation (plain or with the history pieces).
            mask: (53,) its legal actions.

        Returns:
            (moves, values): the legal actions and their mean values.
        """
        obs, legal = self._checked(np.asarray(observation)[None], np.asarray(mask)[None])
        moves = np.flatnonzero(legal[0])
        values = self._evaluate([Belief(InfoState(self.rules, obs[0], legal[0]))], [moves], self.spec.k)[0]
        return moves, values.mean(axis=0)

    def _search(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The chosen move of each decision: rounds of deals until K (or the budget) is spent.

        Moves are compared with the base agent's move (the rollout policy's by default) on
        the same deals (paired differences); another move is played only when its mean gain
        exceeds ``z`` standard errors, so sampling noise falls back on that move rather than
        on a lucky one.
        """
        own = np.asarray(self.base.act(self.encoder.for_agent(obs, self.base), legal))
        liked = None if self.prior is None else self.prior.probabilities(self.encoder.for_agent(obs, self.prior), legal)
        beliefs, moves, open_rows = [], [], []
        for row, (o, m, mine) in enumerate(zip(obs, legal, own, strict=True)):
            belief = Belief(InfoState(self.rules, o, m))
            distinct = distinct_moves(belief, np.flatnonzero(m), int(mine))
            if liked is not None and distinct.size > self.spec.top + 1:  # the prior's likeliest, and the base's
                likeliest = distinct[np.argsort(-liked[row, distinct], kind="stable")[: self.spec.top]]
                distinct = np.union1d(likeliest, [int(mine)])
            if distinct.size > 1:  # equivalent moves only: the base agent's is as good
                beliefs.append(belief)
                moves.append(distinct)
                open_rows.append(row)
        chosen = own.astype(np.int64)
        if open_rows:
            chosen[open_rows] = self._compare(beliefs, moves, own[open_rows])
        return chosen

    def _compare(self, beliefs: list[Belief], moves: list[np.ndarray], own: np.ndarray) -> np.ndarray:
        """The chosen move of each decision among its distinct ``moves`` (``own``: the rollout
        policy's, one of them), by rounds of deals (see :meth:`_search`)."""
        own_index = [int(np.flatnonzero(move == mine)[0]) for move, mine in zip(moves, own, strict=True)]
        sums = [np.zeros(m.size) for m in moves]
        squares = [np.zeros(m.size) for m in moves]
        done, k = 0, self.spec.k
        budget = None if self.spec.budget_ms is None else self.spec.budget_ms * len(moves) / 1000
        most = max(1, self.max_games // sum(m.size for m in moves))  # deals per round that fit in one batch
        n = min(k, most, FIRST_ROUND if budget is not None else k)
        start = time.perf_counter()
        while n > 0:
            round_start = time.perf_counter()
            for i, value in enumerate(self._evaluate(beliefs, moves, n)):
                gain = value - value[:, own_index[i], None]
                sums[i] += gain.sum(axis=0)
                squares[i] += (gain**2).sum(axis=0)
            done += n
            n_round, n = n, min(k - done, most)
            if budget is not None:  # the next round: as many deals as the time left holds at this round's pace
                now = time.perf_counter()
                n = min(n, int((budget - (now - start)) * n_round / max(now - round_start, 1e-9)))
        chosen = []
        for move, total, square, mine in zip(moves, sums, squares, own_index, strict=True):
            mean = total / done
            chosen.append(move[gated(mean, standard_error(mean, square / done, done), mine, self.spec.z)])
        return np.array(chosen, dtype=np.int64)

    def _evaluate(
        self, beliefs: list[Belief], moves: list[np.ndarray], n: int, dealt: list[core.State] | None = None
    ) -> list[np.ndarray]:
        """(n, moves) outcome for the observer's team of every move in n sampled deals, per
        decision: all decisions, deals and moves stepped as one batch (``dealt``: each
        decision's n deals where they were drawn already)."""
        batches, actions = [], []
        for i, (belief, move) in enumerate(zip(beliefs, moves, strict=True)):
            worlds = self._worlds(belief, n) if dealt is None else dealt[i]
            batches.append(worlds.select(np.repeat(np.arange(n), move.size)))  # deal-major: game = deal * L + move
            actions.append(np.tile(move, n))
        state = core.State.concat(batches)
        core.step(state, np.concatenate(actions), check=False)
        value = self._play_out(state)
        out, start = [], 0
        for move in moves:
            out.append(value[start : start + n * move.size].reshape(n, move.size))
            start += n * move.size
        return out

    def _worlds_together(self, beliefs: list[Belief]) -> list[core.State] | None:
        """K deals for each decision, drawn together where ``infer=3`` replays their histories
        with a policy that reads the core state (:func:`~mendikot_env.belief.together.likeliest_together`:
        one replay for all, the same distribution as one decision at a time); else None, and
        :meth:`_worlds` draws them decision by decision."""
        if self.spec.infer != 3 or any(belief.view.history is None for belief in beliefs):
            return None
        k = self.spec.k
        return likeliest_together(beliefs, self.weigh, k, k * self.spec.draws, self.rng)

    def _worlds(self, belief: Belief, n: int) -> core.State:
        """n sampled deals. ``infer=2`` (with the history pieces): the n likeliest under the
        weighing policy (``weigh``, the rollout policy by default) of ``draws`` times as many;
        ``infer=3``: the same, the opponents' cards paired across the draws
        (:meth:`Belief.likeliest` with ``mix``). ``infer=1`` in band, for a face-down card
        another seat hid: ``INFER_DRAWS`` times as many are drawn, and those where the
        weighing policy, dealt the hider's hand, would have hidden the card drawn come first
        (rejection sampling, topped up with the others when fewer than n agree)."""
        if self.spec.infer >= 2 and belief.view.history is not None:
            return belief.likeliest(self.weigh, n, n * self.spec.draws, self.rng, seat=0, mix=self.spec.infer == 3)
        worlds = belief.worlds(n, self.rng, seat=0)
        if not (self.spec.infer == 1 and worlds.hider[0] > 0 and (worlds.face_down >= 0).any()):
            return worlds  # no inference asked, no band card down, or the observer hid it
        worlds = core.State.concat([worlds, belief.worlds(n * (INFER_DRAWS - 1), self.rng, seat=0)])
        dealt = core.assemble_state(self.rules, worlds.deal.copy(), worlds.dealer, worlds.open_card)  # as dealt
        bits = core.legal_bits(dealt)
        obs = self.encoder.encode(dealt, dealt.current, legal=bits)
        chosen = np.asarray(self.weigh.act(obs, unpack_sets(bits, NUM_ACTIONS).view(bool)))
        agree = chosen == worlds.band_card
        return worlds.select(np.argsort(~agree, kind="stable")[:n])

    def _play_out(self, state: core.State) -> np.ndarray:
        """(B,) the outcome for team 0 of every hand of ``state``: the rollout policy plays
        every seat (``own`` the observer's team, if given) until the outcome is settled
        (:func:`settled`, then :func:`team_value`) or ``exact`` tricks are left (then
        :func:`exact_values`), or, with a leaf value, ``cut`` tricks after the move (then the
        leaf's value). The games still rolling are kept together in one batch, so every step
        plays them all."""
        value = np.empty(state.batch_size)
        games = np.arange(state.batch_size)  # the game of ``state`` each row of the rolling batch is
        last = self.rules.n_tricks - self.spec.exact  # the rollout plays tricks before this one
        stop = state.trick_no + self.spec.cut  # with a leaf value: the trick where it ends the rollout
        while True:
            ends = settled(state)
            exact = ~ends & (state.trick_no >= last)
            cut = ~ends & ~exact & (state.trick_no >= stop[games]) & (self.leaf is not None)
            if ends.any() or exact.any() or cut.any():
                value[games[ends]] = team_value(state)[ends]
                if exact.any():
                    value[games[exact]] = exact_values(state.select(exact))
                if cut.any():
                    value[games[cut]] = self.leaf(state.select(cut))
                rolling = np.flatnonzero(~ends & ~exact & ~cut)
                if rolling.size == 0:
                    return value
                state, games = state.select(rolling), games[rolling]
            legal = core.legal_bits(state)
            masks = unpack_sets(legal, NUM_ACTIONS).view(bool)
            actions = masks.argmax(axis=1)
            free = np.flatnonzero(masks.sum(axis=1) > 1)  # a forced card needs no policy call
            if self.own is None:
                plays = [(self.rollout, self._act_state, free)]
            else:  # the observer's team (team 0 of the sampled deals) by its own policy
                team = state.current[free] % 2 == 0
                plays = [(self.own, self._own_act_state, free[team]), (self.rollout, self._act_state, free[~team])]
            obs = None  # encoded once a step, for the policies that read observations
            for policy, act_state, rows in plays:
                if rows.size and act_state is not None:  # the rule-based bots read the core state
                    actions[rows] = act_state(state, legal[rows], None if rows.size == len(masks) else rows)
                elif rows.size:
                    obs = self.encoder.encode(state, state.current, legal=legal) if obs is None else obs
                    actions[rows] = policy.act(obs[rows], masks[rows])
            core.step(state, actions, check=False)


@dataclass
class MoveLabels:
    """What the search says of a batch of decisions (:meth:`SearchAgent.labels`); NaN values and
    spreads on illegal moves and on every move of a forced decision (one legal action)."""

    values: np.ndarray  # (B, 53) float32: each legal move's mean outcome for the observer's team
    spreads: np.ndarray  # (B, 53) float32: standard error of each move's mean gain over the base move (0 on its run)
    base: np.ndarray  # (B,) int64: the base agent's move (the rollout policy's by default)
    chosen: np.ndarray  # (B,) int64: the move the search plays: the base's unless the z gate picks another


def gated(gains: np.ndarray, spreads: np.ndarray, own: int, z: float) -> int:
    """The index of the move played among moves with these mean ``gains`` over the base move
    (index ``own``) and their standard errors: the one whose gain beats ``z`` standard errors
    by the most, or the base move when none does (sampling noise falls back on it)."""
    score = gains - z * spreads
    score[own] = 0.0
    best = int(np.argmax(score))
    return best if score[best] > 0 else own


def standard_error(mean: np.ndarray, mean_square: np.ndarray, n: int) -> np.ndarray:
    """The standard error of each move's mean gain over ``n`` deals, from the mean of the gains
    and of their squares (what :meth:`SearchAgent._compare` accumulates round by round)."""
    return np.sqrt(np.maximum(mean_square - mean**2, 0.0) / max(n - 1, 1))


def distinct_moves(belief: Belief, moves: np.ndarray, prefer: int) -> np.ndarray:
    """The legal ``moves`` less those equivalent to another: one card per run of equal cards.

    Two cards of one suit are equal in play when no card ranked between them lies in another
    hand or in the current trick (the cards between are mine or gone): whichever is played, the
    other does in later tricks exactly what it would have done. Tens score, so a ten is never
    merged with another card; nor is the ask. ``prefer`` (the rollout policy's move) stands for
    its run, so the search compares moves with it on the same deals.

    Returns:
        The kept moves, sorted.
    """
    view = belief.view
    known = 1 << view.known if view.known >= 0 else 0
    # The cards that can tell two of mine apart: those in other hands and in the current trick.
    others = (belief.constraints.unseen | known | view.trick_cards) & ~view.hand
    kept: dict[object, int] = {}
    for move in [prefer, *moves.tolist()]:
        suit, rank = divmod(move, NUM_RANKS)
        if move >= NUM_CARDS or rank == TEN_RANK:
            key: object = move
        else:  # the run: suit and the cards of others ranked above it
            key = (suit, (others >> (suit * NUM_RANKS + rank + 1) & ((1 << (NUM_RANKS - 1 - rank)) - 1)).bit_count())
        kept.setdefault(key, move)
    return np.array(sorted(kept.values()), dtype=np.int64)


def equal_runs(belief: Belief, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``moves`` (:func:`distinct_moves`) and, for each of ``moves``, the index of
    the distinct one that stands for its run (equal cards: the same outcome in every deal)."""
    kept = distinct_moves(belief, moves, int(moves[0]))
    stands = np.searchsorted(kept, moves)
    for i in np.flatnonzero(kept[np.minimum(stands, kept.size - 1)] != moves):
        pairs = (distinct_moves(belief, np.array([other, moves[i]]), int(other)).size for other in kept)
        stands[i] = next(j for j, size in enumerate(pairs) if size == 1)
    return kept, stands


def _is_path(value: str) -> bool:
    """Whether a spec's value names a file or folder (a trained network) rather than an agent."""
    return "/" in value or "\\" in value or value.endswith(".pt") or Path(value).exists()


def _split_seed(seed: int | None) -> tuple[np.random.Generator, int | None]:
    """The sampler's generator and a seed of its own for the rollout agent (one seed would give
    both the same random stream)."""
    if seed is None:
        return make_rng(None), None  # the rollout keeps its own generator
    sampler, rollout = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(sampler), int(rollout.generate_state(1)[0])


def exact_values(state: core.State) -> np.ndarray:
    """(B,) the outcome for team 0 (see :func:`team_value`) of every game of ``state`` under
    perfect play with all cards open: team 0 maximising, team 1 minimising. A line ends where
    its outcome is settled (:func:`settled`).

    Every line of play is enumerated, one level of the tree per move, each level a batch on the
    core (a game with L legal moves becomes L games), then the values are backed up level by
    level. The tree grows with the cards left, so it is meant for the last tricks of a hand.
    """
    levels = []  # per level: (leaf values, live nodes, first child of each, team 0 to move)
    frontier, own = state, False  # own: the frontier is this function's to step in place
    while True:
        value = team_value(frontier)  # meaningful for the settled games
        live = np.flatnonzero(~settled(frontier))
        flags = unpack_sets(core.legal_bits(frontier)[live], NUM_ACTIONS).view(bool)
        counts = flags.sum(axis=1)
        levels.append((value, live, np.cumsum(counts) - counts, frontier.current[live] % 2 == 0))
        if live.size == 0:
            break
        parents, moves = np.nonzero(flags)  # row-major: each node's children are contiguous
        if not own or not parents.size == live.size == frontier.batch_size:  # else all live, one move each
            frontier, own = frontier.select(live[parents]), True
        core.step(frontier, moves, check=False)
    below = np.zeros(0)
    for value, live, first, maximise in reversed(levels):
        if live.size:
            value[live] = np.where(maximise, np.maximum.reduceat(below, first), np.minimum.reduceat(below, first))
        below = value
    return below


def settled(state: core.State) -> np.ndarray:
    """(B,) bool: hands over, or whose winner and points no play can change any more. Read off
    the one scoring rule (:func:`mendikot_env.core.score_hands`): taking more tens or tricks
    never hurts a team, so a hand is settled when giving every ten and trick still to come to
    one team scores the same as giving them all to the other. The search stops playing these:
    :func:`team_value` already gives their points."""
    tens, tricks = core.team_counts(state)
    tens_left = (4 - tens.sum(axis=1))[:, None]
    tricks_left = (state.rules.n_tricks - tricks.sum(axis=1))[:, None]
    to_0, to_1 = np.array([[1, 0]]), np.array([[0, 1]])  # everything still to come goes to team 0 / team 1
    winner_0, points_0 = core.score_hands(state.rules, tens + tens_left * to_0, tricks + tricks_left * to_0)
    winner_1, points_1 = core.score_hands(state.rules, tens + tens_left * to_1, tricks + tricks_left * to_1)
    return (winner_0 == winner_1) & (points_0 == points_1)


def team_value(state: core.State) -> np.ndarray:
    """(B,) the hand's outcome for team 0 (the observer's in the sampled deals): the points it
    scores or loses (:func:`mendikot_env.core.score_hands`: tiered pays 2 for a mendikot, 3 for
    a whitewash), plus a tie-break of a hundredth of the tens and tricks margins (taken so far,
    for a hand stopped once :func:`settled`)."""
    tens, tricks = core.team_counts(state)
    winner, points = core.score_hands(state.rules, tens, tricks)
    sign = np.where(winner == 0, 1.0, np.where(winner == 1, -1.0, 0.0))
    margin = (tens[:, 0] - tens[:, 1]) / 4 + (tricks[:, 0] - tricks[:, 1]) / state.rules.n_tricks
    return sign * points + 0.01 * margin
