"""What one seat knows: the information state that the observation encoder writes observations
from and that the belief, the search and the rule-based bots read (STYLE.md rule 14).

A :class:`SeatInfo` is built straight from a core :class:`~mendikot_env.core.State` for given
seats (:func:`seat_infos` for a batch, :func:`seat_info` for one game), or decoded from
observation vectors by :func:`mendikot_env.observation.decode_info` (only the observation
module knows the pieces' names). It holds only what the seat may know: its own hand and
face-down card, and the public facts. Seats are relative: 0 is the observer, 1 the next to
play after it, and so on round the table; -1 is none (no seat, card or suit).

One record, two shapes:

- a batch: numpy arrays with the batch axis first, card sets as uint64 (bit ``c`` for card
  ``c``), per-seat fields (B, n) by relative seat and team fields (B, 2) mine, theirs;
- one game (:func:`seat_info`, :meth:`SeatInfo.game`): Python ints, and sequences (tuples,
  or the lists read from the state) by relative seat or team. The AEC env encodes one game
  per step, where numpy's per-call cost would dominate: the encoder's rules run on these
  numbers with operators only, the same code as for a batch's arrays (:func:`by_column`
  gives both as columns).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache, reduce
from operator import or_
from typing import Any

import numpy as np

from .cards import TENS_MASK, cards_to_set, popcount, unpack_sets
from .core import (
    NO_CARD,
    OUTLOOK_LISTS,
    OUTLOOK_TABLES,
    OVER,
    PLAY,
    State,
    batch_rows,
    legal_bits,
    taken_counts,
    trick_outlook_of,
)
from .rules import Rules

_TENS = int(TENS_MASK)  # a Python int: mixes with Python ints
_BARE = object.__new__  # a record with no field set yet, to fill in field by field


@dataclass(frozen=True)
class History:
    """The public history of one hand, as one seat knows it.

    ``plays[i]`` is the i-th card played this hand and who played it, as (relative seat,
    card id); the band card ``band_card`` was turned up just before ``plays[reveal]``
    (``reveal == len(plays)``: before the next card, on the turn of the seat to act), or
    ``reveal`` and ``band_card`` are -1 when it has not been. Whether it was asked for, and
    by whom, are the :class:`SeatInfo`'s ``asked`` and ``revealed_by``.
    """

    plays: tuple[tuple[int, int], ...]
    reveal: int
    band_card: int = -1


@dataclass(slots=True)
class SeatInfo:
    """What one seat knows at one point of a hand (a batch of seats, or one; see the module).

    Read-only by convention (not frozen: the AEC env's encoder builds one per step). Card
    sets are uint64 (ints for one game); cards, suits and relative seats -1 for none.
    """

    hand: Any  # card set: my hand (the face-down card excluded)
    my_face_down: Any  # my face-down band card (I hid it and it is still down), else -1
    open_card: Any  # the card shown by the open draw, else -1
    known: Any  # the revealed band card while back in the hider's hand, else -1
    trick: Any  # (B, n) card each relative seat played to the current trick, else -1
    played: Any  # (B, n) card set each relative seat has played this hand (trick included)
    voids: Any  # (B, n) 4-bit set of the suits each relative seat has failed to follow
    led: Any  # suit led to the current trick, else -1
    trump_state: Any  # 0 no trump yet, 1 trump face down (band), 2 trump known
    trump: Any  # the public trump suit, else -1
    asked: Any  # bool: the band card was revealed by asking
    hider: Any  # relative seat that laid the band card face down, else -1
    revealed_by: Any  # relative seat whose turn revealed the band card, else -1
    leader: Any  # relative seat that leads (led) the current trick, -1 once the hand is over
    dealer: Any  # relative seat of the dealer
    run_holder: Any  # relative seat that won the previous trick, else -1
    winning: Any  # relative seat whose card is winning the current trick so far, else -1
    take_lead: Any  # card set: my legal cards that would win the trick so far (when I act), else empty
    tens: Any  # (B, 2) tens taken: mine, theirs
    tricks: Any  # (B, 2) tricks taken: mine, theirs
    middle: Any  # (B, 2) Dehla Pakad middle pile: tens, cards
    trick_no: Any  # tricks completed (the number of tricks once the hand is over)
    phase: Any  # HIDE, PLAY or OVER
    match_score: Any = None  # (B, 2) match points / target, mine and theirs, when known (an observation holds them)
    # The history, when known (an observation with the history pieces, or asked of the state):
    play_order: Any = None  # (B, 52) place of each card in the hand's play order, -1 unplayed
    reveal_at: Any = None  # place in the play order before which the band card was turned up, else -1
    revealed_card: Any = None  # the band card once turned up (kept after it is played), else -1

    @property
    def all_played(self) -> Any:
        """Every card played so far, by any seat (the current trick's included)."""
        return reduce(or_, by_column(self.played))

    @property
    def trick_cards(self) -> int:
        """The cards of the current trick (one game)."""
        return cards_to_set(card for card in self.trick if card >= 0)

    @property
    def history(self) -> History | None:
        """The play sequence of one game as a :class:`History`, when the record holds it."""
        if self.play_order is None:
            return None
        order = np.asarray(self.play_order)
        cards = np.flatnonzero(order >= 0)
        cards = cards[np.argsort(order[cards])]
        seat_of = [next((k for k, sets in enumerate(self.played) if sets >> c & 1), 0) for c in cards.tolist()]
        return History(tuple(zip(seat_of, cards.tolist(), strict=True)), self.reveal_at, self.revealed_card)

    def select(self, rows: np.ndarray) -> SeatInfo:
        """The chosen games of a batch record (an index array or a bool mask), in order."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return SeatInfo(**{name: None if value is None else value[rows] for name, value in values.items()})

    def game(self, b: int) -> SeatInfo:
        """Game ``b`` of a batch as a one-game record (Python ints and tuples)."""
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or f.name == "play_order":
                values[f.name] = None if value is None else value[b]
            elif np.ndim(value) == 2:
                values[f.name] = tuple(value[b].tolist())
            else:
                values[f.name] = value[b].item()
        return SeatInfo(**values)


def by_column(values: Any) -> Any:
    """Per-seat or team values as columns: a one-game record's tuple as it is, a batch's
    (B, k) array as its k columns."""
    return values if isinstance(values, tuple | list) else list(values.T)


@dataclass(frozen=True)
class _Tables:
    """The lookups the builders read, for one player count and trick rule."""

    seats_from: np.ndarray  # [s, k]: the seat k places after s
    teams_from: np.ndarray  # [s]: my team, their team
    relative: np.ndarray  # [x * n + s]: seat x seen from s; NO_SEAT (x = -1) on the last row, which holds -1
    relative_list: list[int]
    outlook: tuple  # core.OUTLOOK_TABLES for the trick rule
    outlook_list: tuple  # core.OUTLOOK_LISTS for the trick rule


@cache
def _tables(n: int, cut: bool) -> _Tables:
    # A lookup beats % on int64 arrays.
    relative = np.array([(x - s) % n if x >= 0 else -1 for x in [*range(n), -1] for s in range(n)])
    return _Tables(
        seats_from=(np.arange(n)[:, None] + np.arange(n)) % n,
        teams_from=np.arange(n)[:, None] % 2 ^ np.array([0, 1]),
        relative=relative,
        relative_list=relative.tolist(),
        outlook=OUTLOOK_TABLES[int(cut)],
        outlook_list=OUTLOOK_LISTS[int(cut)],
    )


def tables_of(rules: Rules) -> _Tables:
    """The builders' lookups for ``rules``."""
    return _tables(rules.n_players, rules.trump_by_first_cut)


def seat_info(
    state: State, seat: int, legal: int | None = None, history: bool = False, tables: _Tables | None = None
) -> SeatInfo:
    """What ``seat`` knows in game 0 of ``state``, as a one-game record of Python numbers
    (each field of the state read once: the AEC env's path).

    Args:
        state: the games (game 0 is read).
        seat: the observer's absolute seat, 0..n-1.
        legal: game 0's legal set as a Python int, if the caller has it.
        history: also fill in the play order and the reveal.
        tables: :func:`tables_of` the state's rules, if the caller holds them.
    """
    n = state.rules.n_players
    t = tables_of(state.rules) if tables is None else tables
    relative = t.relative_list
    face_down, hider, current = state.face_down.item(0), state.hider.item(0), state.current.item(0)
    phase, led, trump = state.phase.item(0), state.led_suit.item(0), state.trump.item(0)
    legal = legal_bits(state).item(0) if legal is None else legal
    leader, trick_no, middle = state.leader.item(0), state.trick_no.item(0), state.middle.item(0)
    # Relative seat k is seat + k (mod n): the seat's own entry first, then round the table.
    trick, played, voids = state.trick_cards.tolist()[0], state.played.tolist()[0], state.voids.tolist()[0]
    trick, played, voids = trick[seat:] + trick[:seat], played[seat:] + played[:seat], voids[seat:] + voids[:seat]
    taken = state.taken.tolist()[0]
    mine, theirs = taken[::-1] if seat % 2 else taken
    # In relative seat order: the winning seat comes out relative to me.
    winning, takers = trick_outlook_of(trick, led, trump, state.trick_trumps.item(0), legal, t.outlook_list)
    over = phase == OVER
    # Field by field on a bare record: a keyword call of 23 fields costs several times more,
    # and this runs on every step of the AEC env.
    info = _BARE(SeatInfo)
    info.hand = state.hands.item(0, seat)
    info.my_face_down = face_down if hider == seat else NO_CARD  # only the hider sees it
    info.open_card, info.known = state.open_card.item(0), state.known_card.item(0)
    info.trick, info.played, info.voids = trick, played, voids
    info.led, info.trump_state, info.trump = led, 2 * (trump >= 0) + (face_down >= 0), trump
    info.asked = state.asked.item(0)
    info.hider = relative[hider * n + seat]
    info.revealed_by = relative[state.revealed_by.item(0) * n + seat]
    info.leader = relative[(leader - (leader + 1) * over) * n + seat]
    info.dealer = relative[state.dealer.item(0) * n + seat]
    info.run_holder = relative[state.last_winner.item(0) * n + seat]
    info.winning = winning
    info.take_lead = takers * ((seat == current) & (phase == PLAY))
    info.tens = ((mine & _TENS).bit_count(), (theirs & _TENS).bit_count())
    info.tricks = (mine.bit_count() // n, theirs.bit_count() // n)  # as core.taken_counts
    info.middle = ((middle & _TENS).bit_count(), middle.bit_count())
    info.trick_no, info.phase, info.match_score = trick_no, phase, None
    info.play_order = info.reveal_at = info.revealed_card = None
    if history:
        order, at, card = _history(state)
        info.play_order, info.reveal_at, info.revealed_card = order[0], int(at[0]), int(card[0])
    return info


def seat_infos(state: State, seats: np.ndarray, legal: np.ndarray | None = None, history: bool = False) -> SeatInfo:
    """What each seat ``seats[b]`` (absolute, 0..n-1) knows in game b of ``state``, as a
    batch record; ``legal``: the games' :func:`~mendikot_env.core.legal_bits` if the caller
    has them; ``history``: also fill in the play order and the reveal.

    The record shares some of the state's arrays (no copies): read it before the state is stepped.
    """
    n, B = state.rules.n_players, state.batch_size
    t = tables_of(state.rules)
    relative = t.relative
    rows = batch_rows(B)
    # take() gathers table rows several times faster than fancy indexing does. Per-seat
    # fields are gathered (n, B), each relative seat's row contiguous, and kept as (B, n) views.
    # seats_from is symmetric ((s + k) % n), so a column gather gives the (n, B) layout directly.
    rel_seats = t.seats_from.take(seats, axis=1)  # (n, B): absolute seat of relative seat k
    flat = rel_seats + rows * n  # (n, B) index into the flat (B * n) arrays
    trick = state.trick_cards.reshape(-1).take(flat)
    mine_first = rows * 2 + t.teams_from.take(seats, axis=0).T  # (2, B) flat index: mine, theirs
    tens, tricks = taken_counts(state.taken.reshape(-1).take(mine_first), n, _count64)  # each (2, B) int64
    legal = legal_bits(state) if legal is None else legal
    winning, takers = trick_outlook_of(list(trick), state.led_suit, state.trump, state.trick_trumps, legal, t.outlook)
    over = state.phase == OVER
    info = SeatInfo(
        hand=state.hands.reshape(-1).take(flat[0]),
        my_face_down=np.where(state.hider == seats, state.face_down, NO_CARD),  # only the hider sees it
        open_card=state.open_card,
        known=state.known_card,
        trick=trick.T,
        played=state.played.reshape(-1).take(flat).T,
        voids=state.voids.reshape(-1).take(flat).astype(np.uint64).T,
        led=state.led_suit,
        trump_state=2 * (state.trump >= 0) + (state.face_down >= 0),
        trump=state.trump,
        asked=state.asked,
        hider=relative.take(state.hider * n + seats),
        revealed_by=relative.take(state.revealed_by * n + seats),
        leader=relative.take((state.leader - (state.leader + 1) * over) * n + seats),
        dealer=relative.take(state.dealer * n + seats),
        run_holder=relative.take(state.last_winner * n + seats),
        winning=winning,
        take_lead=takers * ((seats == state.current) & (state.phase == PLAY)),
        tens=tens.T,
        tricks=tricks.T,
        middle=_middle(state, B),
        trick_no=state.trick_no,
        phase=state.phase,
    )
    if history:
        info.play_order, info.reveal_at, info.revealed_card = _history(state)
    return info


def _count64(sets: np.ndarray) -> np.ndarray:
    """The cards in each set, as int64 (counts that the bots subtract must not be unsigned)."""
    return popcount(sets).astype(np.int64)


def _middle(state: State, B: int) -> np.ndarray:
    """(B, 2) tens and cards lying in the middle: only Dehla Pakad leaves tricks there."""
    if not state.rules.collects_two_in_a_row:
        return np.zeros((B, 2), np.int64)
    return np.stack([popcount(state.middle & TENS_MASK), popcount(state.middle)], axis=1).astype(np.int64)


def _history(state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B, 52) each card's place in the play order, (B,) the place of the reveal and the card.

    The reveal came on the revealing seat's turn in trick ``reveal_trick``: just before that
    seat's card of the trick, or, if it has not played yet, before the next card.
    """
    n = state.rules.n_players
    order = state.play_index.astype(np.int64)
    revealed = state.revealed_by >= 0
    at = np.full(state.batch_size, -1, np.int64)
    if np.count_nonzero(revealed):
        first = state.reveal_trick * n  # (B,) place of the reveal trick's first card
        in_trick = (order >= first[:, None]) & (order < first[:, None] + n)
        by_revealer = unpack_sets(state.played[batch_rows(state.batch_size), state.revealed_by]).astype(bool)
        card = np.where(in_trick & by_revealer, order, -1).max(axis=1)
        at = np.where(revealed, np.where(card >= 0, card, first + state.trick_size), -1)
    return order, at, np.where(revealed, state.band_card, NO_CARD)
