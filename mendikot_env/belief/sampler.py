"""The constraints one seat's knowledge puts on the cards it cannot see, and deals drawn
uniformly among those that meet them.

The seat's information state (:class:`mendikot_env.infostate.SeatInfo`, decoded from its
observation) fixes its own hand, every card played and by whom, the suits each seat has failed
to follow, the revealed band card while it is back in the hider's hand, and so how many unseen
cards each other hand holds (:func:`constraints`). In band hukum the face-down card is one more
hidden *slot* of one card for the seats that did not hide it (any suit: the face-down card is
not in the hand for following suit); the hider knows it.

Cards of one suit are interchangeable, so the number of deals that meet the size and void
constraints is a sum over how many cards of each suit each slot holds, which a dynamic
programme over the four suits counts (``P[s][caps]``: the ways to place the unseen cards of
suits ``< s`` into slots with room ``caps``). :meth:`DealSampler.sample_hands` walks the suits
backwards, draws each suit's counts in proportion to their completions, then deals the suit's
cards at random in those counts: an exact uniform draw under those constraints. One
constraint the count leaves out is met by rejection: with ``reveal="auto"``, while the band
card is face down the seat to act must hold the suit led (else the card would be up), and
deals where it does not are drawn again. :meth:`DealSampler.card_marginals` counts, not
samples, each card's chance in each slot, that constraint included.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache, lru_cache
from math import factorial

import numpy as np

from ..cards import CARD_BITS, NUM_CARDS, NUM_RANKS, NUM_SUITS, SUIT_MASKS, cards_to_set, set_to_cards
from ..core import PLAY, pack_cards
from ..infostate import SeatInfo
from ..observation import ObservationEncoder, decode_info
from ..rules import Rules
from ..seeding import make_rng

# Largest (samples x suit counts x slots) block drawn at once: bounds memory with 6 or 8 players.
_BLOCK = 2_000_000
_ROOM_RADIX = 64 ** np.arange(10, dtype=np.int64)  # room vectors (up to 10 slots, entries < 64) as integers


@dataclass(frozen=True)
class InfoState:
    """A belief's input: one seat's observation at a decision, and its legal mask if it acts.

    The belief decodes the observation once into the seat's information state
    (:class:`~mendikot_env.infostate.SeatInfo`, :func:`read_view`) and reads only that; the
    vector itself serves to check that the worlds built give it back. The mask settles the
    one public fact the observation leaves open: whether a player who asked for the band card
    still owes a trump (it then shows in the legal actions).
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
    if rules.reveals_at_void and view.phase == PLAY and view.trump_state == 1 and view.led >= 0:
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
    if band != rules.has_face_down:
        shows.append("a band card hidden" if band else "no band card hidden")
    if (view.open_card >= 0) != rules.trump_known_from_start:
        shows.append("an open draw" if view.open_card >= 0 else "no open draw")
    if view.middle[1] > 0 and not rules.collects_two_in_a_row:
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


class DealSampler:
    """The uniform belief of one seat over the unseen cards, from what it knows alone: its
    constraints, their exact count and uniform draws (:class:`~mendikot_env.belief.Belief` adds
    the policy weighting and the worlds).

    Args:
        info: the seat's observation (and mask) with its rules.
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
