"""Policy weighting: deals weighed by how likely a policy was to make the moves seen, and
:class:`Belief`, the seat's uniform belief with that weighting and the worlds built from it.

Uniform deals (:class:`~mendikot_env.belief.sampler.DealSampler`) assume that the hider chose
its face-down card uniformly from its hand and that every player played any legal card.
:meth:`Belief.weigh` drops that assumption for a given policy (policy-based inference, as
Skat's Kermit does): each deal is replayed from the start of the hand through the moves seen
(:func:`~mendikot_env.belief.replay.replay_worlds`, which needs the history pieces in the
observation), and its weight is
the chance of the other seats' moves under the policy, hide and asks included, so in band
hukum the posterior over the face-down card also reflects how the policy hides.
:meth:`Belief.likeliest` keeps the likeliest deals instead, dropping the hopeless ones as the
replay goes, and can pair one opponent's cards from one draw with the other's from another
(``mix``). :class:`~mendikot_env.belief.replay.Weighing` holds the settings of both.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..cards import NUM_RANKS, NUM_SUITS, SUIT_MASKS, unpack_sets
from ..checks import is_integer
from ..core import State
from ..seeding import make_rng
from .replay import EPSILON, Weighing, replay_worlds
from .sampler import DealSampler, InfoState
from .worlds import build_worlds


class Belief(DealSampler):
    """The belief of one seat over the unseen cards, from its observation alone: uniform
    (:class:`~mendikot_env.belief.sampler.DealSampler`), or weighted by a policy with
    :meth:`weigh`; and the worlds built from it.

    Args:
        info: the seat's observation (and mask) with its rules.

    Example:
        >>> from mendikot_env import Rules, core, ObservationEncoder
        >>> state = core.new_hands(Rules(), 1, rng=0)
        >>> obs = ObservationEncoder(Rules()).encode(state, state.current)[0]
        >>> Belief(InfoState(Rules(), obs)).sample_hands(5, rng=0).shape  # 4 seats, then the face-down slot
        (5, 5)
    """

    def worlds(
        self,
        n: int,
        rng: np.random.Generator | int | None = None,
        seat: int = 0,
        *,
        policy: Any = None,
        draws: int | None = None,
        epsilon: float = EPSILON,
    ) -> State:
        """n core states consistent with the observation (see :func:`sample_worlds`).

        With a ``policy`` (needs the history), ``draws`` uniform deals (default 4 n, at least
        n) are weighted by the chance of the moves seen under it (see :meth:`weigh`, and
        :data:`EPSILON` for ``epsilon``) and n of them resampled in proportion.
        """
        rng = make_rng(rng, "rng")
        if policy is not None:
            weighted = self.weigh(policy, max(n, draws or 4 * n), rng, seat, epsilon)
            return weighted.worlds.select(weighted.resample(n, rng))
        hidden = self.sample_hands(n, rng)
        if self.view.history is not None:
            return replay_worlds(self, hidden, seat)[0]
        return build_worlds(self, hidden, seat)

    def weigh(
        self,
        policy: Any,
        draws: int,
        rng: np.random.Generator | int | None = None,
        seat: int = 0,
        epsilon: float = EPSILON,
    ) -> WeightedDeals:
        """``draws`` uniform deals, each weighted by how likely ``policy`` was to make the other
        seats' moves seen so far (policy-based inference, as Skat's Kermit does).

        Each deal is replayed from the start of the hand through the observed history, all
        deals as one core batch; at every move of another seat (the band card's hide and
        every ask included) the policy acts on that seat's observation in each deal, and the
        deal's weight is multiplied by the chance of the move seen: ``(1 - epsilon) * p +
        epsilon / legal moves``, where ``p`` is the policy's ``probabilities`` for the move if
        it has them (network agents), else 1 if ``act`` chooses it and 0 if not.

        Args:
            policy: any agent (``act(observations, masks)``), assumed to play every other seat.
            draws: number M of uniform deals to weigh.
            rng: a Generator or a seed for the draws.
            seat: the observer's absolute seat in the replayed worlds.
            epsilon: the share of the chance spread uniformly over the legal moves.

        Returns:
            The weighted deals (:class:`WeightedDeals`): resample them, or read their
            marginals and their effective sample size.

        Raises:
            ValueError: the observation has no history (encode with ``history=True``), or
                ``draws`` or ``epsilon`` is out of range.
        """
        self._check_weighing(draws, epsilon)
        hidden = self.sample_hands(draws, rng)
        worlds, log_weights = replay_worlds(self, hidden, seat, policy, Weighing(epsilon=epsilon))
        return WeightedDeals(self, hidden, worlds, log_weights)

    def likeliest(
        self,
        policy: Any,
        n: int,
        draws: int,
        rng: np.random.Generator | int | None = None,
        seat: int = 0,
        weighing: Weighing | None = None,
        **options: Any,
    ) -> State:
        """The n likeliest of ``draws`` uniform deals under ``policy`` (as :meth:`weigh`
        weighs them), replayed to the observed point: distinct deals, for a search that
        must not count one deal twice.

        ``weighing`` (default :class:`Weighing`'s defaults), with ``options`` changing its
        fields for this call (``mix=True``), says how: deals that fall more than ``margin`` (in
        log chance) behind the n-th best are dropped during the replay, which spares the policy
        some of its calls; with a large margin the result is exactly the n highest weights of
        :meth:`weigh`. With ``recent``, only the last ``recent`` moves seen are weighed (the
        cost no longer grows with the hand). With ``opponents_only``, the partner's moves are
        replayed unweighed: for a partner who does not play like ``policy`` (another copy of a
        search), its moves would mislead.

        With ``mix`` (four players; implies ``opponents_only``, no pruning): a deal's weight is
        the product of its two opponents' (each seat's moves depend on its own cards alone), so
        one opponent's cards from one draw and the other's from another make a deal whenever
        they do not overlap and the cards left fit the partner: the n likeliest of those pairs
        are returned, many more deals to choose from than the draws for the same policy calls.
        With another player count, or while the auto reveal binds the seat to act to a suit,
        ``mix`` is ignored.

        Raises:
            ValueError: the observation has no history, or a count or ``epsilon`` out of range.
        """
        how = replace(weighing or Weighing(), **options)
        self._check_weighing(draws, how.epsilon)
        if not is_integer(n) or not 1 <= n <= draws:
            raise ValueError(f"n must be an integer from 1 to draws ({draws}), got {n!r}")
        if how.recent is not None and (not is_integer(how.recent) or how.recent < 0):
            raise ValueError(f"recent must be None or an integer >= 0, got {how.recent!r}")
        hidden = self.sample_hands(draws, rng)
        if how.mix and self.rules.n_players == 4 and self.constraints.holds is None:
            opponents = replace(how, opponents_only=True)
            _, by_seat = replay_worlds(self, hidden, seat, policy, opponents, by_seat=True)
            return replay_worlds(self, _mixed_deals(self, hidden, by_seat, n, make_rng(rng, "rng")), seat)[0]
        worlds, log_weights = replay_worlds(self, hidden, seat, policy, how, keep=n)
        return worlds.select(np.argsort(-log_weights, kind="stable")[:n])

    def _check_weighing(self, draws: int, epsilon: float) -> None:
        """The checks of :meth:`weigh` and :meth:`likeliest` (their callers' input)."""
        if self.view.history is None:
            raise ValueError(
                "policy-weighted inference replays the moves seen: it needs an observation with history "
                "(ObservationEncoder(rules, history=True))"
            )
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon!r}")
        if not is_integer(draws) or draws < 1:
            raise ValueError(f"draws must be a positive integer, got {draws!r}")


@dataclass(frozen=True)
class WeightedDeals:
    """Uniform deals with importance weights from a policy (see :meth:`Belief.weigh`)."""

    belief: Belief
    hands: np.ndarray  # (M, slots) uint64: unseen cards of each slot, as Belief.sample_hands
    worlds: State  # batch M: the deals replayed to the observed point
    log_weights: np.ndarray  # (M,) float64: log chance of the other seats' moves under the policy

    @property
    def weights(self) -> np.ndarray:
        """(M,) the normalised weights."""
        w = np.exp(self.log_weights - self.log_weights.max())
        return w / w.sum()

    @property
    def ess(self) -> float:
        """Effective sample size ``1 / sum(w ** 2)``: M for equal weights, 1 when one deal has all."""
        return float(1.0 / np.square(self.weights).sum())

    def resample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """(n,) indices of deals drawn with replacement in proportion to their weights."""
        return make_rng(rng, "rng").choice(self.weights.size, size=n, p=self.weights)

    def card_marginals(self) -> np.ndarray:
        """(slots, 52) the weighted chance that each unseen card lies in each slot."""
        bits = unpack_sets(self.hands)  # (M, slots, 52)
        return np.einsum("m,msc->sc", self.weights, bits.astype(np.float64))

    def trump_posterior(self) -> np.ndarray:
        """(4,) the chance of each suit being trump, as :meth:`Belief.trump_posterior`."""
        belief = self.belief
        if belief.view.trump >= 0 or belief.view.my_face_down >= 0 or not belief.constraints.sizes[-1]:
            return belief.trump_posterior()
        return self.card_marginals()[-1].reshape(NUM_SUITS, NUM_RANKS).sum(axis=1)


def sample_worlds(info_state: InfoState, n: int, rng: np.random.Generator | int | None = None, seat: int = 0) -> State:
    """n core states (a batch of n) consistent with everything the seat knows, face-down card included.

    Each is a uniform draw from the deals consistent with the observation, built so that the
    core plays on from it exactly as from the true state: encoded for the seat, each gives
    back the same observation (and, if the seat acts, the same legal mask). With the history
    pieces in the observation each world is the deal replayed through the moves seen, so its
    whole past (the order of play, the tricks each team took) is the one observed.

    Args:
        info_state: the seat's observation (and mask) with its rules.
        n: number of worlds.
        rng: a Generator or a seed for the draw.
        seat: the absolute seat to give the observer in the worlds (relative seat k sits
            at ``(seat + k) % n_players``; the rules do not depend on the numbering).

    Returns:
        A :class:`~mendikot_env.core.State` of batch n. For worlds weighted by a policy,
        ``Belief(info_state).worlds(n, rng, seat, policy=agent)``.
    """
    return Belief(info_state).worlds(n, rng, seat)


def _mixed_deals(
    belief: DealSampler, hidden: np.ndarray, by_seat: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """(n, slots) the likeliest deals made of one opponent's cards from one draw and the
    other's from another (four players; see :meth:`Belief.likeliest` with ``mix``).

    Each opponent's unit is its unseen cards and, if it hid the band card still face down,
    that card (its hide and play depend on it). A pair makes a deal when the units do not
    overlap and the cards left fit the partner's void suits; when the partner hid the face-down
    card, it is the first draw's face-down card, or the second's, whichever is left over. Pairs
    of equal weight (the same number of moves the policy would not have made, or no move weighed
    yet) are taken in random order: in the order of the grid they would share one opponent's hand.
    """
    slots = belief.constraints
    down = slots.sizes[4] > 0  # a face-down card the observer does not know
    hider = belief.view.hider
    face_down = hidden[:, 4]

    def unit(k: int) -> np.ndarray:
        return hidden[:, k] | face_down if down and hider == k else hidden[:, k]

    first, second = unit(1), unit(3)
    first_ids = np.unique(first, return_index=True)[1]  # equal cards, equal weight: once each
    second_ids = np.unique(second, return_index=True)[1]
    a, b = first_ids[:, None], second_ids[None, :]
    unseen = np.uint64(slots.unseen)
    fits = (first[a] & second[b]) == 0
    partner_hid = down and hider == 2
    forbidden = np.uint64(sum(int(SUIT_MASKS[s]) for s in range(NUM_SUITS) if not slots.allowed[2][s]))
    if partner_hid or forbidden:  # the partner's cards (and the card it hid) must fit: a grid of them
        left = unseen & ~first[a] & ~second[b]
        partner_down = np.zeros_like(left)
        if partner_hid:
            partner_down = _partner_down(face_down[a], face_down[b], left)
            fits &= partner_down != 0
        fits &= ((left & ~partner_down) & forbidden) == 0
    score = by_seat[a, 1] + by_seat[b, 3]
    rows, cols = np.nonzero(fits)
    ties = rng.random(rows.size) * 1e-6  # far below any difference of two weights (> 1e-3)
    best = np.argsort(-(score[rows, cols] + ties), kind="stable")[:n]
    i, j = first_ids[rows[best]], second_ids[cols[best]]
    out = np.zeros((best.size, hidden.shape[1]), np.uint64)
    out[:, 1] = hidden[i, 1]
    out[:, 3] = hidden[j, 3]
    left = unseen & ~first[i] & ~second[j]  # the kept pairs' partner cards
    if partner_hid:
        out[:, 4] = _partner_down(face_down[i], face_down[j], left)
    elif down:  # an opponent hid it: its own draw's card
        out[:, 4] = face_down[i] if hider == 1 else face_down[j]
    out[:, 2] = left & ~out[:, 4]
    return np.resize(out, (n, out.shape[1]))  # fewer distinct deals than n exist: some come twice


def _partner_down(first_down: np.ndarray, second_down: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The card the partner hid in a pair of draws: the first draw's face-down card if it is
    left to the partner, else the second's (0 when neither is)."""
    return np.where(first_down & left, first_down, second_down & left)
