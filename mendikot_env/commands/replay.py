"""``mendikot replay FILE``: check a game record by replaying it and print it trick by trick."""

from __future__ import annotations

import argparse

from ..records import RecordError, format_record, load_record


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("replay", help="check a game record (JSON) and print it trick by trick")
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="record file(s) written by arena --save or play --save"
    )
    parser.add_argument("--ascii", action="store_true", help="suit letters (C D H S) instead of symbols")
    parser.add_argument("--check", action="store_true", help="only check the records; print one line per file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return check_all(args.files)
    for i, path in enumerate(args.files):
        record = load_record(path)  # raises RecordError (a ValueError) naming the first bad entry
        if i:
            print()
        print(f"== {path}")
        print(format_record(record, symbols=not args.ascii))
    return 0


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
