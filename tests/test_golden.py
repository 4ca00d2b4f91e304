"""Golden hands through the batched core: the worked examples of RULES.md and scripted hands
for every variant, each with its exact expected tricks, trump, tens and result.

The expected values were worked out by hand from RULES.md (the comment on each script says
how); the same hands also run through the scalar reference so the two cannot drift apart.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import ReferenceGame
from support import (
    ASK,
    BAND_HANDS,
    LAST_CARD_HANDS,
    ROTATIONS,
    SCRIPT6,
    SCRIPT13,
    SWEEP_HANDS,
    WINNERS13,
    C,
    D,
    H,
    S,
    act,
    bits_to_list,
    card,
    cards,
    deal_one,
    h,
    legal,
    play_lowest,
    play_rows,
    result,
    scripted_hands,
)

from mendikot_env import core
from mendikot_env.match import MatchState, hand_points, team_rewards
from mendikot_env.rules import Rules


def tens_and_tricks(state: core.State) -> tuple[list[int], list[int]]:
    """Tens and tricks taken so far by team 0 and team 1 (game 0)."""
    r = core.hand_results(state)
    return [int(x) for x in r.tens[0]], [int(x) for x in r.tricks[0]]


def reference_result(rules: Rules, hands: list[list[int]], dealer: int, actions: list[int], open_card=None) -> dict:
    """The scalar reference's result for the same deal and action sequence."""
    game = ReferenceGame(rules, hands, dealer, open_card)
    for a in actions:
        game.step(a)
    return game.result()


class Recorder:
    """Wraps core.step for one game so the actions can be replayed into the reference."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.actions: list[int] = []
        original = core.step

        def recording_step(state: core.State, actions, check: bool = True) -> None:
            if state.batch_size == 1 and state.phase[0] != core.OVER:
                self.actions.append(int(np.asarray(actions).reshape(-1)[0]))
            original(state, actions, check)

        monkeypatch.setattr(core, "step", recording_step)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    return Recorder(monkeypatch)


# =========================================================================== worked examples

# Example 1: seat 3 has no spades (all hearts); after the cut, hearts are trump and seat 3,
# holding all thirteen, wins every trick whatever anyone plays.
EXAMPLE1_HANDS = [
    h("S AKQJ9876542 C AK"),
    h("S 3 C QJT98765432 D A"),
    h("S T D KQJT98765432"),
    h("H AKQJT98765432"),
]


def test_example1_cut_sets_trump_and_the_cutting_card_wins() -> None:
    state = deal_one(Rules(), EXAMPLE1_HANDS, dealer=3)
    assert int(state.current[0]) == 0 and int(state.phase[0]) == core.PLAY
    assert int(state.trump[0]) == core.NO_SUIT  # no trump yet
    act(state, "AS 3S TS")
    assert int(state.trump[0]) == core.NO_SUIT
    assert legal(state) == sorted(EXAMPLE1_HANDS[3])  # void: any card
    act(state, "5H")
    assert int(state.trump[0]) == H  # hearts become trump
    assert int(state.trick_winners[0, 0]) == 3  # 5H counts as a trump in this trick and wins
    assert int(state.trick_no[0]) == 1 and int(state.current[0]) == 3 and int(state.leader[0]) == 3
    assert (state.trick_cards[0] == core.NO_CARD).all()
    assert tens_and_tricks(state) == ([0, 1], [0, 1])  # team 1 takes the trick with the 10S
    play_lowest(state)
    assert result(state) == {
        "tens": [0, 4],
        "tricks": [0, 13],
        "winner": 1,
        "mendikot": True,
        "whitewash": True,
        "next_dealer": 0,  # the dealer's team (1) won: the next seat deals
        "trump": H,
        "trick_winners": [3] * 13,
    }


def test_cut_a_second_void_overtrumps_the_cut_in_the_same_trick() -> None:
    hands = [
        h("C AKQJT9876543 H 2"),
        h("D 2 H AKQJT9876543"),
        h("D AKQJT9876543 S 2"),
        h("C 2 S AKQJT9876543"),
    ]
    state = deal_one(Rules(), hands, dealer=3)
    act(state, "AC 2D")
    assert int(state.trump[0]) == D  # 2D cuts: diamonds are trump
    assert legal(state) == sorted(hands[2])  # seat 2 is void in clubs too: any card
    act(state, "AD 2C")
    assert int(state.trick_winners[0, 0]) == 2  # AD beats the 2D cut
    assert int(state.trump[0]) == D  # trump set once for the hand


def trick_strength(state: core.State) -> np.ndarray:
    """(B, n) card_strength of the cards in each game's current trick."""
    return core.card_strength(state.trick_cards, state.led_suit, state.trump, state.trick_trumps)


def test_what_if_a_cut_sets_trump_and_only_a_higher_trump_beats_it() -> None:
    """core.if_played and core.beating_ranks (the what-if the bots use) on Example 1's first trick."""
    state = deal_one(Rules(), EXAMPLE1_HANDS, dealer=3)
    act(state, "AS 3S TS")
    best = trick_strength(state).max(axis=1)
    strength, trump_after = core.if_played(
        np.array([cards("5H 2S")]), state.led_suit[:, None], state.trump[:, None], cut=True
    )
    assert strength[0, 0] > best[0] > strength[0, 1]  # the 5H would cut and win, the 2S would not
    assert trump_after.tolist() == [[H, core.NO_SUIT]]  # the 5H would set hearts as trump
    # Any club, diamond or heart played now would cut and win; no spade beats the ace.
    assert core.beating_ranks(best, state.led_suit, state.trump, cut=True).tolist() == [[0, 0, 0, 13]]
    real = state.copy()
    act(real, "5H")
    assert int(real.trump[0]) == H and int(real.trick_winners[0, 0]) == 3  # as the what-if said
    # Once hearts are trump only a higher heart beats the 5H; a club or diamond is a discard.
    assert core.beating_ranks(strength[:, 0], state.led_suit, trump_after[:, 0], cut=True).tolist() == [[13, 13, 4, 13]]


def test_what_if_band_a_trump_played_now_counts_one_played_before_the_reveal_does_not() -> None:
    state = band_state()
    act(state, "AS AH 2S ASK")  # the AH, played before seat 3 asked, is not a trump
    strength = trick_strength(state)[0]
    assert strength.argmax() == 0  # the AS is winning
    now, _ = core.if_played(np.array([cards("3H AH")]), state.led_suit[:, None], state.trump[:, None], cut=False)
    assert (now[0] > strength.max()).all() and now[0, 1] > strength[1]  # any heart played now is a trump
    assert core.beating_ranks(strength.max()[None], state.led_suit, state.trump, cut=False).tolist() == [
        [13, 13, 0, 13]
    ]


@pytest.mark.parametrize(("third", "winner"), [("AH", 2), ("4H", 1)])
def test_example2_open_trump_follow_suit_without_beating(third: str, winner: int) -> None:
    hands = [
        h("H T C AKQJT9876543"),
        h("H K D AKQJT9876543"),
        h("H A4 S AKQJT987654"),
        h("H 2356789JQ C 2 D 2 S 32"),
    ]
    state = deal_one(Rules(trump="open"), hands, dealer=3, open_card=card("AS"))
    assert int(state.trump[0]) == S and int(state.open_card[0]) == card("AS")
    act(state, "TH KH")
    assert legal(state) == cards("4H AH")  # any heart is legal: no need to beat the KH
    act(state, f"{third} 2H")
    assert int(state.trick_winners[0, 0]) == winner
    assert int(state.current[0]) == winner  # the winner leads next
    expected = ([1, 0], [1, 0]) if winner % 2 == 0 else ([0, 1], [0, 1])
    assert tens_and_tricks(state) == expected  # the winner's team takes the 10H


# Example 3: team 0 takes 3 tens and 5 tricks, team 1 one ten and 8 tricks. Rows 1-12 are one
# suit each (everyone follows, the highest card wins); in row 13 seat 3 leads AS and seat 0's
# AC is the first card off the led suit, so it cuts (clubs trump) and wins.
SCRIPT_3_TENS = [
    "TC 2C 3C 4C",  # 0 (TC)
    "5C JC 6C 7C",  # 1
    "8C KC 9C QC",  # 1
    "TD 2D 3D 4D",  # 0 (TD)
    "5D 6D JD 7D",  # 2
    "8D 9D QD KD",  # 3
    "2H 3H TH 4H",  # 2 (TH)
    "5H 6H 7H JH",  # 3
    "8H KH 9H QH",  # 1
    "2S TS 3S 4S",  # 1 (TS)
    "5S 6S 7S JS",  # 3
    "8S 9S QS KS",  # 3
    "AC AD AH AS",  # 0
]
WINNERS_3_TENS = [0, 1, 1, 0, 2, 3, 2, 3, 1, 1, 3, 3, 0]


def test_example3_three_tens_beat_one_ten_and_more_tricks(recorder: Recorder) -> None:
    hands = scripted_hands(SCRIPT_3_TENS)
    state = deal_one(Rules(), hands, dealer=3)
    play_rows(state, SCRIPT_3_TENS)
    expected = {
        "tens": [3, 1],
        "tricks": [5, 8],
        "winner": 0,
        "mendikot": False,
        "whitewash": False,
        "next_dealer": 3,  # the dealer (team 1) lost: deals again
        "trump": C,
        "trick_winners": WINNERS_3_TENS,
    }
    assert result(state) == expected
    assert reference_result(Rules(), hands, 3, recorder.actions) == expected


def test_example3_two_tens_each_seven_tricks_beat_six(recorder: Recorder) -> None:
    hands = scripted_hands(SCRIPT13)
    state = deal_one(Rules(), hands, dealer=3)
    play_rows(state, SCRIPT13)
    expected = {
        "tens": [2, 2],
        "tricks": [7, 6],
        "winner": 0,
        "mendikot": False,
        "whitewash": False,
        "next_dealer": 3,
        "trump": C,
        "trick_winners": WINNERS13,
    }
    assert result(state) == expected
    assert reference_result(Rules(), hands, 3, recorder.actions) == expected


def test_golden_hands_in_one_batch_do_not_interfere() -> None:
    # SCRIPT13 with every seat moved k places on (k = 0..3), in one batch of four: the trick
    # winners move with the seats, so team 1 wins when k is odd.
    base = scripted_hands(SCRIPT13)
    deals = [[base[(s - k) % 4] for s in range(4)] for k in range(4)]
    state = core.new_hands(Rules(), 4, rng=1, deals=deals, dealers=[(3 + k) % 4 for k in range(4)])
    rows = [r.split() for r in SCRIPT13]
    for row in rows:
        for _ in range(4):
            seats = state.current
            chosen = [card(row[(int(seats[k]) - k) % 4]) for k in range(4)]
            core.step(state, np.array(chosen))
    assert state.done.all()
    results = core.hand_results(state)
    for k in range(4):
        r = results.as_dict(k)
        assert r["trick_winners"] == [(w + k) % 4 for w in WINNERS13]
        assert r["tens"] == [2, 2]
        assert r["tricks"] == ([7, 6] if k % 2 == 0 else [6, 7])
        assert r["winner"] == k % 2
        assert r["next_dealer"] == (3 + k) % 4  # the dealer's team lost every time


# =========================================================================== band hukum


def band_state(reveal: str = "ask") -> core.State:
    """BAND_HANDS after seat 0 (first player, dealer 3) has laid the 2H face down."""
    state = deal_one(Rules(trump="band", reveal=reveal), BAND_HANDS, dealer=3)
    assert int(state.phase[0]) == core.HIDE and int(state.current[0]) == 0 and int(state.hider[0]) == 0
    assert legal(state) == sorted(BAND_HANDS[0])  # choose any card of the hand, no ask
    act(state, "2H")
    assert int(state.phase[0]) == core.PLAY and int(state.current[0]) == 0
    assert int(state.face_down[0]) == card("2H")
    assert not int(state.hands[0, 0]) >> card("2H") & 1  # not in the hand while face down
    assert int(state.trump[0]) == core.NO_SUIT
    return state


@pytest.mark.parametrize("reveal", ["ask", "auto"])
def test_band_leader_plays_without_the_face_down_card_and_cannot_ask(reveal: str) -> None:
    state = band_state(reveal)
    assert legal(state) == sorted(set(BAND_HANDS[0]) - {card("2H")})


def test_band_ask_is_legal_only_for_a_void_follower_while_face_down() -> None:
    state = band_state()
    act(state, "AS")
    assert legal(state) == sorted(BAND_HANDS[1]) + [ASK]  # void: any card, or ask
    act(state, "AC")  # plays without asking
    assert ASK not in legal(state)  # seat 2 can follow spades: no ask
    assert legal(state) == cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    act(state, "2S")
    assert legal(state) == sorted(BAND_HANDS[3]) + [ASK]  # seat 3 is void: may ask too
    act(state, "KD")
    assert int(state.face_down[0]) == card("2H") and int(state.trump[0]) == core.NO_SUIT
    assert int(state.trick_winners[0, 0]) == 0  # no trumps: the highest spade
    assert int(state.current[0]) == 0 and ASK not in legal(state)  # the new leader cannot ask


def test_band_ask_reveals_and_the_asker_must_trump() -> None:
    state = band_state()
    act(state, "AS ASK")
    assert int(state.trump[0]) == H and int(state.face_down[0]) == core.NO_CARD
    assert int(state.reveal_trick[0]) == 0 and int(state.revealed_by[0]) == 1 and state.asked[0]
    assert int(state.hands[0, 0]) >> card("2H") & 1  # back in the hider's hand at once
    assert int(state.current[0]) == 1  # asking does not end the turn
    assert legal(state) == [card("AH")]  # the asker must play a trump (their only heart)
    act(state, "AH")
    assert legal(state) == cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    act(state, "2S")
    # Seat 3 is void too but did not ask: any card, and no more asking once revealed.
    assert legal(state) == sorted(BAND_HANDS[3])
    act(state, "3H")
    assert int(state.trick_winners[0, 0]) == 1  # AH is the highest trump


def test_band_asker_without_trumps_may_play_anything() -> None:
    # Seat 1 holds no heart at all; after asking (hearts trump) any card is legal.
    hands = [
        h("H 2 S A C 23456789TJQ"),
        h("C KA D 23456789TJQ"),
        h("S 23456789TJQK H A"),
        h("H 3456789TJQK D KA"),
    ]
    state = deal_one(Rules(trump="band"), hands, dealer=3)
    act(state, "2H AS ASK")
    assert int(state.trump[0]) == H
    assert legal(state) == sorted(hands[1])


def test_band_trump_suit_card_played_before_the_reveal_does_not_count() -> None:
    state = band_state()
    act(state, "AS AH 2S")  # seat 1 plays AH without asking: not a trump
    act(state, "ASK")  # seat 3 asks: hearts are trump from now on
    assert legal(state) == cards("3H 4H 5H 6H 7H 8H 9H TH JH QH KH")  # the duty
    act(state, "3H")
    assert int(state.trick_winners[0, 0]) == 3  # the 3H counts, the earlier AH does not
    assert int(state.trump[0]) == H


def test_band_without_a_reveal_there_are_no_trumps() -> None:
    state = band_state()
    act(state, "AS AH 2S KD")
    assert int(state.trump[0]) == core.NO_SUIT and int(state.face_down[0]) == card("2H")
    assert int(state.trick_winners[0, 0]) == 0  # the highest spade


def test_band_illegal_actions_raise_and_leave_the_state_unchanged() -> None:
    state = band_state()
    before = state.copy()
    for bad in (ASK, card("2H"), card("2S"), 53, -1):  # leader asks; face-down card; not held; junk
        with pytest.raises(core.IllegalActionError):
            core.step(state, np.array([bad]))
    assert int(state.face_down[0]) == int(before.face_down[0])
    assert (state.hands == before.hands).all() and (state.played == before.played).all()


# Seat 0 hides 2D and holds no other diamond; seat 1 wins trick 1 and leads KD.
HIDER_FOLLOWS_HANDS = [
    h("D 2 S 2 C 23456789TJQ"),
    h("S A D K H 23456789TJQ"),
    h("S 3 D 3456789TJQ C KA"),
    h("S 456789TJQK D A H KA"),
]


def test_band_hider_may_ask_and_must_then_follow_with_the_returned_card() -> None:
    state = deal_one(Rules(trump="band"), HIDER_FOLLOWS_HANDS, dealer=3)
    act(state, "2D 2S AS 3S 4S")
    assert int(state.trick_winners[0, 0]) == 1
    act(state, "KD 3D AD")
    assert legal(state) == bits_to_list(state.hands[0, 0]) + [ASK]  # the hider is void too: may ask
    act(state, "ASK")
    assert int(state.trump[0]) == D
    assert legal(state) == [card("2D")]  # back in hand, it counts for following suit
    act(state, "2D")
    # The led suit is the trump suit: the highest diamond wins, though played before the reveal.
    assert int(state.trick_winners[0, 1]) == 3


def test_band_auto_reveal_for_the_hider_who_must_then_follow() -> None:
    state = deal_one(Rules(trump="band", reveal="auto"), HIDER_FOLLOWS_HANDS, dealer=3)
    act(state, "2D 2S AS 3S 4S KD 3D")
    assert int(state.face_down[0]) == card("2D")  # seat 3 can follow: still face down
    act(state, "AD")
    # The turn reaches seat 0, void in diamonds in the hand: turned up at once.
    assert int(state.current[0]) == 0
    assert int(state.face_down[0]) == core.NO_CARD and int(state.trump[0]) == D
    assert legal(state) == [card("2D")]
    act(state, "2D")
    assert int(state.trick_winners[0, 1]) == 3


def test_band_auto_reveal_for_a_void_follower_no_ask_no_duty() -> None:
    state = band_state("auto")
    act(state, "AS")
    # Seat 1 cannot follow spades: revealed as the turn reaches them.
    assert int(state.trump[0]) == H and int(state.face_down[0]) == core.NO_CARD
    assert int(state.hands[0, 0]) >> card("2H") & 1
    assert legal(state) == sorted(BAND_HANDS[1])  # any card, no ask, no trumping duty
    act(state, "KC 2S 3H")
    assert int(state.trick_winners[0, 0]) == 3  # the 3H (after the reveal) is a trump


@pytest.mark.parametrize("reveal", ["ask", "auto"])
def test_band_last_card_is_turned_up_and_counts_as_a_trump(reveal: str, recorder: Recorder) -> None:
    rules = Rules(trump="band", reveal=reveal)
    state = deal_one(rules, LAST_CARD_HANDS, dealer=3)
    act(state, "AD")
    if reveal == "ask":
        play_lowest(state, until_trick=12)
        assert result(state)["trick_winners"][:12] == [0] * 11 + [3]
        assert int(state.face_down[0]) == card("AD") and int(state.trump[0]) == core.NO_SUIT
        act(state, "AS")
        # Seat 0 must play and has only the face-down card: turned up, no asking.
        assert int(state.current[0]) == 0
        assert int(state.trump[0]) == D and int(state.face_down[0]) == core.NO_CARD
        assert int(state.reveal_trick[0]) == 12 and int(state.revealed_by[0]) == 0 and not state.asked[0]
        assert legal(state) == [card("AD")]
        act(state, "AD KC KH")
        expected = {
            "tens": [4, 0],
            "tricks": [12, 1],
            "winner": 0,
            "mendikot": True,
            "whitewash": False,
            "next_dealer": 3,  # the dealer's team lost, with a trick: same dealer
            "trump": D,
            "trick_winners": [0] * 11 + [3, 0],  # the AD counts as a trump
        }
    else:
        # Auto: seat 0 leads 3D, seat 1 follows with 2D and seat 2 is void: the AD is turned
        # up at seat 2's turn. Seat 0 then leads diamonds (trump) to trick 12, AD included, and
        # seat 3's AS wins the last trick (2S led, no trump left to play).
        act(state, "3D 2D")
        assert int(state.trump[0]) == D and int(state.face_down[0]) == core.NO_CARD
        assert int(state.reveal_trick[0]) == 0 and int(state.revealed_by[0]) == 2 and not state.asked[0]
        assert int(state.current[0]) == 2 and ASK not in legal(state)
        play_lowest(state)
        expected = {
            "tens": [4, 0],
            "tricks": [12, 1],
            "winner": 0,
            "mendikot": True,
            "whitewash": False,
            "next_dealer": 3,
            "trump": D,
            "trick_winners": [0] * 12 + [3],
        }
    assert result(state) == expected
    assert reference_result(rules, LAST_CARD_HANDS, 3, recorder.actions) == expected


def test_band_last_card_as_leader_and_whitewash() -> None:
    # One suit per seat: seat 0 hides 2C and wins every trick with clubs; nobody ever asks.
    hands = [h("C AKQJT98765432"), h("D AKQJT98765432"), h("H AKQJT98765432"), h("S AKQJT98765432")]
    state = deal_one(Rules(trump="band"), hands, dealer=3)
    act(state, "2C")
    play_lowest(state, until_trick=12)
    assert int(state.current[0]) == 0 and int(state.trump[0]) == C  # revealed as seat 0 leads
    assert legal(state) == [card("2C")]
    play_lowest(state)
    r = result(state)
    assert r["whitewash"] and r["mendikot"] and r["tricks"] == [13, 0] and r["tens"] == [4, 0]
    assert r["next_dealer"] == 1  # whitewash against dealer 3: the partner deals (loser_deals)


# =========================================================================== Dehla Pakad


def test_dehla_pakad_runs_take_the_middle() -> None:
    state = deal_one(Rules(collection="dehla"), scripted_hands(SCRIPT13), dealer=3)

    def middle_cards() -> int:
        return bin(int(state.middle[0])).count("1")

    play_rows(state, SCRIPT13[:2])  # winners 0, 1: no run yet
    assert tens_and_tricks(state) == ([0, 0], [0, 0]) and middle_cards() == 8
    play_rows(state, SCRIPT13[2:3])  # seat 1 again: takes tricks 1-3 (with the TC)
    assert tens_and_tricks(state) == ([0, 1], [0, 3]) and middle_cards() == 0
    play_rows(state, SCRIPT13[3:4])  # seat 1 a third time: takes this trick at once (TD)
    assert tens_and_tricks(state) == ([0, 2], [0, 4]) and middle_cards() == 0
    play_rows(state, SCRIPT13[4:6])  # seat 2, then seat 0: a partner's win breaks the run
    assert tens_and_tricks(state) == ([0, 2], [0, 4]) and middle_cards() == 8
    play_rows(state, SCRIPT13[6:7])  # seat 0 again: takes tricks 5-7 (with the TH)
    assert tens_and_tricks(state) == ([1, 2], [3, 4]) and middle_cards() == 0
    play_rows(state, SCRIPT13[7:12])  # 3 2 1 2 3: never twice in a row
    assert tens_and_tricks(state) == ([1, 2], [3, 4]) and middle_cards() == 20
    play_rows(state, SCRIPT13[12:])  # the last trick's winner (seat 0) takes all that is left
    assert middle_cards() == 0
    assert result(state) == {
        "tens": [2, 2],
        "tricks": [9, 4],  # 36 and 16 cards
        "winner": 0,
        "mendikot": False,
        "whitewash": False,
        "next_dealer": 3,
        "trump": C,
        "trick_winners": WINNERS13,
    }


def test_dehla_pakad_winning_tricks_without_taking_cards() -> None:
    # Winners 0 1 1 0 2 3 2 3 1 1 3 3 0: seat 1 (tricks 2, 3) takes tricks 1-3, seat 1 again
    # (tricks 9, 10) takes tricks 4-10, seat 3 (11, 12) takes 11-12, and seat 0 takes only
    # the last trick: team 0 won 5 tricks but takes one trick's cards.
    state = deal_one(Rules(collection="dehla"), scripted_hands(SCRIPT_3_TENS), dealer=3)
    play_rows(state, SCRIPT_3_TENS)
    r = result(state)
    assert r["trick_winners"] == WINNERS_3_TENS
    assert r["tricks"] == [1, 12]
    assert r["tens"] == [0, 4]  # TC (tricks 1-3), TD, TH (4-10) and TS all to team 1
    assert r["winner"] == 1 and r["mendikot"] and not r["whitewash"]
    assert r["next_dealer"] == 0  # dealer 3's team won: the next seat deals


# =========================================================================== 6 and 8 players


# 8 players, 6 tricks. Rows 1-4 are one suit each (winners 0 1 2 3, the TS to seat 3). In row
# 5 seat 3 leads KC; seats 4-6 follow, seat 7 is void and its KD cuts (diamonds trump); the
# QD of seat 2 is a lower trump: seat 7 wins (TC). Row 6 (seat 7 leads 9S) decides the hand.
SCRIPT8_HEAD = [
    "AC 3C 4C 5C 6C 7C 8C 9C",  # 0
    "3D AD 4D 5D 6D 7D 8D 9D",  # 1
    "3H 4H AH 5H 6H 7H 8H 9H",  # 2
    "3S 4S 5S AS 6S 7S 8S TS",  # 3 (TS)
    "KH KS QD KC QC JC TC KD",  # 7 (TC): KD is the highest trump
]
# Seat 0's JD is the highest trump: team 0 takes TD and TH -> 2 tens and 3 tricks each: drawn.
SCRIPT8_DRAW = [*SCRIPT8_HEAD, "JD TH QH JH JS QS TD 9S"]
# Seat 1's JD wins instead: team 1 takes all four tens and 4 tricks.
SCRIPT8_TEAM1 = [*SCRIPT8_HEAD, "TD JD QH JH JS QS TH 9S"]


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_six_player_drawn_hand(rotation: str, recorder: Recorder) -> None:
    rules = Rules(n_players=6, rotation=rotation)
    hands = scripted_hands(SCRIPT6)
    state = deal_one(rules, hands, dealer=5)
    assert int(state.current[0]) == 0
    play_rows(state, SCRIPT6)
    expected = {
        "tens": [2, 2],
        "tricks": [4, 4],
        "winner": None,
        "mendikot": False,
        "whitewash": False,
        "next_dealer": 5,  # drawn: the same dealer deals again, under every rotation
        "trump": None,  # nobody was ever void
        "trick_winners": [0, 1, 2, 3, 4, 5, 0, 1],
    }
    assert result(state) == expected
    assert reference_result(rules, hands, 5, recorder.actions) == expected


@pytest.mark.parametrize("scoring", ["points_per_hand", "tiered", "fixed_deals"])
def test_a_drawn_hand_scores_nothing_under_every_tariff(scoring: str) -> None:
    rules = Rules(n_players=6, scoring=scoring)
    state = deal_one(rules, scripted_hands(SCRIPT6), dealer=5)
    play_rows(state, SCRIPT6)
    results = core.hand_results(state)
    assert hand_points(rules, results).tolist() == [0]  # "no one scores"
    assert team_rewards(rules, results, "win").tolist() == [[0.0, 0.0]]
    assert team_rewards(rules, results, "points").tolist() == [[0.0, 0.0]]
    match = MatchState.start(np.array([5]))
    assert match.record(rules, results).tolist() == [[0, 0]]
    assert match.scores.tolist() == [[0, 0]] and match.deals.tolist() == [1] and match.dealer.tolist() == [5]
    assert match.winner().tolist() == [-1]  # level


def test_a_match_that_is_over_takes_no_more_hands() -> None:
    rules = Rules(n_players=6, scoring="fixed_deals", target=1)
    state = deal_one(rules, scripted_hands(SCRIPT6), dealer=5)
    play_rows(state, SCRIPT6)
    results = core.hand_results(state)
    match = MatchState.start(np.array([5]))
    match.record(rules, results)
    assert match.over.tolist() == [True]
    with pytest.raises(ValueError, match=r"the match of game\(s\) \[0\] is already over; start a new MatchState"):
        match.record(rules, results)
    with pytest.raises(ValueError, match="record needs one hand result per game: 2, got 1"):
        MatchState.start(np.array([5, 5])).record(rules, results)
    assert match.deals.tolist() == [1]


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_eight_player_drawn_hand(rotation: str, recorder: Recorder) -> None:
    rules = Rules(n_players=8, rotation=rotation)
    hands = scripted_hands(SCRIPT8_DRAW)
    assert all(len(hand) == 6 for hand in hands)
    state = deal_one(rules, hands, dealer=7)
    play_rows(state, SCRIPT8_DRAW)
    expected = {
        "tens": [2, 2],
        "tricks": [3, 3],
        "winner": None,
        "mendikot": False,
        "whitewash": False,
        "next_dealer": 7,
        "trump": D,
        "trick_winners": [0, 1, 2, 3, 7, 0],
    }
    assert result(state) == expected
    assert reference_result(rules, hands, 7, recorder.actions) == expected


@pytest.mark.parametrize(("rotation", "next_dealer"), [("loser_deals", 0), ("rotate", 0)])
def test_eight_player_hand_won_by_the_dealers_team(rotation: str, next_dealer: int) -> None:
    state = deal_one(Rules(n_players=8, rotation=rotation), scripted_hands(SCRIPT8_TEAM1), dealer=7)
    play_rows(state, SCRIPT8_TEAM1)
    assert result(state) == {
        "tens": [0, 4],
        "tricks": [2, 4],
        "winner": 1,
        "mendikot": True,
        "whitewash": False,
        "next_dealer": next_dealer,
        "trump": D,
        "trick_winners": [0, 1, 2, 3, 7, 1],
    }


def test_eight_player_dehla_drawn_hand() -> None:
    # Winners 0 1 2 3 7 0: no run until the last trick, whose winner (seat 0) takes all.
    state = deal_one(Rules(n_players=8, collection="dehla"), scripted_hands(SCRIPT8_DRAW), dealer=7)
    play_rows(state, SCRIPT8_DRAW)
    r = result(state)
    assert (r["tens"], r["tricks"], r["winner"], r["whitewash"], r["mendikot"]) == ([4, 0], [6, 0], 0, True, True)
    assert r["next_dealer"] == 1  # dealer 7's team lost every card: the partner (7 + 2) deals


@pytest.mark.parametrize("n", [6, 8])
def test_six_and_eight_player_packs_have_no_twos(n: int) -> None:
    state = core.new_hands(Rules(n_players=n), 50, rng=3)
    deal = np.bitwise_or.reduce(state.deal, axis=1)
    twos = sum(1 << (13 * s) for s in range(4))
    assert (deal == np.uint64(((1 << 52) - 1) & ~twos)).all()
    assert (np.bitwise_count(state.hands) == 48 // n).all()
    assert state.trick_winners.shape == (50, 48 // n)


# =========================================================================== rotation rules


def sweep(rotation: str, dealer: int) -> dict:
    state = deal_one(Rules(trump="open", rotation=rotation), SWEEP_HANDS, dealer, open_card=card("5S"))
    play_lowest(state)
    r = result(state)
    assert r["trick_winners"] == [0] * 13 and r["whitewash"] and r["mendikot"] and r["winner"] == 0
    return r


def scripted(rotation: str, dealer: int) -> dict:
    """SCRIPT13 (team 0 wins 7-6 on tricks) dealt by ``dealer``: same tricks whoever leads."""
    state = deal_one(Rules(rotation=rotation), scripted_hands(SCRIPT13), dealer)
    play_rows(state, SCRIPT13)
    r = result(state)
    assert r["trick_winners"] == WINNERS13 and r["winner"] == 0 and not r["whitewash"]
    return r


ROTATION_TABLE = [
    # (case, dealer, {rotation: next dealer}) worked out from RULES.md "Who deals next".
    ("dealer's team wins", 0, {"loser_deals": 1, "loser_deals_next_after_whitewash": 1, "rotate": 1}),
    ("dealer's team wins", 2, {"loser_deals": 3, "loser_deals_next_after_whitewash": 3, "rotate": 3}),
    ("dealer's team loses", 1, {"loser_deals": 1, "loser_deals_next_after_whitewash": 1, "rotate": 2}),
    ("dealer's team loses", 3, {"loser_deals": 3, "loser_deals_next_after_whitewash": 3, "rotate": 0}),
    ("whitewash against dealer", 1, {"loser_deals": 3, "loser_deals_next_after_whitewash": 2, "rotate": 2}),
    ("whitewash against dealer", 3, {"loser_deals": 1, "loser_deals_next_after_whitewash": 0, "rotate": 0}),
    ("whitewash by dealer's team", 0, {"loser_deals": 1, "loser_deals_next_after_whitewash": 1, "rotate": 1}),
    ("whitewash by dealer's team", 2, {"loser_deals": 3, "loser_deals_next_after_whitewash": 3, "rotate": 3}),
]


@pytest.mark.parametrize("rotation", ROTATIONS)
@pytest.mark.parametrize(("case", "dealer", "expected"), ROTATION_TABLE)
def test_rotation_rules(case: str, dealer: int, expected: dict[str, int], rotation: str) -> None:
    r = sweep(rotation, dealer) if "whitewash" in case else scripted(rotation, dealer)
    assert r["next_dealer"] == expected[rotation]


def test_rotation_with_a_mixed_batch() -> None:
    # The same finished hands scored under each rotation rule in one batch (dealers 0..3).
    deals = [SWEEP_HANDS] * 4
    for rotation, expected in [
        ("loser_deals", [1, 3, 3, 1]),
        ("loser_deals_next_after_whitewash", [1, 2, 3, 0]),
        ("rotate", [1, 2, 3, 0]),
    ]:
        state = core.new_hands(
            Rules(trump="open", rotation=rotation), 4, rng=0, deals=deals, dealers=[0, 1, 2, 3], open_cards=card("5S")
        )
        while not state.done.all():
            lowest = [(bits_to_list(b) or [0])[0] for b in core.legal_bits(state)]
            core.step(state, np.array(lowest))
        assert core.hand_results(state).next_dealer.tolist() == expected


# =========================================================================== open draw


def test_open_card_sets_trump_though_it_is_in_a_hand() -> None:
    # The open card (5H) is in seat 3's hand; hearts are trump from the first trick.
    state = deal_one(Rules(trump="open"), SWEEP_HANDS, dealer=3, open_card=card("5H"))
    assert int(state.trump[0]) == H
    act(state, "AS 2C 2D")  # seats 1 and 2 are void, seat 3's heart is a trump
    act(state, "2H")
    assert int(state.trick_winners[0, 0]) == 3
    assert int(state.hands[0, 3]) >> card("5H") & 1  # the open card is an ordinary card in the hand


def test_score_hands_is_the_one_scoring_rule() -> None:
    # core.score_hands scores the hand results, the match tariff and the agents' outcome model.
    tiered, plain = Rules.preset("app"), Rules()
    tens = np.array([[4, 0], [4, 0], [3, 1], [2, 2], [2, 2], [1, 3]])
    tricks = np.array([[13, 0], [10, 3], [8, 5], [7, 6], [5, 8], [6, 7]])
    winner, points = core.score_hands(tiered, tens, tricks)
    assert winner.tolist() == [0, 0, 0, 0, 1, 1] and points.tolist() == [3, 2, 1, 1, 1, 1]
    assert core.score_hands(plain, tens, tricks)[1].tolist() == [1] * 6
    six = Rules(n_players=6, scoring="tiered")
    assert core.score_hands(six, np.array([2, 2]), np.array([4, 4])) == (-1, 0)  # a drawn hand scores nothing
    # The hard agent's outcome table sees the whitewash's 3 points: at 4 tens and 12 tricks to 0
    # with one trick left, the last trick is worth 3 - 2 points, a coin toss: 2.5 expected.
    from agents.rule_based import outcome_table

    assert outcome_table(tiered)[4, 0, 12, 0] == 2.5 and outcome_table(plain)[4, 0, 12, 0] == 1.0
