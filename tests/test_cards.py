"""The card vocabulary: ids, text forms (parse and print) and 52-bit card sets."""

from __future__ import annotations

import numpy as np
import pytest

from mendikot_env import cards


def test_card_ids_follow_rules_md() -> None:
    # id = 13 * suit + rank, suits C D H S, ranks 2..A.
    assert cards.card_id(0, 0) == 0  # 2C
    assert cards.card_id(12, 3) == 51  # AS
    assert cards.TENS == (8, 21, 34, 47)
    assert cards.TWOS == (0, 13, 26, 39)
    assert cards.ASK_ACTION == 52 and cards.NUM_ACTIONS == 53
    for c in range(52):
        assert cards.card_id(cards.rank_of(c), cards.suit_of(c)) == c
        assert cards.suit_of(c) == c // 13 and cards.rank_of(c) == c % 13


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TS", 47),
        ("10S", 47),
        ("10♠", 47),
        ("T♠", 47),
        ("ts", 47),
        (" 10s ", 47),
        ("AS", 51),
        ("as", 51),
        ("2C", 0),
        ("2c", 0),
        ("2♣", 0),
        ("QD", 23),
        ("Q♦", 23),
        ("AH", 38),
        ("A♥", 38),
        ("10♡", 34),
        ("JC", 9),
    ],
)
def test_parse_card_accepts_the_documented_forms(text: str, expected: int) -> None:
    assert cards.parse_card(text) == expected


@pytest.mark.parametrize("text", ["", " ", "S", "10", "1S", "11S", "0S", "TX", "XS", "T S", "TSS", "SS", "AT", "1♠"])
def test_parse_card_rejects_junk_with_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError) as info:
        cards.parse_card(text)
    message = str(info.value)
    assert repr(text) in message
    assert "TS" in message and "10S" in message  # shows the accepted forms


def test_text_round_trips_for_every_card() -> None:
    for c in range(52):
        canonical = cards.card_str(c)
        assert len(canonical) == 2 and canonical[0] in "23456789TJQKA" and canonical[1] in "CDHS"
        assert cards.parse_card(canonical) == c
        assert cards.parse_card(cards.card_str(c, symbols=True)) == c
        assert cards.parse_card(canonical.lower()) == c
        assert cards.parse_card(canonical.replace("T", "10")) == c
    assert cards.card_str(47) == "TS" and cards.card_str(47, symbols=True) == "T♠"
    assert cards.action_str(52) == "ASK" and cards.action_str(0) == "2C"


@pytest.mark.parametrize("bad", [-1, 52, 100, 3.0, "TS", True, None])
def test_check_card_rejects_non_cards(bad: object) -> None:
    with pytest.raises(ValueError, match="0..51"):
        cards.check_card(bad)
    if isinstance(bad, int) and not isinstance(bad, bool):
        with pytest.raises(ValueError):
            cards.card_str(bad)


def test_check_card_accepts_numpy_ints() -> None:
    assert cards.check_card(np.int64(51)) == 51 and cards.check_card(0) == 0


def test_suit_masks_partition_the_pack() -> None:
    masks = [int(m) for m in cards.SUIT_MASKS]
    assert [bin(m).count("1") for m in masks] == [13] * 4
    assert masks[0] | masks[1] | masks[2] | masks[3] == int(cards.FULL_PACK) == (1 << 52) - 1
    for a in range(4):
        for b in range(a + 1, 4):
            assert masks[a] & masks[b] == 0
        assert all(masks[a] >> c & 1 == (c // 13 == a) for c in range(52))
    assert bin(int(cards.NO_TWOS_PACK)).count("1") == 48
    assert all(not int(cards.NO_TWOS_PACK) >> t & 1 for t in cards.TWOS)
    assert int(cards.TENS_MASK) == sum(1 << t for t in cards.TENS)
    assert int(cards.ASK_BIT) == 1 << 52


def test_card_sets_round_trip() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        chosen = sorted(rng.choice(52, size=rng.integers(0, 53), replace=False).tolist())
        bits = cards.cards_to_set(chosen)
        assert cards.set_to_cards(bits) == chosen
        assert cards.set_to_cards(np.uint64(bits)) == chosen
    assert cards.set_to_cards(1 << 52 | 1) == [0, 52]
    sets = np.array([[cards.cards_to_set([0, 5, 51]), 0], [int(cards.FULL_PACK), 1 << 52]], dtype=np.uint64)
    unpacked = cards.unpack_sets(sets, 53)
    assert unpacked.shape == (2, 2, 53) and unpacked.dtype == np.uint8
    assert unpacked[0, 0].nonzero()[0].tolist() == [0, 5, 51]
    assert unpacked[1, 0].sum() == 52 and unpacked[1, 1].nonzero()[0].tolist() == [52]
    assert (cards.pack_sets(unpacked) == sets).all()
    assert cards.popcount(sets).tolist() == [[3, 0], [52, 1]]
    # A row of sets (the env's fast path) unpacks as the general path does, at every width.
    row = np.ascontiguousarray(sets[:, 0])
    for width in (1, 52, 53, 64):
        assert np.array_equal(cards.unpack_sets(row, width), cards.unpack_sets(sets, width)[:, 0])
        assert np.array_equal(cards.unpack_sets(row[:1], width), cards.unpack_sets(sets, width)[:1, 0])


def test_hand_str_groups_by_suit_high_first() -> None:
    hand = [cards.parse_card(t) for t in ("2C", "AS", "TS", "KH", "3C")]
    assert cards.hand_str(hand, symbols=False) == "S AT  H K  C 32"
    assert cards.hand_str(hand) == "♠ AT  ♥ K  ♣ 32"
    assert cards.hand_str([]) == "-"


@pytest.mark.parametrize("k", [1, 2, 4, 6, 8])
@pytest.mark.parametrize("rows", [7, 300])  # small batches reduce, large ones OR slice by slice
def test_union_is_the_or_over_axis_one(k: int, rows: int) -> None:
    sets = np.random.default_rng(k).integers(0, 2**53, size=(rows, k, 3), dtype=np.uint64)
    assert np.array_equal(cards.union(sets), np.bitwise_or.reduce(sets, axis=1))
    assert np.array_equal(cards.union(sets[:, :, 0]), np.bitwise_or.reduce(sets[:, :, 0], axis=1))


def test_suit_and_rank_tables_match_the_card_ids() -> None:
    for card in range(52):
        assert (cards.SUIT_OF[card], cards.RANK_OF[card]) == (cards.suit_of(card), cards.rank_of(card))
    assert cards.SUIT_OF[-1] == -1 and cards.RANK_OF[-1] == -1  # NO_CARD


def test_up_to_highest_holds_each_suits_cards_up_to_its_highest() -> None:
    rng = np.random.default_rng(5)
    sets = rng.integers(0, 1 << 52, size=3000, dtype=np.uint64) & rng.integers(0, 1 << 52, size=3000, dtype=np.uint64)
    sets[:4] = [0, cards.FULL_PACK, np.uint64(1) << np.uint64(51), np.uint64(1 << 13 | 1 << 25)]  # edges
    got = cards.up_to_highest(sets)
    for value, result in zip(sets.tolist(), got.tolist(), strict=True):
        members = [c for c in range(52) if value >> c & 1]
        top = {s: max((c for c in members if c // 13 == s), default=None) for s in range(4)}
        expected = sum(1 << c for c in range(52) if top[c // 13] is not None and c <= top[c // 13])
        assert result == expected, f"{value:#x}"
    # Small batches and a single set (a 0-d array) give the same answers as the whole batch.
    assert np.array_equal(cards.up_to_highest(sets[:1]), got[:1])
    assert np.array_equal(cards.up_to_highest(sets[1:4]), got[1:4])
    assert cards.up_to_highest(sets[2]).shape == () and int(cards.up_to_highest(sets[2])) == int(got[2])
