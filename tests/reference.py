"""A slow, literal, scalar reference implementation of one Mendikot hand (RULES.md).

It exists to check the fast batched engine: one game at a time, cards as plain Python
ints in lists and sets, one rule per few lines, each quoting RULES.md. It imports nothing
from the engine except the :class:`Rules` configuration.

Card ids: ``id = 13 * suit + rank``, suits C D H S = 0..3, ranks 2..A = 0..12 (ten = 8).
Action 52 asks for the hidden (band hukum) trump. Seats are in play order; seat ``s`` is
on team ``s % 2``; the first player is the seat after the dealer.

Interpretations followed (they settle ambiguities of RULES.md, as the engine does):

* Band hukum: the hand's first action is the first player laying one card face down
  (phase ``"hide"``). While face down it is not in their hand, and there are no trumps.
* reveal="ask": asking (52) is legal only for a player who is not leading, cannot follow
  the led suit from their hand, while the card is face down. The card returns to the
  hider's hand at once; the asker then plays a card of the led suit if they now have one,
  else a trump if they have one, else anything.
* reveal="auto": when the turn passes to a non-leading player who cannot follow from their
  hand while the card is face down, the card is revealed (back to the hider's hand).
* Last card (both modes): if the hider is to play and only the face-down card is left, it
  is revealed (no asking, no duty) and then played (it counts as a trump).
* A card counts as a trump only if, when played, the trump suit is publicly known and the
  card is of it; the cut-setting card itself counts. If the led suit is the trump suit at
  the end of the trick, the highest card of the led suit wins, whenever each was played.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass

from mendikot_env.rules import Rules

ASK = 52  # the action "show me the face-down trump card" (band hukum, reveal="ask")
TEN = 8  # rank index of the ten
RANKS = "23456789TJQKA"
SUITS = "CDHS"


def suit(card: int) -> int:
    """Suit 0..3 of a card id."""
    return card // 13


def rank(card: int) -> int:
    """Rank 0 (two) .. 12 (ace) of a card id."""
    return card % 13


def is_ten(card: int) -> bool:
    """Whether the card is a ten."""
    return rank(card) == TEN


def card_name(card: int) -> str:
    """Short text such as ``"TS"`` (for error messages only)."""
    return "ASK" if card == ASK else RANKS[rank(card)] + SUITS[suit(card)]


def pack(rules: Rules) -> list[int]:
    """The cards in play: 52, or 48 without the 2s for six and eight players.

    RULES.md: "Six or eight players: the four 2s are removed, leaving 48 cards".
    """
    if rules.n_players == 4:
        return list(range(52))
    return [c for c in range(52) if rank(c) != 0]


# --------------------------------------------------------------------------- scoring


def hand_winner(tens: list[int], tricks: list[int]) -> int | None:
    """Winning team of a finished hand, or None for a drawn hand.

    RULES.md: "3 or 4 tens: that team wins." / "2 tens each: the team with more tricks wins
    ... With 6 or 8 players the tricks can tie too: then the hand is drawn".
    """
    for team in (0, 1):
        if tens[team] >= 3:
            return team
    # Otherwise it is 2 tens each.
    if tricks[0] > tricks[1]:
        return 0
    if tricks[1] > tricks[0]:
        return 1
    return None


def next_dealer(rules: Rules, dealer: int, winner: int | None, tricks: list[int]) -> int:
    """Who deals the next hand, by the rotation rule.

    RULES.md "Who deals next" (and "the hand is drawn; ... the same dealer deals again").
    """
    n = rules.n_players
    # A drawn hand: the same dealer deals again, under every rotation rule.
    if winner is None:
        return dealer
    # rotate: "the deal moves to the next seat in play order after every hand".
    if rules.rotation == "rotate":
        return (dealer + 1) % n
    dealer_team = dealer % 2
    # "The dealer's team won: the next seat in play order deals".
    if winner == dealer_team:
        return (dealer + 1) % n
    # The dealer's team lost.
    if tricks[dealer_team] == 0:
        if rules.rotation == "loser_deals":
            # "The dealer's team lost every trick: the dealer's partner (seat + 2) deals."
            return (dealer + 2) % n
        # loser_deals_next_after_whitewash: "after a whitewash against the dealer's team
        # the next seat in play order deals".
        return (dealer + 1) % n
    # "The dealer's team lost: the same dealer deals again, even after a mendikot."
    return dealer


# --------------------------------------------------------------------------- the game


@dataclass
class Play:
    """One card played to a trick."""

    seat: int
    card: int
    counts_as_trump: bool  # fixed at the moment of play


class ReferenceGame:
    """One hand of Mendikot, played one action at a time."""

    def __init__(self, rules: Rules, hands: list[list[int]], dealer: int, open_card: int | None = None) -> None:
        """Start a hand from a given deal.

        ``hands[s]`` are the cards dealt to seat ``s``; ``open_card`` is the drawn card for
        trump="open" (its suit is trump; it stays in whatever hand holds it), else ignored.
        """
        n = rules.n_players
        self.rules = rules
        self.n = n
        self._check_deal(hands, dealer, open_card)
        self.dealer = dealer
        # "The first player is the seat after the dealer: they lead the first trick and,
        # in band hukum, hide the trump card."
        self.first_player = (dealer + 1) % n
        self.hands: list[set[int]] = [set(int(c) for c in h) for h in hands]

        self.trump: int | None = None  # the publicly known trump suit, None while unknown / unset
        self.hidden_card: int | None = None  # band: the face-down card while it is face down
        self.hider: int | None = None  # band: the first player
        self.must_trump: int | None = None  # seat that asked and has yet to play its card

        self.trick: list[Play] = []
        self.leader = self.first_player
        self.turn: int | None = self.first_player
        self.taken: list[list[int]] = [[], []]  # cards taken by each team
        self.middle: list[int] = []  # Dehla Pakad: tricks waiting in the middle
        self.trick_winners: list[int] = []
        self.history: list[tuple[int, int]] = []  # (seat, action) for every step

        if rules.trump == "open":
            # "Before the deal a card is drawn at random and shown; its suit is trump for
            # the whole hand."
            self.trump = suit(open_card)  # type: ignore[arg-type]
        if rules.trump == "band":
            # "After the deal the first player chooses one card of their hand and lays it
            # face down".
            self.hider = self.first_player
            self._phase = "hide"
        else:
            self._phase = "play"

    def _check_deal(self, hands: list[list[int]], dealer: int, open_card: int | None) -> None:
        """Raise ValueError unless the deal is a full, valid deal for these rules."""
        n = self.n
        if not 0 <= dealer < n:
            raise ValueError(f"dealer {dealer} is not a seat of {n}")
        if len(hands) != n:
            raise ValueError(f"need {n} hands, got {len(hands)}")
        for s, h in enumerate(hands):
            if len(h) != self.rules.n_tricks:
                raise ValueError(f"seat {s} holds {len(h)} cards, expected {self.rules.n_tricks}")
        dealt = sorted(int(c) for h in hands for c in h)
        if dealt != sorted(pack(self.rules)):
            raise ValueError("the hands are not exactly the pack for this number of players")
        if self.rules.trump == "open":
            if open_card is None or int(open_card) not in dealt:
                raise ValueError(f"trump='open' needs an open_card from the pack, got {open_card!r}")

    # ----------------------------------------------------------------------- state

    @property
    def phase(self) -> str:
        """``"hide"`` (band: choosing the face-down card), ``"play"`` or ``"over"``."""
        return self._phase

    @property
    def current_player(self) -> int | None:
        """The seat to act, or None when the hand is over."""
        return None if self._phase == "over" else self.turn

    @property
    def led_suit(self) -> int | None:
        """Suit of the first card of the current trick, None before the lead."""
        return suit(self.trick[0].card) if self.trick else None

    def _cannot_follow(self, seat: int) -> bool:
        """A follower (not the leader) holds no card of the led suit in their hand."""
        led = self.led_suit
        return led is not None and not any(suit(c) == led for c in self.hands[seat])

    def legal_actions(self) -> list[int]:
        """Sorted legal actions of the player to act: card ids, and 52 to ask."""
        if self._phase == "over":
            return []
        seat = self.turn
        assert seat is not None
        hand = self.hands[seat]
        if self._phase == "hide":
            # "the first player chooses one card of their hand and lays it face down".
            return sorted(hand)
        led = self.led_suit
        if self.must_trump == seat:
            # The asker: led suit if they now have it (they must follow suit), else
            # "The player who asked must play a trump in this trick if able; otherwise any card."
            follow = [c for c in hand if suit(c) == led]
            if follow:
                return sorted(follow)
            trumps = [c for c in hand if suit(c) == self.trump]
            if trumps:
                return sorted(trumps)
            return sorted(hand)
        if led is None:
            # "The first player leads any card" (and so does every trick's leader).
            return sorted(hand)
        # "Follow the suit led if you can."
        follow = [c for c in hand if suit(c) == led]
        if follow:
            return sorted(follow)
        # "If you cannot, play any card."
        actions = sorted(hand)
        # "A player who cannot follow suit (the first player included) may ask for the card
        # to be shown before playing (action 52)" - only while it is still face down.
        if self.rules.trump == "band" and self.rules.reveal == "ask" and self.hidden_card is not None:
            actions.append(ASK)
        return actions

    # ----------------------------------------------------------------------- actions

    def step(self, action: int) -> None:
        """Apply one action of the player to act; ValueError if it is not legal."""
        if isinstance(action, bool):
            raise ValueError(f"action must be an integer, got {action!r}")
        try:
            action = operator.index(action)
        except TypeError:
            raise ValueError(f"action must be an integer, got {action!r}") from None
        if self._phase == "over":
            raise ValueError("the hand is over")
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(
                f"illegal action {action} ({card_name(action) if 0 <= action <= ASK else '?'}) for seat "
                f"{self.turn}; legal: {[card_name(a) for a in legal]}"
            )
        seat = self.turn
        assert seat is not None
        self.history.append((seat, action))

        if self._phase == "hide":
            # The face-down card leaves the hand: "They play on with one card fewer".
            self.hands[seat].remove(action)
            self.hidden_card = action
            self._phase = "play"
            self._begin_turn()
            return

        if action == ASK:
            # "On the reveal, the suit becomes trump ... the face-down card goes back into
            # the first player's hand at once". "Asking does not end the turn".
            self._reveal()
            self.must_trump = seat
            return

        self._play_card(seat, action)

    def _reveal(self) -> None:
        """Turn the face-down card up: its suit is trump; it goes back to the hider's hand."""
        assert self.hidden_card is not None and self.hider is not None
        self.trump = suit(self.hidden_card)
        self.hands[self.hider].add(self.hidden_card)
        self.hidden_card = None

    def _play_card(self, seat: int, card: int) -> None:
        """Put a card on the trick, set a cut trump if this is the first void, end the trick if full."""
        led = self.led_suit
        if self.rules.trump == "cut" and self.trump is None and led is not None and suit(card) != led:
            # Cut: "The first time a player cannot follow the suit led, the suit of the card
            # they play becomes trump for the rest of the hand, and that card already counts
            # as a trump in this trick".
            self.trump = suit(card)
        # A card counts as a trump only if the trump suit is public when it is played:
        # "Cards of the trump suit that were played before the reveal never count as trumps".
        counts = self.trump is not None and suit(card) == self.trump
        self.hands[seat].remove(card)
        self.trick.append(Play(seat, card, counts))
        if self.must_trump == seat:
            self.must_trump = None  # the asker's duty covers only this one play
        if len(self.trick) == self.n:
            self._finish_trick()
        else:
            self.turn = (seat + 1) % self.n
            self._begin_turn()

    def _begin_turn(self) -> None:
        """Automatic reveals that happen as the turn passes to a player (band hukum only)."""
        if self.rules.trump != "band" or self.hidden_card is None:
            return
        seat = self.turn
        # "If the first player must play and the face-down card is the only card they still
        # have, it is turned up (the reveal happens, with no asking) and played."
        if seat == self.hider and not self.hands[seat]:
            self._reveal()
            return
        # Auto reveal: "the card is turned up the moment any player to play cannot follow
        # suit, without asking; that player may then play any card (no trumping duty)."
        if self.rules.reveal == "auto" and self._cannot_follow(seat):
            self._reveal()

    def _trick_winner(self) -> int:
        """Seat that wins the (complete) current trick."""
        led = self.led_suit
        if self.trump is not None and led == self.trump:
            # "When the suit led is itself the trump suit, the highest card of the suit led
            # wins, whenever each was played."
            candidates = [p for p in self.trick if suit(p.card) == led]
        else:
            # "The highest trump wins; if no trump was played, the highest card of the suit
            # led wins."
            candidates = [p for p in self.trick if p.counts_as_trump]
            if not candidates:
                candidates = [p for p in self.trick if suit(p.card) == led]
        best = max(candidates, key=lambda p: rank(p.card))
        return best.seat

    def _finish_trick(self) -> None:
        """Decide the trick, collect it, and hand the lead to the winner (or end the hand)."""
        winner = self._trick_winner()
        cards = [p.card for p in self.trick]
        self.trick_winners.append(winner)
        last_trick = len(self.trick_winners) == self.rules.n_tricks
        team = winner % 2
        if self.rules.collection == "mendikot":
            # "The winner takes the trick for their team at once".
            self.taken[team].extend(cards)
        else:
            # Dehla Pakad: "a won trick stays in the middle ... the middle is only taken by a
            # player who wins a trick and also won the trick before it (two in a row ...)".
            # "winning the next trick too takes that trick at once" (same rule again).
            # "The winner of the last trick takes whatever is left in the middle."
            self.middle.extend(cards)
            won_previous = len(self.trick_winners) >= 2 and self.trick_winners[-2] == winner
            if won_previous or last_trick:
                self.taken[team].extend(self.middle)
                self.middle = []
        self.trick = []
        if last_trick:
            # "All tricks are always played to the end."
            self._phase = "over"
            self.turn = None
            return
        # "The winner ... leads the next one."
        self.leader = winner
        self.turn = winner
        self._begin_turn()

    # ----------------------------------------------------------------------- result

    def result(self) -> dict:
        """Outcome of the finished hand (ValueError before the end)."""
        if self._phase != "over":
            raise ValueError("the hand is not over")
        # "Count the tens in each team's tricks."
        tens = [sum(1 for c in self.taken[t] if is_ten(c)) for t in (0, 1)]
        # "A team's 'tricks' are then the cards it took divided by the number of players."
        tricks = [len(self.taken[t]) // self.n for t in (0, 1)]
        winner = hand_winner(tens, tricks)
        return {
            "tens": tens,
            "tricks": tricks,
            "winner": winner,
            # "All four tens is a mendikot."
            "mendikot": 4 in tens,
            # "Winning every trick is a whitewash ...; with Dehla Pakad collection, taking every card."
            "whitewash": self.rules.n_tricks in tricks,
            "next_dealer": next_dealer(self.rules, self.dealer, winner, tricks),
            "trump": self.trump,
            "trick_winners": list(self.trick_winners),
        }


# --------------------------------------------------------------------------- helpers


def random_deal(rules: Rules, rng: random.Random) -> tuple[list[list[int]], int | None]:
    """A shuffled deal ``(hands, open_card)``; open_card is a random pack card for trump="open"."""
    cards = pack(rules)
    rng.shuffle(cards)
    k = rules.n_tricks
    hands = [sorted(cards[s * k : (s + 1) * k]) for s in range(rules.n_players)]
    open_card = rng.choice(cards) if rules.trump == "open" else None
    return hands, open_card


def play_random(game: ReferenceGame, rng: random.Random) -> dict:
    """Play the hand to the end with uniformly random legal actions; return the result."""
    while game.phase != "over":
        game.step(rng.choice(game.legal_actions()))
    return game.result()
