"""Helpers shared by the engine tests: card text, scripted deals and driving the core.

Card text here is parsed with plain arithmetic, independently of ``mendikot_env.cards``, so
that a bug in the package's parser cannot hide a bug in a golden test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from reference import ReferenceGame

from mendikot_env import core
from mendikot_env.rules import Rules, hand_variants

C, D, H, S = 0, 1, 2, 3
ASK = 52
RANKS = "23456789TJQKA"
SUITS = "CDHS"


# Every distinct engine variant, from the rules' own choices (rules.hand_variants): how
# trump is set x collection x player count. The rotation, scoring, target and direction
# fields do not change how a hand is played.
def variant_name(rules: Rules) -> str:
    """``"band_ask-dehla-6p"``: the trump method (with the reveal where there is a face-down
    card), the collection and the player count."""
    trump = f"{rules.trump}_{rules.reveal}" if rules.has_face_down else rules.trump
    return f"{trump}-{rules.collection}-{rules.n_players}p"


VARIANTS = {variant_name(rules): rules for rules in hand_variants()}
ROTATIONS = ("loser_deals", "loser_deals_next_after_whitewash", "rotate")


def card(text: str) -> int:
    """Card id from ``"TS"`` (rank letter then suit letter)."""
    return 13 * SUITS.index(text[1]) + RANKS.index(text[0])


def cards(text: str) -> list[int]:
    """Card ids from space-separated card texts."""
    return [card(t) for t in text.split()]


def h(spec: str) -> list[int]:
    """A hand from ``"S AKQ H T9 C 2"``: a suit letter, then its ranks."""
    out: list[int] = []
    tokens = spec.split()
    for suit_letter, ranks in zip(tokens[::2], tokens[1::2], strict=True):
        out += [card(r + suit_letter) for r in ranks]
    return out


def scripted_hands(rows: list[str]) -> list[list[int]]:
    """Hands from trick rows written in seat order: column ``s`` of every row is seat ``s``'s card."""
    split = [r.split() for r in rows]
    return [[card(row[s]) for row in split] for s in range(len(split[0]))]


def bits_to_list(bits: int | np.integer) -> list[int]:
    """Sorted members (card ids, 52 for ask) of a 53-bit set."""
    value = int(bits)
    return [i for i in range(53) if value >> i & 1]


def list_to_bits(members: list[int] | set[int]) -> int:
    """A Python-int bitset from card ids / actions."""
    out = 0
    for m in members:
        out |= 1 << int(m)
    return out


def deal_one(rules: Rules, hands: list[list[int]], dealer: int, open_card: int | None = None) -> core.State:
    """A batch of one game with an explicit deal."""
    return core.new_hands(rules, 1, rng=0, deals=[hands], dealers=dealer, open_cards=open_card)


def legal(state: core.State, game: int = 0) -> list[int]:
    """Legal actions of one game, from ``legal_bits``."""
    return bits_to_list(core.legal_bits(state)[game])


def act(state: core.State, text: str) -> None:
    """Play the given actions (card texts or ``ASK``) in turn order, in a batch of one."""
    for t in text.split():
        core.step(state, np.array([ASK if t == "ASK" else card(t)]))


def play_rows(state: core.State, rows: list[str]) -> None:
    """Play trick by trick: whoever is to act plays their card of the current row."""
    for row in rows:
        by_seat = row.split()
        for _ in by_seat:
            core.step(state, np.array([card(by_seat[int(state.current[0])])]))


def play_lowest(state: core.State, until_trick: int | None = None) -> None:
    """Play the lowest legal card (never asking) until the hand (or trick ``until_trick``) ends."""
    while state.phase[0] != core.OVER and (until_trick is None or int(state.trick_no[0]) < until_trick):
        actions = [a for a in legal(state) if a != ASK]
        core.step(state, np.array([actions[0]]))


def result(state: core.State, game: int = 0) -> dict:
    """The hand result of one game as the contract dict."""
    return core.hand_results(state).as_dict(game)


def reference_games(state: core.State) -> list[ReferenceGame]:
    """One scalar reference game per core game, on the same deal, dealer and open card."""
    rules = state.rules
    games = []
    for g in range(state.batch_size):
        hands = [bits_to_list(bits) for bits in state.deal[g].tolist()]
        open_card = int(state.open_card[g]) if rules.trump == "open" else None
        games.append(ReferenceGame(rules, hands, int(state.dealer[g]), open_card))
    return games


def random_playout(state: core.State, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Play every game of a batch to the end with random legal actions, yielding each action batch
    just before it is stepped (the state is then still the one the actions were chosen in)."""
    while True:
        bits = core.legal_bits(state)
        if not bits.any():
            return
        actions = core.random_legal_actions(bits, rng)
        yield actions
        core.step(state, np.where(actions < 0, 0, actions))


# --------------------------------------------------------------------------- shared golden deals

# 13 tricks written in seat order (columns = seats 0..3). Rows 1-12 are one suit each, so
# everyone always follows and the highest card wins, whoever leads. Row 13: one card of each
# suit; seat 3 leads AS and seat 0's AC is the first card off the led suit (cut: clubs trump).
# Two tens each (TC, TH to team 0; TD, TS to team 1); team 0 wins 7 tricks to 6.
SCRIPT13 = [
    "TC 2C 3C 4C",  # 0 (TC)
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
    "AC AD AH AS",  # 0: AS led by seat 3, AC cuts
]
WINNERS13 = [0, 1, 1, 1, 2, 0, 0, 3, 2, 1, 2, 3, 0]

# 6 players, no 2s: 8 tricks of one suit each; winners 0 1 2 3 4 5 0 1; 2 tens and 4 tricks each.
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

# Band hukum: seat 0 (dealer 3) hides 2H. Seat 1 is void in spades and holds one heart (AH);
# seat 3 is void in spades.
BAND_HANDS = [
    h("H 2 S A C 23456789TJQ"),
    h("H A C KA D 23456789TJ"),
    h("S 23456789TJQK D Q"),
    h("H 3456789TJQK D KA"),
]

# Band hukum: seat 0 (dealer 3) hides AD and leads 3D..KD then 2S; seat 3 wins trick 12 with KS
# and leads AS; seat 0 then has only the face-down card.
LAST_CARD_HANDS = [
    h("D AKQJT9876543 S 2"),
    h("D 2 C 23456789TJQK"),
    h("C A H 23456789TJQK"),
    h("H A S 3456789TJQKA"),
]

# One suit per seat; with open trump spades (seat 0 holds them all) seat 0 takes every trick.
SWEEP_HANDS = [h("S AKQJT98765432"), h("C AKQJT98765432"), h("D AKQJT98765432"), h("H AKQJT98765432")]


# ------------------------------------------------------------------ driving the AEC env


def random_policy(seed: int) -> Callable[[dict], int]:
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


def play_episode(env, policy: Callable[[dict], int]) -> list[tuple]:
    """Play to the end (agents stepped with None once done); return (agent, reward, term, info) per turn."""
    out = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        out.append((agent, reward, term, info))
        env.step(None if term or trunc else policy(obs))
    return out
