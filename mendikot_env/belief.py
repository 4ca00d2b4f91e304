"""What one seat knows about the cards it cannot see, and deals sampled from that knowledge.

A seat's observation (see :mod:`mendikot_env.observation`) fixes its own hand, every card
played and by whom, the suits each seat has failed to follow, the revealed band card while it
is back in the hider's hand, and so how many unseen cards each other hand holds. In band hukum
the face-down card is one more hidden *slot* of one card for the three seats that did not hide
it (any suit: a void of the hider says nothing about it, since the face-down card is not in
the hand for following suit); the hider knows it.

:class:`Belief` turns one observation into these constraints and samples complete deals
uniformly among the deals consistent with them, exactly: cards of one suit are
interchangeable, so the number of consistent deals is a sum over how many cards of each suit
each slot holds, which a dynamic programme over the four suits counts
(``P[s][caps]``: the ways to place the unseen cards of suits ``< s`` into slots with room
``caps``). Sampling walks the suits backwards, draws each suit's counts in proportion to
their completions, then deals the suit's cards at random in those counts. Every sample is a
uniform draw; no rejection is involved.

:func:`sample_worlds` builds core states from those deals, ready to be stepped by
:func:`mendikot_env.core.step`: a search agent plays its candidate moves out in them.

With the history pieces in the observation (``ObservationEncoder(rules, history=True)``,
see :func:`mendikot_env.observation.read_history`) the belief knows two more facts, which
the plain observation loses once the trick is over: the seat whose turn turned the band card
up could not follow the suit led (the hider included, whose band card may be of that suit),
and an asker who then played no trump has none. Each world is then the sampled deal replayed
from the start of the hand through the moves seen, so its whole past (tricks, takings, order
of play) is the observed one. Without the history what the observation does not hold is
filled in so that the rules play on identically: which cards each team took (only the counts
of tens and tricks matter to the rules), the winners of earlier tricks (only the last one,
the run holder, is kept), the order of the earlier tricks' cards and, after the band card was
played, which card it was.

Uniform means the hider is assumed to have chosen its face-down card uniformly from its hand,
and every player to have played any legal card. :meth:`Belief.weigh` drops that assumption
for a given policy (policy-based inference, as Skat's Kermit does): it weighs uniform deals by
the chance of the other seats' moves seen under the policy, hide and asks included, so in band
hukum the posterior over the face-down card also reflects how the policy hides.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache, lru_cache
from math import factorial
from typing import Any

import numpy as np

from .cards import (
    ASK_ACTION,
    CARD_BITS,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SUITS,
    SUIT_MASKS,
    TENS_MASK,
    cards_to_set,
    pack_sets,
    set_to_cards,
    unpack_sets,
)
from .checks import is_integer
from .core import (
    CARD_SETS,
    HIDE,
    NO_CARD,
    NO_SEAT,
    NO_SUIT,
    OVER,
    PLAY,
    State,
    legal_bits,
    new_hands,
    pack_cards,
    step,
)
from .infostate import SeatInfo
from .observation import ObservationEncoder, decode_info, reads_history, same_but_match_score
from .rules import Rules
from .seeding import make_rng

# A deterministic policy's move gets probability 1 - EPSILON, and every legal move EPSILON /
# (legal moves) more: a deal where the policy would have played otherwise is unlikely, not
# impossible (people and bots are not perfectly predictable, and one zero would end a deal).
EPSILON = 0.1
# Belief.likeliest drops a deal once its log chance is this far behind the n-th best: a deal one
# move the policy would not have made behind (log(0.9 / 0.025) = 3.6 with four legal moves) is kept, two are not.
LIKELIEST_MARGIN = 5.0
# Largest (samples x suit counts x slots) block drawn at once: bounds memory with 6 or 8 players.
_BLOCK = 2_000_000
_ROOM_RADIX = 64 ** np.arange(10, dtype=np.int64)  # room vectors (up to 10 slots, entries < 64) as integers


@dataclass(frozen=True)
class InfoState:
    """Everything one seat knows at a decision: its observation, and its legal mask if it acts.

    The mask settles the one public fact the observation leaves open: whether a player who
    asked for the band card still owes a trump (it then shows in the legal actions).
    """

    rules: Rules
    observation: np.ndarray  # (D,) float32 observation of one seat, plain or with history
    mask: np.ndarray | None = None  # (53,) legal actions of that seat, when it is to act


SeatView = SeatInfo  # the name this module gave the decoded observation before the information state had one


@cache
def _encoder(rules: Rules, history: bool = False) -> ObservationEncoder:
    return ObservationEncoder(rules, history)


def read_view(rules: Rules, observation: np.ndarray) -> SeatInfo:
    """Decode one seat's observation vector into what it knows (a one-game
    :class:`~mendikot_env.infostate.SeatInfo`, by :func:`~mendikot_env.observation.decode_info`).

    Args:
        rules: the rules the observation was encoded for.
        observation: (D,) observation vector, plain or with history.

    Returns:
        The decoded record, relative seats as in the observation.
    """
    size, with_history = _encoder(rules).size, _encoder(rules, True).size
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape not in ((size,), (with_history,)):
        raise ValueError(
            f"a belief needs one ({size},) observation of {rules} (or ({with_history},) with history), "
            f"got shape {obs.shape}"
        )
    return decode_info(rules, obs)


@dataclass(frozen=True)
class Constraints:
    """Where the unseen cards may lie. Slots ``0..n-1`` are the relative seats (0, the
    observer, holds nothing unseen), slot ``n`` the face-down band card when the observer
    does not know it."""

    unseen: int  # card set to place
    sizes: tuple[int, ...]  # (n + 1,) unseen cards each slot holds
    allowed: tuple[tuple[bool, ...], ...]  # (n + 1, 4): the slot may hold cards of the suit
    # (slot, suit) the slot holds at least one card of, or None: with reveal="auto" the seat to
    # act while the band card is face down can follow the suit led (else the card would be up).
    holds: tuple[int, int] | None = None


def constraints(rules: Rules, view: SeatInfo) -> Constraints:
    """The constraints on the unseen cards that ``view`` implies (see :class:`Constraints`).

    Raises:
        ValueError: the hand sizes do not add up to the unseen cards (not an observation of ``rules``).
    """
    n, h = rules.n_players, rules.hand_size
    pack = cards_to_set(pack_cards(rules))
    played = view.all_played
    mine = view.hand | (1 << view.my_face_down if view.my_face_down >= 0 else 0)
    known = 1 << view.known if view.known >= 0 else 0
    unseen = pack & ~mine & ~played & ~known
    face_down_slot = view.phase == PLAY and view.trump_state == 1 and view.my_face_down < 0
    sizes = [0] * (n + 1)
    for k in range(1, n):
        hider = k == view.hider
        sizes[k] = h - view.played[k].bit_count() - (hider and view.trump_state == 1) - (hider and view.known >= 0)
    sizes[n] = int(face_down_slot)
    voids = history_voids(rules, view)
    allowed = [tuple(not (voids[k] >> s & 1) for s in range(NUM_SUITS)) for k in range(n)]
    allowed.append((True,) * NUM_SUITS)
    _check_variant(rules, view)
    if sum(sizes) != unseen.bit_count() or min(sizes) < 0:
        raise ValueError(
            f"this observation is not one of {rules}: the other hands hold {sizes} cards "
            f"but {unseen.bit_count()} cards are unseen"
        )
    holds = None
    if rules.reveal == "auto" and view.phase == PLAY and view.trump_state == 1 and view.led >= 0:
        to_act = (view.leader + sum(card >= 0 for card in view.trick)) % n
        holds = (to_act, view.led) if to_act else None
    return Constraints(unseen, tuple(sizes), tuple(allowed), holds)


def history_voids(rules: Rules, view: SeatInfo) -> list[int]:
    """The 4-bit sets of suits each relative seat is known to lack: the observed voids, and
    with the history two facts of the reveal the voids do not hold. The seat whose turn
    turned the band card up could not follow the suit led to that trick (the hider too,
    whose band card may be of that suit: it then follows with it and shows no void); an
    asker who then plays no trump has none, since asking binds it to trump if it can."""
    voids = list(view.voids)
    history, by = view.history, view.revealed_by
    if history is None or by < 0:
        return voids
    n, plays, reveal = rules.n_players, history.plays, history.reveal
    if reveal % n and reveal - reveal % n < len(plays):  # not the leader of its trick
        voids[by] |= 1 << plays[reveal - reveal % n][1] // NUM_RANKS
    if view.asked and reveal < len(plays) and plays[reveal][1] // NUM_RANKS != view.trump:
        voids[by] |= 1 << view.trump
    return voids


def _check_variant(rules: Rules, view: SeatInfo) -> None:
    """Refuse an observation whose trump method or collection is not that of ``rules``.

    Raises:
        ValueError: naming what the observation shows and the rules it was given as.
    """
    shows = []
    band = view.hider >= 0
    if band != (rules.trump == "band"):
        shows.append("a band card hidden" if band else "no band card hidden")
    if (view.open_card >= 0) != (rules.trump == "open"):
        shows.append("an open draw" if view.open_card >= 0 else "no open draw")
    if view.middle[1] > 0 and rules.collection != "dehla":
        shows.append("a Dehla Pakad middle")
    if shows:
        raise ValueError(f"this observation shows {' and '.join(shows)}: it is not an observation of {rules}")


def _suit_cards(unseen: int) -> list[np.ndarray]:
    """The unseen card ids of each suit."""
    ids = np.array(set_to_cards(unseen), dtype=np.int64)
    return [ids[ids // NUM_RANKS == s] for s in range(NUM_SUITS)]


def _compositions(count: int, allowed: np.ndarray, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ways to split ``count`` cards of one suit over the slots: (V, S) counts per slot (0
    where not allowed, at most ``caps``) and (V,) multinomial weights ``count! / prod(k!)``
    (read-only: a search draws deals for the same constraints many times)."""
    return _compositions_of(count, tuple(allowed.tolist()), tuple(caps.tolist()))


@lru_cache(maxsize=4096)
def _compositions_of(
    count: int, allowed_slots: tuple[bool, ...], cap_of: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_compositions`, of hashable arguments."""
    allowed, caps = np.array(allowed_slots, bool), np.array(cap_of, np.int64)
    slots = np.flatnonzero(allowed)
    if slots.size == 0:
        return np.zeros((0, caps.size), np.int64), np.zeros(0)
    ranges = [range(min(count, int(caps[j])) + 1) for j in slots[:-1]]
    rows = []
    for head in itertools.product(*ranges):
        last = count - sum(head)
        if 0 <= last <= caps[slots[-1]]:
            rows.append((*head, last))
    parts = np.zeros((len(rows), caps.size), np.int64)
    if rows:
        parts[:, slots] = np.array(rows, dtype=np.int64)
    weights = np.array([factorial(count) / np.prod([factorial(int(k)) for k in row]) for row in parts])
    parts.flags.writeable = weights.flags.writeable = False
    return parts, weights


def _forward(sizes: np.ndarray, allowed: np.ndarray, counts: list[int]) -> list[np.ndarray]:
    """P[s] for s = 0..4: ways to place the unseen cards of suits < s into slots of room
    ``caps`` (an array over every caps vector up to ``sizes``). Each card multiplies the
    generating polynomial by the sum of the slots allowed its suit: one shifted add per slot."""
    shape = tuple(int(c) + 1 for c in sizes)
    table = np.zeros(shape)
    table[(0,) * len(shape)] = 1.0
    tables = [table]
    for suit, count in enumerate(counts):
        for _ in range(count):
            grown = np.zeros(shape)
            for j in np.flatnonzero(allowed[:, suit]):
                src = [slice(None)] * len(shape)
                dst = [slice(None)] * len(shape)
                src[j], dst[j] = slice(0, -1), slice(1, None)
                grown[tuple(dst)] += table[tuple(src)]
            table = grown
        tables.append(table)
    return tables


class Belief:
    """The uniform belief of one seat over the unseen cards, from its observation alone
    (weighted by a policy with :meth:`weigh`).

    Args:
        info: the seat's observation (and mask) with its rules.

    Example:
        >>> from mendikot_env import Rules, core, ObservationEncoder
        >>> state = core.new_hands(Rules(), 1, rng=0)
        >>> obs = ObservationEncoder(Rules()).encode(state, state.current)[0]
        >>> Belief(InfoState(Rules(), obs)).sample_hands(5, rng=0).shape  # 4 seats, then the face-down slot
        (5, 5)
    """

    def __init__(self, info: InfoState) -> None:
        self.info = info
        self.rules = info.rules
        self.view = read_view(info.rules, info.observation)
        self.constraints = constraints(info.rules, self.view)
        sizes = np.array(self.constraints.sizes)
        self._active = np.flatnonzero(sizes > 0)  # the slots with unseen cards
        self._sizes = sizes[self._active]
        self._allowed = np.array(self.constraints.allowed, dtype=bool)[self._active]
        self._cards = _suit_cards(self.constraints.unseen)
        self._tables = _forward(self._sizes, self._allowed, [c.size for c in self._cards])
        self._all = float(self._tables[-1][tuple(self._sizes)])  # deals without the `holds` constraint
        self._void_allowed = None  # where the cards may lie in the deals `holds` excludes
        self.count = self._all
        if self.constraints.holds is not None:  # the deals where that slot lacks the suit do not count
            slot, suit = self.constraints.holds
            self._void_allowed = self._allowed.copy()
            self._void_allowed[np.flatnonzero(self._active == slot), suit] = False
            counts = [c.size for c in self._cards]
            self.count -= float(_forward(self._sizes, self._void_allowed, counts)[-1][tuple(self._sizes)])
        if self.count <= 0:
            raise ValueError("no deal is consistent with this observation (a seat is void in every suit left)")

    def sample_hands(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """(n, slots) uint64: the unseen cards of every slot (relative seats, then the
        face-down card) in n deals drawn uniformly from the consistent ones. The one
        constraint the count over suits leaves out (``holds``: with auto reveal, a suit the
        seat to act must hold) is met by drawing again the deals that break it."""
        rng = make_rng(rng, "rng")
        if self.constraints.holds is None:
            return self._draw(n, rng)
        slot, suit = self.constraints.holds
        kept, found = [], 0
        accept = self.count / self._all
        while found < n:
            drawn = self._draw(int((n - found) / accept * 1.1) + 8, rng)
            drawn = drawn[(drawn[:, slot] & SUIT_MASKS[suit]) != 0]
            kept.append(drawn)
            found += drawn.shape[0]
        return np.concatenate(kept)[:n]

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """(n, slots) uniform deals under the void and size constraints."""
        out = np.zeros((n, len(self.constraints.sizes)), np.uint64)
        if self._active.size == 0:
            return out
        caps = np.tile(self._sizes, (n, 1))
        strides = np.array(self._tables[0].strides) // self._tables[0].itemsize
        hidden = np.zeros((n, self._active.size), np.uint64)
        for suit in reversed(range(NUM_SUITS)):
            cards = self._cards[suit]
            if cards.size == 0:
                continue
            parts, weights = _compositions(cards.size, self._allowed[:, suit], self._sizes)
            counts = np.empty_like(caps)
            flat_table = self._tables[suit].reshape(-1)
            # The chance of each split depends on the room left in the slots alone: computed
            # once per distinct room (few: the suits drawn so far left only so many).
            keys = caps @ _ROOM_RADIX[: caps.shape[1]]  # one integer per room vector (each entry < 64)
            _, first, room_of = np.unique(keys, return_index=True, return_inverse=True)
            rooms = caps[first]
            rest = rooms[:, None, :] - parts[None]  # (rooms, V, S)
            fits = (rest >= 0).all(axis=2)
            ways = np.where(fits, flat_table[(np.maximum(rest, 0) * strides).sum(axis=2)], 0.0) * weights
            cdf = np.cumsum(ways, axis=1)
            block = max(1, _BLOCK // max(1, parts.shape[0]))
            for lo in range(0, n, block):  # blocks bound the (samples, V) arrays
                at = room_of[lo : lo + block]
                target = rng.random(at.size) * cdf[at, -1]
                counts[lo : lo + block] = parts[(cdf[at] <= target[:, None]).sum(axis=1)]
            caps -= counts
            hidden |= _deal_suit(cards, counts, rng)
        out[:, self._active] = hidden
        return out

    def card_marginals(self) -> np.ndarray:
        """(slots, 52) exact chance that each unseen card lies in each slot (relative seats,
        then the face-down card): counted, not sampled, by fixing the card in the slot."""
        ways = self._ways(self._allowed)
        if self._void_allowed is not None:
            ways -= self._ways(self._void_allowed)  # less the deals `holds` excludes
        return ways / self.count

    def _ways(self, allowed: np.ndarray) -> np.ndarray:
        """(slots, 52) deals under ``allowed`` with each card in each slot."""
        out = np.zeros((len(self.constraints.sizes), NUM_CARDS))
        base = [c.size for c in self._cards]
        for suit, cards in enumerate(self._cards):
            for i, slot in enumerate(self._active):
                if cards.size == 0 or not allowed[i, suit]:
                    continue
                sizes, counts = self._sizes.copy(), list(base)
                sizes[i] -= 1
                counts[suit] -= 1
                out[slot, cards] = _forward(sizes, allowed, counts)[-1][tuple(sizes)]
        return out

    def face_down_posterior(self) -> np.ndarray:
        """(52,) the chance of each card being the face-down band card while it is face down
        (one-hot for the hider; all zero when no card is face down)."""
        n = self.rules.n_players
        out = np.zeros(NUM_CARDS)
        if self.view.my_face_down >= 0:
            out[self.view.my_face_down] = 1.0
        elif self.constraints.sizes[n]:
            out = self.card_marginals()[n]
        return out

    def trump_posterior(self) -> np.ndarray:
        """(4,) the chance of each suit being trump: one-hot once trump is public (or for
        the hider), the face-down card's suit posterior while it is down, else all zero."""
        if self.view.trump >= 0:
            return np.eye(NUM_SUITS)[self.view.trump]
        return self.face_down_posterior().reshape(NUM_SUITS, NUM_RANKS).sum(axis=1)

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
        worlds, log_weights = replay_worlds(self, hidden, seat, policy, epsilon)
        return WeightedDeals(self, hidden, worlds, log_weights)

    def likeliest(
        self,
        policy: Any,
        n: int,
        draws: int,
        rng: np.random.Generator | int | None = None,
        seat: int = 0,
        epsilon: float = EPSILON,
        margin: float = LIKELIEST_MARGIN,
        recent: int | None = None,
        opponents_only: bool = False,
        mix: bool = False,
    ) -> State:
        """The n likeliest of ``draws`` uniform deals under ``policy`` (as :meth:`weigh`
        weighs them), replayed to the observed point: distinct deals, for a search that
        must not count one deal twice.

        Deals that fall more than ``margin`` (in log chance) behind the n-th best are dropped
        during the replay, which spares the policy some of its calls; with a large margin the
        result is exactly the n highest weights of :meth:`weigh`. With ``recent``, only the
        last ``recent`` moves seen are weighed (the cost no longer grows with the hand). With
        ``opponents_only``, the partner's moves are replayed unweighed: for a partner who does
        not play like ``policy`` (another copy of a search), its moves would mislead.

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
        self._check_weighing(draws, epsilon)
        if not is_integer(n) or not 1 <= n <= draws:
            raise ValueError(f"n must be an integer from 1 to draws ({draws}), got {n!r}")
        if recent is not None and (not is_integer(recent) or recent < 0):
            raise ValueError(f"recent must be None or an integer >= 0, got {recent!r}")
        hidden = self.sample_hands(draws, rng)
        if mix and self.rules.n_players == 4 and self.constraints.holds is None:
            _, by_seat = replay_worlds(
                self, hidden, seat, policy, epsilon, recent=recent, opponents_only=True, by_seat=True
            )
            return replay_worlds(self, _mixed_deals(self, hidden, by_seat, n, make_rng(rng, "rng")), seat)[0]
        worlds, log_weights = replay_worlds(self, hidden, seat, policy, epsilon, n, margin, recent, opponents_only)
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


def _deal_suit(cards: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n, S) uint64: the cards of one suit dealt at random, ``counts[i, j]`` to slot j of sample i."""
    n = counts.shape[0]
    shuffled = cards[np.argsort(rng.random((n, cards.size)), axis=1)]
    # Slot j takes the shuffled cards from place bounds[j - 1] to bounds[j]: the difference of
    # two running sums of their bits (distinct bits: the sums are exact sets).
    running = np.zeros((n, cards.size + 1), np.uint64)
    np.cumsum(CARD_BITS[shuffled], axis=1, out=running[:, 1:])
    bounds = np.zeros((n, counts.shape[1] + 1), np.int64)
    np.cumsum(counts, axis=1, out=bounds[:, 1:])
    ends = np.take_along_axis(running, bounds, axis=1)
    return ends[:, 1:] - ends[:, :-1]


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


def replay_worlds(
    belief: Belief,
    hidden: np.ndarray,
    seat: int = 0,
    policy: Any = None,
    epsilon: float = EPSILON,
    keep: int | None = None,
    margin: float = 0.0,
    recent: int | None = None,
    opponents_only: bool = False,
    by_seat: bool = False,
) -> tuple[State, np.ndarray]:
    """The sampled deals replayed from the start of the hand through the observed history.

    The moves are public and the same in every deal, so the deals step in lockstep as one
    batch: the hide (the band card of each deal), then each card, the ask just before the
    card it came before. With a ``policy``, every move of another seat multiplies each
    deal's weight by its chance under the policy (see :meth:`Belief.weigh`).

    With ``recent``, only the last ``recent`` moves are weighed (the others are replayed); with
    ``opponents_only``, only the moves of the other team.
    With ``keep``, deals whose log weight falls more than ``margin`` below the ``keep``-th
    best are dropped as the replay goes (a weight only falls, so they are unlikely to end
    among the ``keep`` likeliest), and the worlds returned are those left.

    Returns:
        The replayed worlds and their log weights (zeros without a policy): (M,), or with
        ``by_seat`` (M, n) per relative seat of the mover (a seat's moves depend on its own
        cards and the public facts alone, so a deal's weight is the product of its hands').

    Raises:
        ValueError: the replay does not give back the observation (it was altered).
    """
    rules, view = belief.rules, belief.view
    history = view.history
    assert history is not None
    n, M = rules.n_players, hidden.shape[0]
    absolute = [(seat + k) % n for k in range(n)]
    deal = np.zeros((M, n), np.uint64)
    deal[:, absolute] = hidden[:, :n] | np.array(view.played, np.uint64)
    deal[:, seat] |= np.uint64(view.hand)
    if view.my_face_down >= 0:
        band = np.full(M, view.my_face_down)
    elif view.phase == PLAY and view.trump_state == 1:
        band = _first_card(hidden[:, n])
    else:
        band = np.full(M, history.band_card)  # -1 before the hide
    if view.hider >= 0 and view.phase != HIDE:
        deal[:, absolute[view.hider]] |= CARD_BITS[band]
    cards = np.nonzero(unpack_sets(deal))[2].reshape(M, n, rules.hand_size)
    open_cards = np.full(M, view.open_card) if rules.trump == "open" else None
    worlds = new_hands(rules, M, 0, deals=cards, dealers=absolute[view.dealer], open_cards=open_cards)
    moves: list[np.ndarray | int] = [band] if view.hider >= 0 and view.phase != HIDE else []
    for i, (_, card) in enumerate(history.plays):
        moves += [ASK_ACTION, card] if view.asked and i == history.reveal else [card]
    if view.asked and history.reveal == len(history.plays):
        moves.append(ASK_ACTION)
    log_weights = np.zeros((M, n) if by_seat else M)
    encoder = _encoder(rules, reads_history(policy))
    score = _match_points(rules, view, seat) if policy is not None else None
    first = 0 if recent is None else len(moves) - recent  # the first move weighed
    for i, move in enumerate(moves):
        mover = int(worlds.current[0])
        weighed = mover != seat and (not opponents_only or (mover - seat) % 2 == 1)
        if policy is not None and weighed and i >= first:
            chance = np.log(_chance(policy, encoder, worlds, mover, move, epsilon, score))
            if by_seat:
                log_weights[:, (mover - seat) % n] += chance
            else:
                log_weights += chance
            if keep is not None and log_weights.shape[0] > keep:
                total = log_weights.sum(axis=1) if by_seat else log_weights
                alive = total >= np.partition(total, -keep)[-keep] - margin
                if not alive.all():
                    worlds, log_weights = worlds.select(alive), log_weights[alive]
                    if np.ndim(move):
                        move = move[alive]  # the hide: each deal's own band card
        step(worlds, move)
    _check_replay(belief, worlds, seat)
    return worlds, log_weights


def _mixed_deals(
    belief: Belief, hidden: np.ndarray, by_seat: np.ndarray, n: int, rng: np.random.Generator
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


def _match_points(rules: Rules, view: SeatInfo, seat: int) -> np.ndarray:
    """(1, 2) match points by absolute team, from the observation's (mine, theirs) / target."""
    points = np.zeros((1, 2))
    points[0, seat % 2], points[0, 1 - seat % 2] = (np.rint(x * rules.target) for x in view.match_score)
    return points


def _chance(
    policy: Any,
    encoder: ObservationEncoder,
    worlds: State,
    mover: int,
    move: np.ndarray | int,
    epsilon: float,
    score: np.ndarray | None,
) -> np.ndarray:
    """(M,) the chance of ``move`` under the policy at ``mover``'s turn in each world."""
    M = worlds.batch_size
    bits = legal_bits(worlds)
    masks = unpack_sets(bits, NUM_ACTIONS).view(bool)
    counts = masks.sum(axis=1)
    chance = np.ones(M)  # a forced move has chance 1: the policy is asked only where there was a choice
    free = np.flatnonzero(counts > 1)
    if free.size == 0:
        return chance
    move = np.broadcast_to(np.asarray(move, np.int64), (M,))[free]
    probabilities = getattr(policy, "probabilities", None)
    act_state = getattr(policy, "act_state", None)  # reads the core state: no observation to encode
    if act_state is not None and not callable(probabilities):
        # The worlds share the history, so two with the same cards for the mover (and the same
        # face-down card if it hid it) are the same to it: the policy weighs each such hand once.
        # The key: the hand's 52 bits, and above them the face-down card the mover hid, plus one.
        hid = np.where(worlds.hider[free] == mover, worlds.face_down[free] + 1, 0).astype(np.uint64)
        own = worlds.hands[free, mover] | hid << np.uint64(NUM_CARDS)
        _, first, inverse = np.unique(own, return_index=True, return_inverse=True)
        chosen = act_state(worlds, bits[free], free[first][inverse])
        chance[free] = (1.0 - epsilon) * (chosen == move) + epsilon / counts[free]
        return chance
    obs = encoder.encode(worlds, np.full(M, mover), None if score is None else np.repeat(score, M, axis=0), legal=bits)[
        free
    ]
    if callable(probabilities):
        p = np.asarray(probabilities(obs, masks[free]), np.float64)[np.arange(free.size), move]
    else:
        p = (np.asarray(policy.act(obs, masks[free])) == move).astype(np.float64)
    chance[free] = (1.0 - epsilon) * p + epsilon / counts[free]
    return chance


def _check_replay(belief: Belief, worlds: State, seat: int) -> None:
    """The first world, encoded for the seat, must give back its observation (and mask)."""
    history = np.asarray(belief.info.observation).size != _encoder(belief.rules).size
    if not _gives_back(belief, worlds, seat, _encoder(belief.rules, history)):
        raise ValueError(
            f"no game state of {belief.rules} gives this observation: it was encoded for other rules or altered"
        )


def _gives_back(belief: Belief, worlds: State, seat: int, encoder: ObservationEncoder) -> bool:
    """Whether the first world, encoded for the seat, is the seat's observation (the match
    score aside: worlds are single hands) and has its legal mask, when it acts."""
    info = belief.info
    first = worlds.select([0])
    if not same_but_match_score(belief.rules, encoder.encode(first, np.array([seat]))[0], info.observation):
        return False
    return info.mask is None or int(legal_bits(first)[0]) == int(pack_sets(np.asarray(info.mask) != 0))


def build_worlds(belief: Belief, hidden: np.ndarray, seat: int = 0) -> State:
    """Core states from a belief's view and sampled unseen cards (see :func:`sample_worlds`).

    Two public facts are not in the observation: whether the band card was revealed in the
    current trick (trump-suit cards played before the reveal do not count as trumps) and
    whether an asker still owes a trump. Each reading is tried on the first world until its
    encoding (and legal mask) matches the seat's; the facts are public, so all worlds share it.

    Raises:
        ValueError: no reading reproduces the observation (it is not one of these rules).
    """
    rules, view = belief.rules, belief.view
    readings = [(now, duty) for now in (False, True) for duty in (False, True)]
    for reveal_now, duty in readings:
        state = _world_state(rules, view, hidden, seat, reveal_now, duty)
        if _gives_back(belief, state, seat, _encoder(rules)):
            return state
    raise ValueError(f"no game state of {rules} gives this observation: it was encoded for other rules or altered")


def _world_state(rules: Rules, view: SeatInfo, hidden: np.ndarray, seat: int, reveal_now: bool, duty: bool) -> State:
    """The States of one reading of the public facts (see :func:`build_worlds`)."""
    n, B = rules.n_players, hidden.shape[0]
    absolute = [(seat + k) % n for k in range(n)]  # absolute seat of relative seat k

    def seat_of(rel: int) -> int:
        return absolute[rel] if rel >= 0 else NO_SEAT

    def per_seat(values: tuple[int, ...], dtype: type) -> np.ndarray:
        row = np.zeros(n, dtype=dtype)
        row[absolute] = values
        return np.tile(row, (B, 1))

    hands = np.zeros((B, n), np.uint64)
    hands[:, absolute] = hidden[:, :n]
    hands[:, seat] = view.hand
    hider = seat_of(view.hider)
    if view.known >= 0:
        hands[:, hider] |= np.uint64(1 << view.known)
    face_down_up = view.phase == PLAY and view.trump_state == 1
    if view.my_face_down >= 0:
        face_down = np.full(B, view.my_face_down)
    elif face_down_up:
        face_down = _first_card(hidden[:, n])
    else:
        face_down = np.full(B, NO_CARD)
    trick_cards = per_seat(view.trick, np.int64)
    trump = view.trump if view.trump_state == 2 else NO_SUIT
    played = per_seat(view.played, np.uint64)
    deal = hands | played
    if hider >= 0:
        deal[:, hider] |= CARD_SETS[face_down]
    taken, middle = _taken_sets(rules, view, seat)
    full = lambda value: np.full(B, value, dtype=np.int64)  # noqa: E731
    return State(
        rules=rules,
        hands=hands,
        phase=full(view.phase),
        dealer=full(seat_of(view.dealer)),
        current=full(_current(rules, view, absolute)),
        leader=full(seat_of(view.leader) if view.phase != OVER else NO_SEAT),
        trick_no=full(view.trick_no),
        trick_cards=trick_cards,
        trick_size=full(sum(card >= 0 for card in view.trick)),
        led_suit=full(view.led),
        trick_trumps=np.full(B, _trick_trumps(rules, view, trump, reveal_now), dtype=np.uint64),
        trump=full(trump),
        face_down=face_down.astype(np.int64),
        band_card=np.where(face_down >= 0, face_down, view.known).astype(np.int64),
        known_card=full(view.known),
        hider=full(hider),
        revealed_by=full(seat_of(view.revealed_by)),
        reveal_trick=full(-1 if view.revealed_by < 0 else (view.trick_no if reveal_now else max(view.trick_no - 1, 0))),
        asked=np.full(B, view.asked),
        duty=np.full(B, duty),
        open_card=full(view.open_card),
        played=played,
        voids=per_seat(view.voids, np.uint8),
        taken=np.tile(np.array(taken, np.uint64), (B, 1)),
        middle=np.full(B, middle, dtype=np.uint64),
        last_winner=full(seat_of(view.run_holder)),
        trick_winners=np.tile(_trick_winners(rules, view, absolute), (B, 1)),
        deal=deal,
        play_index=np.tile(_play_index(rules, view), (B, 1)),
    )


def _play_index(rules: Rules, view: SeatInfo) -> np.ndarray:
    """(52,) int8 places in the play order: the current trick's from its leader on; without
    the history the earlier tricks' order is not observed, so their cards are numbered in
    card order (the rules never read it; observe with history to sample it exactly)."""
    n = rules.n_players
    out = np.full(NUM_CARDS, -1, np.int8)
    earlier = set_to_cards(view.all_played & ~view.trick_cards)
    out[earlier] = np.arange(len(earlier))
    for k, card in enumerate(view.trick):
        if card >= 0:
            out[card] = view.trick_no * n + (k - view.leader) % n
    return out


def _first_card(sets: np.ndarray) -> np.ndarray:
    """(B,) the card of each one-card set."""
    return np.argmax(unpack_sets(sets), axis=1).astype(np.int64)


def _current(rules: Rules, view: SeatInfo, absolute: list[int]) -> int:
    """The absolute seat to act: the hider while hiding, the next in the trick while playing."""
    if view.phase == OVER:
        return NO_SEAT
    if view.phase == HIDE:
        return absolute[view.hider]
    return absolute[(view.leader + sum(card >= 0 for card in view.trick)) % rules.n_players]


def _trick_trumps(rules: Rules, view: SeatInfo, trump: int, reveal_now: bool) -> int:
    """Card set of the current trick's cards that count as trumps. Band hukum with the reveal
    in this trick (``reveal_now``): only those played from the revealing seat's turn on."""
    if trump < 0:
        return 0
    n = rules.n_players
    counted = 0
    for k, card in enumerate(view.trick):
        after_reveal = not reveal_now or (k - view.leader) % n >= (view.revealed_by - view.leader) % n
        if card >= 0 and card // NUM_RANKS == trump and after_reveal:
            counted |= 1 << card
    return counted


def _taken_sets(rules: Rules, view: SeatInfo, seat: int) -> tuple[list[int], int]:
    """Card sets of team 0, team 1 and the Dehla Pakad middle with the observed counts of tens
    and cards: which cards each took is not observed, and the rules read only the counts."""
    n = rules.n_players
    done = view.all_played & ~view.trick_cards
    tens = set_to_cards(done & int(TENS_MASK))
    plain = set_to_cards(done & ~int(TENS_MASK))
    wanted = [(view.middle[0], view.middle[1]), (view.tens[0], view.tricks[0] * n), (view.tens[1], view.tricks[1] * n)]
    sets = []
    for ten_count, card_count in wanted:
        chosen, tens = tens[:ten_count], tens[ten_count:]
        rest, plain = plain[: card_count - ten_count], plain[card_count - ten_count :]
        sets.append(sum(1 << card for card in chosen + rest))
    mine = seat % 2
    teams = [sets[1], sets[2]] if mine == 0 else [sets[2], sets[1]]
    return teams, sets[0]


def _trick_winners(rules: Rules, view: SeatInfo, absolute: list[int]) -> np.ndarray:
    """(T,) winners of the completed tricks as far as the counts tell: the last is the run
    holder; the earlier ones are filled with a seat of each team as often as it took tricks."""
    out = np.full(rules.n_tricks, NO_SEAT, dtype=np.int64)
    done = min(view.trick_no, rules.n_tricks)
    if done == 0 or view.run_holder < 0:
        return out
    last_mine = view.run_holder % 2 == 0
    earlier = [absolute[0]] * max(view.tricks[0] - last_mine, 0) + [absolute[1]] * max(
        view.tricks[1] - (not last_mine), 0
    )
    earlier = (earlier + [absolute[0]] * done)[: done - 1]
    out[: done - 1] = earlier
    out[done - 1] = absolute[view.run_holder]
    return out
