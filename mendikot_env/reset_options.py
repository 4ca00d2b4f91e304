"""Reset options of the envs: one reader for the AEC env and the Gymnasium views.

An unknown key warns rather than raises (PettingZoo's ``api_test`` passes one), and the
warning points at the caller's line, past PettingZoo's, Gymnasium's and this package's
frames, so users see where they passed it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium
import pettingzoo

ONE_GAME_OPTIONS = ("deal", "dealer", "open_card")  # the AEC env and MendikotGymEnv
BATCH_OPTIONS = ("deals", "dealers", "open_cards")  # MendikotVectorEnv: core.new_hands' names

# Folder prefixes with a trailing separator, so that e.g. gymnasium_robotics is not one.
_LIBRARY_CODE = tuple(
    os.path.join(os.path.dirname(path), "") for path in (pettingzoo.__file__, gymnasium.__file__, __file__)
)


def warn_caller(message: str) -> None:
    """Warn at the first frame outside PettingZoo, Gymnasium and this package."""
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_LIBRARY_CODE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, stacklevel=level)


def read_reset_options(options: Mapping[str, Any] | None, known: tuple[str, ...]) -> dict[str, Any]:
    """``options`` as a dict (empty for None); a ValueError if not a mapping, a warning
    naming the known keys for any other key (ignored)."""
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict with keys {list(known)}, got {options!r}")
    options = dict(options or {})
    unknown = sorted(set(options) - set(known), key=str)
    if unknown:
        warn_caller(f"unknown reset option(s) {unknown} ignored; known options are {list(known)}")
    return options
