"""Deals given by users, read once: cards, dealers and open cards as typed arrays.

Every way a user can name a deal comes through here: the keywords of ``core.new_hands``
(``deals``, ``dealers``, ``open_cards``) and ``core.new_hand`` (``deal``, ``dealer``,
``open_card``), the env's reset options (the same keywords) and a record's deal. Cards
may be ids or texts (``"TS"`` as records write them, or ``"10♠"``). :func:`read_deal`
turns them into a :class:`GivenDeal` of int64 arrays, or raises one ValueError naming the
game, seat or card that is wrong and what is allowed; the core deals from those arrays
and trusts them.

Each reader below returns its value and a problem ("" when there is none), so that the
checks read in order and one ``raise`` reports the first problem found.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cards import NUM_CARDS, TWOS, card_str, parse_card
from .checks import is_integer
from .rules import Rules


def pack_cards(rules: Rules) -> np.ndarray:
    """Card ids in the pack: all 52, or 48 without the 2s for six and eight players."""
    cards = np.arange(NUM_CARDS)
    return cards if rules.n_players == 4 else np.setdiff1d(cards, TWOS)


@dataclass(frozen=True)
class GivenDeal:
    """The parts of a deal a user gave, checked; None where the deal draws them at random."""

    cards: np.ndarray | None  # (B, n, hand_size) int64: card ids dealt to each game's seats
    dealers: np.ndarray | None  # (B,) int64: dealer seat of each game
    open_cards: np.ndarray | None  # (B,) int64: open-draw card of each game (trump known from the start)


def read_deal(
    rules: Any, batch_size: Any, deals: Any = None, dealers: Any = None, open_cards: Any = None, one_game: bool = False
) -> GivenDeal:
    """Check the arguments of a deal and return the given parts as arrays.

    Args:
        rules: must be a :class:`Rules` (a preset name is refused: ``Rules.preset(name)``).
        batch_size: number of games B, an integer 0 or more.
        deals: the cards per game and seat, as ``core.new_hands`` takes them (None: drawn).
        dealers: the dealer seat, one for all games or one per game (None: drawn).
        open_cards: the open draw's card per game, ids or texts (None: drawn).
        one_game: the options are one game's, as ``core.new_hand`` and the env's reset take
            them (``deals`` is then ``[deal]``): errors speak of "the deal", "dealer" and
            "open_card" rather than of game numbers, "dealers" and "open_cards".

    Raises:
        ValueError: naming the argument, game, seat or card that is wrong and what is allowed.

    Example:
        >>> given = read_deal(Rules(), 2, dealers=3)
        >>> given.dealers.tolist(), given.cards is None
        ([3, 3], True)
    """
    cards = seats = open_card = None
    problem = _table_problem(rules, batch_size)
    if not problem and deals is not None:
        cards, problem = _read_cards(rules, deals, batch_size, one_game)
    if not problem and dealers is not None:
        seats, problem = _read_seats(rules, dealers, batch_size, one_game)
    if not problem and open_cards is not None:
        open_card, problem = _read_open_cards(rules, open_cards, batch_size, one_game)
    if problem:
        raise ValueError(problem)
    return GivenDeal(cards, seats, open_card)


def _table_problem(rules: Any, batch_size: Any) -> str:
    """The rules and the batch size, the arguments every deal has."""
    if isinstance(rules, str):
        return f"rules must be a Rules, got the preset name {rules!r:.40}: use Rules.preset({rules!r:.40})"
    if not isinstance(rules, Rules):
        return f"rules must be a Rules (for a preset: Rules.preset(name)), got {rules!r:.80}"
    if not is_integer(batch_size) or batch_size < 0:
        return f"batch_size must be an integer 0 or more (the number of games), got {batch_size!r:.80}"
    return ""


def _read_cards(rules: Rules, deals: Any, batch_size: int, one_game: bool = False) -> tuple[np.ndarray, str]:
    """Explicit deals as a (B, n, hand_size) int64 array, and the problem ("" if none).

    Args:
        one_game: ``deals`` is ``[deal]``, one game's deal as the env's ``deal`` option
            wrapped in a list: problems then speak of "the deal", not of game numbers.
    """

    def deal_of(g: int) -> str:
        return "the deal" if one_game else f"the deal of game {g}"

    cards, problem = _deal_array(rules, deals, batch_size, one_game, deal_of)
    if not problem and cards.dtype.kind == "U":
        cards, problem = _parse_deal_texts(cards, deal_of)
    if not problem and not np.issubdtype(cards.dtype, np.integer):
        subject = "the deal" if one_game else "deals"
        problem = f"{subject} must hold card ids 0..51 or card texts like 'TS', got dtype {cards.dtype}"
    if problem:
        return cards, problem
    cards = cards.astype(np.int64)
    return cards, _pack_problem(rules, cards, deal_of) or _repeat_problem(cards, one_game, deal_of)


def _deal_array(
    rules: Rules, deals: Any, batch_size: int, one_game: bool, deal_of: Callable[[int], str]
) -> tuple[Any, str]:
    """``deals`` as an array of shape (B, n, h), or the problem with its shape."""
    n, h = rules.n_players, rules.hand_size
    try:
        cards = np.asarray(deals)
    except ValueError:
        cards = None
    if cards is None or cards.dtype == object or cards.ndim != 3:
        subject, given = ("the deal", deals[0]) if one_game else ("deals", deals)  # as the caller named and passed it
        expected = (
            f"be {n} lists (one per seat) of {h} card ids" if one_game else f"have shape (games, {n}, {h}) of card ids"
        )
        return cards, _nesting_problem(deals, n, h, deal_of) or f"{subject} must {expected}, got {given!r}"
    if cards.shape == (batch_size, n, h):
        return cards, ""
    if one_game:
        return cards, (
            f"the deal has {_count(cards.shape[1], 'hand')} of {_count(cards.shape[2], 'card')}; "
            f"{n} players need {n} hands of {h}"
        )
    return cards, (
        f"deals have shape {cards.shape}; {batch_size} game(s) of {n} players need shape ({batch_size}, {n}, {h})"
    )


def _nesting_problem(deals: Any, n: int, h: int, deal_of: Callable[[int], str]) -> str:
    """The first game or seat of the wrong size, where the nesting allows naming it ("" if not)."""
    try:
        for g, deal in enumerate(list(deals)):
            hands = list(deal)
            if not all(isinstance(hand, Sized) and not isinstance(hand, str) for hand in hands):
                return ""  # not lists of cards: the caller's general message
            if len(hands) != n:
                return f"{deal_of(g)} has {_count(len(hands), 'hand')}; {n} players need {n} hands of {h}"
            for s, hand in enumerate(hands):
                if len(hand) != h:
                    return f"{deal_of(g)}: seat {s} has {_count(len(hand), 'card')}; each player gets {h}"
    except TypeError:  # not nested lists at all (a number, None, ...)
        pass
    return ""


def _parse_deal_texts(texts: np.ndarray, deal_of: Callable[[int], str]) -> tuple[np.ndarray, str]:
    """(B, n, h) card ids from card texts (``"TS"`` as records write them, or ``"10♠"``): a
    loop over the cards, but only for deals given as text, never on the integer path.

    One text makes numpy turn the whole deal into text, ids too (``[4, "TS"]`` becomes
    ``["4", "TS"]``), so a number that is no card says that ids and texts do not mix."""
    flat = texts.reshape(-1)
    ids = np.empty(flat.size, dtype=np.int64)
    for i, text in enumerate(flat.tolist()):
        try:
            ids[i] = parse_card(text)
        except ValueError as error:
            g, s, _ = np.unravel_index(i, texts.shape)
            hint = ""
            if text.strip().lstrip("+-").isdigit():  # an id, turned to text by the texts beside it
                hint = "; a card id is a number 0..51, not text, and a deal is all ids or all card texts, not a mix"
            return texts, f"{deal_of(int(g))}: seat {int(s)}: {error}{hint}"
    return ids.reshape(texts.shape), ""


def _pack_problem(rules: Rules, cards: np.ndarray, deal_of: Callable[[int], str]) -> str:
    """The first card the pack of ``rules`` does not hold ("" if none)."""
    in_pack = np.isin(cards, pack_cards(rules))
    if in_pack.all():
        return ""
    g, s, k = np.argwhere(~in_pack)[0]
    bad = int(cards[g, s, k])
    why = "the 2s are not in the 48-card pack" if 0 <= bad < NUM_CARDS else "card ids are 0..51"
    return f"{deal_of(g)}: seat {s} holds card {bad}, which is not in the pack for {rules.n_players} players ({why})"


def _repeat_problem(cards: np.ndarray, one_game: bool, deal_of: Callable[[int], str]) -> str:
    """The first game with a card dealt twice, the cards and the seats ("" if none)."""
    ordered = np.sort(cards.reshape(cards.shape[0], -1), axis=1)
    repeated = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    if not repeated.any():
        return ""
    g = int(np.flatnonzero(repeated)[0])
    values, counts = np.unique(ordered[g], return_counts=True)
    first = int(values[counts > 1][0])
    seats = sorted({int(s) for s in np.argwhere(cards[g] == first)[:, 0]})
    where = "" if one_game else f" in {deal_of(g)}"
    return (
        f"card(s) {values[counts > 1].tolist()} dealt more than once{where}"
        f" (card {first}, {card_str(first)}, is dealt to seat(s) {seats})"
    )


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _per_game_ints(value: Any, batch_size: int, name: str, allowed: str) -> tuple[np.ndarray, str]:
    """(B,) integers from one value for every game or one per game, and the problem."""
    values = np.broadcast_to(np.asarray(value), (batch_size,)) if np.ndim(value) == 0 else np.asarray(value)
    if values.shape != (batch_size,) or not np.issubdtype(values.dtype, np.integer):
        return values, f"{name} must be {allowed}, got {value!r}"
    return values.astype(np.int64), ""


def _read_seats(rules: Rules, value: Any, batch_size: int, one_game: bool) -> tuple[np.ndarray, str]:
    name = "dealer" if one_game else "dealers"
    allowed = "a seat (an integer)" if one_game else f"one seat or {batch_size} seats (integers)"
    seats, problem = _per_game_ints(value, batch_size, name, allowed)
    bad = (seats < 0) | (seats >= rules.n_players) if not problem else None
    if bad is not None and bad.any():
        problem = f"{name} {int(seats[bad][0])} is not a seat; seats are 0..{rules.n_players - 1}"
    return seats, problem


def _read_open_cards(rules: Rules, value: Any, batch_size: int, one_game: bool) -> tuple[np.ndarray, str]:
    name = "open_card" if one_game else "open_cards"
    if not rules.trump_known_from_start:
        return value, f"{name} is only used with trump='open', not trump={rules.trump!r}"
    allowed = "a card id or text" if one_game else f"one card id or {batch_size} card ids (or texts)"
    if isinstance(value, str) or (np.ndim(value) > 0 and np.asarray(value).dtype.kind == "U"):
        try:
            texts = np.asarray(value).reshape(-1).tolist()
            value = parse_card(value) if isinstance(value, str) else [parse_card(text) for text in texts]
        except ValueError as error:
            return value, f"{name}: {error}"
    cards, problem = _per_game_ints(value, batch_size, name, allowed)
    bad = ~np.isin(cards, pack_cards(rules)) if not problem else None
    if bad is not None and bad.any():
        problem = f"{name} {int(cards[bad][0])} is not in the pack for {rules.n_players} players"
    return cards, problem
