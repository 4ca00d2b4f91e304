"""The tables of the web server: matches in progress, each with its seats, agents and score.

A :class:`Table` plays one match at one rule set. Each seat is an agent (any spec
:func:`agents.load` takes) that plays when its turn comes, or a person who plays through the
API with the seat's own secret token. Every rule is the core's: a move is checked against
:func:`mendikot_env.core.legal_bits` and played by :func:`mendikot_env.core.step`, the hand
is scored by :func:`mendikot_env.core.hand_results` and the match by
:class:`mendikot_env.match.MatchState` (the rules' dealer rotation). A finished hand becomes a
record (:func:`mendikot_env.records.make_record`), the same that ``mendikot replay`` reads.

:class:`Refused` is the one error of the web layer: a status (4xx) and a message for the
person; the app turns it into a JSON answer and the table is left as it was.
"""

from __future__ import annotations

import secrets
import sys
import threading
from collections import OrderedDict, deque
from pathlib import Path
from typing import Any

import numpy as np

from agents import AGENT_NAMES, load
from agents.registry import names_files

from .. import core
from ..cards import ASK_ACTION, SUIT_NAMES, action_str, card_str, parse_card, set_to_cards
from ..match import MatchState
from ..observation import ObservationEncoder
from ..records import make_record, save_record
from ..render import trump_change_text
from ..rules import PRESETS, Rules
from ..seeding import derived_seed

PERSON = "person"  # a seat played by a person through the API (the seat's link)
KEEP_RECORDS = 20  # finished hands a table keeps for download (older ones are dropped)
KEEP_TABLES = 64  # tables the server keeps (the oldest is dropped for a new one)
HINT_SPEC = "search"  # the agent whose move values the hint shows


class Refused(ValueError):
    """A request the server turns down: ``status`` (4xx) and a message saying why (a ValueError,
    so that ``mendikot serve --replay`` reports a bad record as the other commands do)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_action(text: Any) -> int:
    """An action from the page: a card as text (``"TS"``) or ``"ASK"``."""
    if isinstance(text, str) and text.strip().upper() == "ASK":
        return ASK_ACTION
    try:
        return parse_card(text) if isinstance(text, str) else -1
    except ValueError:
        return -1


def seats_of(rules: Rules, seat: int, partner: str, opponents: str) -> list[str]:
    """Who plays each seat: a person at ``seat``, ``partner`` at the other seats of its team,
    ``opponents`` at the rest."""
    return [PERSON if s == seat else partner if s % 2 == seat % 2 else opponents for s in range(rules.n_players)]


class Table:
    """One match: the hand being played, the score, the seats and their agents.

    Args:
        table_id: the game id in the URLs.
        rules: the rules played (the match runs to ``rules.target``).
        players: per seat, ``PERSON`` or an agent spec.
        seed: seed of the deals and the agents (None: fresh randomness).
        save_dir: a folder to save every finished hand's record in, or None.
    """

    def __init__(
        self, table_id: str, rules: Rules, players: list[str], seed: int | None, save_dir: Path | None = None
    ) -> None:
        self.id, self.rules, self.players, self.save_dir = table_id, rules, players, save_dir
        self.tokens = [secrets.token_urlsafe(16) if p == PERSON else "" for p in players]
        self.rng = np.random.default_rng(seed)
        agent_seed = None if seed is None else derived_seed(seed + 1)
        self.agents = {spec: load(spec, rules, seed=agent_seed) for spec in sorted(set(players) - {PERSON})}
        self.hinter: Any = None  # the search agent of the hint, made on the first hint
        self.encoder = ObservationEncoder(rules, history=True)
        self.lock = threading.Lock()
        self.records: deque[tuple[int, dict[str, Any]]] = deque(maxlen=KEEP_RECORDS)
        self.hands = 0
        self.version = 0  # grows with every change: a page polls it to see another seat's move
        self._new_match()

    # ------------------------------------------------------------------------ seats

    def check_seat(self, seat: Any, token: Any) -> int:
        """``seat`` as an int when ``token`` is that person seat's secret."""
        n = self.rules.n_players
        if isinstance(seat, str) and seat.strip().isdigit():
            seat = int(seat)
        if not isinstance(seat, int) or isinstance(seat, bool) or seat not in range(n):
            raise Refused(400, f"seat must be a number from 0 to {n - 1}, got {seat!r}")
        if self.players[seat] != PERSON:
            raise Refused(403, f"seat {seat} is played by the agent {self.players[seat]!r}, not by a person")
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), self.tokens[seat].encode()):
            raise Refused(403, f"wrong or missing token for seat {seat}: open the seat's own link")
        return seat

    def links(self) -> dict[int, str]:
        """The query string of each person seat's link (its token inside)."""
        return {s: f"?game={self.id}&seat={s}&token={t}" for s, t in enumerate(self.tokens) if t}

    # ------------------------------------------------------------------------ play

    def _new_match(self) -> None:
        self.match = MatchState.start(self.rng.integers(0, self.rules.n_players, size=1))
        self._deal()

    def _deal(self) -> None:
        self.state = core.new_hands(self.rules, 1, self.rng, dealers=self.match.dealer)
        self.entries: list[tuple[int, int]] = []
        self.log: list[dict[str, Any]] = []
        self.last_trick: tuple[list[tuple[int, int]], int] | None = None
        self.result: dict[str, Any] | None = None
        self.hands += 1
        self.version += 1
        self._run_agents()

    def act(self, seat: int, action: int) -> None:
        """Play a person's action, then the agents' until a person is to act or the hand ends."""
        if problem := self._move_problem(seat, action):
            raise Refused(409, problem)
        self._play(action)
        self._run_agents()

    def _move_problem(self, seat: int, action: int) -> str:
        """Why ``seat`` may not play ``action`` now, or "" when it may."""
        state = self.state
        if bool(state.done[0]):
            return "the hand is over: start the next hand"
        current = int(state.current[0])
        if seat != current:
            return f"it is seat {current}'s turn, not seat {seat}'s"
        legal = int(core.legal_bits(state)[0])
        if action < 0 or not legal >> action & 1:
            allowed = " ".join(action_str(a) for a in set_to_cards(legal))
            return f"that is not a legal move now; the legal ones are: {allowed}"
        return ""

    def next_hand(self) -> None:
        """Deal the next hand of the match (a new match once this one is decided)."""
        if not bool(self.state.done[0]):
            raise Refused(409, "the hand is not over yet")
        if bool(self.match.over[0]):
            self._new_match()
        else:
            self._deal()

    def _run_agents(self) -> None:
        state = self.state
        while not bool(state.done[0]) and self.players[int(state.current[0])] != PERSON:
            agent = self.agents[self.players[int(state.current[0])]]
            observations = self.encoder.encode(state, state.current, self.match.scores)
            action = agent.act(self.encoder.for_agent(observations, agent), core.legal_action_mask(state))
            self._play(int(action[0]))

    def _play(self, action: int) -> None:
        state = self.state
        seat, trick_no, trump_before = int(state.current[0]), int(state.trick_no[0]), int(state.trump[0])
        hiding = int(state.phase[0]) == core.HIDE
        trick = [(s, int(c)) for s, c in enumerate(state.trick_cards[0]) if c >= 0]
        core.step(state, np.array([action]))
        self.entries.append((seat, action))
        self.log.append({"seat": seat, "text": describe(state, action, hiding, trump_before)})
        if int(state.trick_no[0]) > trick_no:
            self.last_trick = (trick + [(seat, action)], int(state.trick_winners[0, trick_no]))
        self.version += 1
        if bool(state.done[0]):
            self._finish()

    def _finish(self) -> None:
        results = core.hand_results(self.state)
        self.result = results.as_dict(0)
        self.match.record(self.rules, results)
        players = [p if p != PERSON else "person" for p in self.players]
        record = make_record(self.state, 0, self.entries, players=players, meta={"table": self.id, "hand": self.hands})
        self.records.append((self.hands, record))
        if self.save_dir is not None:
            path = self.save_dir / f"{self.id}-hand{self.hands:03d}.json"
            try:
                save_record(record, path)
            except OSError as error:  # the hand is played and its record kept here: say so, play on
                print(f"mendikot serve: could not save {path}: {error}", file=sys.stderr, flush=True)

    def record(self, hand: int) -> dict[str, Any]:
        for number, record in self.records:
            if number == hand:
                return record
        kept = [number for number, _ in self.records]
        raise Refused(404, f"no finished hand {hand} at this table (kept: {kept or 'none yet'})")

    def hint(self, seat: int) -> list[dict[str, Any]]:
        """The search's value of each legal move of ``seat``, which must be to act."""
        state = self.state
        if bool(state.done[0]) or int(state.current[0]) != seat:
            raise Refused(409, "a hint is for your own turn")
        if self.hinter is None:
            self.hinter = load(HINT_SPEC, self.rules, seed=0)
        observation = self.encoder.encode(state, state.current, self.match.scores)[0]
        moves, values = self.hinter.move_values(observation, core.legal_action_mask(state)[0])
        return [{"action": action_str(int(m)), "value": round(float(v), 3)} for m, v in zip(moves, values, strict=True)]


def describe(state: core.State, action: int, hiding: bool, trump_before: int) -> str:
    """What the whole table sees of an action just taken (a face-down card stays hidden)."""
    if hiding:
        return "lays a card face down (the hidden trump)"
    trump = int(state.trump[0])
    if action == ASK_ACTION:
        return f"asks for the trump: {card_str(int(state.band_card[0]))} is turned up, {SUIT_NAMES[trump]} are trump"
    return f"plays {card_str(action)}" + trump_change_text(state, trump_before)


def settings_from(body: dict[str, Any]) -> tuple[Rules, list[str], int, int | None]:
    """The rules, the players of each seat, the creator's seat and the seed of a new table
    from the page's settings: ``{"rules": {"preset": ..., field: value}, "seat": 0,
    "partner": "hard", "opponents": "hard", "players": [...], "seed": 7}`` (all optional)."""
    settings = _settings(body)
    if isinstance(settings, str):
        raise Refused(400, settings)
    return settings


def _settings(body: dict[str, Any]) -> tuple[Rules, list[str], int, int | None] | str:
    """The settings of :func:`settings_from`, or what is wrong with the first wrong one."""
    given = body.get("rules", {})
    if not isinstance(given, dict):
        return "rules must be an object of rule fields (and a preset)"
    fields = dict(given)
    preset = fields.pop("preset", "standard")
    if not isinstance(preset, str) or preset not in PRESETS:
        return f"unknown rules preset {preset!r}; choose one of {list(PRESETS)}"
    try:
        rules = Rules.preset(preset, **fields)
    except (ValueError, TypeError) as error:
        return f"rules: {error}"
    seat = body.get("seat", 0)
    if not isinstance(seat, int) or isinstance(seat, bool) or seat not in range(rules.n_players):
        return f"seat must be a number from 0 to {rules.n_players - 1}, got {seat!r}"
    players = body.get("players") or seats_of(rules, seat, body.get("partner", "hard"), body.get("opponents", "hard"))
    if not isinstance(players, list) or len(players) != rules.n_players or not all(isinstance(p, str) for p in players):
        return f"players must be a list of {rules.n_players} agent specs (or {PERSON!r})"
    if players[seat] != PERSON:
        return f"your seat {seat} must be played by a person (players[{seat}] = {PERSON!r})"
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        return f"seed must be a whole number >= 0, got {seed!r}"
    return rules, [p.strip() for p in players], seat, seed


class Tables:
    """The tables of a server by game id; the oldest is dropped past ``KEEP_TABLES``."""

    def __init__(self, save_dir: Path | None = None) -> None:
        self.save_dir = save_dir
        self.tables: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()

    def create(self, body: dict[str, Any], local: bool = True) -> tuple[Table, int]:
        """A new table from the page's settings; ``local``: the request comes from the server's
        own machine, which alone may name agents by a path (a run folder, a checkpoint)."""
        rules, players, seat, seed = settings_from(body)
        files = [p for p in players if p != PERSON and names_files(p)]
        if files and not local:
            raise Refused(403, f"agents from files ({files[0]!r}) are chosen on the server's own machine only")
        try:
            table = Table(secrets.token_hex(6), rules, players, seed, self.save_dir)
        except (ValueError, ImportError, OSError) as error:  # an agent spec that does not load
            names = ", ".join((*AGENT_NAMES, PERSON))
            raise Refused(400, f"cannot seat the agents ({error}); give {names}, or a run folder") from None
        with self.lock:
            self.tables[table.id] = table
            while len(self.tables) > KEEP_TABLES:
                self.tables.popitem(last=False)
        return table, seat

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise Refused(404, f"no game {table_id!r} here (it was never started, or the server restarted)")
        return table
