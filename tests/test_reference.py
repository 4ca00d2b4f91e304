"""Hand-built checks of the scalar reference (tests/reference.py) against RULES.md."""

from __future__ import annotations

import random

import pytest
from reference import ASK, ReferenceGame, hand_winner, next_dealer, pack, play_random, random_deal
from support import card, cards, h

from mendikot_env.rules import Rules, hand_variants

C, D, H, S = 0, 1, 2, 3


def play(game: ReferenceGame, text: str) -> None:
    """Play the given cards (or ``ASK``) in turn order."""
    for t in text.split():
        game.step(ASK if t == "ASK" else card(t))


def scripted_hands(rows: list[str]) -> list[list[int]]:
    """Hands from trick rows written in seat order: column ``s`` of every row is seat ``s``'s card."""
    split = [r.split() for r in rows]
    return [[card(row[s]) for row in split] for s in range(len(split[0]))]


def play_scripted(game: ReferenceGame, rows: list[str]) -> None:
    """Play trick by trick: whoever is to act plays their card of the current row."""
    for row in rows:
        by_seat = row.split()
        for _ in by_seat:
            game.step(card(by_seat[game.current_player]))


# --------------------------------------------------------------------------- worked examples

# Example 1 deal: seat 3 has no spades (all hearts).
EXAMPLE1_HANDS = [
    h("S AKQJ9876542 C AK"),
    h("S 3 C QJT98765432 D A"),
    h("S T D KQJT98765432"),
    h("H AKQJT98765432"),
]


def test_example1_cut_sets_trump_and_counts_in_the_same_trick() -> None:
    game = ReferenceGame(Rules(), EXAMPLE1_HANDS, dealer=3)
    assert game.current_player == 0 and game.phase == "play"
    play(game, "AS 3S TS")
    assert game.trump is None  # no trump yet
    assert game.legal_actions() == sorted(EXAMPLE1_HANDS[3])  # void: any card
    play(game, "5H")
    assert game.trump == H  # hearts become trump
    assert game.trick_winners == [3]  # 5H counts as a trump and wins
    assert card("TS") in game.taken[1] and game.taken[0] == []  # team 1 takes the ten
    assert game.current_player == 3


def test_cut_second_void_beats_the_cut_with_a_higher_trump() -> None:
    hands = [
        h("C AKQJT9876543 H 2"),
        h("D 2 H AKQJT9876543"),
        h("D AKQJT9876543 S 2"),
        h("C 2 S AKQJT9876543"),
    ]
    game = ReferenceGame(Rules(), hands, dealer=3)
    play(game, "AC 2D AD 2C")  # seat 2 is also void in clubs and plays a higher diamond
    assert game.trump == D
    assert game.trick_winners == [2]


def test_example2_open_trump_follow_suit_without_beating() -> None:
    hands = [
        h("H T C AKQJT9876543"),
        h("H K D AKQJT9876543"),
        h("H A4 S AKQJT987654"),
        h("H 2356789JQ C 2 D 2 S 32"),
    ]
    rules = Rules(trump="open")
    game = ReferenceGame(rules, hands, dealer=3, open_card=card("AS"))  # spades are trump
    assert game.trump == S
    play(game, "TH KH")
    assert game.legal_actions() == cards("4H AH")  # any heart is legal, no need to beat KH
    play(game, "AH 2H")
    assert game.trick_winners == [2]
    assert card("TH") in game.taken[0]
    assert game.current_player == 2  # the winner leads next


def test_example3_scoring() -> None:
    # 3 tens beat 1 ten whatever the tricks.
    assert hand_winner([3, 1], [5, 8]) == 0
    assert hand_winner([1, 3], [8, 5]) == 1
    assert hand_winner([4, 0], [4, 9]) == 0
    # 2 tens each: more tricks wins.
    assert hand_winner([2, 2], [7, 6]) == 0
    assert hand_winner([2, 2], [6, 7]) == 1
    # 2 tens each and equal tricks (6 or 8 players): drawn.
    assert hand_winner([2, 2], [4, 4]) is None


# 13 tricks written in seat order (columns = seats 0..3). Rows 1-12 are one suit each,
# so everyone always follows; the highest card wins. Row 13: one card of each suit.
# Winners: 0 1 1 1 2 0 0 3 2 1 2 3 0 (row 13: seat 3 leads AS, seat 0 cuts with AC).
SCRIPT13 = [
    "TC 2C 3C 4C",  # 0 wins (TC)
    "5C JC 6C 7C",  # 1
    "8C KC 9C QC",  # 1
    "2D TD 3D 4D",  # 1 (TD)
    "5D 6D JD 7D",  # 2
    "KD 8D 9D QD",  # 0
    "TH 2H 3H 4H",  # 0 (TH)
    "5H 6H 7H JH",  # 3
    "8H 9H KH QH",  # 2
    "2S TS 3S 4S",  # 1 (TS)
    "5S 6S JS 7S",  # 2
    "8S 9S QS KS",  # 3
    "AC AD AH AS",  # 0: AS led by seat 3, AC cuts and is the only trump
]
SCRIPT13_WINNERS = [0, 1, 1, 1, 2, 0, 0, 3, 2, 1, 2, 3, 0]


def test_example3_full_hand_two_tens_each_seven_tricks_beat_six() -> None:
    game = ReferenceGame(Rules(), scripted_hands(SCRIPT13), dealer=3)
    play_scripted(game, SCRIPT13)
    r = game.result()
    assert r["trick_winners"] == SCRIPT13_WINNERS
    # TC, TH to team 0 (seat 0); TD, TS to team 1 (seat 1).
    assert r["tens"] == [2, 2]
    assert r["tricks"] == [7, 6]
    assert r["winner"] == 0
    assert r["mendikot"] is False and r["whitewash"] is False
    assert r["trump"] == C
    assert r["next_dealer"] == 3  # dealer 3 (team 1) lost: deals again


# --------------------------------------------------------------------------- Dehla Pakad


def test_dehla_pakad_collection_run() -> None:
    game = ReferenceGame(Rules(collection="dehla"), scripted_hands(SCRIPT13), dealer=3)
    for i, row in enumerate(SCRIPT13[:3]):
        play_scripted(game, [row])
        if i < 2:
            assert game.taken == [[], []]  # tricks 1, 2 wait in the middle (winners 0, 1)
    # Trick 3: seat 1 won tricks 2 and 3 in a row -> takes the middle (tricks 1-3).
    assert len(game.taken[1]) == 12 and game.middle == []
    assert card("TC") in game.taken[1]
    # Trick 4: seat 1 again -> takes it at once.
    play_scripted(game, SCRIPT13[3:4])
    assert len(game.taken[1]) == 16 and game.middle == []
    # Trick 5 (seat 2), trick 6 (seat 0: a partner's win breaks the run), trick 7 (seat 0 again).
    play_scripted(game, SCRIPT13[4:6])
    assert len(game.middle) == 8 and len(game.taken[0]) == 0
    play_scripted(game, SCRIPT13[6:7])
    assert len(game.taken[0]) == 12 and game.middle == []
    # Tricks 8-12 won by 3 2 1 2 3: never twice in a row; the last trick's winner takes all.
    play_scripted(game, SCRIPT13[7:12])
    assert len(game.middle) == 20
    play_scripted(game, SCRIPT13[12:])
    r = game.result()
    assert game.middle == []
    assert r["trick_winners"] == SCRIPT13_WINNERS
    assert r["tricks"] == [9, 4]  # 36 and 16 cards
    assert r["tens"] == [2, 2]  # TH, TS to team 0; TC, TD to team 1
    assert r["winner"] == 0
    assert r["next_dealer"] == 3


# --------------------------------------------------------------------------- band hukum, ask

# Seat 0 hides 2H. Seat 1 is void in spades and holds one heart (AH); seat 3 is void in spades.
BAND_HANDS = [
    h("H 2 S A C 23456789TJQ"),
    h("H A C KA D 23456789TJ"),
    h("S 23456789TJQK D Q"),
    h("H 3456789TJQK D KA"),
]


def band_game(reveal: str = "ask") -> ReferenceGame:
    """Band hukum game on BAND_HANDS, after seat 0 has hidden 2H."""
    game = ReferenceGame(Rules(trump="band", reveal=reveal), BAND_HANDS, dealer=3)
    assert game.phase == "hide" and game.current_player == 0
    assert game.legal_actions() == sorted(BAND_HANDS[0])
    game.step(card("2H"))
    assert game.phase == "play" and game.current_player == 0
    assert card("2H") not in game.hands[0] and game.hidden_card == card("2H")
    assert game.trump is None
    return game


def test_band_leader_cannot_ask() -> None:
    game = band_game()
    assert ASK not in game.legal_actions()
    assert game.legal_actions() == sorted(set(BAND_HANDS[0]) - {card("2H")})


def test_band_ask_reveal_and_trumping_duty() -> None:
    game = band_game()
    play(game, "AS")
    assert game.legal_actions() == sorted(BAND_HANDS[1]) + [ASK]  # void: any card, or ask
    game.step(ASK)
    assert game.trump == H and game.hidden_card is None
    assert card("2H") in game.hands[0]  # back in the hider's hand at once
    assert game.current_player == 1  # asking does not end the turn
    assert game.legal_actions() == [card("AH")]  # the asker must trump
    play(game, "AH")
    assert game.legal_actions() == cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    play(game, "2S")
    # Seat 3 is void too, but did not ask: no duty, and no more asking.
    assert game.legal_actions() == sorted(BAND_HANDS[3])
    play(game, "3H")
    assert game.trick_winners == [1]  # AH is the highest trump


def test_band_trump_suit_card_before_the_reveal_does_not_count() -> None:
    game = band_game()
    play(game, "AS AH")  # seat 1 plays AH without asking: not a trump
    play(game, "2S")
    game.step(ASK)  # seat 3 asks: hearts are trump from now on
    assert game.legal_actions() == cards("3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    play(game, "3H")
    assert game.trick_winners == [3]  # 3H counts, the earlier AH does not


def test_band_without_reveal_there_are_no_trumps() -> None:
    game = band_game()
    play(game, "AS AH 2S KD")
    assert game.trump is None and game.hidden_card == card("2H")
    assert game.trick_winners == [0]  # highest spade


def test_band_illegal_actions_raise() -> None:
    game = band_game()
    with pytest.raises(ValueError):
        game.step(ASK)  # the leader cannot ask
    with pytest.raises(ValueError):
        game.step(card("2H"))  # the face-down card is not in the hand
    play(game, "AS")
    with pytest.raises(ValueError):
        game.step(card("2S"))  # not seat 1's card
    with pytest.raises(ValueError):
        game.step(53)


# Seat 0 hides 2D and holds no other diamond; seat 1 wins trick 1 and leads KD.
HIDER_FOLLOWS_HANDS = [
    h("D 2 S 2 C 23456789TJQ"),
    h("S A D K H 23456789TJQ"),
    h("S 3 D 3456789TJQ C KA"),
    h("S 456789TJQK D A H KA"),
]


def test_band_hider_asks_and_must_follow_with_the_returned_card() -> None:
    game = ReferenceGame(Rules(trump="band"), HIDER_FOLLOWS_HANDS, dealer=3)
    game.step(card("2D"))
    play(game, "2S AS 3S 4S")
    assert game.trick_winners == [1]
    play(game, "KD 3D AD")
    assert game.legal_actions() == sorted(game.hands[0]) + [ASK]  # the hider may ask too
    game.step(ASK)
    assert game.trump == D
    assert game.legal_actions() == [card("2D")]  # back in hand: must follow suit with it
    play(game, "2D")
    # Led suit is the trump suit: the highest diamond wins, though played before the reveal.
    assert game.trick_winners == [1, 3]


# --------------------------------------------------------------------------- band hukum, auto


def test_band_auto_reveal_for_the_hider_who_must_then_follow() -> None:
    game = ReferenceGame(Rules(trump="band", reveal="auto"), HIDER_FOLLOWS_HANDS, dealer=3)
    game.step(card("2D"))
    play(game, "2S AS 3S 4S")
    play(game, "KD 3D")
    assert game.hidden_card == card("2D")  # seat 3 can follow: still face down
    play(game, "AD")
    # The turn passes to seat 0, void in diamonds from the hand: revealed at once.
    assert game.current_player == 0
    assert game.hidden_card is None and game.trump == D
    assert game.legal_actions() == [card("2D")]
    play(game, "2D")
    assert game.trick_winners == [1, 3]


def test_band_auto_reveal_for_a_void_follower_no_ask_no_duty() -> None:
    game = band_game(reveal="auto")
    play(game, "AS")
    # Seat 1 cannot follow spades: revealed as the turn reaches them.
    assert game.trump == H and game.hidden_card is None and card("2H") in game.hands[0]
    assert game.legal_actions() == sorted(BAND_HANDS[1])  # any card, no ask action
    play(game, "KC 2S 3H")
    assert game.trick_winners == [3]  # 3H counts as a trump (played after the reveal)


# --------------------------------------------------------------------------- band last card

# Seat 0 hides AD and leads 3D..KD then 2S; seat 3 wins trick 12 with KS and leads AS.
LAST_CARD_HANDS = [
    h("D AKQJT9876543 S 2"),
    h("D 2 C 23456789TJQK"),
    h("C A H 23456789TJQK"),
    h("H A S 3456789TJQKA"),
]


def lowest_card_policy(game: ReferenceGame) -> int:
    """The lowest legal card id, never asking."""
    return min(a for a in game.legal_actions() if a != ASK)


def test_band_last_card_is_turned_up_and_counts_as_trump() -> None:
    game = ReferenceGame(Rules(trump="band", reveal="ask"), LAST_CARD_HANDS, dealer=3)
    game.step(card("AD"))
    while len(game.trick_winners) < 12:
        game.step(lowest_card_policy(game))
    assert game.trick_winners == [0] * 11 + [3]
    assert game.hidden_card == card("AD") and game.trump is None
    play(game, "AS")
    # Seat 0 must play and has only the face-down card: it is turned up, no asking.
    assert game.current_player == 0
    assert game.trump == D and game.hidden_card is None
    assert game.legal_actions() == [card("AD")]
    play(game, "AD KC KH")
    r = game.result()
    assert r["trick_winners"] == [0] * 11 + [3, 0]  # AD counts as a trump
    assert r["trump"] == D
    assert r["tricks"] == [12, 1]
    assert r["tens"] == [4, 0] and r["mendikot"] is True and r["whitewash"] is False
    assert r["next_dealer"] == 3  # dealer's team lost (with a trick): same dealer


def test_band_last_card_as_leader() -> None:
    # One suit per seat: seat 0 hides 2C and wins every trick with clubs, nobody asks.
    hands = [h("C AKQJT98765432"), h("D AKQJT98765432"), h("H AKQJT98765432"), h("S AKQJT98765432")]
    game = ReferenceGame(Rules(trump="band"), hands, dealer=3)
    game.step(card("2C"))
    while len(game.trick_winners) < 12:
        game.step(lowest_card_policy(game))
    assert game.current_player == 0 and game.trump == C
    assert game.legal_actions() == [card("2C")]
    while game.phase != "over":
        game.step(lowest_card_policy(game))
    r = game.result()
    assert r["whitewash"] is True and r["mendikot"] is True and r["tricks"] == [13, 0]


# --------------------------------------------------------------------------- six players, drawn

# 6 players, no 2s: 8 tricks of one suit each; winners 0 1 2 3 4 5 0 1.
SCRIPT6 = [
    "AC 3C 4C 5C 6C TC",  # 0 (TC)
    "7C KC 8C 9C JC QC",  # 1
    "3D 4D AD 5D 6D 7D",  # 2
    "8D 9D TD KD JD QD",  # 3 (TD)
    "3H 4H TH 5H AH 6H",  # 4 (TH)
    "7H 8H 9H JH QH KH",  # 5
    "AS 3S 4S 5S 6S 7S",  # 0
    "8S KS 9S TS JS QS",  # 1 (TS)
]


@pytest.mark.parametrize("rotation", ["loser_deals", "loser_deals_next_after_whitewash", "rotate"])
def test_six_player_drawn_hand(rotation: str) -> None:
    rules = Rules(n_players=6, rotation=rotation)
    assert rules.n_tricks == 8 and len(pack(rules)) == 48
    game = ReferenceGame(rules, scripted_hands(SCRIPT6), dealer=5)
    play_scripted(game, SCRIPT6)
    r = game.result()
    assert r["trick_winners"] == [0, 1, 2, 3, 4, 5, 0, 1]
    assert r["tens"] == [2, 2] and r["tricks"] == [4, 4]
    assert r["winner"] is None
    assert r["trump"] is None  # nobody was ever void
    assert r["next_dealer"] == 5  # drawn: the same dealer deals again


def test_deal_validation() -> None:
    with pytest.raises(ValueError):  # 2s are not in the six-player pack
        ReferenceGame(Rules(n_players=6), [list(range(s * 8, s * 8 + 8)) for s in range(6)], dealer=0)
    with pytest.raises(ValueError):  # open trump needs the drawn card
        ReferenceGame(Rules(trump="open"), scripted_hands(SCRIPT13), dealer=0)


# --------------------------------------------------------------------------- rotation


def test_rotation_rules() -> None:
    ld = Rules(rotation="loser_deals")
    ldw = Rules(rotation="loser_deals_next_after_whitewash")
    rot = Rules(rotation="rotate")
    # Dealer 1 (team 1) wins: next seat deals.
    assert [next_dealer(r, 1, 1, [5, 8]) for r in (ld, ldw, rot)] == [2, 2, 2]
    # Dealer's team loses with some tricks: same dealer (rotate: next seat).
    assert [next_dealer(r, 1, 0, [10, 3]) for r in (ld, ldw, rot)] == [1, 1, 2]
    # Dealer's team loses every trick: partner deals / next seat deals / next seat.
    assert [next_dealer(r, 1, 0, [13, 0]) for r in (ld, ldw, rot)] == [3, 2, 2]
    assert [next_dealer(r, 3, 0, [13, 0]) for r in (ld, ldw, rot)] == [1, 0, 0]
    # Drawn hand: same dealer always.
    six = [Rules(n_players=6, rotation=x) for x in ("loser_deals", "loser_deals_next_after_whitewash", "rotate")]
    assert [next_dealer(r, 4, None, [4, 4]) for r in six] == [4, 4, 4]


@pytest.mark.parametrize(
    ("rotation", "expected"), [("loser_deals", 1), ("loser_deals_next_after_whitewash", 0), ("rotate", 0)]
)
def test_rotation_after_a_whitewash_against_the_dealer(rotation: str, expected: int) -> None:
    # Open trump spades; seat 0 holds every spade and wins every trick.
    hands = [h("S AKQJT98765432"), h("C AKQJT98765432"), h("D AKQJT98765432"), h("H AKQJT98765432")]
    game = ReferenceGame(Rules(trump="open", rotation=rotation), hands, dealer=3, open_card=card("5H"))
    assert game.trump == H  # open card's suit, though seat 3 holds it
    game = ReferenceGame(Rules(trump="open", rotation=rotation), hands, dealer=3, open_card=card("5S"))
    r = play_random(game, random.Random(0))
    assert r["trick_winners"] == [0] * 13
    assert r["whitewash"] is True and r["mendikot"] is True and r["winner"] == 0
    assert r["next_dealer"] == expected


@pytest.mark.parametrize(
    ("rotation", "expected"), [("loser_deals", 3), ("loser_deals_next_after_whitewash", 3), ("rotate", 0)]
)
def test_rotation_when_the_dealers_team_loses(rotation: str, expected: int) -> None:
    # SCRIPT13 is won by team 0 (7 tricks to 6); the dealer is seat 3 (team 1).
    game = ReferenceGame(Rules(rotation=rotation), scripted_hands(SCRIPT13), dealer=3)
    play_scripted(game, SCRIPT13)
    assert game.result()["winner"] == 0
    assert game.result()["next_dealer"] == expected


# --------------------------------------------------------------------------- random self-consistency

ALL_RULES = hand_variants()  # every distinct way to play a hand, from the rules' own choices


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: f"{r.n_players}-{r.trump}-{r.reveal}-{r.collection}")
def test_random_hands_are_consistent(rules: Rules) -> None:
    rng = random.Random(12345)
    for _ in range(30):
        hands, open_card = random_deal(rules, rng)
        dealer = rng.randrange(rules.n_players)
        game = ReferenceGame(rules, hands, dealer, open_card)
        assert game.current_player == (dealer + 1) % rules.n_players
        while game.phase != "over":
            legal = game.legal_actions()
            if ASK in legal:  # only in band/ask, for a void follower, while face down
                assert rules.trump == "band" and rules.reveal == "ask" and game.hidden_card is not None
                assert game.trick and not any(c // 13 == game.led_suit for c in game.hands[game.current_player])
            game.step(rng.choice(legal))
        r = game.result()
        assert game.current_player is None and game.legal_actions() == []
        assert sum(r["tens"]) == 4
        assert sum(r["tricks"]) == rules.n_tricks
        assert len(r["trick_winners"]) == rules.n_tricks
        assert all(not hand for hand in game.hands) and game.hidden_card is None and game.middle == []
        if rules.trump in ("band", "open"):
            assert r["trump"] is not None
        if rules.collection == "mendikot":
            assert r["tricks"] == [sum(1 for w in r["trick_winners"] if w % 2 == t) for t in (0, 1)]
        assert r["mendikot"] == (4 in r["tens"])
        with pytest.raises(ValueError):
            game.step(0)
