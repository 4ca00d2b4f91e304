"""What a trained network may be built and run with, without importing torch.

The trainer's settings (``mendikot_env.training.args``) check their options against these
tuples when they are made, and ``mendikot train --help`` lists them, so this module stays
free of torch; :mod:`agents.network` builds the network itself.
"""

from __future__ import annotations

import contextlib
import math
import re

from mendikot_env.cards import NUM_SUITS

from .rule_based import LEVELS

PRECISIONS = ("float32", "bfloat16")  # the network's arithmetic (see Args.precision)
CRITICS = ("observation", "state")  # what the value may see (see Args.critic)
ADVISORS = ("none", *LEVELS)  # whose suggested move the network may see (see Args.advisor)
# What a network agent plays (NeuralAgent's views): its own policy, or the mean over all 24
# relabellings of the suits (agents.suit_symmetry); a spec asks with "apprentice:views=24".
SUIT_VIEWS = math.factorial(NUM_SUITS)  # 24: one view per order of the suits
VIEWS = (1, SUIT_VIEWS)
# ":views=N" at the end of a spec; N stops at a search spec's "," and an ensemble's "+".
_VIEWS_OPTION = re.compile(r"^(.*):\s*views\s*=\s*([^,+]*?)\s*$", re.IGNORECASE | re.DOTALL)


def split_views(spec: str) -> tuple[str, int]:
    """A trained network's spec without its ``:views=N`` ending, and N (1 where it has none).

    Raises:
        ValueError: an N that is not one of ``VIEWS``, naming the spec.
    """
    found = _VIEWS_OPTION.match(spec)
    if found is None:
        return spec, 1
    if found.group(2) not in {str(views) for views in VIEWS}:
        raise ValueError(
            f"agent spec {spec!r}: views={found.group(2)!r} must be 1 (the network alone) or {SUIT_VIEWS} "
            "(its policy averaged over every relabelling of the four suits)"
        )
    return found.group(1).strip(), int(found.group(2))


def precision_context(precision: str, device_type: str) -> contextlib.AbstractContextManager:
    """Where the network runs with ``precision`` (one of ``PRECISIONS``, checked by its
    caller): autocast to bfloat16, or no context at all for float32 (so float32 works on
    every device and torch, autocast or not)."""
    if precision == "float32":
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type, dtype=torch.bfloat16)
