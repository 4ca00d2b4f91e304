"""Seeds and generators: one check, so every entry point refuses a bad seed the same way.

numpy takes any integer 0 or more as a seed, but torch's ``manual_seed`` (which the
trainer and the trained agents use) and numpy's int64 arrays stop at 2**63 - 1, and a
float, a string or a negative number fail deep inside numpy with a message that does not
say which argument was wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import is_integer

SEED_MAX = 2**63 - 1  # the largest seed every consumer (numpy, torch, int64 arrays) takes
SEED_RULE = f"an integer 0 to {SEED_MAX} (2**63 - 1)"


def check_seed(seed: Any, name: str = "seed", optional: bool = True, also: str = "") -> int | None:
    """``seed`` as a Python int (None stays None where ``optional``), or a ValueError naming
    ``name``, the value and the allowed range (then ``also``: what else the caller takes).
    Numpy integers pass; bools and floats do not."""
    if seed is None and optional:
        return None
    if not is_integer(seed) or not 0 <= seed <= SEED_MAX:
        raise ValueError(f"{name} must be {SEED_RULE}{' (or None)' if optional else ''}, got {seed!r}{also}")
    return int(seed)


def make_rng(seed: Any, name: str = "seed") -> np.random.Generator:
    """A generator from a seed (checked by :func:`check_seed`), or ``seed`` itself when it is
    already a Generator (a BitGenerator or SeedSequence is wrapped, as numpy does)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.BitGenerator | np.random.SeedSequence):
        return np.random.default_rng(seed)
    return np.random.default_rng(check_seed(seed, name, also="; a np.random.Generator is taken too"))


def derived_seed(value: int) -> int:
    """A seed worked out from another (``seed * 2 + 1``, ``seed + i``) folded back into
    0..SEED_MAX, so a top-of-range seed still seeds every agent it derives."""
    return int(value) % (SEED_MAX + 1)
