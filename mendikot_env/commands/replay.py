"""``mendikot replay FILE``: check a game record by replaying it and print it trick by trick."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..records import RecordError, format_record, load_record


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
    files = record_files(args.files)
    if args.check:
        return check_all(files)
    for i, path in enumerate(files):
        record = load_record(path)  # raises RecordError (a ValueError) naming the first bad entry
        if i:
            print()
        print(f"== {path}")
        print(format_record(record, symbols=not args.ascii))
    return 0


# Keys every record has: a JSON file in a folder without any of them is another kind of file
# (an arena --json summary saved beside the records), not a damaged record.
RECORD_KEYS = ("format", "deal", "actions")


def record_files(paths: list[str]) -> list[str]:
    """The files to read: each path as given, a folder as its ``*.json`` records in name
    order (``arena --save DIR`` writes one per hand). A JSON file in a folder that holds
    none of a record's keys is skipped, with a note on stderr; an unreadable one is kept,
    so the check reports it.

    Raises:
        RecordError: a folder without any ``*.json`` file.
    """
    files: list[str] = []
    for path in paths:
        folder = Path(path)
        if not folder.is_dir():
            files.append(path)
            continue
        found = sorted(file for file in folder.glob("*.json") if file.is_file())
        if not found:
            raise RecordError(f"{path}: a folder without any *.json record")
        for file in found:
            if _other_json(file):
                print(f"{file}: skipped, not a game record (none of {', '.join(RECORD_KEYS)})", file=sys.stderr)
            else:
                files.append(str(file))
    return files


def _other_json(file: Path) -> bool:
    """Whether ``file`` is readable JSON but plainly not a record (see RECORD_KEYS)."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and not any(key in data for key in RECORD_KEYS)


def check_all(files: list[str]) -> int:
    """One line per file, every file checked (a bad one does not hide the rest); 1 if any is bad."""
    bad = 0
    for path in files:
        try:
            record = load_record(path)
        except RecordError as error:
            print(error)  # it starts with the file name
            bad += 1
            continue
        print(f"{path}: ok ({len(record['actions'])} actions, result {record['result']['tens']} tens)")
    if bad:
        print(f"{bad} of {len(files)} record(s) failed the check")
    return 1 if bad else 0
