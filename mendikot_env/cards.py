"""The card vocabulary: ids, suits, ranks, text forms and 52-bit card sets.

Card ids are a public contract (see RULES.md): ``id = 13 * suit + rank`` with suits
``C D H S`` = 0..3 and ranks ``2 3 4 5 6 7 8 9 T J Q K A`` = 0..12, so the ten of a
suit is ``13 * suit + 8`` and the ace of spades is 51. Action 52 asks for the hidden
trump. Sets of cards are 52-bit integers (bit ``id`` set), stored as ``uint64`` in the
batched core so that "does this hand hold a spade" is one AND.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from .checks import is_integer

NUM_SUITS = 4
NUM_RANKS = 13
NUM_CARDS = 52
ASK_ACTION = 52
NUM_ACTIONS = 53
TEN_RANK = 8

SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_LETTERS = "23456789TJQKA"

TENS = tuple(NUM_RANKS * s + TEN_RANK for s in range(NUM_SUITS))
TWOS = tuple(NUM_RANKS * s for s in range(NUM_SUITS))

# (4,) uint64: all thirteen cards of each suit as a card set.
SUIT_MASKS = np.array([((1 << NUM_RANKS) - 1) << (NUM_RANKS * s) for s in range(NUM_SUITS)], dtype=np.uint64)
# (53,) uint64: the set holding only card/action ``i``.
CARD_BITS = np.array([1 << i for i in range(NUM_ACTIONS)], dtype=np.uint64)
# (4, 14) uint64: the cards of suit s with rank >= r (r = 13: none), for "beats rank r" tests.
RANKS_FROM = np.array(
    [[sum(1 << (NUM_RANKS * s + k) for k in range(r, NUM_RANKS)) for r in range(NUM_RANKS + 1)] for s in range(4)],
    dtype=np.uint64,
)
# Suit and rank of card ids, indexable by NO_CARD (-1, the last entry): a lookup is several
# times faster than // and % on int64 arrays, and these sit on the step and encoder hot paths.
SUIT_OF = np.append(np.arange(NUM_CARDS) // NUM_RANKS, -1)
RANK_OF = np.append(np.arange(NUM_CARDS) % NUM_RANKS, -1)
TENS_MASK = np.uint64(sum(1 << t for t in TENS))
FULL_PACK = np.uint64((1 << NUM_CARDS) - 1)
NO_TWOS_PACK = np.uint64(int(FULL_PACK) & ~sum(1 << t for t in TWOS))
ASK_BIT = np.uint64(1 << ASK_ACTION)

_RANK_ALIASES = {"10": TEN_RANK, **{letter: r for r, letter in enumerate(RANK_LETTERS)}}
_SUIT_ALIASES = {
    **{letter: s for s, letter in enumerate(SUIT_LETTERS)},
    **{symbol: s for s, symbol in enumerate(SUIT_SYMBOLS)},
    **{"♧": 0, "♢": 1, "♡": 2, "♤": 3},
}


def suit_of(card: int) -> int:
    """Suit index (0..3) of a card id."""
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    """Rank index (0 = two .. 12 = ace) of a card id."""
    return card % NUM_RANKS


def card_id(rank: int, suit: int) -> int:
    """Card id from rank and suit indices."""
    return NUM_RANKS * suit + rank


def relabelled_card_sources(new_suit: tuple[int, ...]) -> np.ndarray:
    """(52,) for each card, the card it was when every suit ``s`` became ``new_suit[s]``
    (the same rank): the gather index of a 52-card plane or mask whose suits are relabelled."""
    cards = np.arange(NUM_CARDS)
    sources = np.empty(NUM_CARDS, dtype=np.int64)
    sources[np.asarray(new_suit)[cards // NUM_RANKS] * NUM_RANKS + cards % NUM_RANKS] = cards
    return sources


def card_str(card: int, symbols: bool = False) -> str:
    """Canonical text of a card (``"TS"``), or with a suit symbol (``"T♠"``)."""
    check_card(card)
    suits = SUIT_SYMBOLS if symbols else SUIT_LETTERS
    return RANK_LETTERS[rank_of(card)] + suits[suit_of(card)]


def action_str(action: int, symbols: bool = False) -> str:
    """Text of an action: a card, or ``"ASK"`` for action 52."""
    return "ASK" if action == ASK_ACTION else card_str(action, symbols)


def parse_card(text: str) -> int:
    """Card id from text such as ``"TS"``, ``"10S"``, ``"10♠"``, ``"as"`` or ``"2c"``.

    Raises:
        ValueError: naming the text and the accepted forms.
    """
    cleaned = text.strip().upper()
    if len(cleaned) >= 2:
        rank_part, suit_part = cleaned[:-1], cleaned[-1]
        if rank_part in _RANK_ALIASES and suit_part in _SUIT_ALIASES:
            return card_id(_RANK_ALIASES[rank_part], _SUIT_ALIASES[suit_part])
    raise ValueError(
        f"cannot read {text!r} as a card: write rank then suit, rank one of "
        f"{' '.join(RANK_LETTERS)} (or 10), suit one of C D H S or ♣ ♦ ♥ ♠, e.g. 'TS', '10S', '10♠'"
    )


def check_card(card: object) -> int:
    """Return ``card`` as an int if it is a card id 0..51, else raise a ValueError."""
    if not is_integer(card) or not 0 <= int(card) < NUM_CARDS:
        raise ValueError(f"card id must be an integer 0..51, got {card!r}")
    return int(card)


def action_index(action: object) -> int | None:
    """``action`` as an int if it is an integer (Python, numpy, a one-element integer array
    or torch tensor), else None. Floats and bools are not actions: ``int(18.7)`` would
    quietly play card 18, and Gymnasium's ``Discrete`` refuses them too."""
    if isinstance(action, bool | np.bool_) or "bool" in str(getattr(action, "dtype", "")):  # torch.bool too
        return None
    if isinstance(action, np.ndarray):
        return int(action.reshape(-1)[0]) if action.size == 1 and action.dtype.kind in "iu" else None
    try:  # Python and numpy integers, one-element integer tensors; floats raise TypeError
        return operator.index(action)
    except TypeError:
        return None


def cards_to_set(cards: Iterable[int]) -> int:
    """A card set (Python int bitset) from card ids."""
    bits = 0
    for c in cards:
        bits |= 1 << int(c)
    return bits


def set_to_cards(bits: int | np.integer) -> list[int]:
    """Sorted card ids (and 52 for the ask bit) held in a set."""
    value = int(bits)
    return [i for i in range(NUM_ACTIONS) if value >> i & 1]


def popcount(bits: np.ndarray) -> np.ndarray:
    """Number of cards in each set of a uint64 array (``int.bit_count`` for a Python int)."""
    return np.bitwise_count(bits)


def unpack_sets(bits: np.ndarray, width: int = NUM_CARDS) -> np.ndarray:
    """Expand uint64 card sets of any shape ``S`` into a ``S + (width,)`` uint8 0/1 array
    (``width`` 1..64, the bits of a uint64 set)."""
    if isinstance(bits, np.ndarray) and bits.ndim == 1 and bits.dtype == np.uint64 and bits.flags.c_contiguous:
        # A row of sets (the AEC env's mask and observation words, every step): skip the
        # conversions, which cost more than the unpack here.
        if bits.size == 1:
            return np.unpackbits(bits.view(np.uint8), bitorder="little", count=width).reshape(1, width)
        return np.unpackbits(bits.view(np.uint8), bitorder="little").reshape(-1, 64)[:, :width]
    flat = np.ascontiguousarray(bits, dtype=np.uint64).reshape(-1)
    # One flat unpack: with an axis numpy unpacks row by row, several times slower.
    unpacked = np.unpackbits(flat.view(np.uint8), bitorder="little").reshape(-1, 64)
    return unpacked[:, :width].reshape(*np.shape(bits), width)


def union(sets: np.ndarray) -> np.ndarray:
    """Union of card sets along axis 1: (B, k, ...) uint64 to (B, ...).

    ORs the k slices one by one: numpy's ``bitwise_or.reduce`` over a short inner axis walks
    it element by element and is about four times slower for k = 4 at B = 1024; below 128
    rows (the AEC env's B = 1) the single reduce call is the cheaper one.
    """
    if sets.shape[0] < 128:
        return np.bitwise_or.reduce(sets, axis=1)
    result = sets[:, 0].copy()
    for k in range(1, sets.shape[1]):
        result |= sets[:, k]
    return result


# (shift, keep) for a shift down by 1, 2, 4 and 8 ranks: ``keep`` holds the cards whose rank
# plus the shift is still a rank of their suit, so a shifted bit never lands in another suit.
# Python ints: they mix with uint64 arrays and with Python ints alike.
_DOWN_IN_SUIT = [(k, sum(1 << c for c in range(NUM_CARDS) if c % NUM_RANKS + k < NUM_RANKS)) for k in (1, 2, 4, 8)]


def up_to_highest(sets: Any) -> Any:
    """Per suit, every card ranked at or below the set's highest card of that suit.

    ``~up_to_highest(s)`` is then "outranks every card of ``s`` in its suit". Smears each
    bit down in doubling steps (1 + 2 + 4 + 8 >= 12 ranks), masked to stay in its suit.
    Operators only: ``sets`` is one set as a Python int (the one-game encoder's) or a uint64
    array of them.
    """
    for shift, keep in _DOWN_IN_SUIT:
        sets = sets | (sets >> shift) & keep
    return sets


def pack_sets(flags: np.ndarray) -> np.ndarray:
    """Inverse of :func:`unpack_sets`: 0/1 flags ``S + (w,)`` (w <= 64) to uint64 sets ``S``."""
    flags = np.asarray(flags)
    shape = flags.shape[:-1]
    padded = np.zeros((*shape, 64), dtype=bool)
    padded[..., : flags.shape[-1]] = flags  # nonzero is True: a cast, several times faster than != 0
    packed = np.packbits(padded.reshape(-1, 64), axis=1, bitorder="little")
    return packed.view(np.uint64).reshape(shape)


def hand_str(cards: Iterable[int], symbols: bool = True) -> str:
    """A hand sorted by suit (spades first) and rank (high first), grouped per suit."""
    by_suit: dict[int, list[int]] = {s: [] for s in range(NUM_SUITS)}
    for c in cards:
        by_suit[suit_of(c)].append(c)
    groups = []
    for s in reversed(range(NUM_SUITS)):
        if by_suit[s]:
            ranks = "".join(RANK_LETTERS[rank_of(c)] for c in sorted(by_suit[s], reverse=True))
            groups.append((SUIT_SYMBOLS if symbols else SUIT_LETTERS)[s] + " " + ranks)
    return "  ".join(groups) if groups else "-"
