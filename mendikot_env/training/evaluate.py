"""Duplicate-arena evaluation of a network during training."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..arena import duplicate_arena
from ..rules import Rules

EVAL_SEED = 12345  # the same deals at every evaluation, so curves compare like with like


def evaluate_against(
    network: torch.nn.Module,
    rules: Rules,
    opponents: Sequence[str],
    deals: int,
    device: torch.device | str = "cpu",
    others: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Greedy play of ``network`` against each agent of ``opponents`` (what ``agents.load``
    takes: names, search specs, run folders), and each agent of ``others`` by the name its
    keys take (e.g. ``{"previous": agent}``): win rate and its 95% interval."""
    from agents import load
    from agents.neural import NeuralAgent

    learner = NeuralAgent(network, rules, greedy=True, device=device, name="learner")
    row: dict[str, float] = {}
    named = {name: load(name, rules, seed=EVAL_SEED) for name in opponents}
    for name, opponent in {**named, **(others or {})}.items():
        result = duplicate_arena(rules, learner, opponent, deals=deals, seed=EVAL_SEED)
        row[f"eval/win_rate_vs_{name}"] = result.win_rate
        row[f"eval/ci_low_vs_{name}"] = result.ci_low
        row[f"eval/ci_high_vs_{name}"] = result.ci_high
    return row
