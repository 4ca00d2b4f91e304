"""``mendikot replay FILE``: check a game record by replaying it and print it trick by trick."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..records import OnStep, RecordError, Replay, format_record, read_json, replay_from


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("replay", help="check a game record (JSON) and print it trick by trick")
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="record file(s) written by arena --save or play --save, or folders of them (their *.json files)",
    )
    parser.add_argument("--ascii", action="store_true", help="suit letters (C D H S) instead of symbols")
    parser.add_argument("--check", action="store_true", help="only check the records; print one line per file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    records = read_records(args.files)
    if args.check:
        return check_all(records)
    for i, (path, data) in enumerate(records):
        replay = replayed(path, data)  # a RecordError (a ValueError) naming the file and the first bad entry
        if i:
            print()
        print(f"== {path}")
        print(format_record(data, symbols=not args.ascii, replay=replay))
    return 0


# Keys every record has, and the key of an arena or league --json summary: a JSON file in a
# folder with the second and none of the first is such a summary, saved beside the records.
RECORD_KEYS = ("format", "deal", "actions")
SUMMARY_KEY = "win_rate"


def read_records(paths: list[str]) -> list[tuple[str, Any]]:
    """Each file to read with its JSON value, each read once: each path as given, a folder as
    its ``*.json`` records in name order (``arena --save DIR`` writes one per hand). An arena
    or league summary in a folder is skipped, with a note on stderr; every other file is
    kept, so the check reports a damaged record. A file that cannot be read has the
    RecordError saying why in place of its value, raised or reported in its turn.

    Raises:
        RecordError: a folder without any ``*.json`` record.
    """
    records: list[tuple[str, Any]] = []
    for path in paths:
        folder = Path(path)
        if not folder.is_dir():
            records.append((path, _read(folder)))
            continue
        found = [(file, _read(file)) for file in sorted(folder.glob("*.json")) if file.is_file()]
        kept = [(str(file), data) for file, data in found if not _summary(data)]
        for file, data in found:
            if _summary(data):
                print(f"{file}: skipped, an arena or league summary, not a game record", file=sys.stderr)
        if not kept:
            raise RecordError(f"{path}: a folder without any *.json record")
        records += kept
    return records


def _read(path: Path) -> Any:
    """The JSON value in ``path``, or the RecordError naming the file and why it cannot be read."""
    try:
        return read_json(path)
    except RecordError as error:
        return error


def _summary(data: Any) -> bool:
    """Whether a file's JSON value is an arena or league ``--json`` summary (see SUMMARY_KEY);
    a file that cannot be read is not one, so that the check reports it."""
    return isinstance(data, dict) and SUMMARY_KEY in data and not any(key in data for key in RECORD_KEYS)


def replayed(path: str, data: Any, on_step: OnStep | None = None) -> Replay:
    """The record read from ``path`` replayed (``on_step`` as :func:`~mendikot_env.records.replay_record`
    takes it), or a RecordError naming the file, as :func:`~mendikot_env.records.load_record` gives."""
    if isinstance(data, RecordError):
        raise data
    return replay_from(path, data, on_step)


def check_all(records: list[tuple[str, Any]]) -> int:
    """One line per file, every file checked (a bad one does not hide the rest); 1 if any is bad."""
    bad = 0
    for path, data in records:
        try:
            replayed(path, data)
        except RecordError as error:
            print(error)  # it starts with the file name
            bad += 1
            continue
        print(f"{path}: ok ({len(data['actions'])} actions, result {data['result']['tens']} tens)")
    if bad:
        print(f"{bad} of {len(records)} record(s) failed the check")
    return 1 if bad else 0
