"""Reset options of the envs: one reader and dealer for the AEC env and the Gymnasium views.

The options are the deal functions' keywords: ``core.new_hand``'s for one game, and
``core.new_hands``' for a batch. An unknown key warns rather than raises (PettingZoo's
``api_test`` passes one), and the warning points at the caller's line, past PettingZoo's,
Gymnasium's and this package's frames, so users see where they passed it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import pettingzoo

from . import core
from .rules import Rules

ONE_GAME_OPTIONS = ("deal", "dealer", "open_card")  # the AEC env and MendikotGymEnv: core.new_hand's
BATCH_OPTIONS = ("deals", "dealers", "open_cards")  # MendikotVectorEnv: core.new_hands'

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


def deal_for_reset(
    rules: Rules, rng: np.random.Generator, options: Mapping[str, Any] | None, num_games: int | None = None
) -> core.State:
    """New hands from a reset's ``options``: one game (``num_games`` None) or a batch.

    Raises the deal's ValueError for a bad option before the caller changes anything.
    """
    known = ONE_GAME_OPTIONS if num_games is None else BATCH_OPTIONS
    given = read_reset_options(options, known)
    chosen = {name: given.get(name) for name in known}
    if num_games is None:
        return core.new_hand(rules, rng, **chosen)
    return core.new_hands(rules, num_games, rng, **chosen)
