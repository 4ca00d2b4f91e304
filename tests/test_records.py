"""Game records: round trip through JSON and the core, the schema, and clear errors on bad files."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents import make
from mendikot_env import Rules, core
from mendikot_env.arena import ActionLog, play_hands
from mendikot_env.cli import main
from mendikot_env.records import (
    RecordError,
    dumps,
    format_record,
    load_record,
    make_record,
    records_from_log,
    replay_record,
    save_record,
    schema,
)
from mendikot_env.rules import PRESETS


def played_records(rules: Rules, games: int, seed: int = 0) -> list[dict]:
    """Records of ``games`` hands between the medium bot and the random one."""
    state = core.new_hands(rules, games, rng=seed)
    log = ActionLog.empty(rules, games)
    play_hands(state, [make("medium", rules), make("random", rules, seed=seed)], np.array([[0, 1]] * games), log=log)
    names = [["medium" if s % 2 == 0 else "random" for s in range(rules.n_players)]] * games
    return records_from_log(state, log, players=names, meta=[{"game": g} for g in range(games)])


@pytest.fixture(scope="module")
def band_record() -> dict:
    return played_records(Rules.preset("band"), 8, seed=4)[0]


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n_players", [4, 6])
def test_round_trip(preset: str, n_players: int, tmp_path: Path) -> None:
    """Play, save, load, replay: the same result, and the file matches the schema."""
    jsonschema = pytest.importorskip("jsonschema")  # a dev dependency; the loader itself needs none
    rules = Rules.preset(preset, n_players=n_players)
    validator = jsonschema.Draft202012Validator(schema())
    for k, record in enumerate(played_records(rules, 6, seed=n_players)):
        validator.validate(record)
        path = save_record(record, tmp_path / f"hand{k}.json")
        loaded = load_record(path)
        assert loaded == json.loads(json.dumps(record))
        replay = replay_record(loaded)
        assert replay.result == record["result"]
        assert bool(replay.state.done[0])
        assert len(loaded["deal"]) == n_players and len(loaded["deal"][0]) == rules.hand_size
        assert (loaded["face_down"] is not None) == (rules.trump == "band")
        assert (loaded["open_card"] is not None) == (rules.trump == "open")


def test_record_reads_like_a_game(band_record: dict) -> None:
    rec = band_record
    assert rec["format"] == "mendikot-record" and rec["version"] == 1
    assert rec["actions"][0]["kind"] == "hide" and rec["actions"][0]["action"] == rec["face_down"]
    assert rec["actions"][0]["seat"] == (rec["dealer"] + 1) % 4
    assert all(len(card) == 2 for hand in rec["deal"] for card in hand)
    text = dumps(rec)
    assert '"deal": [\n' in text and '{"seat": ' in text  # one hand / one action per line
    printed = format_record(rec, symbols=False)
    assert "trick 13:" in printed and "result:" in printed and "face down" in printed


def test_make_record_refuses_an_unfinished_hand() -> None:
    state = core.new_hands(Rules(), 1, rng=0)
    with pytest.raises(RecordError, match="not finished"):
        make_record(state, 0, [])


# --------------------------------------------------------------------------- corrupted


def corrupt(record: dict, change) -> dict:
    bad = copy.deepcopy(record)
    change(bad)
    return bad


def test_illegal_action_names_the_entry(band_record: dict) -> None:
    i = 17
    seat = band_record["actions"][i]["seat"]
    not_mine = band_record["deal"][(seat + 1) % 4][0]  # a card another seat holds
    bad = corrupt(band_record, lambda r: r["actions"][i].update(action=not_mine, kind="play"))
    with pytest.raises(RecordError, match=rf"^action {i} \(seat {seat}, '{not_mine}'\) is illegal; legal: [2-9TJQKA]"):
        replay_record(bad)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda r: r["actions"][5].update(seat=(r["actions"][5]["seat"] + 1) % 4),
            r"action 5 .* out of turn: seat \d is to act",
        ),
        (lambda r: r["actions"].pop(), r"ends after \d+ actions but the hand is not over"),
        (lambda r: r["actions"].append(dict(r["actions"][-1])), r"comes after the hand is over"),
        (lambda r: r["result"].update(tens=[5, 5]), r"result.tens is \[5, 5\] but the replay gives"),
        (lambda r: r["result"].update(winner=None), r"result.winner"),
        (lambda r: r["deal"][0].__setitem__(0, "1Z"), r"deal\[0\]\[0\]: cannot read '1Z' as a card"),
        (
            lambda r: r["deal"][0].__setitem__(0, r["deal"][1][0]),
            r"deal: card\(s\) .* dealt more than once \(card \d+, \w+, is dealt to seat\(s\) \[0, 1\]\)",
        ),
        (lambda r: r["rules"].pop("trump"), r"rules: missing field\(s\) \['trump'\]"),
        (lambda r: r["deal"][2].pop(), r"deal\[2\]: expected 13 cards"),
        (lambda r: r["deal"].pop(), r"deal: expected 4 hands \(one per seat, as rules.n_players = 4 says\), got 3"),
        (lambda r: r["rules"].update(n_players=6), r"deal: expected 6 hands .*, got 4 hands$"),
        (lambda r: r["deal"][0].__setitem__(0, r["deal"][0][0].lower()), r"deal\[0\]\[0\]: write cards as"),
        (lambda r: r.update(face_down=None), r"face_down: must be a card exactly when trump is 'band'"),
        (lambda r: r["actions"][0].update(kind="play"), r"action 0 .* is marked 'play' but is a 'hide' action"),
        (lambda r: r.update(dealer=7), r"dealer: expected a seat 0..3"),
        (lambda r: r.update(format="bridge"), r"format: expected 'mendikot-record'"),
        (lambda r: r.pop("result"), r"missing field\(s\) \['result'\]"),
        (lambda r: r.update(extra=1), r"unknown field\(s\) \['extra'\]"),
        (lambda r: r["rules"].update(trump="hidden"), r"rules: Rules.trump = 'hidden' is not allowed"),
        (lambda r: r["actions"][3].update(action=53), r"action 3: expected a card as text"),
    ],
)
def test_corrupted_records_fail_clearly(band_record: dict, change, message: str) -> None:
    bad = corrupt(band_record, change)
    with pytest.raises(RecordError, match=message):
        replay_record(bad)


def test_face_down_must_match_the_hide(band_record: dict) -> None:
    hider = band_record["actions"][0]["seat"]
    other = next(c for c in band_record["deal"][hider] if c != band_record["face_down"])
    bad = corrupt(band_record, lambda r: r.update(face_down=other))
    with pytest.raises(RecordError, match=rf"action 0 .* hides .* but the record's face_down is '{other}'"):
        replay_record(bad)


def test_load_record_names_the_file(tmp_path: Path, band_record: dict) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(RecordError, match="broken.json: not valid JSON"):
        load_record(path)
    bad = corrupt(band_record, lambda r: r["result"].update(tricks=[13, 0]))
    save_record(bad, path)
    with pytest.raises(RecordError, match=r"broken.json: result.tricks"):
        load_record(path)
    with pytest.raises(RecordError, match="cannot read"):
        load_record(tmp_path / "missing.json")


def test_schema_rejects_what_the_loader_rejects(band_record: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema())
    for change in (
        lambda r: r.update(extra=1),
        lambda r: r["deal"][0].__setitem__(0, "10S"),
        lambda r: r["actions"][2].update(action="XX"),
        lambda r: r.pop("actions"),
    ):
        bad = corrupt(band_record, change)
        assert not validator.is_valid(bad)
        with pytest.raises(RecordError):
            replay_record(bad)


def int_bool_swaps(record: dict) -> list[tuple[tuple[str | int, ...], Any]]:
    """(path, value) for each integer and bool of a record, the integer swapped for true and
    false and the bool for 0 and 1 (Python's ``==`` takes 1 for true). Meta is free-form and
    left out; of a list, the first four entries stand for the rest."""
    swaps: list[tuple[tuple[str | int, ...], Any]] = []

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(value, bool):
            swaps.extend([(path, 0), (path, 1)])
        elif isinstance(value, int):
            swaps.extend([(path, True), (path, False)])
        elif isinstance(value, dict):
            for key, item in value.items():
                if path or key != "meta":
                    walk(item, (*path, key))
        elif isinstance(value, list):
            for i, item in enumerate(value[:4]):
                walk(item, (*path, i))

    walk(record, ())
    return swaps


def value_at(record: dict, path: tuple[str | int, ...]) -> Any:
    """The value at ``path`` (keys and list indices) in a record."""
    for key in path:
        record = record[key]
    return record


def with_value(record: dict, path: tuple[str | int, ...], value: Any) -> dict:
    """A copy of ``record`` with ``value`` at ``path``."""
    changed = copy.deepcopy(record)
    value_at(changed, path[:-1])[path[-1]] = value
    return changed


def field_name(path: tuple[str | int, ...]) -> str:
    """The innermost field named on ``path`` (``("actions", 3, "seat")`` -> ``"seat"``)."""
    return next(str(k) for k in reversed(path) if isinstance(k, str))


def test_the_reader_tells_bools_from_integers_like_the_schema() -> None:
    """Where the schema wants an integer the reader refuses true and false, and where it
    wants a bool it refuses 0 and 1, naming the field and the value: no swap of any record
    passes either. Between them the records hold a 0 or 1 in every integer field of the
    result, the swaps an ``==`` check lets through."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema())
    records = played_records(Rules.preset("band"), 8, seed=4)
    passed, unclear, equal_swaps = [], [], set()
    for record in records:
        for path, value in int_bool_swaps(record):
            field = field_name(path)
            if value_at(record, path) == value:
                equal_swaps.add(field)
            bad = with_value(record, path, value)
            assert not validator.is_valid(bad), path
            try:
                replay_record(bad)
            except RecordError as error:
                if field not in str(error) or repr(value) not in str(error):
                    unclear.append((path, str(error)))
            else:
                passed.append((path, value))
    assert passed == [] and unclear == []
    result_ints = {"tens", "tricks", "winner", "next_dealer", "trump", "trick_winners"}
    assert {"version", "mendikot", "whitewash", "seat", "dealer"} | result_ints <= equal_swaps


def test_the_reader_refuses_integers_written_with_a_decimal_point() -> None:
    """JSON Schema takes 3.0 for an integer; the reader does not, in any integer field, and
    says how to write it, so a record is either read exactly as written or refused."""
    records = played_records(Rules.preset("band"), 4, seed=5)
    unclear, passed, fields = [], [], set()
    for record in records:
        for path, _ in int_bool_swaps(record):
            if isinstance(value_at(record, path), bool):
                continue
            bad = with_value(record, path, float(value_at(record, path)))
            field = field_name(path)
            fields.add(field)
            try:
                replay_record(bad)
            except RecordError as error:
                if field not in str(error) or "without a decimal point" not in str(error):
                    unclear.append((path, str(error)))
            else:
                passed.append(path)
    assert passed == [] and unclear == []
    assert {"version", "dealer", "seat", "tens", "tricks", "winner", "next_dealer", "trump", "target"} <= fields


def test_unreadable_json_is_a_bad_record_and_the_check_goes_on(
    tmp_path: Path, band_record: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    """A number too long for Python's int and nesting past the recursion limit are bad
    records naming the file, not a crash that stops ``replay --check`` at the first."""
    long_number = tmp_path / "a_long_number.json"
    long_number.write_text('{"format": "mendikot-record", "version": ' + "1" * 5000 + "}")
    deep = tmp_path / "b_deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    good = save_record(band_record, tmp_path / "c_good.json")
    too_long = f"{long_number}: holds a number too long to read (over {sys.get_int_max_str_digits()} digits)"
    too_deep = f"{deep}: nested too deeply to read"
    with pytest.raises(RecordError, match=f"^{re.escape(too_long)}"):
        load_record(long_number)
    with pytest.raises(RecordError, match=f"^{re.escape(too_deep)}"):
        load_record(deep)
    assert main(["replay", "--check", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(too_long) and lines[1].startswith(too_deep)
    assert lines[2].startswith(f"{good}: ok") and lines[3] == "2 of 3 record(s) failed the check"
    assert main(["replay", str(deep)]) == 2
    assert f"error: {too_deep}" in capsys.readouterr().err


def test_nesting_near_the_recursion_limit_is_a_bad_record(tmp_path: Path, band_record: dict) -> None:
    """Just under the limit the JSON parses, and the check then prints the value from deeper
    down the stack: each depth is a RecordError, never a RecursionError."""
    path = tmp_path / "deep.json"
    limit = sys.getrecursionlimit()
    for depth in range(limit - 80, limit + 5):
        nested = "[" * depth + "]" * depth
        path.write_text(dumps(band_record).replace('"version": 1', f'"version": {nested}', 1))
        with pytest.raises(RecordError, match=r"deep.json: (version: this reader knows version 1|nested too deeply)"):
            load_record(path)


# --------------------------------------------------------------------------------- CLI


def test_replay_command(tmp_path: Path, band_record: dict, capsys: pytest.CaptureFixture[str]) -> None:
    good = save_record(band_record, tmp_path / "good.json")
    assert main(["replay", str(good), "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "trick  1:" in out and "trick 13:" in out and "result: team" in out
    assert main(["replay", "--check", str(good)]) == 0
    assert "ok" in capsys.readouterr().out
    bad = save_record(corrupt(band_record, lambda r: r["actions"].pop()), tmp_path / "bad.json")
    assert main(["replay", str(bad)]) == 2
    assert "bad.json: the record ends after" in capsys.readouterr().err
    # --check reports every file, a bad one does not hide the rest, and the status says so.
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    assert main(["replay", "--check", str(bad), str(binary), str(good)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{bad}: the record ends after")
    assert lines[1] == f"{binary}: not UTF-8 text (byte 0): records are UTF-8 JSON"
    assert lines[2].startswith(f"{good}: ok") and lines[3] == "2 of 3 record(s) failed the check"
    # A folder (as arena --save writes) stands for its *.json records, in name order; an
    # arena summary saved beside them is skipped with a note, a damaged record is not.
    (tmp_path / "notes.txt").write_text("not a record")
    (tmp_path / "arena.json").write_text(json.dumps({"a": "hard", "b": "random", "deals": 2, "win_rate": 0.5}))
    assert main(["replay", "--check", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == [str(bad), str(binary), str(good)]
    assert lines[3] == "2 of 3 record(s) failed the check"
    assert captured.err == f"{tmp_path / 'arena.json'}: skipped, an arena or league summary, not a game record\n"
    # A record emptied to {} is a damaged record, checked and failed; a folder of summaries only
    # has no record to check.
    (tmp_path / "pair000001_a0.json").write_text("{}")
    assert main(["replay", "--check", str(tmp_path)]) == 1
    assert "pair000001_a0.json: record is missing field(s) ['format'" in capsys.readouterr().out
    (tmp_path / "summaries").mkdir()
    (tmp_path / "arena.json").rename(tmp_path / "summaries" / "arena.json")
    assert main(["replay", "--check", str(tmp_path / "summaries")]) == 2
    assert "summaries: a folder without any *.json record" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["replay", str(tmp_path / "empty")]) == 2
    assert "empty: a folder without any *.json record" in capsys.readouterr().err
