"""The checks the boundaries share, so every entry point refuses a bad input in the same words.

The public entry points (``env()``, the Gymnasium views, ``Rules``, the CLI, the agent
loaders, the record reader) turn user input into typed values here and say what is wrong;
everything inside the package takes those values and trusts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def is_integer(value: object) -> bool:
    """Whether ``value`` is a Python or numpy integer and not a bool: ``True`` is an int to
    Python, and ``1.0`` passes a range test (``1.0 in range(4)``) and then fails as an index."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def check_choice(name: str, value: Any, allowed: Sequence[Any], none_ok: bool = False) -> None:
    """Refuse ``value`` unless it is one of ``allowed`` (or None, where ``none_ok``).

    Raises:
        ValueError: ``"{name} {value!r} is not allowed; choose one of [...]"``.
    """
    if value not in allowed and not (none_ok and value is None):
        none = "None or " if none_ok else ""
        raise ValueError(f"{name} {value!r} is not allowed; choose {none}one of {list(allowed)}")
