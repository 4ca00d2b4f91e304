"""The batched numpy rules engine: the one place where the rules of Mendikot live.

A batch of B hands is a :class:`State` of arrays with the batch axis first, and the
rules are functions over it: :func:`new_hands` deals, :func:`legal_bits` gives each
game's legal actions as a 53-bit set, :func:`step` plays one action in every game at
once, and :func:`hand_results` scores finished hands. No function loops over games in
Python; every rule is a whole-batch array operation, which is why the core is fast at
B = 1024 and still correct at B = 1. At B = 1 (the AEC env's case) numpy's per-call cost
would dominate, so the rules of :func:`legal_bits`, :func:`step` and :func:`trick_outlook_of`
are written with operators and table lookups only (``_legal_rule``, ``_play_rule``,
:func:`trick_winner_of`) and run unchanged on one game's Python ints: only reading the
inputs and writing the results differ by batch size.

Rules that hold for every game, written once here:
  * A finished game steps as a no-op (its action is ignored), and its mask is empty.
  * The acting seat of every unfinished game is ``state.current``; in band hukum the
    first action of a hand is the first player choosing the face-down card.
  * Action 52 (ask) leaves the turn with the asker, who then plays a card.
  * Reveals that need no action (auto reveal, the last-card reveal) happen as the turn
    passes, so the mask a player sees already reflects them.

This module imports only numpy, the card/rules vocabulary and the reader of given deals
(:mod:`.deals`); it knows nothing about PettingZoo, observations or agents.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .cards import (
    ASK_ACTION,
    ASK_BIT,
    CARD_BITS,
    FULL_PACK,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_RANKS,
    RANK_OF,
    RANKS_FROM,
    SUIT_MASKS,
    SUIT_OF,
    TENS_MASK,
    action_str,
    popcount,
    set_to_cards,
    union,
    unpack_sets,
)
from .deals import GivenDeal, pack_cards, read_deal
from .rules import PLAYER_COUNTS, Rules
from .seeding import make_rng

# Phases of a hand (OpenSpiel's names): HIDE only exists in band hukum.
HIDE, PLAY, OVER = 0, 1, 2
NO_CARD = -1
NO_SEAT = -1
NO_SUIT = -1

# Lookup tables where index -1 (nothing) maps to the empty set, so a missing card or
# suit needs no branch: SUIT_SETS[-1] == 0 and CARD_SETS[-1] == 0.
SUIT_SETS = np.append(SUIT_MASKS, np.uint64(0))
CARD_SETS = np.append(CARD_BITS, np.uint64(0))
# The cards a seat must play from if it holds any: the led suit, or (index -1, leading)
# every card; legal_bits reads the leader's case from the same lookup as a follower's.
MUST_PLAY_FROM = np.append(SUIT_MASKS, FULL_PACK)
# Up to this many games, a check that only picks a path (step's fast path, the band duty
# and reveal checks) reads the arrays as Python lists: on tiny arrays numpy's fixed cost
# per comparison, count or reduction is most of the work (the AEC env runs one game).
_FEW_GAMES = 8


class IllegalActionError(ValueError):
    """An action that is not legal in its game; names the game, action and legal ones."""


@dataclass
class State:
    """B Mendikot hands as arrays with the batch axis first (updated in place by step)."""

    rules: Rules  # the rule set shared by every game in the batch
    hands: np.ndarray  # (B, n) uint64: cards in each seat's hand (face-down card excluded)
    phase: np.ndarray  # (B,) int64: HIDE, PLAY or OVER
    dealer: np.ndarray  # (B,) int64: seat that dealt; the first player is dealer + 1
    current: np.ndarray  # (B,) int64: seat to act, NO_SEAT when the hand is over
    leader: np.ndarray  # (B,) int64: seat that led (or will lead) the current trick
    trick_no: np.ndarray  # (B,) int64: tricks completed so far
    trick_cards: np.ndarray  # (B, n) int64: card each seat played to the current trick, or NO_CARD
    trick_size: np.ndarray  # (B,) int64: cards played to the current trick
    led_suit: np.ndarray  # (B,) int64: suit led to the current trick, or NO_SUIT before the lead
    trick_trumps: np.ndarray  # (B,) uint64: cards of the current trick that count as trumps
    trump: np.ndarray  # (B,) int64: publicly set trump suit (cut, open, revealed band), or NO_SUIT
    face_down: np.ndarray  # (B,) int64: band card while face down, else NO_CARD
    band_card: np.ndarray  # (B,) int64: the card chosen to lie face down (kept after the reveal)
    known_card: np.ndarray  # (B,) int64: revealed band card while back in the hider's hand, else NO_CARD
    hider: np.ndarray  # (B,) int64: seat that laid the card face down (band), else NO_SEAT
    revealed_by: np.ndarray  # (B,) int64: seat whose turn revealed the band card, else NO_SEAT
    reveal_trick: np.ndarray  # (B,) int64: trick number of the reveal, else -1
    asked: np.ndarray  # (B,) bool: the band card was revealed by asking (action 52)
    duty: np.ndarray  # (B,) bool: the current player asked and must play a trump if able
    open_card: np.ndarray  # (B,) int64: open draw's shown card, else NO_CARD
    played: np.ndarray  # (B, n) uint64: cards each seat has played this hand
    voids: np.ndarray  # (B, n) uint8: 4-bit set of suits each seat failed to follow
    taken: np.ndarray  # (B, 2) uint64: cards taken by each team
    middle: np.ndarray  # (B,) uint64: Dehla Pakad: won tricks lying in the middle
    last_winner: np.ndarray  # (B,) int64: seat that won the previous trick, else NO_SEAT
    trick_winners: np.ndarray  # (B, n_tricks) int64: winner of each trick, NO_SEAT if unplayed
    deal: np.ndarray  # (B, n) uint64: cards dealt to each seat (for records and replays)
    play_index: np.ndarray  # (B, 52) int8: place of card c in this hand's play order (0 = first card), -1 unplayed

    def __post_init__(self) -> None:
        # The step updates per-seat arrays through flat views (reshape(-1)), which are
        # only views of C-contiguous arrays.
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray) and not value.flags.c_contiguous:
                setattr(self, f.name, np.ascontiguousarray(value))

    @property
    def batch_size(self) -> int:
        """Number of games B."""
        return self.phase.shape[0]

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: the hand is over."""
        return self.phase == OVER

    def copy(self) -> State:
        """A deep copy (clone a batch to search or replay from it)."""
        return State(**{f.name: _copy(getattr(self, f.name)) for f in fields(self)})

    def select(self, games: np.ndarray | slice | list[int]) -> State:
        """A new State holding only the chosen games (in the given order)."""
        # An index array or list gathers a copy already; a slice (a view) is copied.
        copy = not isinstance(games, (np.ndarray, list))
        return State(
            self.rules,
            *[getattr(self, name)[games].copy() if copy else getattr(self, name)[games] for name in _ARRAY_FIELDS],
        )

    @classmethod
    def concat(cls, states: list[State]) -> State:
        """One State holding the games of several (same rules), in order (a search batches
        the deals of many decisions this way). A single state is returned as it is, not
        copied: step the result only where its parts are not needed any more."""
        if len(states) == 1:
            return states[0]
        return cls(
            **{
                f.name: states[0].rules if f.name == "rules" else np.concatenate([getattr(s, f.name) for s in states])
                for f in fields(cls)
            }
        )

    def put(self, games: np.ndarray, other: State) -> None:
        """Overwrite the chosen games with the games of ``other`` (same rules, in order)."""
        for f in fields(self):
            if f.name != "rules":
                getattr(self, f.name)[games] = getattr(other, f.name)


_ARRAY_FIELDS = tuple(f.name for f in fields(State))[1:]  # every field after ``rules``, in order


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


# ----------------------------------------------------------------------------- dealing


def new_hands(
    rules: Rules,
    batch_size: int,
    rng: np.random.Generator | int | None = None,
    deals: Any = None,
    dealers: Any = None,
    open_cards: Any = None,
) -> State:
    """Deal B new hands.

    The random draws always happen in the same order (deals, then dealers, then open
    cards) whether or not some are given, so giving a dealer never changes the cards.

    Args:
        rules: the rule set (``Rules.preset("band")`` for a preset).
        batch_size: number of games B.
        rng: a ``np.random.Generator`` or a seed; the global numpy RNG is never used.
        deals: optional cards per game and seat, shape (B, n, hand_size), e.g. a list of
            B deals, each a list of n lists of card ids or card texts (``"TS"`` or ``"10♠"``),
            all ids or all texts.
        dealers: optional dealer seat per game (an int for all games, or B ints).
        open_cards: optional open-draw card per game (``trump="open"`` only), ids or texts.

    Returns:
        The new State, in phase HIDE (band hukum) or PLAY.

    Raises:
        ValueError: rules that are not a ``Rules``, a batch size that is not an integer 0 or
            more, or a bad deal, dealer or open card (see :mod:`mendikot_env.deals`).

    Example:
        >>> state = new_hands(Rules(), 8, rng=0)
        >>> legal_action_mask(state).shape
        (8, 53)
    """
    given = read_deal(rules, batch_size, deals, dealers, open_cards)
    return _deal(rules, batch_size, make_rng(rng, "rng"), given)


def new_hand(
    rules: Rules,
    rng: np.random.Generator | int | None = None,
    deal: Any = None,
    dealer: Any = None,
    open_card: Any = None,
) -> State:
    """Deal one hand (a batch of one), with its options as the env's reset takes them.

    The same as ``new_hands(rules, 1, rng, [deal], dealer, open_card)``, except that a bad
    option's error speaks of one deal, dealer or open card (the env's option names), not
    of a batch.
    """
    given = read_deal(rules, 1, None if deal is None else [deal], dealer, open_card, one_game=True)
    return _deal(rules, 1, make_rng(rng, "rng"), given)


def validate_deals(rules: Rules, deals: Any, batch_size: int, one_game: bool = False) -> np.ndarray:
    """Explicit deals checked and returned as a (B, n, hand_size) int64 array of card ids
    (0.1.0's name for :func:`mendikot_env.deals.read_deal`'s cards, kept for its users)."""
    return read_deal(rules, batch_size, deals, one_game=one_game).cards


def _deal(rules: Rules, batch_size: int, rng: np.random.Generator, given: GivenDeal) -> State:
    """The deal behind new_hands and new_hand: the parts ``given`` leaves out are drawn."""
    n, h, B = rules.n_players, rules.hand_size, batch_size
    pack = pack_cards(rules)
    shuffled = rng.permuted(np.broadcast_to(pack, (B, pack.size)), axis=1)
    drawn_dealers = rng.integers(0, n, size=B)
    drawn_open = pack[rng.integers(0, pack.size, size=B)]

    cards = shuffled.reshape(B, n, h) if given.cards is None else given.cards
    dealer = drawn_dealers if given.dealers is None else given.dealers
    if not rules.trump_known_from_start:
        open_card = np.full(B, NO_CARD)
    else:
        open_card = drawn_open if given.open_cards is None else given.open_cards

    hands = np.ascontiguousarray(np.bitwise_or.reduce(CARD_BITS[cards], axis=2))
    return assemble_state(rules, hands, dealer, open_card)


def assemble_state(
    rules: Rules, hands: np.ndarray, dealer: np.ndarray, open_card: np.ndarray, **under_way: Any
) -> State:
    """The one place a :class:`State` is put together: B games from their hands (B, n) uint64,
    dealers (B,) and open draw's cards (B,) (NO_CARD unless ``rules.trump_known_from_start``),
    every other field as at the start of a hand unless ``under_way`` gives it by name (a hand
    part played: a belief's worlds give them all)."""
    B, n = hands.shape
    first = (dealer + 1) % n
    band = rules.has_face_down
    fields = dict(
        phase=np.full(B, HIDE if band else PLAY, dtype=np.int64),
        current=first.astype(np.int64),
        leader=first.astype(np.int64),
        trick_no=np.zeros(B, dtype=np.int64),
        trick_cards=np.full((B, n), NO_CARD, dtype=np.int64),
        trick_size=np.zeros(B, dtype=np.int64),
        led_suit=np.full(B, NO_SUIT, dtype=np.int64),
        trick_trumps=np.zeros(B, dtype=np.uint64),
        trump=(open_card // NUM_RANKS if rules.trump_known_from_start else np.full(B, NO_SUIT)).astype(np.int64),
        face_down=np.full(B, NO_CARD, dtype=np.int64),
        band_card=np.full(B, NO_CARD, dtype=np.int64),
        known_card=np.full(B, NO_CARD, dtype=np.int64),
        hider=(first if band else np.full(B, NO_SEAT)).astype(np.int64),
        revealed_by=np.full(B, NO_SEAT, dtype=np.int64),
        reveal_trick=np.full(B, -1, dtype=np.int64),
        asked=np.zeros(B, dtype=bool),
        duty=np.zeros(B, dtype=bool),
        played=np.zeros((B, n), dtype=np.uint64),
        voids=np.zeros((B, n), dtype=np.uint8),
        taken=np.zeros((B, 2), dtype=np.uint64),
        middle=np.zeros(B, dtype=np.uint64),
        last_winner=np.full(B, NO_SEAT, dtype=np.int64),
        trick_winners=np.full((B, rules.n_tricks), NO_SEAT, dtype=np.int64),
        play_index=np.full((B, NUM_CARDS), -1, dtype=np.int8),
        deal=hands.copy(),
    )
    fields.update(under_way)
    return State(
        rules=rules, hands=hands, dealer=dealer.astype(np.int64), open_card=open_card.astype(np.int64), **fields
    )


# ----------------------------------------------------------------------- legal actions


def legal_bits(state: State) -> np.ndarray:
    """(B,) uint64: each game's legal actions as a 53-bit set (bit 52 = ask); 0 when over.

    Follow suit if you can; otherwise any card, except that a player who just asked for
    the band card must play a trump if able. Asking is legal for a follower who cannot
    follow while the band card is still face down (reveal="ask").
    """
    rules = state.rules
    band, ask = rules.has_face_down, rules.can_ask
    if state.batch_size == 1:  # one game (the AEC env's): the rule on its numbers, read once
        # current is NO_SEAT (-1) only when the hand is over: it then reads the last seat's
        # (empty) hand, and the rule masks the result to 0.
        duty = band and state.duty.item(0)
        bits = _legal_rule(
            state.hands.item(0, state.current.item(0)), state.led_suit.item(0), duty, state.trump.item(0),
            state.face_down.item(0), state.phase.item(0), ask, _LEGAL_LISTS,
        )  # fmt: skip
        return np.array([bits], dtype=np.uint64)
    hand = state.hands.reshape(-1)[_rows(state.batch_size) * rules.n_players + state.current]
    # The trumping duty holds only just after an ask: most steps skip its three calls.
    duty = band and ((True in state.duty.tolist()) if state.batch_size <= _FEW_GAMES else bool(state.duty.any()))
    duty = state.duty if duty else False
    return _legal_rule(hand, state.led_suit, duty, state.trump, state.face_down, state.phase, ask, _LEGAL_TABLES)


def _legal_rule(
    hand: Any, led: Any, duty: Any, trump: Any, face_down: Any, phase: Any, ask: bool, tables: tuple
) -> Any:
    """The rule of :func:`legal_bits`, with operators and table lookups only: for one game's
    Python ints or (B,) arrays alike (``tables``: _LEGAL_LISTS or _LEGAL_TABLES).

    ``duty`` is False when no game has the trumping duty (its lookups are then skipped);
    ``ask``: the rules let a player ask for the band card.
    """
    must_from, suit_sets, ask_bit, select = tables
    # The led suit held, or the whole hand when leading. A seat to act always holds a card
    # before the end (the hider's face-down card comes back before their last turn), so a
    # leader never falls through to ``free`` and its ask bit.
    must = hand & must_from[led]
    free = hand  # a follower who cannot follow
    if duty is not False:  # just after an ask: trumps only, if the asker holds any
        trumps = hand & suit_sets[trump]
        free = select(duty & (trumps != 0), trumps, hand)
    if ask:
        free = free | ask_bit * (face_down >= 0)
    return select(must != 0, must, free) * (phase != OVER)


def _select(condition: Any, yes: Any, no: Any) -> Any:
    """``np.where`` for one game's Python values."""
    return yes if condition else no


# legal_bits' tables: arrays and np.where for a batch, lists and _select for one game's
# Python ints (index -1 reads the last entry of either).
_LEGAL_TABLES = (MUST_PLAY_FROM, SUIT_SETS, ASK_BIT, np.where)
_LEGAL_LISTS = (MUST_PLAY_FROM.tolist(), SUIT_SETS.tolist(), int(ASK_BIT), _select)


def legal_action_mask(state: State) -> np.ndarray:
    """(B, 53) bool: the legal actions of each game's acting seat."""
    return unpack_sets(legal_bits(state), NUM_ACTIONS).view(bool)


_ROWS: dict[int, np.ndarray] = {}
# The seat after each seat, by player count: one lookup instead of (seat + 1) % n.
_NEXT_SEAT = {n: np.roll(np.arange(n), -1) for n in PLAYER_COUNTS}
for _table in _NEXT_SEAT.values():
    _table.flags.writeable = False
# _play_rule's tables by player count: arrays for a batch, lists for one game's Python ints.
_PLAY_TABLES = {n: (CARD_SETS, SUIT_OF, _NEXT_SEAT[n], np.where) for n in PLAYER_COUNTS}
_PLAY_LISTS = {n: (*(table.tolist() for table in tables[:3]), _select) for n, tables in _PLAY_TABLES.items()}


def _rows(batch_size: int) -> np.ndarray:
    """Cached ``np.arange(batch_size)`` (read-only): the hot path indexes with it every step."""
    rows = _ROWS.get(batch_size)
    if rows is None:
        rows = np.arange(batch_size)
        rows.flags.writeable = False
        _ROWS[batch_size] = rows
    return rows


batch_rows = _rows  # the public name, for the layers above that index batches the same way


# -------------------------------------------------------------------------------- step


def step(state: State, actions: Any, check: bool = True, active: np.ndarray | None = None) -> None:
    """Play one action in every game at once (in place). Finished games ignore theirs.

    Args:
        state: the batch, updated in place.
        actions: (B,) action per game: a card id, or 52 to ask for the band card.
        check: verify every action is legal first (cheap: one AND per game).
        active: optional (B,) bool; games where it is False are left as they are and
            their actions ignored (a wrapper waiting for a learner's action uses this).

    Raises:
        IllegalActionError: naming the first game with an illegal action, the action
            and the legal ones; the state is left unchanged.
        ValueError: ``actions`` not one action per game (nor one for all), or ``active``
            not one bool per game.
    """
    B = state.batch_size
    actions = np.asarray(actions)
    if actions.ndim == 0:  # one action for every game
        actions = np.broadcast_to(actions, (B,))
    if active is not None:
        active = np.asarray(active)
    # game indices [0, 2] would read as a mask: active must be bools
    if actions.shape != (B,) or active is not None and (active.shape != (B,) or active.dtype != bool):
        raise ValueError(_step_problem(B, actions, active))
    if check:
        _check_actions(state, actions, _live(state, active))
    if B == 1 and active is None and state.phase.item(0) == PLAY and actions.item(0) != ASK_ACTION:
        _play(state, 0, 0, actions.item(0))  # one game (the AEC env's): the rules run on its Python ints
        return
    if actions.dtype != np.int64:
        actions = actions.astype(np.int64)
    if _all_plain_plays(state, actions, active):
        _play(state, slice(None), _rows(B), actions)
    else:
        _step_special(state, actions, _live(state, active))


def _step_problem(B: int, actions: np.ndarray, active: np.ndarray | None) -> str:
    """What is wrong with the shape of :func:`step`'s actions or ``active``."""
    if actions.shape != (B,):
        given = f"{actions.tolist()!r:.80}"
        return f"actions needs one action per game (shape ({B},)) or one for all, got shape {actions.shape}: {given}"
    return f"active needs one bool per game: shape ({B},) bool, got {active.shape} {active.dtype}"


def _live(state: State, active: np.ndarray | None) -> np.ndarray:
    """(B,) bool: the games that take their action (not over, and active if given)."""
    live = state.phase != OVER
    return live if active is None else live & active


def _all_plain_plays(state: State, actions: np.ndarray, active: np.ndarray | None) -> bool:
    """Whether every game plays a card now (none over, inactive, hiding or asking): the
    fast path of :func:`step`, on the whole batch at once."""
    if state.batch_size <= _FEW_GAMES:
        phases = state.phase.tolist()
        return (
            OVER not in phases
            and HIDE not in phases
            and ASK_ACTION not in actions.tolist()
            and (active is None or bool(active.all()))
        )
    return not (
        np.count_nonzero(_live(state, active)) < state.batch_size
        or np.count_nonzero(state.phase == HIDE)
        or np.count_nonzero(actions == ASK_ACTION)
    )


def _step_special(state: State, actions: np.ndarray, live: np.ndarray) -> None:
    """The slow path: some games are over or inactive, hiding the band card or asking."""
    hide = live & (state.phase == HIDE)
    if np.count_nonzero(hide):
        games = np.flatnonzero(hide)
        _hide(state, games, actions[games])
    ask = live & ~hide & (actions == ASK_ACTION)
    if np.count_nonzero(ask):
        games = np.flatnonzero(ask)
        _reveal(state, games, state.current[games], asked=True)
    play = live & ~hide & ~ask
    if np.count_nonzero(play):
        games = np.flatnonzero(play)
        _play(state, games, games, actions[games])


def _check_actions(state: State, actions: np.ndarray, live: np.ndarray) -> None:
    if not np.issubdtype(actions.dtype, np.integer):
        raise IllegalActionError(f"actions must be integers 0..52, got dtype {actions.dtype}")
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    legal = legal_bits(state)
    bits = CARD_SETS[np.where(in_range, actions, NUM_ACTIONS)]  # the empty set; -1 would wrap in uint8
    bad = live & ((legal & bits) == 0)
    if np.count_nonzero(bad):
        g = int(np.flatnonzero(bad)[0])
        a = int(actions[g])
        shown = action_str(a) if in_range[g] else "out of range: actions are 0..52"
        legal_list = set_to_cards(legal[g])
        raise IllegalActionError(
            f"illegal action {a} ({shown}) in game {g} for seat {int(state.current[g])}; "
            f"legal actions: {legal_list} = {[action_str(x) for x in legal_list]}"
        )


def _hide(state: State, games: np.ndarray, cards: np.ndarray) -> None:
    """Band hukum: the first player lays ``cards`` face down; play begins."""
    seat = state.current[games]
    state.hands[games, seat] &= ~CARD_BITS[cards]
    state.face_down[games] = cards
    state.band_card[games] = cards
    state.phase[games] = PLAY


def _reveal(state: State, games: np.ndarray, by: np.ndarray, asked: bool) -> None:
    """Turn up the band card: its suit is trump and it goes back to the hider's hand."""
    card = state.face_down[games]
    state.trump[games] = card // NUM_RANKS
    state.hands[games, state.hider[games]] |= CARD_BITS[card]
    state.known_card[games] = card
    state.face_down[games] = NO_CARD
    state.revealed_by[games] = by
    state.reveal_trick[games] = state.trick_no[games]
    state.asked[games] = asked
    state.duty[games] = asked


def _play(state: State, sel: slice | np.ndarray | int, games: np.ndarray | int, cards: np.ndarray | int) -> None:
    """Each acting seat plays a card; completes tricks and starts the next turn.

    ``sel`` selects the playing games (a full slice on the fast path, else indices) and
    ``games`` holds their indices; both address the same games. A batch of one plays with
    all three Python ints (0, 0 and the card): :func:`_play_rule` then runs on its numbers,
    and only reading them and the writes for the rare cases differ.
    """
    rules = state.rules
    n = rules.n_players
    one = isinstance(cards, int)
    read, tables = (np.ndarray.item, _PLAY_LISTS[n]) if one else (np.ndarray.__getitem__, _PLAY_TABLES[n])
    seat = read(state.current, sel)
    flat = games * n + seat  # index into the (B * n) flattened per-seat arrays
    band = rules.has_face_down
    known = read(state.known_card, sel) if band else NO_CARD
    cut = rules.trump_by_first_cut
    bit, led, off, trump, counts, known, nxt = _play_rule(
        cards, seat, read(state.led_suit, sel), read(state.trump, sel), known, rules, tables
    )
    hands, played = state.hands.reshape(-1), state.played.reshape(-1)
    hands[flat] = read(hands, flat) ^ bit  # the card is in the hand (legal), so XOR removes it
    played[flat] = read(played, flat) | bit
    state.led_suit[sel] = led
    voids = state.voids.reshape(-1)
    if one:  # few plays fail to follow: write only theirs
        if off:
            voids[flat] = voids.item(flat) | 1 << led
    elif np.count_nonzero(off):
        voids[flat[off]] |= np.left_shift(1, led[off]).astype(np.uint8)
    if cut:
        state.trump[sel] = trump
    state.trick_trumps[sel] |= counts
    state.trick_cards.reshape(-1)[flat] = cards
    if band:
        state.known_card[sel] = known
        state.duty[sel] = False
    size = read(state.trick_size, sel) + 1
    state.trick_size[sel] = size
    state.play_index[games, cards] = read(state.trick_no, sel) * n + size - 1  # 2-D: cheaper than a flat index
    state.current[sel] = nxt
    if one:
        if size == n:
            _finish_tricks(state, 0, 0)
    else:
        full = size == n
        finished = np.count_nonzero(full)
        if finished == full.size and isinstance(sel, slice):
            _finish_tricks(state, sel, games)  # every game's trick is complete (lockstep play)
        elif finished:
            ended = games[full]
            _finish_tricks(state, ended, ended)
    if band:
        _start_turns(state, _rows(1) if one else games)


def _play_rule(card: Any, seat: Any, led: Any, trump: Any, known: Any, rules: Rules, tables: tuple) -> tuple:
    """What a card played changes, with operators and table lookups only: for one game's
    Python ints or (B,) arrays alike (``tables``: _PLAY_LISTS[n] or _PLAY_TABLES[n]).
    A fail to follow sets trump where ``rules.trump_by_first_cut``, and ``known`` (the
    State's ``known_card``) matters only where ``rules.has_face_down``.

    Returns:
        (bit, led, off, trump, counts, known, next seat): the card's bit; the led suit (the
        card's own when it leads); whether it fails to follow (the seat is then void in the
        led suit); trump after it; its bit if it counts as a trump in this trick (else 0);
        the revealed band card still in a hand; the seat to play next.
    """
    card_sets, suits, next_seat, select = tables
    bit, suit = card_sets[card], suits[card]
    led = select(led < 0, suit, led)  # a lead sets the led suit
    off = suit != led
    if rules.trump_by_first_cut:  # the first card that fails to follow sets trump and already counts as one
        trump = select(off & (trump < 0), suit, trump)
    counts = bit * (suit == trump)
    if rules.has_face_down:  # the revealed band card, once played, is no longer back in a hand
        known = select(known == card, NO_CARD, known)
    return bit, led, off, trump, counts, known, next_seat[seat]


def _finish_tricks(state: State, sel: slice | np.ndarray | int, games: np.ndarray | int) -> None:
    """Score completed tricks: the highest counting trump, else the highest card led.

    ``sel`` and ``games`` address the same games, as in :func:`_play` (Python ints 0 for a
    batch of one, whose winner :func:`trick_winner_of` finds on its numbers).
    """
    rules = state.rules
    one = isinstance(games, int)
    if one:
        read, select = np.ndarray.item, _select
        cards = state.trick_cards.tolist()[0]
        tables = OUTLOOK_LISTS[int(rules.trump_by_first_cut)]
        led, trump, trumps = state.led_suit.item(0), state.trump.item(0), state.trick_trumps.item(0)
        winner = trick_winner_of(cards, led, trump, trumps, tables)[0]
        trick_set = 0
        for card in cards:
            trick_set |= tables[0][card]
    else:
        read, select = np.ndarray.__getitem__, np.where
        cards = state.trick_cards[sel]
        score = card_strength(cards, state.led_suit[sel], state.trump[sel], state.trick_trumps[sel])
        winner = np.argmax(score, axis=1)
        trick_set = union(CARD_SETS[cards])
    team = winner % 2
    trick_no = read(state.trick_no, sel)
    taken = state.taken.reshape(-1)
    if not rules.collects_two_in_a_row:
        mine = games * 2 + team
        taken[mine] = read(taken, mine) | trick_set
    else:
        # Dehla Pakad: the middle goes to a seat that wins two tricks in a row, and the
        # winner of the last trick takes whatever is left.
        middle = read(state.middle, sel) | trick_set
        take = (winner == read(state.last_winner, sel)) | (trick_no == rules.n_tricks - 1)
        if one:
            if take:
                taken[team] = taken.item(team) | middle
        else:
            state.taken[games[take], team[take]] |= middle[take]
        state.middle[sel] = select(take, 0, middle)
    state.last_winner[sel] = winner
    state.trick_winners.reshape(-1)[games * rules.n_tricks + trick_no] = winner
    next_trick = trick_no + 1  # before the write below: on the fast path trick_no is a view
    state.trick_no[sel] = next_trick
    state.trick_cards[sel] = NO_CARD
    state.trick_size[sel] = 0
    state.led_suit[sel] = NO_SUIT
    state.trick_trumps[sel] = 0
    state.leader[sel] = winner
    over = next_trick == rules.n_tricks
    state.current[sel] = select(over, NO_SEAT, winner)
    if one:
        if over:
            state.phase[sel] = OVER
    elif np.count_nonzero(over):
        state.phase[games[over]] = OVER


def _trick_kind(led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Index 0..24 of a (led suit, trump suit) pair, NO_SUIT included: the first axis of the
    trick tables (_STRENGTH_TABLE, _SUIT_BASE, _TAKERS), all laid out as [led + 1, trump + 1]."""
    return (led + 1) * 5 + trump + 1


def card_strength(cards: np.ndarray, led: np.ndarray, trump: np.ndarray, trumps: np.ndarray) -> np.ndarray:
    """(B, k) strength of cards in a trick: the highest strength takes the trick.

    Args:
        cards: (B, k) card ids, NO_CARD for none (strength -1).
        led: (B,) suit led; trump: (B,) trump suit or NO_SUIT.
        trumps: (B,) card set of the cards that count as trumps (played once trump was set).

    A counting trump beats any card of the led suit, which beats any other card; when the
    led suit is itself trump, every card of it competes, whenever it was played.
    """
    counts_as_trump = (CARD_SETS[cards] & trumps[:, None]) != 0
    return _STRENGTH_TABLE[_strength_index(_strength_row(_trick_kind(led, trump))[:, None], cards, counts_as_trump)]


def _strength_row(kind: Any) -> Any:
    """Where a _trick_kind's strengths start in _STRENGTH_TABLE (at card -1: NO_CARD)."""
    return kind * 106 + 1  # per game: computed once for all the cards of a trick


def _strength_index(row: Any, cards: Any, counts_as_trump: Any) -> Any:
    """Index into _STRENGTH_TABLE ([kind, counts as trump, card + 1]) from the kind's
    :func:`_strength_row`; for arrays and Python ints alike."""
    return row + cards + 53 * counts_as_trump


def _takers_index(kind: Any, best: Any) -> Any:
    """Index into a _TAKERS row ([kind, best strength + 1]), for arrays and Python ints."""
    return kind * 53 + best + 1


def _strength_rule(cards: np.ndarray, led: np.ndarray, trump: np.ndarray, counts_as_trump: np.ndarray) -> np.ndarray:
    """The trick rule behind :func:`card_strength`, for every combination at once (its table)."""
    follows = SUIT_OF[cards] == led
    trumpish = counts_as_trump | (follows & (led == trump))
    strength = RANK_OF[cards] + NUM_RANKS * follows + 2 * NUM_RANKS * trumpish
    return np.where(cards < 0, -1, strength)


# card_strength looks its answer up: [led + 1, trump + 1, counts as trump, card + 1] flattened
# (5 * 5 * 2 * 53), about half the numpy calls of the formula on the step and encoder paths.
_STRENGTH_TABLE = _strength_rule(
    np.arange(-1, 52)[None, None, None, :],
    np.arange(-1, 4)[:, None, None, None],
    np.arange(-1, 4)[None, :, None, None],
    np.array([False, True])[None, None, :, None],
).reshape(-1)


def trick_outlook(state: State, legal: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Who is winning the trick so far, and which cards would take it over if played now.

    ``legal`` may pass :func:`legal_bits` already computed for this state.

    Returns:
        (winning, takers): (B,) seat whose card is winning the current trick (NO_SEAT when
        it is empty), and (B,) uint64 the acting seat's legal cards that would win the trick
        so far if played now (every legal card when leading). A what-if of the trick rules
        for observations and bots; in cut hukum a card that fails to follow while no trump
        is set would set trump, so it counts as a trump.
    """
    legal = legal_bits(state) if legal is None else legal
    tables = OUTLOOK_TABLES[int(state.rules.trump_by_first_cut)]
    return trick_outlook_of(list(state.trick_cards.T), state.led_suit, state.trump, state.trick_trumps, legal, tables)


def trick_outlook_of(cards: list[Any], led: Any, trump: Any, trumps: Any, legal: Any, tables: tuple) -> tuple[Any, Any]:
    """The rule behind :func:`trick_outlook`, written once for one game's Python ints and for
    (B,) arrays alike: only operators and table lookups, so the AEC env's one-game encoder
    runs it on numbers read once, free of numpy's per-call cost.

    Args:
        cards: the card each seat played to the trick (NO_CARD for none), seat by seat.
        led: as the State's ``led_suit``.
        trump: as the State's ``trump``.
        trumps: as the State's ``trick_trumps``.
        legal: as :func:`legal_bits`.
        tables: ``OUTLOOK_TABLES[cut]`` (arrays), or ``OUTLOOK_LISTS[cut]`` for Python ints.

    Returns:
        (winning, takers): as :func:`trick_outlook`'s, ``winning`` the position in ``cards``.
    """
    winning, kind, best = trick_winner_of(cards, led, trump, trumps, tables)
    # Against strength -1 (an empty trick) every card is a taker; no taker is the ask bit.
    return winning, legal & tables[2][_takers_index(kind, best)]


def trick_winner_of(cards: list[Any], led: Any, trump: Any, trumps: Any, tables: tuple) -> tuple[Any, Any, Any]:
    """Who is winning a trick, for one game's Python ints or (B,) arrays alike (the first
    half of :func:`trick_outlook_of`, with its arguments; the step scores a trick of one
    game with it).

    Returns:
        (winning, kind, best): the position in ``cards`` of the winning card (NO_SEAT for an
        empty trick), the trick's :func:`_trick_kind` and its best strength (-1 if empty).
    """
    card_sets, strengths_8, _, larger = tables
    kind = _trick_kind(led, trump)
    row = _strength_row(kind)
    # Max and argmax over the seats in one pass of pairwise maxima: key = strength * 8 +
    # (7 - seat), so ties go to the lower seat; an empty trick's best key is -1 (strength -1).
    best_key = -1 << 10
    for seat, card in enumerate(cards):
        key = strengths_8[_strength_index(row, card, (card_sets[card] & trumps) != 0)] + (7 - seat)
        best_key = larger(best_key, key)
    winning = 7 - (best_key & 7) - (best_key < 0)  # NO_SEAT for an empty trick
    return winning, kind, best_key >> 3


def if_played(cards: np.ndarray, led: np.ndarray, trump: np.ndarray, cut: bool) -> tuple[np.ndarray, np.ndarray]:
    """What-if: the strength each card would have if played to the trick now, and the trump after.

    Bots use it to ask whether a card would beat another one (compare strengths) and, with
    :func:`beating_ranks`, which cards still to come would beat it.

    Args:
        cards: (...) card ids.
        led: suit led to the trick, broadcastable to ``cards``; NO_SUIT where the card would
            lead (it then follows its own suit).
        trump: trump suit or NO_SUIT, broadcastable to ``cards``.
        cut: the rules set trump by the cut (``trump="cut"``): while no trump is set, a card
            that fails to follow sets it and counts as a trump.

    Returns:
        (strength, trump_after), both shaped like ``cards``: the card's :func:`card_strength`
        in the trick (comparable with the strengths of the cards already in it), and the
        trump suit once it is played. A card played now counts as a trump when it is of the
        trump suit (band hukum: only cards played before the reveal do not, and those are
        already in the trick).

    Example:
        >>> strength, _ = if_played(np.array([[12, 25]]), np.array([0]), np.array([1]), cut=False)
        >>> (strength[0, 1] > strength[0, 0]).item()  # the 2 of trumps beats the ace led
        True
    """
    cards = np.asarray(cards)
    suit = SUIT_OF[cards]
    led = np.where(np.asarray(led) < 0, suit, led)
    trump = np.broadcast_to(np.asarray(trump), cards.shape)
    if cut:
        trump = np.where((trump < 0) & (suit != led), suit, trump)
    flat = cards.reshape(-1, 1)
    counts = CARD_SETS[flat[:, 0]] * (suit == trump).reshape(-1)
    strength = card_strength(flat, led.reshape(-1), trump.reshape(-1), counts)
    return strength.reshape(cards.shape), trump


def beating_ranks(
    strength: np.ndarray, led: np.ndarray, trump: np.ndarray, cut: bool, suit: np.ndarray | None = None
) -> np.ndarray:
    """(..., 4) the lowest rank of each suit whose cards, played now, beat a card of ``strength``.

    NUM_RANKS where no card of the suit would. ``strength`` (...) is a :func:`card_strength`
    (the best in the trick so far, or a card's :func:`if_played` strength); ``led``, ``trump``
    and ``cut`` describe the trick as in :func:`if_played` and broadcast to ``strength``. With
    ``suit`` (shaped like ``strength``), only that suit's rank, shaped like ``strength``.
    """
    # Within a suit the strength of a card is its rank plus the same base (card_strength).
    kind = _trick_kind(np.asarray(led), np.asarray(trump))
    if suit is None:
        strength, base = np.asarray(strength)[..., None], np.take(_SUIT_BASE[int(cut)], kind, axis=0)
    else:
        base = _SUIT_BASE[int(cut)].reshape(-1).take(kind * 4 + suit)
    return np.minimum(np.maximum(strength - base + 1, 0), NUM_RANKS)  # np.clip is slow here


_SUITS = np.arange(4)
# (2, 25, 4) if_played strength of the rank-0 card of each suit, by cut and _trick_kind:
# beating_ranks looks it up (it is on the encoder's hot path).
_SUIT_BASE = np.stack(
    [
        if_played(
            np.broadcast_to(_SUITS * NUM_RANKS, (5, 5, 4)),
            np.arange(-1, 4)[:, None, None],
            np.arange(-1, 4)[None, :, None],
            cut,
        )[0].reshape(25, 4)
        for cut in (False, True)
    ]
)


# (2, 25 * 53) the cards of each suit that would beat a trick's best strength (-1..51), by cut
# and _trick_kind * 53 + strength + 1: trick_outlook's takers, from beating_ranks.
_TAKERS = np.stack(
    [
        np.bitwise_or.reduce(
            RANKS_FROM[
                _SUITS,
                beating_ranks(
                    np.arange(-1, 52)[None, :],
                    np.arange(-1, 4).repeat(5)[:, None],
                    np.tile(np.arange(-1, 4), 5)[:, None],
                    cut,
                ),
            ],
            axis=-1,
        ).reshape(-1)
        for cut in (False, True)
    ]
)


# trick_outlook_of's tables by cut: (card sets, strengths * 8, takers, the larger of two keys)
# as arrays, and as lists with the builtin max for one game's Python ints (a list indexed by
# -1 reads its last entry, as the arrays do).
OUTLOOK_TABLES = [(CARD_SETS, _STRENGTH_TABLE * 8, _TAKERS[cut], np.maximum) for cut in (0, 1)]
OUTLOOK_LISTS = [(*(table.tolist() for table in tables[:3]), max) for tables in OUTLOOK_TABLES]


def _start_turns(state: State, games: np.ndarray) -> None:
    """Band hukum reveals that need no action, applied as the turn passes.

    The hider whose only card left is the face-down one turns it up and plays it; with
    reveal="auto" the card is turned up as soon as the player to act cannot follow.
    """
    # For most of a hand every band card is turned up already: one check, not five calls.
    if (max(state.face_down.tolist()) if state.batch_size <= _FEW_GAMES else state.face_down.max()) < 0:
        return
    games = games[(state.face_down[games] >= 0) & (state.phase[games] == PLAY)]
    if games.size == 0:
        return
    seat = state.current[games]
    hand = state.hands[games, seat]
    reveal = (seat == state.hider[games]) & (hand == 0)
    if state.rules.reveals_at_void:
        led = state.led_suit[games]
        reveal |= (led >= 0) & ((hand & SUIT_SETS[led]) == 0)
    if np.count_nonzero(reveal):
        _reveal(state, games[reveal], seat[reveal], asked=False)


# ----------------------------------------------------------------------------- results


@dataclass
class HandResults:
    """Results of B finished hands as arrays (see :meth:`as_dict` for one game)."""

    tens: np.ndarray  # (B, 2) int64: tens taken by team 0 and team 1
    tricks: np.ndarray  # (B, 2) int64: tricks taken (Dehla Pakad: cards taken / n)
    winner: np.ndarray  # (B,) int64: winning team, or -1 for a drawn hand
    mendikot: np.ndarray  # (B,) bool: one team took all four tens
    whitewash: np.ndarray  # (B,) bool: one team took every trick (every card)
    next_dealer: np.ndarray  # (B,) int64: dealer of the next hand by the rotation rule
    trump: np.ndarray  # (B,) int64: trump suit at the end, or -1 if there was none
    trick_winners: np.ndarray  # (B, n_tricks) int64: seat that won each trick

    def as_dict(self, game: int = 0) -> dict[str, Any]:
        """The result of one game with the public contract keys (plain Python values)."""
        winner = int(self.winner[game])
        trump = int(self.trump[game])
        return {
            "tens": [int(x) for x in self.tens[game]],
            "tricks": [int(x) for x in self.tricks[game]],
            "winner": None if winner < 0 else winner,
            "mendikot": bool(self.mendikot[game]),
            "whitewash": bool(self.whitewash[game]),
            "next_dealer": int(self.next_dealer[game]),
            "trump": None if trump < 0 else trump,
            "trick_winners": [int(x) for x in self.trick_winners[game]],
        }


def team_counts(state: State) -> tuple[np.ndarray, np.ndarray]:
    """(B, 2) tens and (B, 2) tricks taken so far by each team (Dehla Pakad: cards / n)."""
    tens, tricks = taken_counts(state.taken, state.rules.n_players)
    return tens.astype(np.int64), tricks.astype(np.int64)


def taken_counts(taken: Any, n_players: int, count: Any = popcount) -> tuple[Any, Any]:
    """Tens and tricks in cards taken: a uint64 array of sets, or one set as a Python int
    with ``count=int.bit_count``. A trick is ``n_players`` cards (Dehla Pakad's middle pile
    counts once taken)."""
    return count(taken & _TENS), count(taken) // n_players


_TENS = int(TENS_MASK)  # a Python int mixes with Python ints and uint64 arrays alike


def score_hands(rules: Rules, tens: np.ndarray, tricks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Who wins hands that end with these tens and tricks, and the points the winners score.

    The one copy of the scoring rules: :func:`hand_results`, the match tariff and the
    rule-based agents' outcome model all read it.

    Args:
        rules: the rule set (its scoring tariff and tricks per hand).
        tens: (..., 2) int tens taken by team 0 and team 1 (four in all).
        tricks: (..., 2) int tricks taken by team 0 and team 1.

    Returns:
        (winner, points), both shaped ``(...)``: the winning team, or -1 for a drawn hand, and
        the points it scores (``tiered``: 3 for a whitewash, 2 for a mendikot, else 1; the
        other tariffs: 1), 0 for a drawn hand.
    """
    t0, k0, k1 = tens[..., 0], tricks[..., 0], tricks[..., 1]
    # 3 or 4 tens win; at 2 tens each the team with more tricks wins; equal tricks is a draw.
    winner = np.where(t0 >= 3, 0, np.where(t0 <= 1, 1, np.where(k0 > k1, 0, np.where(k1 > k0, 1, -1))))
    if rules.scoring == "tiered":
        whitewash, mendikot = (tricks == rules.n_tricks).any(axis=-1), (tens == 4).any(axis=-1)
        points = np.where(whitewash, 3, np.where(mendikot, 2, 1))
    else:
        points = np.ones_like(winner)
    return winner, np.where(winner < 0, 0, points)


def hand_results(state: State) -> HandResults:
    """Score every game of the batch (meaningful for games whose hand is over).

    3 or 4 tens win (4 is a mendikot); at 2 tens each the team with more tricks wins, and
    equal tricks (6 or 8 players) is a drawn hand that the same dealer deals again.
    """
    rules = state.rules
    n = rules.n_players
    tens, tricks = team_counts(state)
    winner, _ = score_hands(rules, tens, tricks)
    dealer = state.dealer
    dealer_team = dealer % 2
    dealer_won = winner == dealer_team
    swept = tricks[np.arange(state.batch_size), dealer_team] == 0
    if rules.rotation == "rotate":
        nxt = dealer + 1
    else:
        after_sweep = dealer + (1 if rules.rotation == "loser_deals_next_after_whitewash" else 2)
        nxt = np.where(dealer_won, dealer + 1, np.where(swept, after_sweep, dealer))
    nxt = np.where(winner < 0, dealer, nxt) % n
    return HandResults(
        tens=tens,
        tricks=tricks,
        winner=winner.astype(np.int64),
        mendikot=(tens == 4).any(axis=1),
        whitewash=(tricks == rules.n_tricks).any(axis=1),
        next_dealer=nxt.astype(np.int64),
        trump=state.trump.copy(),
        trick_winners=state.trick_winners.copy(),
    )


def random_legal_actions(bits: np.ndarray, rng: np.random.Generator | int) -> np.ndarray:
    """(B,) a uniformly random legal action per game from 53-bit sets (-1 if none).

    Draws k uniform in [0, count) and takes the k-th legal action. Small batches find it in
    the unpacked (B, 53) flags (few numpy calls); from 256 games on, by halving the set six
    times (a count of the low half says which half holds it), which unpacks nothing.
    ``rng`` is a Generator or a seed, as in :func:`new_hands`.
    """
    if not isinstance(rng, np.random.Generator):
        rng = make_rng(rng, "rng")
    count = popcount(bits)
    pick = (rng.random(bits.shape[0]) * count).astype(np.uint8)
    if bits.shape[0] < 256:
        ranks = np.cumsum(unpack_sets(bits, NUM_ACTIONS), axis=1, dtype=np.uint8)  # at most 53: fits
        return np.where(count > 0, np.argmax(ranks > pick[:, None], axis=1), -1)
    rest = np.array(bits, dtype=np.uint64)
    position = np.zeros(bits.shape[0], dtype=np.int64)
    for width, low_mask in _HALVES:
        low = rest & low_mask
        low_count = popcount(low)
        high = pick >= low_count
        pick -= low_count * high
        rest = np.where(high, rest >> np.uint64(width), low)
        position += width * high
    return np.where(count > 0, position, -1)


_HALVES = [(width, np.uint64((1 << width) - 1)) for width in (32, 16, 8, 4, 2, 1)]


def first_player(state: State) -> np.ndarray:
    """(B,) the seat after the dealer: leads the first trick and hides the band card."""
    return (state.dealer + 1) % state.rules.n_players
