"""`mendikot bench` measures what it says (structure only: speed is never asserted)."""

from __future__ import annotations

import shutil

import pytest

from mendikot_env.cli import main
from mendikot_env.commands import bench, bench_instructions
from mendikot_env.commands.bench import core_rate, training_rate, update_rate
from mendikot_env.rules import Rules


def test_core_rate_counts_whole_hands_and_their_plays() -> None:
    hands, plays = core_rate(Rules(), batch=8, seconds=0.05, observe=True)
    assert hands > 0 and plays == pytest.approx(52 * hands)  # every hand is 52 card plays


def test_bench_prints_connect_four_in_the_same_loop_and_the_ratio(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(bench, "core_rate", lambda *args: (1.0, 52.0))
    stepped = []

    def fake_rate(env, seconds: float) -> float:
        stepped.append(str(env))
        return 2000.0 if "connect_four" in str(env) else 2200.0

    monkeypatch.setattr(bench, "aec_env_rate", fake_rate)
    assert main(["bench", "--batch-sizes", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert stepped == ["mendikot_v0", "mendikot_v0", "connect_four_v3"]
    assert lines[-2].startswith("PettingZoo connect_four_v3") and lines[-2].endswith("2,000 steps/s")
    assert lines[-1] == "wrapped env() / connect_four_v3: 1.10x the steps per second"


def test_aec_env_rate_steps_connect_four_in_the_same_loop() -> None:
    assert bench.aec_env_rate(bench_instructions.connect_four(), seconds=0.05) > 0


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


# ------------------------------------------------------------------ --instructions


def test_replay_plays_the_same_planned_hands_through_every_measure() -> None:
    rules = Rules()
    for measure in ("core", "core+obs"):
        assert bench_instructions.replay(rules, measure, 3) == 3 * 52
    for measure in ("raw", "wrapped"):  # the raw env would raise on an action off the plan
        assert bench_instructions.replay(rules, measure, 3) == 3 * (52 + 4)  # + every agent's None step
    assert bench_instructions.replay(rules, "connect_four_v3", 3) > 3 * 8  # PettingZoo's, in the same loop
    band = Rules.preset("band")
    assert bench_instructions.replay(band, "core", 3) > 3 * 53  # the hide, and some asks


def test_instructions_per_step_subtracts_the_smaller_run() -> None:
    calls: list[int] = []

    def fake_count(rules: Rules, measure: str, hands: int) -> tuple[int, int]:
        calls.append(hands)
        return 1_000_000 + 700 * 56 * hands, 56 * hands

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bench_instructions, "count", fake_count)
        assert bench_instructions.instructions_per_step(Rules(), "raw", hands=4) == 700
    assert calls == [4, 8]


def test_a_failed_or_missing_valgrind_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    assert bench_instructions.parse_counts("steps 312\n", "==1== Collected : 123456\n", 0) == (123456, 312)
    failed = "==9== Callgrind\nTraceback (most recent call last):\nModuleNotFoundError: no module\n==9== Events : Ir\n"
    with pytest.raises(ChildProcessError) as error:
        bench_instructions.parse_counts("", failed, 1)
    assert str(error.value) == (
        "the callgrind run failed (exit status 1):\nTraceback (most recent call last):\nModuleNotFoundError: no module"
    )
    monkeypatch.setattr(bench_instructions.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="needs valgrind on the PATH"):
        bench_instructions.count(Rules(), "core", 1)
    # Both are OSErrors: the command prints one line and exits with status 2, no traceback.
    assert main(["bench", "--instructions"]) == 2
    assert "mendikot bench: error: --instructions needs valgrind on the PATH" in capsys.readouterr().err


def test_bench_instructions_prints_a_row_per_measure(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(bench, "instructions_per_step", lambda rules, measure: 1000.0 * len(measure))
    assert main(["bench", "--instructions", "--rules", "band"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "trump='band'" in lines[0] and "instructions/step" in lines[1]
    assert lines[2:-1] == [
        f"{label:<34}{1:>6}{1000 * len(measure):>26,}" for measure, label in bench_instructions.MEASURES.items()
    ]
    ratio = len("wrapped") / len("connect_four_v3")
    assert lines[-1] == f"wrapped env() / connect_four_v3: {ratio:.2f}x the instructions per step"
    with pytest.raises(SystemExit):  # one or the other: each replaces the timed table
        main(["bench", "--instructions", "--training"])
    assert "argument --training: not allowed with argument --instructions" in capsys.readouterr().err


def test_callgrind_counts_this_checkout_and_the_same_work_the_same(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real thing: two runs agree closely, and from a folder holding another (broken)
    mendikot_env the worker still measures this package, not that one."""
    if shutil.which("valgrind") is None:  # a machine without valgrind gets the clear error
        with pytest.raises(FileNotFoundError, match="needs valgrind"):
            bench_instructions.count(Rules(), "core", 1)
        return
    (tmp_path / "mendikot_env").mkdir()
    (tmp_path / "mendikot_env" / "__init__.py").write_text("raise ImportError('the wrong checkout')\n")
    monkeypatch.chdir(tmp_path)
    first, steps = bench_instructions.count(Rules(), "core", 1)
    again, steps_again = bench_instructions.count(Rules(), "core", 1)
    assert steps == steps_again == 52
    assert abs(first - again) < 0.001 * first


# ------------------------------------------------------------------ --search


def test_bench_search_prints_a_row_per_k_and_saves_the_plot(tmp_path, capsys) -> None:
    path = tmp_path / "search.png"
    assert main(["bench", "--search", "--k", "2", "4", "--deals", "2", "--plot", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "trump='cut'" in lines[0] and "against hard: 2 duplicate deal pairs per K" in lines[1]
    assert lines[2].split() == ["K", "win", "rate", "CI", "low", "CI", "high", "ms/decision", "deals"]
    rows = [line.split() for line in lines[3:5]]
    assert [row[0] for row in rows] == ["2", "4"] and [row[-1] for row in rows] == ["2", "2"]
    for row in rows:
        rate, low, high = (float(x.rstrip("%")) for x in row[1:4])
        assert 0 <= low <= rate <= high <= 100 and float(row[4]) > 0
    assert lines[5] == f"plot: {path}" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_search_refuses_a_missing_matplotlib_or_opponent_before_playing(monkeypatch, capsys) -> None:
    from mendikot_env.commands import bench_search

    monkeypatch.setattr(bench_search, "sweep", lambda *a, **k: pytest.fail("played before checking its input"))
    monkeypatch.setitem(__import__("sys").modules, "matplotlib.figure", None)
    assert main(["bench", "--search", "--plot", "out.png"]) == 2
    assert "mendikot bench: error: --plot needs matplotlib" in capsys.readouterr().err
    assert main(["bench", "--search", "--opponent", "nope"]) == 2
    assert "mendikot bench: error: unknown agent 'nope'" in capsys.readouterr().err


def test_bench_search_checks_its_plot_path_first_and_makes_a_missing_folder(tmp_path, monkeypatch, capsys) -> None:
    from mendikot_env.commands import bench_search

    row = bench_search.SearchRow(k=2, win_rate=0.5, ci_low=0.4, ci_high=0.6, ms_per_decision=1.0, deals=2)
    monkeypatch.setattr(bench_search, "sweep", lambda *a, **k: [row])
    assert main(["bench", "--search", "--k", "2", "--plot", str(tmp_path)]) == 2
    assert f"mendikot bench: error: --plot {tmp_path}: that is a folder; give a file name" in capsys.readouterr().err
    path = tmp_path / "missing" / "search.png"
    assert main(["bench", "--search", "--k", "2", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_search_refuses_a_k_over_the_limit_before_any_sweep(monkeypatch, capsys) -> None:
    from mendikot_env.commands import bench_search

    def no_sweep(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sweep ran before the bad K was refused")

    monkeypatch.setattr(bench_search, "sweep", no_sweep)
    assert main(["bench", "--search", "--k", "2", "5000"]) == 2
    assert "k='5000' must be an integer from 1 to 4096" in capsys.readouterr().err
