"""``mendikot play``: a person plays one seat in the terminal, the bots every other seat.

The game loop is :class:`TerminalGame`; its input function and output stream are
injectable, so tests drive a whole match with scripted input. Bad input (a malformed
card, a card not in hand, not following suit, asking when not allowed) gets a message
and the question again; the game state only changes on a legal action. End of input
(EOF) or ``quit`` ends the program cleanly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from agents import AGENT_NAMES, load

from .. import core
from ..cards import (
    ASK_ACTION,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    action_str,
    card_str,
    parse_card,
    set_to_cards,
    suit_of,
)
from ..match import MatchState
from ..observation import ObservationEncoder
from ..records import make_record, save_record
from ..render import render_text, trump_change_text
from ..rules import Rules
from ..seeding import derived_seed
from .common import add_rules_arguments, check_output_paths, rules_from_args, seed_value

HELP = """Type a card as rank then suit: TS, 10S or 10♠ (ten of spades), AH, 7d, QC.
  ask        ask for the hidden trump card (band hukum, when you cannot follow suit)
  show       show the table again
  help       this text
  quit       leave the game"""


def _read_line(prompt: str) -> str:
    """The terminal's input (looked up at call time, so it can be replaced in tests)."""
    return input(prompt)


class QuitGame(Exception):
    """The player asked to leave, or the input ended."""


def seat_names(rules: Rules, human: int) -> list[str]:
    """Display names seen from the human's seat: you, partner, opponents (left/right)."""
    n = rules.n_players
    names = []
    for s in range(n):
        rel = (s - human) % n
        if rel == 0:
            names.append("You")
        elif n == 4:
            left, right = ("Left", "Right") if rules.direction == "clockwise" else ("Right", "Left")
            names.append({1: f"{left} opp", 2: "Partner", 3: f"{right} opp"}[rel])
        else:
            names.append(f"{'Mate' if rel % 2 == 0 else 'Opp'} {rel}")
    return names


class TerminalGame:
    """One match: a person at ``seat`` against bots of one level (partner included).

    Args:
        rules: the rule set (the match runs to ``rules.target``).
        level: the bots' agent spec (``easy``, ``medium``, ``hard``, ``random`` or a checkpoint).
        seat: the human's seat (0 .. ``n_players - 1``; the command checks ``--seat``).
        seed: seed of the deals and the bots (None: fresh randomness).
        input_fn: reads one line given a prompt (the built-in ``input`` by default); raises
            EOFError at the end of input.
        out: where the table and messages go.
        save_dir: optional folder to save every finished hand as a game record.
        symbols: show suits as symbols (♠) instead of letters.
    """

    def __init__(
        self,
        rules: Rules,
        level: str = "hard",
        seat: int = 0,
        seed: int | None = None,
        input_fn: Callable[[str], str] | None = None,
        out: TextIO | None = None,
        save_dir: str | Path | None = None,
        symbols: bool = True,
    ) -> None:
        self.rules = rules
        self.human = seat
        self.rng = np.random.default_rng(seed)  # --seed is checked by argparse (seed_value)
        self.bot = load(level, rules, seed=None if seed is None else derived_seed(seed + 1))
        self.level = level
        self.input_fn = input_fn if input_fn is not None else _read_line
        self.out = out if out is not None else sys.stdout
        self.save_dir = Path(save_dir) if save_dir is not None else None
        self.symbols = symbols
        self.names = seat_names(rules, seat)
        self.encoder = ObservationEncoder(rules)
        self.hands_played = 0
        # Numbered after the records already in the folder: a second session adds to them.
        self.record_offset = _last_record_number(self.save_dir) if self.save_dir is not None else 0

    # ------------------------------------------------------------------------- output

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def cs(self, card: int) -> str:
        return card_str(card, symbols=self.symbols)

    # --------------------------------------------------------------------------- match

    def run(self) -> int:
        """Play the match; returns 0 (also after quit or end of input)."""
        try:
            self._match()
        except QuitGame as why:
            self.say(f"\n{why} Goodbye.")
        return 0

    def _match(self) -> None:
        rules = self.rules
        n = rules.n_players
        match = MatchState.start(self.rng.integers(0, n, size=1))
        partner = ", ".join(self.names[s] for s in range(self.human % 2, n, 2) if s != self.human)
        goal = f"{rules.target} deals" if rules.scoring == "fixed_deals" else f"{rules.target} points"
        self.say(
            f"Mendikot: you are seat {self.human} (team {self.human % 2}, with {partner}) against {self.level} bots."
        )
        self.say(f"Rules: {rules.trump} trump, {rules.scoring} scoring to {goal}. Type 'help' for help.")
        while not bool(match.over[0]):
            self._hand(match)
        scores = [int(x) for x in match.scores[0]]
        winner = int(match.winner()[0])
        mine = self.human % 2
        if winner < 0:
            verdict = "The match is drawn"
        else:
            verdict = "Your team wins the match" if winner == mine else "The other team wins the match"
        self.say(
            f"\n{verdict}: {scores[mine]} - {scores[1 - mine]} (your team first) after {int(match.deals[0])} deals."
        )

    def _hand(self, match: MatchState) -> None:
        rules = self.rules
        state = core.new_hands(rules, 1, self.rng, dealers=match.dealer)
        self.hands_played += 1
        scores = [int(x) for x in match.scores[0]]
        self.say(
            f"\n=== Deal {self.hands_played} (dealer: {self.names[int(state.dealer[0])]}); "
            f"match score: team 0 {scores[0]}, team 1 {scores[1]}"
        )
        entries: list[tuple[int, int]] = []
        trick: list[str] = []
        while not bool(state.done[0]):
            seat = int(state.current[0])
            if seat == self.human:
                action = self._ask_human(state, match)
            else:
                obs = self.encoder.encode(state, np.array([seat]), match.scores)
                action = int(self.bot.act(obs, core.legal_action_mask(state))[0])
            entries.append((seat, action))
            trick_no = int(state.trick_no[0])
            hiding = int(state.phase[0]) == core.HIDE
            face_down = int(state.face_down[0])
            trump_before = int(state.trump[0])
            core.step(state, np.array([action]))
            trick.append(self._describe(state, seat, action, hiding, face_down, trump_before))
            if int(state.trick_no[0]) > trick_no:
                winner = int(state.trick_winners[0, trick_no])
                tens, tricks = core.team_counts(state)
                mine = self.human % 2
                self.say(
                    f"Trick {trick_no + 1}: " + "; ".join(t for t in trick if t) + f" -> won by {self.names[winner]}. "
                    f"Tens {int(tens[0, mine])}-{int(tens[0, 1 - mine])}, "
                    f"tricks {int(tricks[0, mine])}-{int(tricks[0, 1 - mine])} (your team first)"
                )
                trick = []
        results = core.hand_results(state)
        result = results.as_dict(0)
        match.record(rules, results)
        mine = self.human % 2
        if result["winner"] is None:
            outcome = "Drawn hand (2 tens each, tricks level): no score, the same dealer deals again"
        else:
            outcome = "Your team wins the hand" if result["winner"] == mine else "The other team wins the hand"
        extras = [k for k in ("mendikot", "whitewash") if result[k]]
        self.say(
            f"{outcome}: tens {result['tens'][mine]}-{result['tens'][1 - mine]}, "
            f"tricks {result['tricks'][mine]}-{result['tricks'][1 - mine]}"
            + (f" ({', '.join(extras)})" if extras else "")
            + f". Match score: you {int(match.scores[0, mine])}, them {int(match.scores[0, 1 - mine])}."
        )
        if self.save_dir is not None:
            path = self.save_dir / f"deal{self.record_offset + self.hands_played:03d}.json"
            players = ["you" if s == self.human else f"bot:{self.level}" for s in range(rules.n_players)]
            save_record(make_record(state, 0, entries, players=players), path)
            self.say(f"(record saved to {path})")

    def _describe(
        self, state: core.State, seat: int, action: int, hiding: bool, face_down: int, trump_before: int
    ) -> str:
        """What the table sees of an action (a bot's face-down card stays hidden)."""
        who = self.names[seat]
        if hiding:
            if seat == self.human:
                self.say(f"You lay {self.cs(action)} face down: {SUIT_NAMES[suit_of(action)]} will be trump.")
            else:
                self.say(f"{who} lays a card face down (the hidden trump).")
            return ""
        if action == ASK_ACTION:
            trump = int(state.trump[0])
            verb = "ask" if seat == self.human else "asks"
            self.say(f"{who} {verb} for the trump: {self.cs(face_down)} is turned up, {SUIT_NAMES[trump]} are trump.")
            return ""
        # A reveal without asking (auto reveal, or the hider's last card) happens as the turn passes.
        return f"{who} {self.cs(action)}" + trump_change_text(state, trump_before, self.cs)

    # -------------------------------------------------------------------------- input

    def _ask_human(self, state: core.State, match: MatchState) -> int:
        """Show the table and read actions until a legal one; returns it."""
        self._show(state, match)
        legal = int(core.legal_bits(state)[0])
        hiding = int(state.phase[0]) == core.HIDE
        options = " ".join(action_str(a) for a in set_to_cards(legal))
        question = "Card to lay face down" if hiding else "Your card"
        while True:
            try:
                line = self.input_fn(f"{question} (legal: {options}): ")
            except (EOFError, KeyboardInterrupt) as stop:
                raise QuitGame("End of input." if isinstance(stop, EOFError) else "Interrupted.") from None
            text = (line or "").strip()
            word = text.lower()
            if word in ("quit", "exit", "q"):
                raise QuitGame("You left the game.")
            if word in ("help", "?", "h"):
                self.say(HELP)
                continue
            if word in ("", "show", "hand", "table"):
                self._show(state, match)
                continue
            if word in ("ask", "52"):
                problem = self._ask_problem(state, legal, hiding)
                if problem:
                    self.say(problem)
                    continue
                return ASK_ACTION
            try:
                card = parse_card(text)
            except ValueError as error:
                self.say(f"{error}. Type 'help' for help.")
                continue
            problem = self._card_problem(state, card, legal, hiding)
            if problem:
                self.say(problem)
                continue
            return card

    def _ask_problem(self, state: core.State, legal: int, hiding: bool) -> str:
        if legal >> ASK_ACTION & 1:
            return ""
        if not self.rules.has_face_down:
            return "There is no hidden trump to ask for in this game."
        if hiding:
            return "First choose the card to lay face down."
        if int(state.face_down[0]) < 0:
            return "The trump card has already been turned up."
        if self.rules.reveals_at_void:
            return "With automatic reveal you cannot ask: the card turns up by itself."
        return "You may only ask for the trump when you cannot follow the suit led."

    def _card_problem(self, state: core.State, card: int, legal: int, hiding: bool) -> str:
        if legal >> card & 1:
            return ""
        hand = int(state.hands[0, self.human])
        if not hand >> card & 1:
            if int(state.face_down[0]) == card:
                return f"{self.cs(card)} is your face-down card; it comes back to your hand only when turned up."
            return f"You do not hold {self.cs(card)}."
        led = int(state.led_suit[0])
        if bool(state.duty[0]):
            trump = int(state.trump[0])
            return f"You asked for the trump, so you must play a trump ({SUIT_SYMBOLS[trump]}) if you can."
        if led >= 0:
            return f"You must follow suit: {SUIT_NAMES[led]} ({SUIT_SYMBOLS[led]}) were led and you hold some."
        return f"{self.cs(card)} cannot be played now."

    def _show(self, state: core.State, match: MatchState) -> None:
        scores = [int(x) for x in match.scores[0]]
        self.say()
        self.say(render_text(state, 0, seat=self.human, names=self.names, match_score=scores, symbols=self.symbols))


def _last_record_number(folder: Path) -> int:
    """The highest NNN of the ``dealNNN.json`` records in ``folder`` (0 when there is none);
    a session numbers its hands from 1, after it."""
    numbers = [int(path.stem[4:]) for path in folder.glob("deal*.json") if path.stem[4:].isdigit()]
    return max(numbers, default=0)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("play", help="play a match in the terminal against the bots")
    add_rules_arguments(parser)
    parser.add_argument(
        "--level",
        default="hard",
        help=f"bot level: {', '.join(name for name in AGENT_NAMES if name != 'search')} (or a checkpoint;"
        " checkpoints joined by + are an ensemble; a network ending in :views=24 averages its suit views)",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 = first seat; teams are even/odd seats)")
    parser.add_argument("--seed", type=seed_value, default=None, help="seed of the deals and the bots")
    parser.add_argument("--save", metavar="DIR", help="save every finished hand as a game record in DIR")
    parser.add_argument("--ascii", action="store_true", help="suit letters instead of symbols")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_paths(save_dir=args.save)
    rules = rules_from_args(args)
    if args.seat not in range(rules.n_players):
        raise ValueError(f"--seat {args.seat} is not a seat; seats are 0..{rules.n_players - 1}")
    game = TerminalGame(rules, args.level, args.seat, args.seed, save_dir=args.save, symbols=not args.ascii)
    return game.run()
