"""Self-play training: smoke run, exact resume, crash-safe and checked checkpoints, agents."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.neural import NeuralAgent
from mendikot_env import Rules
from mendikot_env.arena import duplicate_arena
from mendikot_env.cli import main
from mendikot_env.run_folder import RunFolderInUseError
from mendikot_env.training.args import busy_cores_warning
from mendikot_env.training.checkpoint import CheckpointError, load_checkpoint, save_atomic
from mendikot_env.training.loop import Args, TrainingDivergedError, train
from mendikot_env.training.metrics import read_rows


def tiny_args(out: Path, **changes: object) -> Args:
    """A run small enough for CI: a few seconds per iteration on one core."""
    values: dict[str, object] = {
        "out": str(out),
        "games": 48,
        "hidden": (32,),
        "card_hidden": 8,
        "minibatch": 256,
        "imitate_iterations": 1,
        "teacher": "easy",
        "pool_bots": ("easy",),
        "snapshot_every": 2,
        "eval_deals": 16,
        "eval_opponents": ("random",),
        "eval_every_minutes": 1000.0,
        "checkpoint_every_minutes": 1000.0,
        "progress": False,
        "threads": 1,
        "max_iterations": 3,
    }
    values.update(changes)
    return Args(**values)  # type: ignore[arg-type]


def metric_rows(run: Path) -> list[dict[str, object]]:
    """The rows a run wrote to its metrics.jsonl, in order."""
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def weights(run: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(run / "checkpoint.pt", kind="training")["model"]


def test_train_writes_checkpoint_metrics_plot_and_agent(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run"))
    state = load_checkpoint(run / "checkpoint.pt", kind="training")
    assert state["counters"]["iteration"] == 3
    assert state["counters"]["samples"] > 0
    assert len(state["pool"]) == 1  # one snapshot at iteration 2
    rows = metric_rows(run)
    assert any("eval/win_rate_vs_random" in row for row in rows)
    assert any("losses/policy" in row and "charts/samples_per_s" in row for row in rows)
    assert (run / "metrics.csv").read_text().startswith("charts/")
    assert (run / "learning_curve.png").stat().st_size > 1000
    assert list((run / "tb").iterdir()), "TensorBoard events are written"
    assert load_checkpoint(run / "agent.pt", kind="agent")["kind"] == "agent"


def test_resume_continues_exactly(tmp_path: Path) -> None:
    straight = train(tiny_args(tmp_path / "straight", max_iterations=3))
    interrupted = train(tiny_args(tmp_path / "resumed", max_iterations=2))
    assert load_checkpoint(interrupted / "checkpoint.pt")["counters"]["iteration"] == 2
    resumed = train(tiny_args(tmp_path / "resumed", max_iterations=3), resume=True)
    a = load_checkpoint(straight / "checkpoint.pt")
    b = load_checkpoint(resumed / "checkpoint.pt")
    for key in ("iteration", "samples", "hands", "decisions"):
        assert a["counters"][key] == b["counters"][key], key
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"weights differ after resume: {name}"
    assert len(a["pool"]) == len(b["pool"])


def test_resume_with_other_rules_is_refused(tmp_path: Path) -> None:
    train(tiny_args(tmp_path / "run", max_iterations=1))
    with pytest.raises(CheckpointError, match="trained on rules"):
        train(tiny_args(tmp_path / "run", rules="band", max_iterations=2), resume=True)


def test_a_failed_write_never_replaces_a_good_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.pt"
    good = {"kind": "training", "rules": Rules().to_dict(), "network": {}, "model": {"w": torch.ones(3)}}
    save_atomic(good, path)

    def dies_half_way(obj: object, file: object) -> None:
        file.write(b"half a checkpoint")  # type: ignore[attr-defined]
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(torch, "save", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        save_atomic({**good, "model": {"w": torch.zeros(3)}}, path)
    monkeypatch.undo()
    assert torch.equal(load_checkpoint(path)["model"]["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"], "no temporary file is left behind"


def test_a_process_killed_while_writing_leaves_a_loadable_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    writer = (
        "import sys, torch\n"
        "from mendikot_env.training.checkpoint import save_atomic\n"
        "i = 0\n"
        "while True:\n"
        "    i += 1\n"
        "    model = {'w': torch.full((400_000,), float(i))}\n"
        f"    save_atomic({{'kind': 'training', 'rules': {{}}, 'network': {{}}, 'model': model}}, {str(path)!r})\n"
    )
    process = subprocess.Popen([sys.executable, "-c", writer])
    try:
        deadline = time.time() + 60
        while not path.exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    w = load_checkpoint(path)["model"]["w"]
    assert torch.all(w == w[0]), "the checkpoint is one complete write"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not a readable mendikot checkpoint"),
        (b"\x00garbage\xff" * 100, "not a readable mendikot checkpoint"),
        ("foreign", "not a mendikot checkpoint"),
        ("old_version", "checkpoint version"),
        ("missing_keys", "lacks"),
    ],
)
def test_corrupt_or_foreign_checkpoints_fail_clearly(tmp_path: Path, content: object, message: str) -> None:
    path = tmp_path / "bad.pt"
    if content == "foreign":
        torch.save({"state_dict": {"w": torch.ones(2)}}, path)
    elif content == "old_version":
        torch.save({"format": "mendikot-checkpoint", "version": 0}, path)
    elif content == "missing_keys":
        torch.save({"format": "mendikot-checkpoint", "version": 1, "kind": "agent"}, path)
    else:
        path.write_bytes(content)  # type: ignore[arg-type]
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
    with pytest.raises(ValueError, match=message):
        agents.load(str(path))


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("model a list", "has a malformed 'model': it is of type list, where a checkpoint holds a dict"),
        ("network a list", "has a malformed 'network': it is of type list, where a checkpoint holds a dict"),
        ("rules a list", "has a malformed 'rules': it is of type list, where a checkpoint holds a dict"),
        ("a weight a number", "'model': its entry '.*' is of type int, where a model maps parameter names to tensors"),
        ("a weight NaN", r"holds NaN or infinite weights in '.*' \(a diverged network\); it cannot play or resume"),
    ],
)
def test_a_checkpoint_with_malformed_entries_is_refused_naming_them(tmp_path: Path, how: str, message: str) -> None:
    """An agent file whose entries have the wrong types (a hand edit, another tool) fails when
    loaded with its name and the entry, not with an AttributeError from the loader."""
    from agents.registry import SHIPPED_AGENTS

    payload = load_checkpoint(SHIPPED_AGENTS["standard"], kind="agent")
    if how == "a weight a number":
        payload["model"][next(iter(payload["model"]))] = 3
    elif how == "a weight NaN":
        payload["model"][next(iter(payload["model"]))].view(-1)[5] = float("nan")
    else:
        key = how.removesuffix(" a list")
        payload[key] = list(payload[key])
    path = tmp_path / "agent.pt"
    torch.save(payload, path)
    for load in (load_checkpoint, agents.load):
        with pytest.raises(CheckpointError, match=message) as caught:
            load(str(path))
        assert str(caught.value).startswith(str(path))


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("an agent file", r"is a 'agent' checkpoint, expected 'training'$"),
        ("no counters", r"lacks \['counters'\]; it cannot resume a training run$"),
        ("counters without samples", r"has counters without \['samples'\]; it cannot resume a training run$"),
        ("a damaged archive", r"is not a readable mendikot checkpoint \(corrupt archive: "),
    ],
)
def test_a_checkpoint_that_cannot_resume_is_refused_naming_why(tmp_path: Path, how: str, message: str) -> None:
    from agents.checkpoint_format import COUNTERS
    from agents.registry import SHIPPED_AGENTS

    payload = load_checkpoint(SHIPPED_AGENTS["standard"], kind="agent")
    if how != "an agent file":
        counters = {key: 0 for key in COUNTERS if how != "counters without samples" or key != "samples"}
        extra = {"optimizer": {}, "numpy_rng": {}, "torch_rng": torch.zeros(1), "torch_global_rng": torch.zeros(1)}
        payload.update(kind="training", **extra, counters=counters, pool=[], args={})
        if how == "no counters":
            del payload["counters"]
    path = tmp_path / "checkpoint.pt"
    torch.save(payload, path)
    if how == "a damaged archive":  # the central directory's first entry, not its end record
        data = path.read_bytes()
        path.write_bytes(data.replace(b"PK\x01\x02", b"PK\x00\x00", 1))
    with pytest.raises(CheckpointError, match=message) as caught:
        load_checkpoint(path, kind="training")
    assert str(caught.value).startswith(str(path))


class _RunsACommand:
    """Unpickled, it would run a shell command: what weights_only loading must refuse."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo unpickled",))


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (pickle.dumps({"model": object}, protocol=2), ["more than tensors and plain data", "object"]),
        (pickle.dumps({"model": _RunsACommand()}, protocol=2), ["more than tensors and plain data", "system"]),
        (b"garbage\n", ["not a file torch.save wrote", "damaged, or another kind of file"]),
    ],
    ids=["a-class", "a-shell-command", "not-a-pickle"],
)
def test_a_foreign_file_is_refused_without_advice_to_unpickle_it(
    tmp_path: Path, content: bytes, words: list[str]
) -> None:
    path = tmp_path / "foreign.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert message.startswith(f"{path} is not a readable mendikot checkpoint (corrupt or foreign file): ")
    assert all(word in message for word in words), message
    for advice in ("weights_only", "safe_globals", "Please", "trust", "\n"):  # torch's advice is left out
        assert advice not in message, message


def test_truncated_checkpoint_fails_clearly(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", max_iterations=1))
    data = (run / "agent.pt").read_bytes()
    broken = tmp_path / "truncated.pt"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated.pt"):
        agents.load(str(broken))


def test_missing_checkpoint_and_bad_args_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        agents.load(str(tmp_path / "nope.pt"))
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train(tiny_args(tmp_path / "empty"), resume=True)
    with pytest.raises(ValueError, match="unknown rules preset"):
        Args(rules="nonsense")
    with pytest.raises(ValueError, match="algorithm"):
        Args(algorithm="dqn")
    with pytest.raises(ValueError, match="pool_share"):
        Args(pool_share=1.5)
    with pytest.raises(ValueError, match="critic 'oracle' is not allowed"):
        Args(critic="oracle")
    with pytest.raises(ValueError, match="needs algorithm 'ppo'"):
        Args(critic="state", algorithm="dmc")
    with pytest.raises(ValueError, match="precision 'half' is not allowed"):
        Args(precision="half")


def test_loaded_agent_plays_only_legal_actions_in_every_seat(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", rules="band", max_iterations=1))
    agent = agents.load(str(run))
    assert isinstance(agent, NeuralAgent)
    rules = Rules.preset("band")
    # The arena raises AgentError on any illegal action; 200 deal pairs = 400 hands.
    result = duplicate_arena(rules, agent, agents.make("random", rules, seed=1), deals=200, seed=3)
    assert result.hands == 400
    with pytest.raises(ValueError, match="trained for"):
        agents.load(str(run), Rules())


def test_dmc_algorithm_trains(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", algorithm="dmc", imitate_iterations=0, max_iterations=2))
    assert load_checkpoint(run / "checkpoint.pt")["network"]["algorithm"] == "dmc"


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_shipped_agent_beats_random_clearly(preset: str) -> None:
    rules = Rules.preset(preset)
    trained = agents.make("trained", rules)
    result = duplicate_arena(rules, trained, agents.make("random", rules, seed=7), deals=300, seed=11)
    assert result.ci_low > 0.6, result.summary()


def test_train_command_line_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    common = [
        "--games", "32", "--hidden", "16", "--card-hidden", "8", "--minibatch", "128", "--pool-bots", "easy",
        "--teacher", "easy", "--eval-deals", "8", "--eval-opponents", "random", "--threads", "1", "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, "-m", "mendikot_env.cli", "train", "--out", str(out), "--max-iterations", "1", *common]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "vs random" in done.stdout
    resume = [sys.executable, "-m", "mendikot_env.cli", "train", "--resume", str(out), "--max-iterations", "2"]
    done = subprocess.run(resume, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert load_checkpoint(out / "checkpoint.pt")["counters"]["iteration"] == 2
    bad = subprocess.run([*cmd[:4], "--rules", "nonsense"], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "unknown rules preset" in bad.stderr
    # A new run into the run's folder is refused with the ways on; the run is left as it was.
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 2 and f"{out} already holds a run (checkpoint.pt, agent.pt" in again.stderr
    assert f"continue it with `mendikot train --resume {out}`" in again.stderr and "--overwrite" in again.stderr
    assert load_checkpoint(out / "checkpoint.pt")["counters"]["iteration"] == 2
    both = subprocess.run([*resume, "--overwrite"], capture_output=True, text=True, env=env, timeout=120)
    assert both.returncode == 2 and "not allowed with argument --resume" in both.stderr


def test_a_busy_machine_gets_a_thread_count_to_ask_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warning = busy_cores_warning(2, load=1.2, cores=2)
    assert warning is not None and "(1.2 on 2 cores) leaves about 1 free" in warning and "--threads 1" in warning
    assert busy_cores_warning(2, load=0.3, cores=2) is None and busy_cores_warning(1, load=7.0, cores=2) is None
    assert "--threads 5" in str(busy_cores_warning(16, load=11.4, cores=16))
    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    threads = torch.get_num_threads()
    try:
        expect = pytest.warns(UserWarning, match="pass --threads 1") if threads > 1 else contextlib.nullcontext()
        with expect:
            train(tiny_args(tmp_path / "default", threads=0, max_iterations=1))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a thread count asked for is not warned about
            train(tiny_args(tmp_path / "asked", threads=threads, max_iterations=1))
    finally:
        torch.set_num_threads(threads)


def test_any_rules_variant_trains_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "six"
    tiny = [
        "--games", "32", "--hidden", "16", "--card-hidden", "8", "--minibatch", "128", "--pool-bots", "easy",
        "--teacher", "easy", "--eval-deals", "8", "--eval-opponents", "random", "--threads", "1", "--no-progress",
        "--imitate-iterations", "1", "--max-iterations", "1",
    ]  # fmt: skip
    command = ["train", "--out", str(out), "--rules", "band", "--n-players", "6", "--reveal", "auto", *tiny]
    assert main(command) == 0
    six_auto = Rules.preset("band", n_players=6, reveal="auto")
    assert agents.load(str(out)).rules == six_auto
    assert load_checkpoint(out / "checkpoint.pt")["args"]["rule_fields"] == {"n_players": 6, "reveal": "auto"}
    # A resume keeps the run's fields; changing one is refused, naming both rule sets in full.
    assert main(["train", "--resume", str(out), "--max-iterations", "2"]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--n-players", "8"]) == 2
    error = capsys.readouterr().err
    assert "trained on rules {'n_players': 6, 'trump': 'band', 'reveal': 'auto'" in error
    assert "not Rules(n_players=8, trump='band', reveal='auto'" in error  # the run's other fields kept
    with pytest.raises(ValueError, match="Rules.n_players = 5 is not allowed"):
        Args(rule_fields={"n_players": 5})
    with pytest.raises(ValueError, match=r"unknown Rules field\(s\) \['players'\]"):
        Args(rule_fields={"players": 6})
    numpy_fields = Args(rule_fields={"n_players": np.int64(6), "trump": np.str_("open")}).rule_fields
    assert numpy_fields == {"n_players": 6, "trump": "open"}  # stored as Rules stores them:
    assert type(numpy_fields["n_players"]) is int and type(numpy_fields["trump"]) is str
    with pytest.raises(ValueError, match="Args.rule_fields must be a dict"):
        Args(rule_fields=[("n_players", 6)])  # type: ignore[arg-type]


def test_overwrite_deletes_only_the_old_runs_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny_args(out, max_iterations=2))
    (out / "notes.txt").write_text("mine")
    old_events = list((out / "tb").iterdir())
    with pytest.raises(RunFolderInUseError, match="already holds a run"):
        train(tiny_args(out, max_iterations=1))
    with pytest.raises(ValueError, match="resume and overwrite exclude each other"):
        train(tiny_args(out, max_iterations=3), resume=True, overwrite=True)
    train(tiny_args(out, max_iterations=1), overwrite=True)
    assert load_checkpoint(out / "checkpoint.pt")["counters"]["iteration"] == 1
    assert {row["iteration"] for row in read_rows(out / "metrics.jsonl")} == {1}  # no old rows mixed in
    assert not set(old_events) & set((out / "tb").iterdir()) and (out / "notes.txt").read_text() == "mine"
    # --overwrite deletes only once every other setting is good: a mistyped agent keeps the run.
    kept = sorted(out.iterdir())
    for change, option in [({"teacher": "hrad"}, "--teacher"), ({"pool_bots": ("easy", "hrad")}, "--pool-bots")]:
        with pytest.raises(ValueError, match=rf"{option} \(Args\.\w+\): unknown agent 'hrad'; known agents: random, "):
            train(tiny_args(out, **change), overwrite=True)
        assert sorted(out.iterdir()) == kept and load_checkpoint(out / "checkpoint.pt")["counters"]["iteration"] == 1
    (tmp_path / "file").write_text("")
    with pytest.raises(RunFolderInUseError, match="is a file; give --out a folder"):
        train(tiny_args(tmp_path / "file", max_iterations=1))
    # A run stopped before its first checkpoint left only tb/: no resume to offer.
    (tmp_path / "early" / "tb").mkdir(parents=True)
    with pytest.raises(RunFolderInUseError) as refused:
        train(tiny_args(tmp_path / "early", max_iterations=1))
    assert str(refused.value) == (
        f"{tmp_path / 'early'} already holds a run (tb); start over with --overwrite (deletes those files),"
        " or give another --out"
    )


def test_neural_agent_sampling_is_seeded() -> None:
    rules = Rules()
    from mendikot_env.training.loop import Network

    network = Network(rules, (16,), 8).eval()
    obs = np.random.default_rng(0).random((64, network.obs_size), dtype=np.float32)
    masks = np.ones((64, 53), dtype=bool)
    first = NeuralAgent(network, rules, greedy=False, seed=5).act(obs, masks)
    second = NeuralAgent(network, rules, greedy=False, seed=5).act(obs, masks)
    assert np.array_equal(first, second)


def test_duplicate_baseline_cancels_the_cards_when_the_learner_plays_like_the_bot() -> None:
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training.selfplay import LEARNER, CollectConfig, collect_hands

    rules = Rules()
    bot = agents.RuleBasedAgent(rules, "medium")  # no seed: deterministic tie-breaks
    twin = agents.RuleBasedAgent(rules, "medium")

    def policy(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)
        return twin.act(observations, masks), zeros, zeros

    common = {"pool_share": 1.0, "gamma": 1.0, "gae_lambda": 1.0, "tens_reward": 0.0}
    encoder = ObservationEncoder(rules)
    samples, stats = collect_hands(
        rules, policy, [bot], np.random.default_rng(4), encoder, CollectConfig(64, duplicate=1, **common)
    )
    assert stats.pool_hands == 64 and LEARNER == 0
    assert np.all(samples.outcomes == 0.0), "same cards, same play: the duplicate reward is exactly zero"
    plain, _ = collect_hands(
        rules, policy, [bot], np.random.default_rng(4), encoder, CollectConfig(64, duplicate=0, **common)
    )
    assert np.any(plain.outcomes != 0.0), "without the baseline the cards decide the reward"


def test_hidden_trump_feature_marks_the_hiders_face_down_suit_only() -> None:
    from mendikot_env import core
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training.loop import Network

    rules = Rules.preset("band")
    state = core.new_hands(rules, 16, rng=3)
    hide = core.legal_bits(state)
    core.step(state, core.random_legal_actions(hide, np.random.default_rng(0)))  # each game hides a card
    encoder = ObservationEncoder(rules)
    network = Network(rules, (16,), 8, hidden_trump_feature=True)
    old_style = Network(rules, (16,), 8)
    for offset in range(4):
        seats = (state.hider + offset) % 4
        obs = torch.from_numpy(encoder.encode(state, seats))
        features = network.suit_features(obs)
        expected = np.zeros((16, 4), dtype=np.float32)
        if offset == 0:  # only the hider knows the suit
            expected[np.arange(16), state.face_down // 13] = 1.0
        assert np.array_equal(features[:, :, -1].numpy(), expected)
        assert torch.equal(features[:, :, :-1], old_style.suit_features(obs))


def test_resume_of_a_run_saved_before_the_hidden_trump_feature(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "old", rules="band", hidden_trump_feature=False, max_iterations=2))
    state = load_checkpoint(run / "checkpoint.pt", kind="training")
    for key in ("hidden_trump_feature", "advisor", "advisor_level"):  # as written before they existed
        del state["network"][key]
    for key in ("hidden_trump_feature", "advisor"):
        del state["args"][key]
    save_atomic(state, run / "checkpoint.pt")
    # Args() now defaults to the feature; the run's own network is what resumes, with a warning.
    with pytest.warns(UserWarning, match="keeps its network"):
        resumed = train(tiny_args(tmp_path / "old", rules="band", max_iterations=3), resume=True)
    after = load_checkpoint(resumed / "checkpoint.pt", kind="training")
    assert after["counters"]["iteration"] == 3
    assert after["network"]["hidden_trump_feature"] is False
    assert agents.load(resumed).network.hidden_trump_feature is False
    fresh = train(tiny_args(tmp_path / "new", rules="band", max_iterations=1))
    assert agents.load(fresh).network.hidden_trump_feature is True


def test_centralised_critic_is_given_every_hand_of_the_acting_seat() -> None:
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training.selfplay import CollectConfig, collect_hands

    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    bot = agents.RuleBasedAgent(rules, "medium")
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def policy(
        observations: np.ndarray, masks: np.ndarray, hidden_cards: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert hidden_cards is not None and hidden_cards.shape == (len(observations), 5 * 52)
        seen.append((observations, hidden_cards))
        values = hidden_cards[:, :52].sum(axis=1)  # a "critic" that counts my cards
        return bot.act(observations, masks), np.zeros(len(observations), dtype=np.float32), values

    common = {"pool_share": 0.5, "gamma": 1.0, "gae_lambda": 1.0}
    samples, _ = collect_hands(
        rules, policy, [bot], np.random.default_rng(2), encoder, CollectConfig(32, centralised=True, **common)
    )
    layout = encoder.layout
    for observations, hidden in seen:
        cards = hidden.reshape(-1, 5, 52)
        assert np.array_equal(cards[:, 0], layout.view(observations, "hand")), "relative seat 0 is the acting seat"
        # Every card of the pack is in exactly one place: a hand, face down, or played.
        everywhere = cards.sum(axis=1) + layout.view(observations, "played").sum(axis=1)
        assert np.array_equal(everywhere, np.ones_like(everywhere))
    assert np.array_equal(samples.hidden_cards, np.concatenate([h for _, h in seen]))
    assert np.array_equal(samples.values, samples.hidden_cards[:, :52].sum(axis=1)), "values come from the critic"
    plain, _ = collect_hands(
        rules, policy_without_critic(bot), [bot], np.random.default_rng(2), encoder, CollectConfig(8, **common)
    )
    assert plain.hidden_cards is None


def policy_without_critic(bot: object):  # noqa: ANN201
    def policy(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)  # two arguments: no hidden cards
        return bot.act(observations, masks), zeros, zeros

    return policy


def test_training_policy_takes_its_values_from_the_centralised_critic() -> None:
    from mendikot_env.training.loop import Network, make_policy

    rules = Rules.preset("band")
    network = Network(rules, (16,), 8, critic="state").eval()
    rng = np.random.default_rng(0)
    obs = rng.random((8, network.obs_size), dtype=np.float32)
    hidden = (rng.random((8, 5 * 52)) < 0.2).astype(np.float32)
    masks = np.ones((8, 53), dtype=bool)
    policy = make_policy(network, torch.device("cpu"), torch.Generator().manual_seed(0), Args(critic="state"))
    _, _, values = policy(obs, masks, hidden)
    with torch.no_grad():
        expected = network.critic_value(torch.from_numpy(obs), torch.from_numpy(hidden)).numpy()
        head = network(torch.from_numpy(obs), torch.from_numpy(masks))[1].numpy()
    assert np.allclose(values, expected) and not np.allclose(values, head)
    with pytest.raises(ValueError, match="critic 'oracle' is not allowed"):
        Network(rules, (16,), 8, critic="oracle")


def run_straight_and_resumed(tmp_path: Path, **changes: object) -> tuple[Path, dict]:
    """Train 3 iterations straight and 2 + 1 with a resume; check they end bit for bit alike.
    Returns the straight run's folder and its checkpoint."""
    straight = train(tiny_args(tmp_path / "straight", max_iterations=3, **changes))
    train(tiny_args(tmp_path / "resumed", max_iterations=2, **changes))
    resumed = train(tiny_args(tmp_path / "resumed", max_iterations=3, **changes), resume=True)
    a, b = load_checkpoint(straight / "checkpoint.pt"), load_checkpoint(resumed / "checkpoint.pt")
    assert a["counters"] == {**b["counters"], "seconds": a["counters"]["seconds"]}
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"weights differ after resume: {name}"
    return straight, a


def test_a_resume_asking_for_another_advisor_keeps_the_runs_teacher(tmp_path: Path) -> None:
    """The teacher that is also the advisor plays without a seed; a resume keeps the run's
    advisor, so its teacher must stay unseeded too, or the warm start would change."""
    changes = {"advisor": "easy", "teacher": "easy", "imitate_iterations": 3}
    straight = train(tiny_args(tmp_path / "straight", **changes))
    train(tiny_args(tmp_path / "resumed", max_iterations=2, **changes))
    with pytest.warns(UserWarning, match="keeps its network"):
        resumed = train(tiny_args(tmp_path / "resumed", **{**changes, "advisor": "none"}), resume=True)
    a, b = load_checkpoint(straight / "checkpoint.pt"), load_checkpoint(resumed / "checkpoint.pt")
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"weights differ after resume: {name}"


def test_a_resume_with_other_bots_starts_their_generators_afresh(tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(tiny_args(run, max_iterations=1))
    with pytest.warns(UserWarning, match=r"with other bots \(now \[\('easy', 0\), \('medium', 1\), \('easy', 0\)\]"):
        train(tiny_args(run, max_iterations=2, pool_bots=("easy", "medium")), resume=True)
    assert load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 2


def test_a_resume_changing_what_builds_no_bot_keeps_the_bots_generators(tmp_path: Path) -> None:
    """Without a warm start no teacher is made, so another --teacher changes no bot: the
    pool's bots go on with their generators and the run ends as the straight one does."""
    changes = {"imitate_iterations": 0, "pool_bots": ("random",), "pool_share": 1.0}
    straight = train(tiny_args(tmp_path / "straight", **changes))
    train(tiny_args(tmp_path / "resumed", max_iterations=1, **changes))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = train(tiny_args(tmp_path / "resumed", teacher="medium", **changes), resume=True)
    a, b = load_checkpoint(straight / "checkpoint.pt"), load_checkpoint(resumed / "checkpoint.pt")
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"weights differ after resume: {name}"


def test_centralised_critic_trains_resumes_exactly_and_stays_out_of_the_agent(tmp_path: Path) -> None:
    straight, a = run_straight_and_resumed(tmp_path, rules="band", critic="state")
    assert a["network"]["critic"] == "state" and any(k.startswith("critic.") for k in a["model"])
    from mendikot_env.training.loop import build_network

    torch.manual_seed(0)  # the run's seed: its initial weights
    initial = build_network(Rules.preset("band"), a["network"]).state_dict()
    assert not torch.equal(initial["critic.0.weight"], a["model"]["critic.0.weight"]), "the critic is trained"
    assert torch.equal(initial["value.weight"], a["model"]["value.weight"]), "the observation value head is unused"
    assert not any(k.startswith("critic.") for snapshot in a["pool"] for k in snapshot), "snapshots only play"
    exported = load_checkpoint(straight / "agent.pt", kind="agent")
    assert exported["network"]["critic"] == "observation" and exported["network"]["value_head_trained"] is False
    assert not any(k.startswith("critic.") for k in exported["model"]), "the critic sees hidden cards: never exported"
    rules = Rules.preset("band")
    result = duplicate_arena(rules, agents.load(straight), agents.make("random", rules, seed=1), deals=50, seed=3)
    assert result.hands == 100


def advice_following_network(rules: Rules) -> torch.nn.Module:
    """An advised network whose weights do nothing but follow the advice: the advised card
    plane and the advised ask feed a logit of 10, everything else 0."""
    from mendikot_env.training.loop import Network

    network = Network(rules, (16,), 8, advisor="hard").eval()
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.zero_()
        network.from_planes.weight[0, -1] = 10.0  # the advice plane: the last card plane
        network.card_out[1].weight[0, 0] = 1.0
        network.card_out[3].weight[0, 0] = 1.0
        network.torso[0].weight[0, -1] = 1.0  # the advised ask: the last input
        network.ask.weight[0, 0] = 10.0
    return network


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_an_advised_agent_computes_the_advice_from_the_observation_it_is_given(preset: str) -> None:
    from mendikot_env import core
    from mendikot_env.observation import ObservationEncoder

    rules = Rules.preset(preset)
    encoder = ObservationEncoder(rules)
    hard, noise = agents.RuleBasedAgent(rules, "hard"), agents.RandomAgent(seed=1)
    follower = NeuralAgent(advice_following_network(rules), rules)
    state, rng, asked = core.new_hands(rules, 64, rng=0), np.random.default_rng(1), 0
    while (live := np.flatnonzero(state.phase != core.OVER)).size:
        obs = encoder.encode(state, np.maximum(state.current, 0))[live]
        masks = core.legal_action_mask(state)[live]
        expected = hard.act(obs, masks)
        assert np.array_equal(follower.act(obs, masks), expected), "the agent plays exactly the advice"
        asked += int(np.count_nonzero(expected == 52))
        actions = np.zeros(state.batch_size, dtype=np.int64)  # half hard, half random: varied states
        actions[live] = np.where(rng.random(live.size) < 0.5, expected, noise.act(obs, masks))
        core.step(state, actions, check=False)
    assert preset == "standard" or asked > 0, "band games ask for the trump, and the ask is followed too"


def test_collection_keeps_the_advised_input_and_opponents_see_plain_observations() -> None:
    from agents.neural import make_advisor, with_advice
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training.selfplay import CollectConfig, collect_hands

    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    bot, advisor = agents.RuleBasedAgent(rules, "medium"), make_advisor("hard", rules)
    given: list[np.ndarray] = []

    def policy(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        given.append(observations)
        zeros = np.zeros(len(observations), dtype=np.float32)
        return bot.act(observations[:, : encoder.size], masks), zeros, zeros

    samples, _ = collect_hands(
        rules, policy, [bot], np.random.default_rng(2), encoder, CollectConfig(
            32, pool_share=0.5, gamma=1.0, gae_lambda=1.0, advise=lambda obs, masks: with_advice(advisor, obs, masks)
        ),
    )  # fmt: skip
    assert samples.observations.shape[1] == encoder.size + 53
    assert np.array_equal(samples.observations, np.concatenate(given))
    plain, advice = samples.observations[:, : encoder.size], samples.observations[:, encoder.size :]
    assert np.array_equal(advice.sum(axis=1), np.ones(len(samples))), "one advised action per decision"
    assert np.array_equal(advice.argmax(axis=1), advisor.act(plain, samples.masks))


@pytest.mark.parametrize(
    "changes", [{}, {"critic": "state"}, {"algorithm": "dmc", "imitate_iterations": 0}], ids=["ppo", "critic", "dmc"]
)
def test_an_advised_run_resumes_exactly_and_its_agent_brings_its_advisor(tmp_path: Path, changes: dict) -> None:
    straight, a = run_straight_and_resumed(tmp_path, rules="band", advisor="hard", **changes)
    rules = Rules.preset("band")
    hard = agents.RuleBasedAgent(rules, "hard")
    assert a["network"]["advisor"] == "hard" and a["network"]["advisor_level"] == asdict(hard.spec)
    exported = load_checkpoint(straight / "agent.pt", kind="agent")["network"]
    assert exported["advisor"] == "hard" and exported["advisor_level"] == asdict(hard.spec)
    agent = agents.load(straight)
    assert agent.advisor.spec == hard.spec and agent.network.obs_size == hard.layout.size + 53
    result = duplicate_arena(rules, agent, agents.make("random", rules, seed=1), deals=50, seed=3)
    assert result.hands == 100


def test_an_advised_network_keeps_the_bot_it_was_trained_with(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", rules="band", advisor="hard", max_iterations=1))
    for name, kind in (("agent.pt", "agent"), ("checkpoint.pt", "training")):
        payload = load_checkpoint(run / name, kind=kind)
        payload["network"]["advisor_level"]["hide"] = "low"  # as if hard hid low cards when it was trained
        save_atomic(payload, run / name)
    assert agents.load(run).advisor.spec.hide == "low", "the saved level, not today's hard"
    with pytest.warns(UserWarning, match="keeps its network"):
        resumed = train(tiny_args(tmp_path / "run", rules="band", advisor="medium", max_iterations=2), resume=True)
    network = load_checkpoint(resumed / "checkpoint.pt", kind="training")["network"]
    assert network["advisor"] == "hard" and network["advisor_level"]["hide"] == "low"
    payload = load_checkpoint(run / "agent.pt", kind="agent")
    payload["network"]["advisor_level"] = {"hide": "low", "bluff": 1}  # corrupt: not a Level
    save_atomic(payload, run / "agent.pt")
    with pytest.raises(CheckpointError, match="advisor level .* is not a Level; its fields are"):
        agents.load(run)
    with pytest.raises(ValueError, match="advisor 'oracle' is not allowed"):
        Args(advisor="oracle")
    from mendikot_env.training.loop import Network

    with pytest.raises(ValueError, match="advisor 'oracle' is not allowed"):
        Network(Rules.preset("band"), (16,), 8, advisor="oracle")


def test_annealed_learning_rate_falls_linearly_to_zero_over_the_iterations(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", anneal_lr=True, learning_rate=3e-3, max_iterations=4))
    rates = [row["charts/learning_rate"] for row in metric_rows(run) if "charts/learning_rate" in row]
    assert rates == pytest.approx([3e-3, 2.25e-3, 1.5e-3, 0.75e-3])
    flat = train(tiny_args(tmp_path / "flat", learning_rate=3e-3, max_iterations=2))
    rates = [row["charts/learning_rate"] for row in metric_rows(flat) if "charts/learning_rate" in row]
    assert rates == [3e-3, 3e-3]


def test_annealing_over_minutes_follows_the_time_spent() -> None:
    from mendikot_env.training.loop import learning_rate

    args = Args(anneal_lr=True, learning_rate=1e-3, minutes=10.0)
    assert learning_rate(args, {"iteration": 0, "seconds": 0.0}) == pytest.approx(1e-3)
    assert learning_rate(args, {"iteration": 50, "seconds": 150.0}) == pytest.approx(0.75e-3)
    assert learning_rate(args, {"iteration": 99, "seconds": 700.0}) == 0.0
    assert learning_rate(Args(learning_rate=1e-3, minutes=10.0), {"iteration": 9, "seconds": 599.0}) == 1e-3


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_skipping_forced_decisions_drops_exactly_their_samples(preset: str) -> None:
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training.selfplay import CollectConfig, collect_hands

    rules = Rules.preset(preset)
    bot = agents.RuleBasedAgent(rules, "medium")  # deterministic: both collections play the same hands

    def lowest_legal(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)
        return masks.argmax(axis=1), zeros, zeros

    common = {"pool_share": 0.5, "gamma": 1.0, "gae_lambda": 1.0, "tens_reward": 0.2}
    encoder = ObservationEncoder(rules)
    full, full_stats = collect_hands(
        rules, lowest_legal, [bot], np.random.default_rng(5), encoder, CollectConfig(32, **common)
    )
    kept, stats = collect_hands(
        rules, lowest_legal, [bot], np.random.default_rng(5), encoder, CollectConfig(32, skip_forced=True, **common)
    )
    choice = full.masks.sum(axis=1) > 1
    assert full_stats.forced == 0 and stats.forced == np.count_nonzero(~choice) > len(full) // 10
    assert stats.all_decisions == full_stats.all_decisions
    assert len(kept) == stats.decisions == np.count_nonzero(choice)
    np.testing.assert_array_equal(kept.observations, full.observations[choice])
    np.testing.assert_array_equal(kept.actions, full.actions[choice])
    # The rewards of a skipped decision (its tens shaping, the hand's result) reach the seat's
    # previous decision with a choice, so every kept decision's return is unchanged.
    np.testing.assert_allclose(kept.outcomes, full.outcomes[choice])
    np.testing.assert_allclose(kept.advantages, full.advantages[choice], atol=1e-6)


def test_a_run_that_skips_forced_decisions_logs_their_share(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", skip_forced=True, max_iterations=2))
    shares = [row["charts/forced_share"] for row in metric_rows(run) if "charts/forced_share" in row]
    assert len(shares) == 2 and all(0.1 < share < 0.5 for share in shares)
    plain = train(tiny_args(tmp_path / "plain", max_iterations=1))
    assert [row["charts/forced_share"] for row in metric_rows(plain) if "charts/forced_share" in row] == [0.0]


def test_train_help_explains_every_option_from_the_args_docstrings() -> None:
    from dataclasses import fields

    from mendikot_env.commands.common import field_docs

    docs = field_docs(Args)
    assert set(docs) == {f.name for f in fields(Args)} and all(docs.values())
    assert docs["skip_forced"].startswith("play a decision with one legal action")
    help_text = subprocess.run(
        [sys.executable, "-m", "mendikot_env.cli", "train", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "width of the per-card scoring network (default: 32)" in " ".join(help_text.split())


def played_decisions(rules: Rules, games: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and legal masks of every decision of random play (real, sparse masks)."""
    from support import random_playout

    from mendikot_env import core
    from mendikot_env.cards import NUM_ACTIONS, unpack_sets
    from mendikot_env.observation import ObservationEncoder

    encoder, rng = ObservationEncoder(rules), np.random.default_rng(seed)
    state = core.new_hands(rules, games, rng)
    observations, masks = [], []
    for _ in random_playout(state, rng):
        legal, live = core.legal_bits(state), ~state.done
        observations.append(encoder.encode(state, state.current, legal=legal)[live])
        masks.append(unpack_sets(legal, NUM_ACTIONS).astype(bool)[live])
    return torch.from_numpy(np.concatenate(observations)), torch.from_numpy(np.concatenate(masks))


def every_card_scored(network: torch.nn.Module, observations: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Reference logits: the card scorer run on all 52 cards, then the mask applied."""
    from mendikot_env.cards import NUM_ACTIONS

    batch = observations.shape[0]
    context = network.torso(observations)
    planes = observations[:, : network.card_planes_end].reshape(batch, network.n_planes, 52)
    if network.advisor != "none":
        planes = torch.cat([planes, observations[:, None, -NUM_ACTIONS:-1]], dim=1)
    hidden = (
        network.from_planes(planes.transpose(1, 2))
        + network.from_suit(network.suit_features(observations)).repeat_interleave(13, dim=1)
        + network.from_static(network.static)
        + network.from_context(context)[:, None, :]
    )
    card_logits = network.card_out(hidden).squeeze(-1)
    return torch.cat([card_logits, network.ask(context)], dim=1).masked_fill(~masks, -1e9)


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_scoring_only_the_legal_cards_gives_the_logits_and_gradients_of_scoring_all(preset: str) -> None:
    from agents.neural import make_advisor, with_advice
    from mendikot_env.training.loop import Network

    rules = Rules.preset(preset)
    observations, masks = played_decisions(rules, 24, seed=3)
    assert masks.sum(1).min() >= 1 and masks.sum(1).float().mean() < 20, "real play: few legal cards"
    torch.manual_seed(0)
    plain = Network(rules, (32,), 16, hidden_trump_feature=True)
    advised = Network(rules, (32,), 16, advisor="hard")
    advisor = make_advisor("hard", rules, advised.advisor_level)
    advised_obs = torch.from_numpy(with_advice(advisor, observations.numpy(), masks.numpy()))
    for network, obs in ((plain, observations), (advised, advised_obs)):
        logits, _ = network(obs, masks)
        expected = every_card_scored(network, obs, masks)
        torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
        chosen = torch.multinomial(torch.softmax(expected, -1), 1)
        params = list(network.parameters())
        got = torch.autograd.grad(torch.log_softmax(logits, -1).gather(1, chosen).sum(), params, allow_unused=True)
        want = torch.autograd.grad(torch.log_softmax(expected, -1).gather(1, chosen).sum(), params, allow_unused=True)
        for name, g, w in zip([n for n, _ in network.named_parameters()], got, want, strict=True):
            assert (g is None) == (w is None), name
            if g is not None:
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5, msg=name)


def test_bfloat16_arithmetic_runs_the_network_in_bfloat16_and_hands_back_float32() -> None:
    from mendikot_env.training.loop import Network, arithmetic, make_policy

    rules = Rules.preset("band")
    network = Network(rules, (64,), 16, hidden_trump_feature=True).eval()
    rng = np.random.default_rng(0)
    obs = rng.random((32, network.obs_size), dtype=np.float32)
    masks = np.ones((32, 53), dtype=bool)
    fast = Args(precision="bfloat16")
    with torch.no_grad():
        exact, _ = network(torch.from_numpy(obs), torch.from_numpy(masks))
        with arithmetic(fast, torch.device("cpu")):
            rounded, values = network(torch.from_numpy(obs), torch.from_numpy(masks))
    assert rounded.dtype == values.dtype == torch.float32  # the softmax and the losses keep float32
    assert not torch.equal(rounded, exact), "the products ran in bfloat16"
    assert torch.allclose(rounded, exact, atol=0.05)
    policy = make_policy(network, torch.device("cpu"), torch.Generator().manual_seed(0), fast)
    actions, log_probs, _ = policy(obs, masks)
    expected = torch.log_softmax(rounded, -1).gather(1, torch.from_numpy(actions)[:, None]).squeeze(-1)
    np.testing.assert_allclose(log_probs, expected.numpy(), rtol=1e-6)
    autocast_seen: list[bool] = []
    network.register_forward_pre_hook(lambda *_: autocast_seen.append(torch.is_autocast_enabled("cpu")))
    NeuralAgent(network, rules, precision="bfloat16").act(obs, masks)
    NeuralAgent(network, rules).act(obs, masks)
    assert autocast_seen == [True, False]
    with pytest.raises(ValueError, match="precision 'half' is not allowed"):
        NeuralAgent(network, rules, precision="half")


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_the_update_runs_in_the_precision_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, precision: str
) -> None:
    from mendikot_env.training import loop

    forward = loop.Network.forward
    seen: set[tuple[bool, bool]] = set()  # (training, autocast) of every forward pass

    def recording(self: loop.Network, *args: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seen.add((self.training, torch.is_autocast_enabled("cpu")))
        return forward(self, *args)

    monkeypatch.setattr(loop.Network, "forward", recording)
    train(tiny_args(tmp_path / "run", imitate_iterations=0, max_iterations=1, precision=precision))
    bfloat16 = precision == "bfloat16"
    assert (True, bfloat16) in seen and (True, not bfloat16) not in seen  # the update
    assert (False, bfloat16) in seen  # collection (evaluation always plays float32)


def test_bfloat16_support_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    from mendikot_env.training.args import cpu_has_native_bfloat16

    amd = tmp_path / "amd"
    amd.write_text("processor : 0\nflags : fpu sse2 avx2 avx512f\n")
    xeon = tmp_path / "xeon"
    xeon.write_text("processor : 0\nflags : fpu avx2 avx512f amx_bf16 amx_tile\n")
    cooper = tmp_path / "cooper"
    cooper.write_text("flags : avx2 avx512_bf16\n")
    graviton = tmp_path / "graviton"
    graviton.write_text("Features : fp asimd sve bf16 i8mm\n")
    assert cpu_has_native_bfloat16(amd) is False
    assert cpu_has_native_bfloat16(xeon) is True and cpu_has_native_bfloat16(cooper) is True
    assert cpu_has_native_bfloat16(graviton) is True
    assert cpu_has_native_bfloat16(tmp_path / "missing") is None  # not Linux: nothing to say


@pytest.mark.parametrize(("native", "warned"), [(False, True), (True, False), (None, False)])
def test_bfloat16_on_a_cpu_that_emulates_it_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool | None, warned: bool
) -> None:
    import warnings

    from mendikot_env.training import loop

    monkeypatch.setattr(loop, "cpu_has_native_bfloat16", lambda: native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(tiny_args(tmp_path / "run", imitate_iterations=0, max_iterations=1, precision="bfloat16"))
    messages = [str(w.message) for w in caught if "bfloat16 is emulated" in str(w.message)]
    assert len(messages) == int(warned)


def test_a_bfloat16_run_resumes_exactly_and_its_snapshots_play_bfloat16(tmp_path: Path) -> None:
    from mendikot_env.training.loop import snapshot_agent

    _, state = run_straight_and_resumed(tmp_path, rules="band", precision="bfloat16")
    assert state["args"]["precision"] == "bfloat16" and all(t.dtype == torch.float32 for t in state["model"].values())
    args = Args.from_dict(state["args"])
    snapshot = snapshot_agent(state["pool"][0], Rules.preset("band"), args, torch.device("cpu"))
    autocast_seen: list[bool] = []
    snapshot.network.register_forward_pre_hook(lambda *_: autocast_seen.append(torch.is_autocast_enabled("cpu")))
    observations = np.zeros((2, snapshot.network.obs_size), dtype=np.float32)
    snapshot.act(observations, np.ones((2, 53), dtype=bool))
    assert autocast_seen == [True]


def test_duplicate_snapshots_replays_the_snapshot_games_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mendikot_env.observation import ObservationEncoder
    from mendikot_env.training import loop
    from mendikot_env.training.selfplay import CollectConfig, collect_hands

    # A network opponent's games cancel the cards like a bot's: the learner playing as the
    # snapshot does (same network, greedy) gets exactly zero.
    rules = Rules.preset("band")
    network = loop.Network(rules, (16,), 8, hidden_trump_feature=True).eval()
    snapshot = NeuralAgent(network, rules, greedy=True)

    def same_play(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)
        return snapshot.act(observations, masks), zeros, zeros

    common = {"pool_share": 1.0, "gamma": 1.0, "gae_lambda": 1.0, "duplicate": 1}
    samples, _ = collect_hands(
        rules, same_play, [snapshot], np.random.default_rng(2), ObservationEncoder(rules), CollectConfig(32, **common)
    )
    assert np.all(samples.outcomes == 0.0)

    # The loop hands collect_hands every opponent (bots first) for the baseline, or the bots only.
    seen: list[tuple[int, int]] = []

    def recording(*args: object, **kwargs: object) -> object:
        seen.append((len(args[2]), args[5].duplicate))  # (opponents, duplicated ones)
        return collect_hands(*args, **kwargs)

    monkeypatch.setattr(loop, "collect_hands", recording)
    train(tiny_args(tmp_path / "all", duplicate_snapshots=True, imitate_iterations=0, max_iterations=4))
    assert seen[-1] == (2, 2)  # the bot and the snapshot of iteration 2
    seen.clear()
    train(tiny_args(tmp_path / "bots", imitate_iterations=0, max_iterations=4))
    assert seen[-1] == (2, 1)


# ------------------------------------------------------------ bad input and damaged files


def test_pool_snapshots_zero_keeps_no_snapshot(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", pool_snapshots=0, snapshot_every=1, imitate_iterations=0, max_iterations=2))
    assert load_checkpoint(run / "checkpoint.pt", kind="training")["pool"] == []
    assert [row["charts/pool_size"] for row in metric_rows(run) if "charts/pool_size" in row] == [1, 1]  # the bot
    with pytest.raises(ValueError, match=r"--pool-snapshots .* 0 or more, got -1"):
        Args(pool_snapshots=-1)


def flip_bytes_inside_the_largest_member(source: Path, target: Path) -> str:
    """Copy ``source`` with 8 bytes in the middle of its largest tensor inverted; returns the member."""
    import zipfile

    with zipfile.ZipFile(source) as archive:
        largest = max(archive.infolist(), key=lambda info: info.file_size)
    data = bytearray(source.read_bytes())
    middle = largest.header_offset + largest.file_size // 2
    data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
    target.write_bytes(data)
    return largest.filename


def test_a_checkpoint_with_flipped_bytes_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "flipped.pt"
    member = flip_bytes_inside_the_largest_member(Path(agents.__file__).parent / "trained" / "standard.pt", broken)
    with pytest.raises(CheckpointError, match=rf"flipped.pt is corrupt: member '{member}' fails its CRC check"):
        load_checkpoint(broken)
    with pytest.raises(CheckpointError, match="fails its CRC check"):
        agents.load(str(broken))


@pytest.fixture(scope="module")
def one_iteration_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train(tiny_args(tmp_path_factory.mktemp("run") / "run", max_iterations=1))


@pytest.mark.parametrize(
    ("saved", "given", "outcome"),
    [
        ({"snapshot_every": 2.0}, {}, {"snapshot_every": 2}),  # a whole float from an older run
        ({"epochs": 2.5}, {}, r"checkpoint.pt holds settings this package cannot use: --epochs .* got 2.5"),
        ({"snapshot_every": 0}, {}, r"checkpoint.pt holds settings .* --snapshot-every .* got 0"),
        ({"snapshot_every": 0}, {"snapshot_every": 3}, {"snapshot_every": 3}),  # the command line mends it
        ({"snapshot_every": 0}, {"snapshot_every": -5}, r"^--snapshot-every \(Args.snapshot_every\) .* got -5$"),
        ({"hidden": [32.0]}, {}, {"hidden": (32,)}),
        ({"rule_fields": "oops"}, {"rule_fields": {"target": 3}}, r"checkpoint.pt holds rule_fields 'oops'"),
        ({}, {"minutes": -1.0}, r"^--minutes \(Args.minutes\) must be a finite number above 0, got -1.0$"),
        ("not a dict", {}, r"checkpoint.pt has malformed \['args'\]"),
    ],
)
def test_a_resume_reads_the_runs_settings_and_blames_the_checkpoint_or_the_option(
    one_iteration_run: Path, tmp_path: Path, saved: dict | str, given: dict, outcome: dict | str
) -> None:
    from mendikot_env.commands.train import _resumed_options

    run = tmp_path / "run"
    state = load_checkpoint(one_iteration_run / "checkpoint.pt", kind="training")
    state["args"] = {**state["args"], **saved} if isinstance(saved, dict) else saved
    save_atomic(state, run / "checkpoint.pt")

    def resumed_options() -> Args:  # as the command reads the run: its checkpoint once, then the options
        return _resumed_options(run, given, load_checkpoint(run / "checkpoint.pt", kind="training"))

    if isinstance(outcome, dict):
        options = resumed_options()
        assert {k: getattr(options, k) for k in outcome} == outcome and type(options.snapshot_every) is int
    else:
        kind = ValueError if "checkpoint.pt" not in outcome else CheckpointError
        with pytest.raises(kind, match=outcome) as error:
            resumed_options()
        assert ("checkpoint.pt" in str(error.value)) == (kind is CheckpointError)


def damage(state: dict, how: str) -> None:
    """Change a training checkpoint's payload as a bad copy or an old tool might."""
    if how == "other network size":
        state["network"]["hidden"] = [64]
    elif how == "pool of another network":
        state["pool"] = [{"torso.0.weight": torch.zeros(2, 2)}]
    elif how == "one bot generator too many":
        state["agent_rngs"] = [*state["agent_rngs"], state["agent_rngs"][0]]
    elif how == "a bot generator damaged":
        state["agent_rngs"][0] = {"bit_generator": "nonsense"}
    else:
        del state[how.removeprefix("no ")]


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("other network size", "cannot resume this run: Error.s. in loading state_dict .*size mismatch"),
        ("pool of another network", "pool snapshot 0 does not fit the run's network"),
        ("one bot generator too many", "agent_rngs holds 3 generators for 2 bots"),
        ("a bot generator damaged", r"cannot resume this run: bad agent_rngs \("),
        ("no args", r"lacks \['args'\]"),
        ("no optimizer", r"lacks \['optimizer'\]"),
        ("no counters", r"lacks \['counters'\]"),
    ],
)
@pytest.mark.filterwarnings("ignore:resuming .* the run keeps its network")
def test_resume_from_a_checkpoint_that_does_not_fit_fails_clearly(
    one_iteration_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture, how: str, message: str
) -> None:
    from mendikot_env.cli import main

    run = tmp_path / "damaged"
    state = load_checkpoint(one_iteration_run / "checkpoint.pt", kind="training")
    damage(state, how)
    save_atomic(state, run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="damaged/checkpoint.pt .*" + message):
        train(tiny_args(run, max_iterations=2), resume=True)
    assert main(["train", "--resume", str(run), "--max-iterations", "2", "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mendikot train: error: ") and "checkpoint.pt" in error and error.count("\n") == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"snapshot_every": 0}, r"--snapshot-every \(Args.snapshot_every\) must be an integer 1 or more, got 0"),
        ({"hidden": (-4,)}, r"--hidden \(Args.hidden\[0\]\) must be an integer 1 or more, got -4"),
        ({"hidden": (32, 0)}, r"Args.hidden\[1\]\) must be an integer 1 or more, got 0"),
        ({"card_hidden": 0}, "--card-hidden .* 1 or more, got 0"),
        ({"threads": -2}, "--threads .* 0 or more, got -2"),
        ({"minutes": -1.0}, r"--minutes .* must be a finite number above 0, got -1.0"),
        ({"minutes": float("inf")}, r"--minutes .* must be a finite number above 0, got inf"),
        ({"learning_rate": float("inf")}, r"--learning-rate .* must be a finite number above 0, got inf"),
        ({"value_coef": float("inf")}, r"--value-coef .* must be a finite number at least 0, got inf"),
        ({"tens_reward": float("nan")}, r"--tens-reward .* must be a finite number at least 0, got nan"),
        ({"max_iterations": -5}, "--max-iterations .* 0 or more, got -5"),
        ({"gamma": 2.0}, r"--gamma .* must be in \[0, 1\], got 2.0"),
        ({"gamma": float("nan")}, r"--gamma .* must be in \[0, 1\], got nan"),
        ({"epsilon": 5.0}, r"--epsilon .* must be in \[0, 1\], got 5.0"),
        ({"imitate_iterations": -3}, "--imitate-iterations .* 0 or more, got -3"),
        ({"checkpoint_every_minutes": -1.0}, "--checkpoint-every-minutes .* at least 0, got -1.0"),
        ({"learning_rate": 0.0}, "--learning-rate .* above 0, got 0.0"),
        ({"eval_deals": 0}, "--eval-deals .* 1 or more, got 0"),
        ({"games": 2**70}, rf"--games .* must be an integer 1 to {2**63 - 1} \(2\*\*63 - 1\), got {2**70}"),
        ({"hidden": (2**64,)}, r"Args.hidden\[0\]\) must be an integer 1 to 9223372036854775807 \(2\*\*63 - 1\)"),
        ({"seed": -1}, r"--seed .* an integer 0 to 9223372036854775807 \(2\*\*63 - 1\), got -1"),
        ({"seed": 2**64}, r"--seed .* an integer 0 to 9223372036854775807 \(2\*\*63 - 1\), got 18446744073709551616"),
    ],
)
def test_training_options_out_of_range_are_refused(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Args(**change)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden": "16"}, r"--hidden \(Args.hidden\) must be a list of integers \(layer sizes\), got '16'"),
        ({"hidden": (32, True)}, r"--hidden .* must be a list of integers"),
        ({"epochs": 2.5}, r"--epochs \(Args.epochs\) must be an integer, got 2.5"),
        ({"seed": 1.5}, r"--seed \(Args.seed\) must be an integer, got 1.5"),
        ({"games": True}, r"--games \(Args.games\) must be an integer, got True"),
        ({"learning_rate": "3e-4"}, r"--learning-rate \(Args.learning_rate\) must be a number, got '3e-4'"),
        ({"progress": 1}, r"--progress \(Args.progress\) must be True or False, got 1"),
        ({"teacher": None}, r"--teacher \(Args.teacher\) must be a string, got None"),
        ({"pool_bots": ("hard", 3)}, r"--pool-bots \(Args.pool_bots\) must be a list of agent names"),
    ],
)
def test_training_options_of_the_wrong_type_are_refused(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Args(**change)


def test_training_options_are_normalised_to_their_types() -> None:
    args = Args(games=np.int64(16), learning_rate=1, out=Path("runs/x"), eval_opponents="random", hidden=[np.int32(8)])
    assert (args.games, args.learning_rate, args.out, args.eval_opponents, args.hidden) == (
        16, 1.0, "runs/x", ("random",), (8,)
    )  # fmt: skip
    assert type(args.games) is int and type(args.learning_rate) is float and type(args.hidden[0]) is int
    assert Args(hidden=np.array([16, 8])).hidden == (16, 8) and type(Args(hidden=np.array([4])).hidden[0]) is int
    assert Args.from_dict({"hidden": [16, 8], "pool_bots": ["easy"], "not_a_field": 1}).hidden == (16, 8)


def test_rules_may_be_given_as_a_rules_or_a_dict_and_the_run_resumes(tmp_path: Path) -> None:
    band = Rules.preset("band", n_players=6)
    assert Args(rules=band).rules == band.to_dict() and Args(rules=band.to_dict()).resolved_rules() == band
    given = {**band.to_dict(), "n_players": np.int64(6)}
    kept = Args(rules=given).rules
    assert kept == band.to_dict() and type(kept["n_players"]) is int and kept is not given  # checkpoint-safe
    with pytest.raises(ValueError, match=r"--rules \(Args.rules\): unknown Rules field\(s\) \['trumps'\]"):
        Args(rules={"trumps": "band"})
    with pytest.raises(ValueError, match=r"--rules \(Args.rules\) must be a preset name, a Rules or a dict .* got 5"):
        Args(rules=5)  # type: ignore[arg-type]
    run = train(tiny_args(tmp_path / "run", rules=given, max_iterations=1))
    resumed = train(tiny_args(tmp_path / "run", rules=band, max_iterations=2), resume=True)
    assert load_checkpoint(resumed / "checkpoint.pt")["rules"] == band.to_dict()
    assert agents.load(run).rules == band


def test_a_diverged_update_stops_the_run_before_a_checkpoint_keeps_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny_args(out, max_iterations=1, checkpoint_every_minutes=0.0))
    good = load_checkpoint(out / "checkpoint.pt")
    with pytest.raises(TrainingDivergedError, match="training diverged in iteration 2: .*NaN or infinite weights"):
        train(tiny_args(out, max_iterations=3, learning_rate=1e38, checkpoint_every_minutes=0.0), resume=True)
    kept = load_checkpoint(out / "checkpoint.pt")
    assert kept["counters"] == good["counters"]
    assert all(torch.equal(kept["model"][k], v) for k, v in good["model"].items())


def test_a_resume_refuses_another_out_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    train(tiny_args(run, max_iterations=1))
    assert main(["train", "--resume", str(run), "--out", str(elsewhere), "--no-progress"]) == 2
    assert f"--out {elsewhere} with --resume {run}: a resume continues the run in its own folder" in (
        capsys.readouterr().err
    )
    assert not elsewhere.exists() and load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 1


def test_training_agent_options_take_names_in_any_case() -> None:
    from mendikot_env.training.loop import option_agent

    assert option_agent("--teacher (Args.teacher)", "Hard", Rules()).name == "hard"
    with pytest.raises(ValueError, match=r"--teacher \(Args.teacher\): checkpoint 'runs/x' does not exist"):
        option_agent("--teacher (Args.teacher)", "runs/x", Rules())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"device": "bogus"}, r"--device \(Args.device\) 'bogus': not a torch device"),
        ({"device": "cuda"}, "'cuda': CUDA is not available here; use --device cpu"),
        ({"eval_opponents": ("random", "bogus")}, r"--eval-opponents .*: unknown agent 'bogus'; known agents: random"),
        ({"eval_opponents": ("runs/missing",)}, r"--eval-opponents .*: checkpoint 'runs/missing' does not exist"),
    ],
)
def test_a_bad_device_or_opponent_fails_before_any_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict, message: str
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without CUDA
    with pytest.raises(ValueError, match=message):
        train(tiny_args(tmp_path / "run", **change))
    assert not (tmp_path / "run").exists(), "nothing was trained or written"


def test_the_train_command_reports_a_bad_option_on_one_line(capsys: pytest.CaptureFixture) -> None:
    from mendikot_env.cli import main

    assert main(["train", "--snapshot-every", "0", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "mendikot train: error: --snapshot-every (Args.snapshot_every) must be an integer 1 or more, got 0\n"
    )


def tensorboard_steps(run: Path, tag: str) -> list[int]:
    """The steps TensorBoard shows for ``tag`` (it hides the events a purge_step orphaned)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tb"))
    events.Reload()
    return [event.step for event in events.Scalars(tag)]


def test_a_resume_after_a_crash_between_checkpoints_logs_each_iteration_once(tmp_path: Path) -> None:
    run = train(tiny_args(tmp_path / "run", max_iterations=1))
    at_one = (run / "checkpoint.pt").read_bytes()
    train(tiny_args(run, max_iterations=2), resume=True)
    # Killed after iteration 2 was logged, before its checkpoint, half way through a line:
    (run / "checkpoint.pt").write_bytes(at_one)
    with (run / "metrics.jsonl").open("a") as file:
        file.write('{"iteration": 2, "samples"')
    train(tiny_args(run, max_iterations=2), resume=True)
    rows = metric_rows(run)
    trained = [row for row in rows if "losses/policy" in row]
    assert [row["iteration"] for row in trained] == [1, 2]
    assert [row["iteration"] for row in rows] == sorted(row["iteration"] for row in rows)
    csv_rows = (run / "metrics.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + len(rows), "metrics.csv is written from the same rows"
    assert tensorboard_steps(run, "losses/policy") == [row["samples"] for row in trained]


def test_a_corrupt_metrics_line_is_named_with_its_file(tmp_path: Path) -> None:
    from mendikot_env.training.metrics import MetricsLog

    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"iteration": 1}\n{"iteration": 2, "samp\n{"iteration": 3}\n')
    with pytest.raises(ValueError, match=r"run/metrics.jsonl line 2 is not a metrics row"):
        MetricsLog(run, resume=True).rows()
    with pytest.raises(ValueError, match=r"run/metrics.jsonl line 2 is not a metrics row"):
        MetricsLog(run, resume=True, counters={"iteration": 3, "samples": 30})  # only a torn last line is dropped


def test_a_resume_checks_the_metrics_log_against_the_checkpoint_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = train(tiny_args(tmp_path / "run", max_iterations=2))
    good, checkpoint = (run / "metrics.jsonl").read_text(), (run / "checkpoint.pt").read_bytes()
    first, *_ = good.splitlines(keepends=True)
    resume = ["train", "--resume", str(run), "--max-iterations", "3", "--no-progress"]
    damaged = {
        good.replace('"samples"', '"sampels"', 1): "line 1: no 'samples'",  # a key edited by hand
        good.replace('"eval/ci_low_vs_random"', '"eval/ci_lo_vs_random"'): "no 'eval/ci_low_vs_random'",
        good.replace('"iteration": 1', '"iteration": "1"', 1): "line 1: 'iteration' is not a number",
        first: "1 of its 2 iterations have no row (the first: 2)",  # half the log lost
        "": "2 of its 2 iterations have no row (the first: 1)",
    }
    for text, problem in damaged.items():
        (run / "metrics.jsonl").write_text(text)
        assert main(resume) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mendikot train: error: {run / 'metrics.jsonl'} does not match the checkpoint")
        assert problem in err and "(iteration 2)" in err and err.count("\n") == 1
        assert (run / "checkpoint.pt").read_bytes() == checkpoint, "nothing was trained"
        assert (run / "metrics.jsonl").read_text() == text, "nor the log rewritten"
    # A kill mid-write leaves a torn last line (repaired, and said) and perhaps a checkpoint's temporary file.
    (run / "metrics.jsonl").write_text(good + '{"iteration": 3, "samp')
    stale = run / ".checkpoint.pt.k1ll3d.tmp"
    stale.write_bytes(checkpoint[:100])
    assert main(resume) == 0
    assert "dropped a torn last line (a write cut short) from metrics.jsonl" in capsys.readouterr().err
    assert not stale.exists() and load_checkpoint(run / "checkpoint.pt")["counters"]["iteration"] == 3
    assert sorted({row["iteration"] for row in read_rows(run / "metrics.jsonl")}) == [1, 2, 3]


def test_a_ppo_run_started_from_a_trained_network_skips_the_warm_start(tmp_path: Path) -> None:
    from agents.network import build_network
    from mendikot_env.training.args import network_spec
    from mendikot_env.training.checkpoint import export_agent

    start_args = Args(hidden=(16,), card_hidden=4)
    start = export_agent(
        build_network(Rules(), network_spec(Rules(), start_args)), Rules(), start_args, tmp_path / "s.pt"
    )
    run = train(tiny_args(tmp_path / "run", max_iterations=1, imitate_iterations=5, init=str(start)))
    saved = load_checkpoint(run / "checkpoint.pt")
    assert saved["args"]["imitate_iterations"] == 0 and saved["args"]["hidden"] == [16]
    assert len(saved["agent_rngs"]) == len(saved["args"]["pool_bots"]), "no teacher made for a warm start"
