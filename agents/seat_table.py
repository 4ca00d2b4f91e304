"""What one seat of a rule-based bot sees and infers, for a batch of decisions.

:class:`SeatTable` reads it from the seat's information state
(:class:`mendikot_env.infostate.SeatInfo`: decoded from observations, or built from the core
state of the seats to act; the bots' tests check the two move for move), and holds the card-location
model: the unseen cards of a suit lie in the other hands in proportion to the cards each has
left, none in a hand known void, its chances looked up in hypergeometric tables.
"""

from __future__ import annotations

from math import lgamma
from typing import Protocol

import numpy as np

from mendikot_env import core
from mendikot_env.cards import NUM_CARDS, NUM_RANKS, RANKS_FROM, SUIT_MASKS, popcount, unpack_sets
from mendikot_env.infostate import SeatInfo
from mendikot_env.rules import Rules


class Skills(Protocol):
    """The switches of a bot's level that the table reads."""

    memory: bool  # remembers the cards played (otherwise sees only the trick and its hand)
    voids: bool  # remembers who has shown out of a suit
    location: bool  # estimates where the unseen cards are (otherwise all-or-nothing threats)


class TableReader(Protocol):
    """The bot a table is read for: its rules, level and pack."""

    rules: Rules
    spec: Skills
    n: int  # players
    in_pack: np.ndarray  # (52,) bool: the card is in the pack
    pack_bits: np.uint64  # the pack as a card set


# LOG_COMB[a, b] = log C(a, b), -inf when b > a: hypergeometric chances in one lookup.
_A = np.arange(NUM_CARDS + 1)
LOG_COMB = np.array(
    [[lgamma(a + 1) - lgamma(b + 1) - lgamma(a - b + 1) if b <= a else -np.inf for b in _A] for a in _A]
)
# MISSES[room, r, c]: chance that a hand of r cards, of ``room`` places where c given cards may
# lie, holds none of them (hypergeometric; c is capped at the room); HOLDS: at least one.
_ROOM, _R, _C = np.ogrid[: NUM_CARDS + 1, : NUM_RANKS + 1, : NUM_RANKS + 1]
_CAPPED = np.minimum(_C, _ROOM)
with np.errstate(invalid="ignore"):
    MISSES = np.exp(LOG_COMB[np.maximum(_ROOM - _R, 0), _CAPPED] - LOG_COMB[_ROOM, _CAPPED])
    HOLDS = np.where(_R <= _ROOM, 1.0 - MISSES, 1.0)
_HOLDS_FLAT = HOLDS.reshape(-1)


class SeatTable:
    """Everything one seat can see and infer, for a batch of decisions, read from the seats'
    information states (:meth:`from_info`)."""

    B: int
    hand: np.ndarray  # (B, 52) bool: my cards
    face_down: np.ndarray  # (B, 52) bool: my face-down band card (the hider only)
    trick_card: np.ndarray  # (B, n): card of each relative seat in the trick, -1 none yet
    shown_out: np.ndarray  # (B, n, 4) bool: suits each relative seat failed to follow
    led: np.ndarray  # (B,) suit led, -1 none
    trump: np.ndarray  # (B,) public trump suit, -1 none
    hider: np.ndarray  # (B,) relative seat that hid the band card, -1 none
    winning: np.ndarray  # (B,) relative seat winning the trick so far, -1 when I lead
    take_lead: np.ndarray  # (B, 52) bool: my legal cards that would take the lead
    tens: np.ndarray  # (B, 2) tens taken: mine, theirs
    tricks: np.ndarray  # (B, 2) tricks taken: mine, theirs

    @classmethod
    def from_info(cls, agent: TableReader, info: SeatInfo) -> SeatTable:
        """The table of a batch of information states (:class:`~mendikot_env.infostate.SeatInfo`):
        decoded from the seats' observations, or built from the core state of the seats to act."""
        t = cls()
        sets = np.stack([info.hand, core.CARD_SETS[info.my_face_down]], axis=1)
        # (B, n) by relative seat, C-ordered: the bot's lookups flatten them.
        played, t.trick_card = np.ascontiguousarray(info.played), np.ascontiguousarray(info.trick)
        if agent.spec.memory:
            gone = np.bitwise_or.reduce(played, axis=1)
        else:
            gone = np.bitwise_or.reduce(core.CARD_SETS[t.trick_card], axis=1)
        unseen = agent.pack_bits & ~(gone | sets[:, 0] | sets[:, 1])
        flags = unpack_sets(np.concatenate([sets, info.take_lead[:, None], unseen[:, None]], axis=1)).view(bool)
        t.hand, t.face_down, t.take_lead = flags[:, 0], flags[:, 1], flags[:, 2]
        # Counts by popcount: unseen cards of each suit from each rank up, and mine per suit.
        unseen_from = popcount(unseen[:, None, None] & RANKS_FROM).astype(np.int64)
        holding = popcount(sets[:, :1] & SUIT_MASKS).astype(np.int64)
        t.shown_out = (np.ascontiguousarray(info.voids)[:, :, None] >> _SUIT_BITS & 1).astype(bool)
        t.led, t.trump, t.hider, t.winning = info.led, info.trump, info.hider, info.winning
        t.tens, t.tricks = np.ascontiguousarray(info.tens), np.ascontiguousarray(info.tricks)
        played_count = popcount(played).astype(np.int64)
        t._infer(agent, flags[:, 3], unseen_from, holding, played_count, info.my_face_down, info.trump_state == 1)
        return t

    def _infer(
        self,
        agent: TableReader,
        unseen: np.ndarray,
        unseen_from: np.ndarray,
        holding: np.ndarray,
        played_count: np.ndarray,
        face_down_card: np.ndarray,
        face_down_state: np.ndarray,
    ) -> None:
        """What the seat infers from what it sees: ``unseen`` (B, 52) the cards in other hands
        (or face down elsewhere), ``unseen_from`` (B, 4, 14) how many of each suit from each
        rank up (0 past the ace), ``holding`` (B, 4) my cards per suit, ``played_count`` (B, n)
        per relative seat, ``face_down_card`` my own face-down card (-1 none) and
        ``face_down_state`` whether the band card lies face down with no trump."""
        n, rules, spec = agent.n, agent.rules, agent.spec
        B = self.hand.shape[0]
        self.B = B
        self.n = n
        self.spec = spec
        has = self.trick_card >= 0
        n_in_trick = has.sum(axis=1)
        self.leading = n_in_trick == 0
        self.after = n - 1 - n_in_trick  # players still to play after me
        rel = np.arange(n)
        is_after = (rel[None, :] >= 1) & (rel[None, :] <= self.after[:, None])
        self.opp_after = is_after & (rel % 2 == 1)[None, :]
        self.partner_after = is_after & (rel % 2 == 0)[None, :]
        self.hidden = face_down_state & (self.trump < 0)  # band card face down
        self.private = np.where(face_down_card >= 0, face_down_card // NUM_RANKS, -1)

        voids = self.shown_out if spec.memory and spec.voids else np.zeros_like(self.shown_out)
        self.unseen = unseen
        self.holding = holding
        self.unseen_from = unseen_from  # (B, 4, 14) unseen cards of each suit of rank >= r
        self.hi_unseen = unseen_from[:, :, 1:].reshape(B, NUM_CARDS)  # unseen cards of the card's suit ranked above it
        self.unseen_in_suit = unseen_from[:, :, 0]  # (B, 4)
        self.voids = voids

        # Card-location model: cards left in each other hand, and the room for each suit.
        left = rules.hand_size - played_count  # (B, n)
        hider_rel = self.hider
        face_down_slot = self.hidden & (hider_rel >= 0)
        left[np.flatnonzero(face_down_slot), hider_rel[face_down_slot]] -= 1
        left[:, 0] = 0
        self.left = np.maximum(left, 0)
        room = np.einsum("bk,bks->bs", self.left, ~voids)  # (B, 4): cards the hands not void in a suit hold
        self.room = np.maximum(room, self.unseen_in_suit)
        self._void_cache: dict[int, np.ndarray] = {}
        self._holds_cache: dict[int, np.ndarray] = {}
        self.outcomes: tuple[np.ndarray, np.ndarray] | None = None  # the agent's outcome values, once read

    def beaters(self, rows: np.ndarray, suit: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """(P,) unseen cards of ``suit`` (P,) in game ``rows`` that would beat a card, given the
        lowest rank of that suit that beats it (P,) from :func:`core.beating_ranks`."""
        return self.unseen_from.reshape(-1).take((rows * 4 + suit) * (NUM_RANKS + 1) + rank)

    def p_void(self, k: int) -> np.ndarray:
        """(B, 4) chance that relative seat ``k`` holds no card of each suit."""
        if k not in self._void_cache:
            known = self.voids[:, k, :] | (self.unseen_in_suit == 0)
            if self.spec.location:
                r = np.where(self.voids[:, k, :], 0, self.left[:, k, None])
                chance = MISSES[self.room, r, self.unseen_in_suit]  # r <= room and unseen <= room here
                self._void_cache[k] = np.where(known, 1.0, chance)
            else:
                self._void_cache[k] = known.astype(np.float64)
        return self._void_cache[k]

    def p_holds(self, k: int, rows: np.ndarray, suit: np.ndarray, count: np.ndarray) -> np.ndarray:
        """(P,) chance that relative seat ``k`` holds at least one of ``count`` given unseen
        cards of ``suit`` (per candidate, of game ``rows``): one lookup in :data:`HOLDS`."""
        count = np.minimum(count, NUM_RANKS)
        at = rows * 4 + suit  # flat (game, suit) index: one take beats a 2-D lookup
        if not self.spec.location:
            return ((count > 0) & ~self.voids[:, k, :].reshape(-1).take(at)).astype(np.float64)
        if k not in self._holds_cache:  # HOLDS' flat index of (room, cards k may hold, 0) per game and suit
            reach = np.where(self.voids[:, k, :], 0, self.left[:, k, None])
            self._holds_cache[k] = ((self.room * (NUM_RANKS + 1) + reach) * (NUM_RANKS + 1)).reshape(-1)
        return _HOLDS_FLAT.take(self._holds_cache[k].take(at) + count)


_SUIT_BITS = np.arange(4, dtype=np.uint8)  # a 4-bit set of suits, bit by bit
