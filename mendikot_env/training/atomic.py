"""Atomic file replacement for the run folder: a crash leaves the old file or the new one,
never half of one. Checkpoints and the metrics log rewritten on resume both go through it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write`` on a temporary file beside ``path``, flush it to disk, rename it over ``path``."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it private; these are ordinary files
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_stale_temporaries(folder: Path, names: Iterable[str]) -> None:
    """Delete the temporary files that a process killed inside :func:`write_atomic` left in
    ``folder`` beside each of ``names`` (a resume's first step: nothing else writes there)."""
    for name in names:
        for temporary in folder.glob(f".{name}.*.tmp"):
            temporary.unlink(missing_ok=True)
