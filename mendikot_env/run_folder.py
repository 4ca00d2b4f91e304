"""A training run's folder: a new run never writes over an old one unless asked to, and its metrics are read back.

``mendikot train`` and ``mendikot train-rllib`` write their checkpoints, agent and metrics
into ``--out``. Started again on the same folder, a new run would replace the old run's
agent with an untrained one and mix its metrics into the old log; so it is refused, with
the ways on: resume the run, start it over explicitly (``--overwrite``), or pick another
folder.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# What the trainers write into a run folder (files and folders).
TRAINING_RUN_FILES = ("checkpoint.pt", "agent.pt", "metrics.jsonl", "metrics.csv", "learning_curve.png", "tb")
RLLIB_RUN_FILES = ("args.json", "metrics.jsonl", "checkpoint", "agent.rllib")


class RunFolderInUseError(ValueError):
    """The folder already holds a run and the caller did not ask to overwrite it."""


def check_output_name(option: str, name: str, what: str) -> None:
    """Refuse an empty name (or one of spaces) for an output: as a path it is the working
    folder, which a run would then fill (and ``--overwrite`` clear), or where ``--save ""``
    would save nothing, without having been asked to."""
    if not name.strip():
        raise ValueError(f"{option} must name a {what}, got {name!r}")


def prepare_run_folder(out: Path, run_files: Sequence[str], overwrite: bool, resume_hint: str | None = None) -> None:
    """Make ``out`` ready for a new run: create it, or, when it holds a run's files, refuse
    (``overwrite`` False) or delete those files (``overwrite`` True; nothing else in it).

    Args:
        out: the run folder.
        run_files: the names a run writes there.
        overwrite: delete an earlier run's files instead of refusing.
        resume_hint: how to continue the earlier run instead (named in the error), if it can be.

    Raises:
        RunFolderInUseError: ``out`` holds a run and ``overwrite`` is False; or ``out`` is a file.
    """
    found = [name for name in run_files if (out / name).exists()]
    ways = [f"continue it with {resume_hint}"] if resume_hint else []
    ways += ["start over with --overwrite (deletes those files)", "or give another --out"]
    if out.exists() and not out.is_dir():
        problem = f"run folder {out} is a file; give --out a folder"
    elif found and not overwrite:
        problem = f"{out} already holds a run ({', '.join(found)}); " + ", ".join(ways)
    else:
        problem = ""
    if problem:
        raise RunFolderInUseError(problem)
    for name in found:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    out.mkdir(parents=True, exist_ok=True)


def read_rows(path: Path, torn_end_ok: bool = False) -> list[dict[str, Any]]:
    """The rows of a metrics.jsonl; a line that is not a JSON object is a ValueError naming
    the file and line, except (``torn_end_ok``) a last line cut short by a crash, dropped."""
    path = Path(path)
    return [row for _, _, row in parse_metrics_lines(path, torn_end_ok)] if path.exists() else []


def parse_metrics_lines(path: Path, torn_end_ok: bool) -> list[tuple[int, str, dict[str, Any]]]:
    """(line number, line, row) for each non-blank line of a metrics.jsonl (a FileNotFoundError
    where there is none)."""
    lines = path.read_text().splitlines()
    parsed = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            why = "" if isinstance(row, dict) else "not a JSON object"
        except json.JSONDecodeError as error:
            if torn_end_ok and number == len(lines):
                break
            why = str(error)
        if why:
            raise ValueError(f"{path} line {number} is not a metrics row ({why}); repair or delete it")
        parsed.append((number, line, row))
    return parsed
