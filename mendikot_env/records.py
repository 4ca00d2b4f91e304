"""Game records: a finished hand as readable JSON, checked by replaying it through the core.

A record holds everything needed to replay a hand exactly: the rules, the dealer, the
cards dealt to each seat, the open-draw card (``trump="open"``), the face-down card
(band hukum), every action with the seat that took it, and the stored result. Cards
are written as text (``"TS"``), asks as ``"ASK"``. The JSON schema is
``mendikot_env/schemas/record.schema.json`` (:func:`schema`).

:func:`load_record` never trusts a file: it checks the structure, deals the stored cards,
replays every action (right seat, legal action) and compares the result, and raises a
:class:`RecordError` naming the first bad entry, e.g.
``action 17 (seat 2, 'QH') is illegal; legal: 2H 5H``.

Example:
    >>> from agents import make
    >>> from mendikot_env import Rules, core
    >>> from mendikot_env.arena import ActionLog, play_hands
    >>> rules = Rules.preset("band")
    >>> state, log = core.new_hands(rules, 1, rng=0), ActionLog.empty(rules, 1)
    >>> play_hands(state, [make("hard", rules)], np.zeros((1, 2), int), log=log)
    >>> record = make_record(state, 0, log.entries(0))
    >>> replay_record(json.loads(dumps(record))).result == record["result"]
    True
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import core
from .cards import (
    ASK_ACTION,
    NUM_RANKS,
    SUIT_SYMBOLS,
    action_str,
    card_str,
    parse_card,
    rank_of,
    set_to_cards,
    suit_of,
)
from .rules import Rules

FORMAT = "mendikot-record"
VERSION = 1
ACTION_KINDS = ("hide", "ask", "play")
RESULT_KEYS = ("tens", "tricks", "winner", "mendikot", "whitewash", "next_dealer", "trump", "trick_winners")


class RecordError(ValueError):
    """A record that is malformed or does not replay; the message names the first bad entry."""


# -------------------------------------------------------------------------------- make


def _sorted_cards(cards: list[int]) -> list[str]:
    """Cards as text, spades first and high cards first (the way a hand is held)."""
    return [card_str(c) for c in sorted(cards, key=lambda c: (-suit_of(c), -rank_of(c)))]


def action_kind(state: core.State, game: int, action: int) -> str:
    """``hide``, ``ask`` or ``play``: what ``action`` means in ``state`` (before it is taken)."""
    if int(state.phase[game]) == core.HIDE:
        return "hide"
    return "ask" if action == ASK_ACTION else "play"


def make_record(
    state: core.State,
    game: int,
    entries: Sequence[tuple[int, int]],
    players: Sequence[str] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of one finished game of ``state``.

    Args:
        state: a batch whose game ``game`` is over (its ``deal`` holds the cards dealt).
        game: which game of the batch.
        entries: (seat, action) pairs of that game in order (e.g. ``ActionLog.entries(game)``).
        players: optional name of the agent in each seat.
        meta: optional free-form information (seed, deal number, ...).
    """
    rules = state.rules
    if not bool(state.done[game]):
        raise RecordError(f"game {game} is not finished; only finished hands are recorded")
    kinds = ["hide"] if rules.trump == "band" else []
    actions = []
    for i, (seat, action) in enumerate(entries):
        kind = kinds[0] if i == 0 and kinds else ("ask" if action == ASK_ACTION else "play")
        actions.append({"seat": int(seat), "action": action_str(int(action)), "kind": kind})
    band = int(state.band_card[game])
    open_card = int(state.open_card[game])
    record: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "rules": rules.to_dict(),
        "dealer": int(state.dealer[game]),
        "deal": [_sorted_cards(set_to_cards(state.deal[game, s])) for s in range(rules.n_players)],
        "open_card": card_str(open_card) if open_card >= 0 else None,
        "face_down": card_str(band) if band >= 0 else None,
        "actions": actions,
        "result": core.hand_results(state.select([game])).as_dict(0),
    }
    if players is not None:
        record["players"] = [str(p) for p in players]
    if meta is not None:
        record["meta"] = dict(meta)
    return record


# ------------------------------------------------------------------------------ checks


def schema() -> dict[str, Any]:
    """The JSON schema of a record (shipped in the package)."""
    text = resources.files("mendikot_env").joinpath("schemas/record.schema.json").read_text()
    return json.loads(text)


def _fail(where: str, message: str) -> RecordError:
    return RecordError(f"{where}: {message}" if where else message)


def _card(value: Any, where: str) -> int:
    """Card id of a card text in a record; records use the canonical form only ("TS")."""
    if not isinstance(value, str):
        raise _fail(where, f"expected a card as text like 'TS', got {value!r}")
    try:
        card = parse_card(value)
    except ValueError as error:
        raise _fail(where, str(error)) from None
    if card_str(card) != value:
        raise _fail(where, f"write cards as {card_str(card)!r} (rank then suit letter, upper case), not {value!r}")
    return card


def is_json_integer(value: Any) -> bool:
    """An integer, and not a bool: Python's ``True`` is an ``int``, JSON's ``true`` is not."""
    return isinstance(value, int) and not isinstance(value, bool)


def _json_equal(value: Any, expected: Any) -> bool:
    """Equality as the schema's ``const`` and ``enum`` mean it, and one step stricter:
    ``true`` is not ``1`` and ``false`` is not ``0``, though Python's ``==`` says they are;
    and ``1.0`` is not ``1`` (a record's numbers are integers, written without a point)."""
    return type(value) is type(expected) and value == expected


def _got(value: Any) -> str:
    """A bad value for a message, with :func:`_float_hint`."""
    return f"{value!r:.80}{_float_hint(value if isinstance(value, list) else [value])}"


def _float_hint(values: Iterable[Any]) -> str:
    """A hint when a number among ``values`` was written as 3.0 (JSON Schema validators take
    3.0 for an integer; this reader, like ``json.dumps``, does not)."""
    return " (write integers without a decimal point: 3, not 3.0)" if any(type(v) is float for v in values) else ""


def _check_result(result: dict[str, Any], n: int) -> None:
    """Check the types of the stored result, as the schema does. The replay compares it
    with ``==`` afterwards, which would take ``0`` for ``false`` and ``true`` for ``1``."""

    def seat(value: Any) -> bool:
        return is_json_integer(value) and 0 <= value < n

    for key in ("tens", "tricks"):
        value = result[key]
        if not isinstance(value, list) or len(value) != 2 or not all(is_json_integer(v) and v >= 0 for v in value):
            raise _fail(
                f"result.{key}", f"expected two counts [team 0, team 1] (integers 0 or more), got {_got(value)}"
            )
    if not any(_json_equal(result["winner"], team) for team in (0, 1, None)):
        raise _fail("result.winner", f"expected a team 0 or 1, or null for a drawn hand, got {_got(result['winner'])}")
    for key in ("mendikot", "whitewash"):
        if not isinstance(result[key], bool):
            raise _fail(f"result.{key}", f"expected true or false, got {_got(result[key])}")
    if not seat(result["next_dealer"]):
        raise _fail("result.next_dealer", f"expected a seat 0..{n - 1}, got {_got(result['next_dealer'])}")
    if not any(_json_equal(result["trump"], suit) for suit in (0, 1, 2, 3, None)):
        raise _fail("result.trump", f"expected a suit 0..3 (clubs .. spades) or null, got {_got(result['trump'])}")
    winners = result["trick_winners"]
    if not isinstance(winners, list) or not all(seat(s) for s in winners):
        raise _fail("result.trick_winners", f"expected a list of seats 0..{n - 1}, got {_got(winners)}")


def check_structure(data: Any) -> Rules:
    """Check the shape of a record (fields, types, card texts) and return its Rules.

    This mirrors the JSON schema by hand, so the package needs no schema library and the
    errors can say what is wrong in Mendikot terms.
    """
    if not isinstance(data, dict):
        raise RecordError(f"a record is a JSON object, got {type(data).__name__}")
    required = ("format", "version", "rules", "dealer", "deal", "open_card", "face_down", "actions", "result")
    missing = [k for k in required if k not in data]
    if missing:
        raise RecordError(f"record is missing field(s) {missing}")
    known = (*required, "players", "meta")
    extra = [k for k in data if k not in known]
    if extra:
        raise RecordError(f"record has unknown field(s) {extra}; known fields are {list(known)}")
    if data["format"] != FORMAT:
        raise _fail("format", f"expected {FORMAT!r}, got {data['format']!r}")
    if not _json_equal(data["version"], VERSION):
        raise _fail("version", f"this reader knows version {VERSION} (an integer), got {_got(data['version'])}")
    if not isinstance(data["rules"], dict):
        raise _fail("rules", f"expected an object of rule fields, got {data['rules']!r}")
    missing_rules = [f for f in Rules().to_dict() if f not in data["rules"]]
    if missing_rules:  # a default would silently replay the record under other rules
        raise _fail("rules", f"missing field(s) {missing_rules}; a record names every rule field")
    try:
        rules = Rules.from_dict(data["rules"])
    except (TypeError, ValueError) as error:
        raise _fail("rules", f"{error}{_float_hint(data['rules'].values())}") from None
    n = rules.n_players
    if not is_json_integer(data["dealer"]) or not 0 <= data["dealer"] < n:
        raise _fail("dealer", f"expected a seat 0..{n - 1}, got {_got(data['dealer'])}")
    deal = data["deal"]
    if not isinstance(deal, list) or len(deal) != n:
        got = f"{len(deal)} hands" if isinstance(deal, list) else f"{deal!r:.80}"
        raise _fail("deal", f"expected {n} hands (one per seat, as rules.n_players = {n} says), got {got}")
    for s, hand in enumerate(deal):
        if not isinstance(hand, list) or len(hand) != rules.hand_size:
            raise _fail(f"deal[{s}]", f"expected {rules.hand_size} cards, got {hand!r:.80}")
        for k, text in enumerate(hand):
            _card(text, f"deal[{s}][{k}]")
    for key in ("open_card", "face_down"):
        if data[key] is not None:
            _card(data[key], key)
    if (data["open_card"] is not None) != (rules.trump == "open"):
        raise _fail("open_card", f"must be a card exactly when trump is 'open' (trump is {rules.trump!r})")
    if (data["face_down"] is not None) != (rules.trump == "band"):
        raise _fail("face_down", f"must be a card exactly when trump is 'band' (trump is {rules.trump!r})")
    actions = data["actions"]
    if not isinstance(actions, list):
        raise _fail("actions", f"expected a list, got {type(actions).__name__}")
    for i, entry in enumerate(actions):
        where = f"action {i}"
        if (
            not isinstance(entry, dict)
            or set(entry) - {"seat", "action", "kind"}
            or not {"seat", "action"} <= set(entry)
        ):
            raise _fail(where, f"expected {{'seat': int, 'action': 'TS' or 'ASK', 'kind': ...}}, got {entry!r}")
        if not is_json_integer(entry["seat"]) or not 0 <= entry["seat"] < n:
            raise _fail(where, f"seat must be 0..{n - 1}, got {_got(entry['seat'])}")
        if entry["action"] != "ASK":
            _card(entry["action"], where)
        if "kind" in entry and entry["kind"] not in ACTION_KINDS:
            raise _fail(where, f"kind must be one of {list(ACTION_KINDS)}, got {entry['kind']!r}")
    result = data["result"]
    if not isinstance(result, dict):
        raise _fail("result", f"expected an object, got {result!r}")
    missing = [k for k in RESULT_KEYS if k not in result]
    if missing:
        raise _fail("result", f"missing key(s) {missing}")
    _check_result(result, n)
    if "players" in data and (
        not isinstance(data["players"], list)
        or len(data["players"]) != n
        or not all(isinstance(p, str) for p in data["players"])
    ):
        raise _fail("players", f"expected {n} names, got {data['players']!r}")
    if "meta" in data and not isinstance(data["meta"], dict):
        raise _fail("meta", f"expected an object, got {data['meta']!r}")
    return rules


# ------------------------------------------------------------------------------ replay


@dataclass
class TrickEvent:
    """One entry of a replay, for printing: an action and what it completed."""

    index: int  # position in the record's action list
    seat: int
    action: int
    kind: str  # hide, ask or play
    trick: int  # trick number (0-based) the action belongs to
    trick_winner: int | None = None  # set on the card that completes a trick
    trick_cards: list[tuple[int, int]] = field(default_factory=list)  # (seat, card) of the completed trick
    trump_after: int | None = None  # trump suit once set by this action (cut or reveal)
    revealed: int | None = None  # band card turned up at this action (asked or automatic)


@dataclass
class Replay:
    """A replayed record: the final state, the rules and the events in order."""

    rules: Rules
    state: core.State
    events: list[TrickEvent]
    result: dict[str, Any]


def replay_record(data: dict[str, Any]) -> Replay:
    """Replay a record through the core, checking every entry; raises RecordError if not sound."""
    rules = check_structure(data)
    deal = [[_card(t, f"deal[{s}]") for t in hand] for s, hand in enumerate(data["deal"])]
    open_card = None if data["open_card"] is None else _card(data["open_card"], "open_card")
    try:
        state = core.new_hand(rules, rng=0, deal=deal, dealer=data["dealer"], open_card=open_card)
    except ValueError as error:
        raise _fail("deal", str(error)) from None
    events: list[TrickEvent] = []
    actions = data["actions"]
    for i, entry in enumerate(actions):
        seat, text = entry["seat"], entry["action"]
        action = ASK_ACTION if text == "ASK" else _card(text, f"action {i}")
        label = f"action {i} (seat {seat}, {text!r})"
        if bool(state.done[0]):
            raise RecordError(f"{label} comes after the hand is over ({i} actions finish it)")
        current = int(state.current[0])
        if seat != current:
            raise RecordError(f"{label} is out of turn: seat {current} is to act")
        legal = int(core.legal_bits(state)[0])
        if not legal >> action & 1:
            shown = " ".join(action_str(a) for a in set_to_cards(legal))
            raise RecordError(f"{label} is illegal; legal: {shown}")
        kind = action_kind(state, 0, action)
        if "kind" in entry and entry["kind"] != kind:
            raise RecordError(f"{label} is marked {entry['kind']!r} but is a {kind!r} action here")
        trick_no = int(state.trick_no[0])
        trick_before = [(s, int(c)) for s, c in enumerate(state.trick_cards[0]) if c >= 0]
        trump_before = int(state.trump[0])
        face_down_before = int(state.face_down[0])
        core.step(state, np.array([action]))
        event = TrickEvent(i, seat, action, kind, trick_no)
        if kind == "hide":
            if data["face_down"] is not None and _card(data["face_down"], "face_down") != action:
                raise RecordError(f"{label} hides {text} but the record's face_down is {data['face_down']!r}")
        if int(state.trick_no[0]) > trick_no:
            event.trick_winner = int(state.trick_winners[0, trick_no])
            event.trick_cards = [*trick_before, (seat, action)]
        if int(state.trump[0]) != trump_before:
            event.trump_after = int(state.trump[0])
        if face_down_before >= 0 and int(state.face_down[0]) < 0:
            event.revealed = face_down_before
        events.append(event)
    if not bool(state.done[0]):
        raise RecordError(
            f"the record ends after {len(actions)} actions but the hand is not over "
            f"(trick {int(state.trick_no[0]) + 1} of {rules.n_tricks}, seat {int(state.current[0])} to act)"
        )
    result = core.hand_results(state).as_dict(0)
    stored = data["result"]
    for key in RESULT_KEYS:
        if stored[key] != result[key]:
            raise RecordError(f"result.{key} is {stored[key]!r} but the replay gives {result[key]!r}")
    return Replay(rules, state, events, result)


def read_json(path: str | Path) -> Any:
    """The JSON value in a file, or a RecordError naming the file and why it cannot be read.

    Besides bad syntax, Python's reader fails on an integer of more than
    ``sys.get_int_max_str_digits()`` digits (a ValueError) and on nesting deeper than the
    recursion limit (a RecursionError): these are bad records too, not crashes, so that
    ``replay --check`` reports them and goes on to the next file.
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise RecordError(f"{path}: cannot read: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise RecordError(f"{path}: not valid JSON: {error}") from None
    except UnicodeDecodeError as error:
        raise RecordError(f"{path}: not UTF-8 text (byte {error.start}): records are UTF-8 JSON") from None
    except ValueError as error:
        if "integer string conversion" not in str(error):  # the only other one json.loads raises, so far
            raise RecordError(f"{path}: not valid JSON: {error}") from None
        raise RecordError(
            f"{path}: holds a number too long to read (over {sys.get_int_max_str_digits()} digits); "
            "a record's numbers are seats, counts and the version"
        ) from None
    except RecursionError:
        raise RecordError(
            f"{path}: nested too deeply to read; a record's lists and objects nest a few levels deep"
        ) from None


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file and check it by replaying it; returns the record dict.

    Raises:
        RecordError: naming the file and the first bad entry.
    """
    path = Path(path)
    data = read_json(path)
    try:
        replay_record(data)
    except RecordError as error:
        raise RecordError(f"{path}: {error}") from None
    return data


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write a record as indented UTF-8 JSON (one action per line stays readable)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(record), encoding="utf-8")
    return path


def dumps(record: dict[str, Any]) -> str:
    """JSON text of a record: indented, with each hand, action and short list on one line."""
    compact = {"deal", "trick_winners", "tens", "tricks", "players"}

    def enc(value: Any, key: str | None, depth: int) -> str:
        pad = "  " * (depth + 1)
        if isinstance(value, dict) and key not in ("rules", "result", "meta") and depth > 0:
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, dict):
            items = [f"{pad}{json.dumps(k)}: {enc(v, k, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
        if isinstance(value, list) and key == "deal":
            items = [pad + json.dumps(h, ensure_ascii=False) for h in value]
            return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
        if isinstance(value, list) and (key in compact or not value):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, list):
            items = [pad + enc(v, None, depth + 1) for v in value]
            return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
        return json.dumps(value, ensure_ascii=False)

    return enc(record, None, 0) + "\n"


# ------------------------------------------------------------------------------- print


def format_record(data: dict[str, Any], symbols: bool = True) -> str:
    """The record as text, trick by trick (checks it by replaying first)."""
    from .cards import hand_str

    replay = replay_record(data)
    rules = replay.rules
    n = rules.n_players
    players = data.get("players") or [f"player_{s}" for s in range(n)]
    names = [f"{p} (seat {s})" if data.get("players") else p for s, p in enumerate(players)]
    width = max(len(x) for x in names)

    def cs(c: int) -> str:
        return card_str(c, symbols=symbols)

    lines = [
        f"Mendikot record: {rules.trump} trump, {n} players, {rules.collection} collection",
        f"rules: {json.dumps(data['rules'])}",
        f"dealer: {names[data['dealer']]}; first player: {names[(data['dealer'] + 1) % n]}",
    ]
    if data.get("meta"):
        lines.append(f"meta: {json.dumps(data['meta'])}")
    if data["open_card"] is not None:
        oc = _card(data["open_card"], "open_card")
        lines.append(f"open card: {cs(oc)} (trump {SUIT_SYMBOLS[suit_of(oc)]})")
    lines.append("deal:")
    for s, hand in enumerate(data["deal"]):
        cards = [_card(t, "deal") for t in hand]
        lines.append(f"  {names[s]:<{width}}  {hand_str(cards, symbols=symbols)}  (team {s % 2})")
    line: list[str] = []
    for ev in replay.events:
        who = names[ev.seat]
        if ev.kind == "hide":
            lines.append(f"{who} lays {cs(ev.action)} face down (trump {SUIT_SYMBOLS[suit_of(ev.action)]}, hidden)")
            continue
        if ev.kind == "ask":
            line.append(f"[{who} asks: {cs(ev.revealed)} turned up, trump {SUIT_SYMBOLS[suit_of(ev.revealed)]}]")
            continue
        if ev.revealed is not None:
            line.append(f"[{cs(ev.revealed)} turned up, trump {SUIT_SYMBOLS[suit_of(ev.revealed)]}]")
        mark = ""
        if ev.trump_after is not None and rules.trump == "cut":
            mark = f" (cuts: trump {SUIT_SYMBOLS[ev.trump_after]})"
        line.append(f"{who}: {cs(ev.action)}{mark}")
        if ev.trick_winner is not None:
            tens = sum(1 for _, c in ev.trick_cards if c % NUM_RANKS == 8)
            extra = f", {tens} ten{'s' if tens != 1 else ''}" if tens else ""
            lines.append(
                f"trick {ev.trick + 1:>2}: "
                + "  ".join(line)
                + f"  -> {names[ev.trick_winner]} (team {ev.trick_winner % 2}{extra})"
            )
            line = []
    r = replay.result
    outcome = "drawn hand" if r["winner"] is None else f"team {r['winner']} wins"
    extras = [k for k in ("mendikot", "whitewash") if r[k]]
    trump = "none" if r["trump"] is None else SUIT_SYMBOLS[r["trump"]]
    lines.append(
        f"result: {outcome}; tens {r['tens'][0]}-{r['tens'][1]}, "
        f"tricks {r['tricks'][0]}-{r['tricks'][1]}, trump {trump}"
        + (f" ({', '.join(extras)})" if extras else "")
        + f"; next dealer {names[r['next_dealer']]}"
    )
    return "\n".join(lines)


def records_from_log(
    state: core.State,
    log: Any,
    games: Sequence[int] | np.ndarray | None = None,
    players: Sequence[Sequence[str]] | None = None,
    meta: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Records of finished games from an arena ``ActionLog`` (all games, or the chosen ones)."""
    games = range(state.batch_size) if games is None else [int(g) for g in games]
    out = []
    for k, g in enumerate(games):
        out.append(
            make_record(
                state,
                g,
                log.entries(g),
                players=None if players is None else players[k],
                meta=None if meta is None else meta[k],
            )
        )
    return out


__all__ = [
    "FORMAT",
    "VERSION",
    "RecordError",
    "Replay",
    "TrickEvent",
    "check_structure",
    "dumps",
    "format_record",
    "load_record",
    "make_record",
    "read_json",
    "records_from_log",
    "replay_record",
    "save_record",
    "schema",
]
