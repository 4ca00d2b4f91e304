"""What a trained network may be built and run with, without importing torch.

The trainer's settings (``mendikot_env.training.args``) check their options against these
tuples when they are made, and ``mendikot train --help`` lists them, so this module stays
free of torch; :mod:`agents.network` builds the network itself.
"""

from __future__ import annotations

import contextlib

from .rule_based import LEVELS

PRECISIONS = ("float32", "bfloat16")  # the network's arithmetic (see Args.precision)
CRITICS = ("observation", "state")  # what the value may see (see Args.critic)
ADVISORS = ("none", *LEVELS)  # whose suggested move the network may see (see Args.advisor)


def precision_context(precision: str, device_type: str) -> contextlib.AbstractContextManager:
    """Where the network runs with ``precision`` (one of ``PRECISIONS``, checked by its
    caller): autocast to bfloat16, or no context at all for float32 (so float32 works on
    every device and torch, autocast or not)."""
    if precision == "float32":
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type, dtype=torch.bfloat16)
