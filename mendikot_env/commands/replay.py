"""``mendikot replay FILE``: check a game record by replaying it and print it trick by trick."""

from __future__ import annotations

import argparse

from ..records import format_record, load_record


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("replay", help="check a game record (JSON) and print it trick by trick")
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="record file(s) written by arena --save or play --save"
    )
    parser.add_argument("--ascii", action="store_true", help="suit letters (C D H S) instead of symbols")
    parser.add_argument("--check", action="store_true", help="only check the records; print one line per file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for i, path in enumerate(args.files):
        record = load_record(path)  # raises RecordError (a ValueError) naming the first bad entry
        if args.check:
            print(f"{path}: ok ({len(record['actions'])} actions, result {record['result']['tens']} tens)")
            continue
        if i:
            print()
        print(f"== {path}")
        print(format_record(record, symbols=not args.ascii))
    return 0
