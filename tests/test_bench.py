"""`mendikot bench` measures what it says (structure only: speed is never asserted)."""

from __future__ import annotations

import pytest

from mendikot_env.commands.bench import core_rate, training_rate, update_rate
from mendikot_env.rules import Rules


def test_core_rate_counts_whole_hands_and_their_plays() -> None:
    hands, plays = core_rate(Rules(), batch=8, seconds=0.05, observe=True)
    assert hands > 0 and plays == pytest.approx(52 * hands)  # every hand is 52 card plays


def test_training_rate_splits_the_time_and_uses_the_pool_only_when_asked() -> None:
    self_play = training_rate(Rules(), seconds=0.01, pool=False)
    pooled = training_rate(Rules(), seconds=0.01, pool=True)
    for rates in (self_play, pooled):
        shares = [v for k, v in rates.items() if k.startswith("share ")]
        assert len(shares) == 4 and all(0.0 <= s <= 1.0 for s in shares) and sum(shares) <= 1.0
        assert rates["decisions/s"] >= rates["samples/s"] > 0
    # Pure self-play: every decision is a learner sample, and no bot time beyond its timer.
    assert self_play["decisions/s"] == self_play["samples/s"]
    assert self_play["share opponents"] < 0.01 < pooled["share opponents"]
    assert pooled["decisions/s"] > pooled["samples/s"]


def test_training_rate_runs_the_network_in_the_precision_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from mendikot_env.training import loop

    asked: list[str] = []
    real = loop.arithmetic
    monkeypatch.setattr(loop, "arithmetic", lambda args, device: asked.append(args.precision) or real(args, device))
    assert training_rate(Rules(), seconds=0.01, pool=False, precision="bfloat16")["samples/s"] > 0
    assert asked and set(asked) == {"bfloat16"}


def test_update_rate_steps_the_optimiser_over_collected_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    steps: list[int] = []
    real = torch.optim.Adam.step
    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, *a, **k: steps.append(1) or real(self, *a, **k))
    assert update_rate(Rules(), seconds=0.01) > 0
    assert len(steps) >= 2  # the warm-up pass and at least one timed pass, each of whole minibatches
