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

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import core
from .cards import (
    ASK_ACTION,
    SUIT_SYMBOLS,
    TENS,
    action_str,
    card_str,
    parse_card,
    rank_of,
    set_to_cards,
    suit_of,
)
from .checks import is_integer
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
    kinds = ["hide"] if rules.has_face_down else []
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


def _at(where: str, message: str) -> str:
    """A problem at ``where`` (a field or entry; "" for the record itself)."""
    return f"{where}: {message}" if where else message


def _wrong(where: str, expected: str, value: Any) -> str:
    """The problem of a value that is not what ``where`` holds: ``"{expected}, got {value}"``."""
    return _at(where, f"{expected}, got {_got(value)}")


def _card_problem(where: str, value: Any) -> str:
    """Records write cards in the canonical form only (``"TS"``): the problem, or ""."""
    if not isinstance(value, str):
        return _at(where, f"expected a card as text like 'TS', got {value!r}")
    try:
        card = parse_card(value)
    except ValueError as error:
        return _at(where, str(error))
    if card_str(card) != value:
        return _at(where, f"write cards as {card_str(card)!r} (rank then suit letter, upper case), not {value!r}")
    return ""


def _json_equal(value: Any, expected: Any) -> bool:
    """Equality as the schema's ``const`` and ``enum`` mean it, and one step stricter:
    ``true`` is not ``1`` and ``false`` is not ``0``, though Python's ``==`` says they are;
    and ``1.0`` is not ``1`` (a record's numbers are integers, written without a point)."""
    return type(value) is type(expected) and value == expected


def _one_of(value: Any, allowed: Iterable[Any]) -> bool:
    return any(_json_equal(value, choice) for choice in allowed)


def _is_seat(value: Any, n: int) -> bool:
    return is_integer(value) and 0 <= value < n


def _got(value: Any) -> str:
    """A bad value for a message, with :func:`_float_hint`."""
    try:
        shown = f"{value!r:.80}"
    except RecursionError:  # nested nearly as deep as the JSON reader goes: the repr goes deeper
        shown = f"a {type(value).__name__} nested too deeply to show"
    return f"{shown}{_float_hint(value if isinstance(value, list) else [value])}"


def _float_hint(values: Iterable[Any]) -> str:
    """A hint when a number among ``values`` was written as 3.0 (JSON Schema validators take
    3.0 for an integer; this reader, like ``json.dumps``, does not)."""
    return " (write integers without a decimal point: 3, not 3.0)" if any(type(v) is float for v in values) else ""


REQUIRED_FIELDS = ("format", "version", "rules", "dealer", "deal", "open_card", "face_down", "actions", "result")
OPTIONAL_FIELDS = ("players", "meta")
ENTRY_KEYS = {"seat", "action", "kind"}

# The checks below are generators of problems ("" where a part is fine), in the order the
# schema reads: the caller takes the first (_first), so each check may assume that the
# ones before it passed, and one ``raise`` reports it.
Problems = Iterator[str]


def _header_problems(data: Any) -> Problems:
    """The record's fields, format and version, and that its rules name every field."""
    known = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
    if not isinstance(data, dict):
        yield _wrong("", "a record is a JSON object", data)
    if missing := [k for k in REQUIRED_FIELDS if k not in data]:
        yield f"record is missing field(s) {missing}"
    if extra := [k for k in data if k not in known]:
        yield f"record has unknown field(s) {extra}; known fields are {list(known)}"
    if data["format"] != FORMAT:
        yield _wrong("format", f"expected {FORMAT!r}", data["format"])
    if not _json_equal(data["version"], VERSION):
        yield _wrong("version", f"this reader knows version {VERSION} (an integer)", data["version"])
    if not isinstance(data["rules"], dict):
        yield _wrong("rules", "expected an object of rule fields", data["rules"])
    if missing := [f for f in Rules().to_dict() if f not in data["rules"]]:  # a default would replay other rules
        yield _at("rules", f"missing field(s) {missing}; a record names every rule field")


def _deal_problems(data: dict[str, Any], rules: Rules) -> Problems:
    """The dealer, a hand of ``hand_size`` canonical cards per seat, and the open and face-down
    cards (each a card exactly when the rules use it). That no card is dealt twice or is
    missing from the pack is the deal reader's check (:mod:`mendikot_env.deals`), at the deal."""
    n, size = rules.n_players, rules.hand_size
    if not _is_seat(data["dealer"], n):
        yield _wrong("dealer", f"expected a seat 0..{n - 1}", data["dealer"])
    deal = data["deal"]
    if not (isinstance(deal, list) and len(deal) == n):
        got = f"{len(deal)} hands" if isinstance(deal, list) else f"{deal!r:.80}"
        yield _at("deal", f"expected {n} hands (one per seat, as rules.n_players = {n} says), got {got}")
    for s, hand in enumerate(deal):
        if not (isinstance(hand, list) and len(hand) == size):
            yield _wrong(f"deal[{s}]", f"expected {size} cards", hand)
        yield from (_card_problem(f"deal[{s}][{k}]", text) for k, text in enumerate(hand))
    for key, used, needs in (
        ("open_card", rules.trump_known_from_start, "open"),
        ("face_down", rules.has_face_down, "band"),
    ):
        if (data[key] is not None) != used:
            yield _at(key, f"must be a card exactly when trump is {needs!r} (trump is {rules.trump!r})")
        if data[key] is not None:
            yield _card_problem(key, data[key])


def _action_problems(actions: Any, n: int) -> Problems:
    """A list of ``{"seat", "action", "kind"}`` entries (kind optional) with a seat and a card or ASK."""
    if not isinstance(actions, list):
        yield _wrong("actions", "expected a list", actions)
    for i, entry in enumerate(actions):
        where = f"action {i}"
        if not (isinstance(entry, dict) and not set(entry) - ENTRY_KEYS and {"seat", "action"} <= set(entry)):
            yield _wrong(where, "expected {'seat': int, 'action': 'TS' or 'ASK', 'kind': ...}", entry)
        if not _is_seat(entry["seat"], n):
            yield _wrong(where, f"seat must be 0..{n - 1}", entry["seat"])
        if entry["action"] != "ASK":
            yield _card_problem(where, entry["action"])
        if "kind" in entry and entry["kind"] not in ACTION_KINDS:
            yield _wrong(where, f"kind must be one of {list(ACTION_KINDS)}", entry["kind"])


def _result_problems(data: dict[str, Any], n: int) -> Problems:
    """The stored result's types, as the schema has them (the replay compares it with ``==``
    afterwards, which would take ``0`` for ``false`` and ``true`` for ``1``), then the
    optional players and meta."""
    result = data["result"]
    if not isinstance(result, dict):
        yield _wrong("result", "expected an object", result)
    if missing := [k for k in RESULT_KEYS if k not in result]:
        yield _at("result", f"missing key(s) {missing}")

    def counts(v: Any) -> bool:
        return isinstance(v, list) and len(v) == 2 and all(is_integer(x) and x >= 0 for x in v)

    two_counts = "expected two counts [team 0, team 1] (integers 0 or more)"
    expected: dict[str, tuple[Callable[[Any], bool], str]] = {  # in RESULT_KEYS order
        "tens": (counts, two_counts),
        "tricks": (counts, two_counts),
        "winner": (lambda v: _one_of(v, (0, 1, None)), "expected a team 0 or 1, or null for a drawn hand"),
        "mendikot": (lambda v: isinstance(v, bool), "expected true or false"),
        "whitewash": (lambda v: isinstance(v, bool), "expected true or false"),
        "next_dealer": (lambda v: _is_seat(v, n), f"expected a seat 0..{n - 1}"),
        "trump": (lambda v: _one_of(v, (0, 1, 2, 3, None)), "expected a suit 0..3 (clubs .. spades) or null"),
        "trick_winners": (
            lambda v: isinstance(v, list) and all(_is_seat(s, n) for s in v),
            f"expected a list of seats 0..{n - 1}",
        ),
    }
    for key, (test, message) in expected.items():
        if not test(result[key]):
            yield _wrong(f"result.{key}", message, result[key])
    players = data.get("players", [""] * n)
    if not (isinstance(players, list) and len(players) == n and all(isinstance(p, str) for p in players)):
        yield _wrong("players", f"expected {n} names", players)
    if not isinstance(data.get("meta", {}), dict):
        yield _wrong("meta", "expected an object", data["meta"])


def _first(problems: Iterable[str]) -> str:
    """The first problem of a check ("" when it finds none)."""
    for problem in problems:
        if problem:
            return problem
    return ""


def check_structure(data: Any) -> Rules:
    """Check the shape of a record (fields, types, card texts) and return its Rules.

    This mirrors the JSON schema by hand, so the package needs no schema library (the
    schema is for other readers and the tests) and the errors can say what is wrong in
    Mendikot terms.

    Raises:
        RecordError: naming the first bad field and what it should be.
    """
    problem = _first(_header_problems(data))
    if not problem:
        try:
            rules = Rules.from_dict(data["rules"])
        except (TypeError, ValueError) as error:
            problem = _at("rules", f"{error}{_float_hint(data['rules'].values())}")
    if not problem:
        n = rules.n_players
        checks = (_deal_problems(data, rules), _action_problems(data["actions"], n), _result_problems(data, n))
        problem = _first(itertools.chain.from_iterable(checks))
    if problem:
        raise RecordError(problem)
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


OnStep = Callable[[core.State, TrickEvent | None], None]  # replay_record's on_step(state, event)


@dataclass
class Replay:
    """A replayed record: the final state, the rules and the events in order."""

    rules: Rules
    state: core.State
    events: list[TrickEvent]
    result: dict[str, Any]


def replay_record(data: dict[str, Any], on_step: OnStep | None = None) -> Replay:
    """Replay a record through the core, checking every entry; raises RecordError if not sound.

    This is the one replayer: the record viewer and ``mendikot replay`` use it too.

    Args:
        data: the record.
        on_step: optional ``on_step(state, event)``, called with the dealt state (event
            None) and after each action (a viewer draws its frames here); ``state`` is the
            replay's own, changed by the next action: copy it to keep it.
    """
    rules = check_structure(data)
    try:
        state = core.new_hand(rules, rng=0, deal=data["deal"], dealer=data["dealer"], open_card=data["open_card"])
    except ValueError as error:  # a card dealt twice, or one the pack does not hold
        raise RecordError(_at("deal", str(error))) from None
    face_down = None if data["face_down"] is None else parse_card(data["face_down"])
    actions, events, problem = data["actions"], [], ""
    if on_step is not None:
        on_step(state, None)
    for i, entry in enumerate(actions):
        action = ASK_ACTION if entry["action"] == "ASK" else parse_card(entry["action"])
        if problem := _first(_entry_problems(state, entry, action, face_down, i)):
            break
        events.append(_step(state, i, entry["seat"], action, action_kind(state, 0, action)))
        if on_step is not None:
            on_step(state, events[-1])
    if not problem and not bool(state.done[0]):
        problem = (
            f"the record ends after {len(actions)} actions but the hand is not over "
            f"(trick {int(state.trick_no[0]) + 1} of {rules.n_tricks}, seat {int(state.current[0])} to act)"
        )
    if not problem:
        result, stored = core.hand_results(state).as_dict(0), data["result"]
        differ = (key for key in RESULT_KEYS if stored[key] != result[key])
        problem = _first(f"result.{key} is {stored[key]!r} but the replay gives {result[key]!r}" for key in differ)
    if problem:
        raise RecordError(problem)
    return Replay(rules, state, events, result)


def _entry_problems(state: core.State, entry: dict[str, Any], action: int, face_down: int | None, i: int) -> Problems:
    """Why the record's entry ``i`` cannot be taken in ``state`` (one game), if it cannot."""
    where = f"action {i} (seat {entry['seat']}, {entry['action']!r})"
    if bool(state.done[0]):
        yield f"{where} comes after the hand is over ({i} actions finish it)"
    if entry["seat"] != int(state.current[0]):
        yield f"{where} is out of turn: seat {int(state.current[0])} is to act"
    legal = int(core.legal_bits(state)[0])
    if not legal >> action & 1:
        yield f"{where} is illegal; legal: {' '.join(action_str(a) for a in set_to_cards(legal))}"
    kind = action_kind(state, 0, action)
    if entry.get("kind", kind) != kind:
        yield f"{where} is marked {entry['kind']!r} but is a {kind!r} action here"
    if kind == "hide" and face_down is not None and face_down != action:
        yield f"{where} hides {entry['action']} but the record's face_down is {card_str(face_down)!r}"


def _step(state: core.State, index: int, seat: int, action: int, kind: str) -> TrickEvent:
    """Take a checked action of ``kind`` in ``state`` (one game) and say what it completed."""
    trick_no = int(state.trick_no[0])
    trick_before = [(s, int(c)) for s, c in enumerate(state.trick_cards[0]) if c >= 0]
    trump_before = int(state.trump[0])
    face_down_before = int(state.face_down[0])
    core.step(state, np.array([action]), check=False)
    event = TrickEvent(index, seat, action, kind, trick_no)
    if int(state.trick_no[0]) > trick_no:
        event.trick_winner = int(state.trick_winners[0, trick_no])
        event.trick_cards = [*trick_before, (seat, action)]
    if int(state.trump[0]) != trump_before:
        event.trump_after = int(state.trump[0])
    if face_down_before >= 0 and int(state.face_down[0]) < 0:
        event.revealed = face_down_before
    return event


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
        why = f"cannot read: {error.strerror or error}"
    except json.JSONDecodeError as error:
        why = f"not valid JSON: {error}"
    except UnicodeDecodeError as error:
        why = f"not UTF-8 text (byte {error.start}): records are UTF-8 JSON"
    except ValueError as error:  # the only other one json.loads raises, so far: too many digits
        why = f"not valid JSON: {error}"
        if "integer string conversion" in str(error):
            why = (
                f"holds a number too long to read (over {sys.get_int_max_str_digits()} digits); "
                "a record's numbers are seats, counts and the version"
            )
    except RecursionError:
        why = "nested too deeply to read; a record's lists and objects nest a few levels deep"
    raise RecordError(f"{path}: {why}")


def load_record(path: str | Path, on_step: OnStep | None = None) -> dict[str, Any]:
    """Read a record file and check it by replaying it (``on_step`` as
    :func:`replay_record` takes it); returns the record dict.

    Raises:
        RecordError: naming the file and the first bad entry.
    """
    data = read_json(path)
    replay_from(path, data, on_step)
    return data


def replay_from(path: str | Path, data: Any, on_step: OnStep | None = None) -> Replay:
    """:func:`replay_record` of a record read from ``path``, its errors naming the file."""
    try:
        return replay_record(data, on_step)
    except RecordError as error:
        raise RecordError(f"{Path(path)}: {error}") from None


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


def format_record(data: dict[str, Any], symbols: bool = True, replay: Replay | None = None) -> str:
    """The record as text, trick by trick (checks it by replaying first, unless the caller
    passes the ``replay`` of ``data`` it has made already)."""
    from .cards import hand_str

    replay = replay_record(data) if replay is None else replay
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
        oc = parse_card(data["open_card"])
        lines.append(f"open card: {cs(oc)} (trump {SUIT_SYMBOLS[suit_of(oc)]})")
    lines.append("deal:")
    for s, hand in enumerate(data["deal"]):
        cards = [parse_card(t) for t in hand]
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
        if ev.trump_after is not None and rules.trump_by_first_cut:
            mark = f" (cuts: trump {SUIT_SYMBOLS[ev.trump_after]})"
        line.append(f"{who}: {cs(ev.action)}{mark}")
        if ev.trick_winner is not None:
            tens = sum(1 for _, c in ev.trick_cards if c in TENS)
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
    "replay_from",
    "replay_record",
    "save_record",
    "schema",
]
