"""``mendikot replay FILE``: check a game record by replaying it and print it trick by trick."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..records import RecordError, format_record, load_record, read_json


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


# Keys every record has, and the key of an arena or league --json summary: a JSON file in a
# folder with the second and none of the first is such a summary, saved beside the records.
RECORD_KEYS = ("format", "deal", "actions")
SUMMARY_KEY = "win_rate"


def record_files(paths: list[str]) -> list[str]:
    """The files to read: each path as given, a folder as its ``*.json`` records in name
    order (``arena --save DIR`` writes one per hand). An arena or league summary in a folder
    is skipped, with a note on stderr; every other file is kept, so the check reports a
    damaged record.

    Raises:
        RecordError: a folder without any ``*.json`` record.
    """
    files: list[str] = []
    for path in paths:
        folder = Path(path)
        if not folder.is_dir():
            files.append(path)
            continue
        found = sorted(file for file in folder.glob("*.json") if file.is_file())
        records = [file for file in found if not _summary(file)]
        for file in found:
            if file not in records:
                print(f"{file}: skipped, an arena or league summary, not a game record", file=sys.stderr)
        if not records:
            raise RecordError(f"{path}: a folder without any *.json record")
        files += [str(file) for file in records]
    return files


def _summary(file: Path) -> bool:
    """Whether ``file`` is an arena or league ``--json`` summary (see SUMMARY_KEY)."""
    try:
        data = read_json(file)
    except RecordError:  # not a summary: kept, so that the check reports it
        return False
    return isinstance(data, dict) and SUMMARY_KEY in data and not any(key in data for key in RECORD_KEYS)


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
