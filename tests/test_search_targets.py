"""Search targets: what a shard holds, resuming a killed run, and the folders and shards refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import agents
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules
from mendikot_env.training.search_targets import (
    TargetsError,
    check_manifest,
    generate_targets,
    read_shard,
    read_targets,
    shard_path,
)

SPEC = "search:k=2,infer=0,exact=1"  # cheap: two deals a move, the last trick exact


def generate(folder: Path, shards: int, rules: Rules | None = None, run_id: str = "run", **options: object) -> object:
    rules = rules or Rules()
    search = agents.make(SPEC, rules, seed=0)
    return generate_targets(folder, rules, search, run_id=run_id, shards=shards, hands_per_shard=2, seed=3, **options)


def test_a_shard_holds_every_decision_with_its_move_values_and_outcome(tmp_path: Path) -> None:
    rules = Rules()
    stats = generate(tmp_path, shards=1)
    data = read_targets(tmp_path, rules, run_id="run")
    n = len(data["outcomes"])
    assert stats.decisions == n == 2 * 13 * 4 and stats.shards == 1  # two hands, every seat's every card
    assert data["observations"].shape == (n, ObservationEncoder(rules, history=True).size)
    hidden = data["hidden"].reshape(n, 5, 52)
    assert (hidden[:, 0] == (data["observations"][:, :52] > 0)).all(), "the mover's own hand first"
    searched = data["masks"].sum(axis=1) > 1
    assert stats.labelled == searched.sum() > 0 and stats.labelled_per_cpu_s > 0
    assert np.isnan(data["values"][~data["masks"]]).all(), "illegal moves have no value"
    assert np.isfinite(data["values"][searched][data["masks"][searched]]).all(), "every legal move is valued"
    assert np.isnan(data["values"][~searched]).all(), "a forced move is not searched"
    assert np.array_equal(np.isnan(data["spreads"]), np.isnan(data["values"])), "a spread for every value"
    rows = np.arange(n)
    assert (data["masks"][rows, data["chosen"]] & data["masks"][rows, data["base"]]).all()
    assert (data["spreads"][rows, data["base"]][searched] == 0).all(), "the base move's gain over itself"
    assert (np.abs(data["values"][searched][data["masks"][searched]]) <= 3.1).all()
    assert set(np.round(np.abs(data["outcomes"]))) <= {0.0, 1.0, 2.0, 3.0}
    for hand in range(2):  # partners share an outcome, opponents have its opposite
        outcome = data["outcomes"][data["hands"] == hand]
        assert np.allclose(np.abs(outcome), abs(outcome[0]))


def test_the_labels_choose_the_move_the_search_plays_and_say_how_sure_it_is() -> None:
    """``labels`` gives, with the values, each move's standard error against the base move and
    the move the z gate picks: the very move ``act`` plays from the same seed."""
    from mendikot_env import core

    rules = Rules()
    encoder = ObservationEncoder(rules, history=True)
    state = core.new_hands(rules, 3, rng=1)
    rng = np.random.default_rng(0)
    compared = moved = 0
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        obs, masks = encoder.encode(state, state.current)[live], core.legal_action_mask(state)[live]
        for i in np.flatnonzero(masks.sum(axis=1) > 1):
            one = slice(i, i + 1)
            played = agents.make("search:k=8,infer=0,exact=1", rules, seed=5).act(obs[one], masks[one])[0]
            labels = agents.make("search:k=8,infer=0,exact=1", rules, seed=5).labels(obs[one], masks[one])
            assert labels.chosen[0] == played, "the move act plays"
            values, spreads, base = labels.values[0], labels.spreads[0], labels.base[0]
            assert spreads[base] == 0 and (spreads[masks[i]] >= 0).all() and np.isnan(spreads[~masks[i]]).all()
            if played != base:  # it gains more than one standard error (z = 1) over the base move
                assert values[played] - values[base] > spreads[played]
            compared, moved = compared + 1, moved + int(played != base)
        actions = np.zeros(state.batch_size, dtype=np.int64)
        actions[live] = [rng.choice(np.flatnonzero(mask)) for mask in masks]
        core.step(state, actions)
    assert compared > 100 and moved > 10


def test_the_search_plays_its_best_move_unless_a_mover_plays(tmp_path: Path) -> None:
    generate(tmp_path / "search", shards=1)
    data = read_targets(tmp_path / "search", Rules())
    held = data["hidden"].reshape(len(data["hands"]), 5, 52)[:, :4].any(axis=1)  # every card still in a hand
    for hand in range(2):
        rows = np.flatnonzero(data["hands"] == hand)
        played = [int(np.flatnonzero(held[a] & ~held[b])[0]) for a, b in zip(rows, rows[1:], strict=False)]
        assert played == data["chosen"][rows[:-1]].tolist(), "the search plays the move it chooses"
    generate(tmp_path / "hard", shards=1, mover=agents.make("hard", Rules()))
    other = read_targets(tmp_path / "hard", Rules())
    assert not np.array_equal(data["observations"], other["observations"][: len(data["observations"])])


def test_a_killed_run_resumes_from_its_shards(tmp_path: Path) -> None:
    folder = tmp_path / "killed"
    code = (
        "import agents; from mendikot_env.rules import Rules;"
        "from mendikot_env.training.search_targets import generate_targets;"
        f"generate_targets({str(folder)!r}, Rules(), agents.make({SPEC!r}, Rules(), seed=0), run_id='run',"
        " shards=40, hands_per_shard=2, seed=3)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 50
    while not shard_path(folder, 1).exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = sorted(folder.glob("shard-*.npz"))
    assert 2 <= len(written) < 40, "killed mid-run, with shards written"
    stats = generate(folder, shards=len(written) + 1)
    assert stats.shards == 1, "the shards written are kept, only the missing one is made"
    assert not list(folder.glob(".*.tmp")), "a shard being written when killed leaves nothing behind"
    generate(tmp_path / "whole", shards=len(written) + 1)
    for index in range(len(written) + 1):
        mine, whole = (
            read_shard(shard_path(folder, index), Rules()),
            read_shard(shard_path(tmp_path / "whole", index), Rules()),
        )
        assert all(np.array_equal(mine[k], whole[k], equal_nan=True) for k in mine), f"shard {index} as in one run"


def test_a_folder_of_another_run_or_rules_and_a_corrupt_shard_are_refused(tmp_path: Path) -> None:
    generate(tmp_path, shards=1)
    with pytest.raises(TargetsError, match="belongs to run 'run', not 'other'"):
        generate(tmp_path, shards=2, run_id="other")
    band = Rules.preset("band")
    with pytest.raises(TargetsError, match="was made for rules"):
        generate(tmp_path, shards=2, rules=band)
    shard = shard_path(tmp_path, 0)
    kept = shard.read_bytes()
    shard.write_bytes(kept[: len(kept) // 2])
    with pytest.raises(TargetsError, match=f"shard {shard} cannot be read"):
        generate(tmp_path, shards=2)
    assert shard.read_bytes() == kept[: len(kept) // 2] and not shard_path(tmp_path, 1).exists(), "nothing touched"
    with pytest.raises(TargetsError, match="is not a search-target manifest"):
        read_targets(tmp_path / "nowhere", Rules())


def test_a_folder_of_format_version_1_is_read_without_the_arrays_version_2_added(tmp_path: Path) -> None:
    import json

    from mendikot_env.training.search_targets import ADDED_IN_2, MANIFEST

    generate(tmp_path, shards=1)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "version": 1}))
    with np.load(shard_path(tmp_path, 0)) as data:
        kept = {name: data[name] for name in data.files if name not in ADDED_IN_2}
    np.savez_compressed(shard_path(tmp_path, 0), **kept)
    old = read_targets(tmp_path, Rules())
    assert sorted(old) == sorted(kept) and len(old["values"]) == len(kept["values"])
    with pytest.raises(TargetsError, match="holds format version 1; this package writes version 2"):
        generate(tmp_path, shards=2)
    assert not shard_path(tmp_path, 1).exists()
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "version": 3}))
    with pytest.raises(
        TargetsError, match=r"version 3; this package reads 'mendikot-search-targets' versions \(1, 2\)"
    ):
        read_targets(tmp_path, Rules())


def test_equal_cards_are_played_out_once_and_share_a_value() -> None:
    from agents.search import distinct_moves, equal_runs
    from mendikot_env import core
    from mendikot_env.belief import Belief, InfoState

    rules = Rules()
    state = core.new_hands(rules, 1, rng=0)
    obs = ObservationEncoder(rules).encode(state, state.current)[0]
    mask = core.legal_action_mask(state)[0]
    belief = Belief(InfoState(rules, obs, mask))
    moves = np.flatnonzero(mask)
    kept, stands = equal_runs(belief, moves)
    assert kept.size < moves.size, "a first hand of 13 cards holds some run of equal cards"
    assert np.array_equal(kept[stands[np.isin(moves, kept)]], moves[np.isin(moves, kept)])
    for move, stand in zip(moves, kept[stands], strict=True):
        assert distinct_moves(belief, np.array([stand, move]), int(stand)).size == 1


def test_the_targets_command_labels_hands_adds_what_is_missing_and_refuses_another_seed(tmp_path: Path, capsys) -> None:
    from mendikot_env.cli import main

    out = tmp_path / "labels"
    base = ["targets", "--out", str(out), "--search", SPEC, "--shard-hands", "2", "--seed", "3"]
    assert main([*base, "--hands", "2"]) == 0
    first = read_targets(out, Rules())
    assert main([*base, "--hands", "4"]) == 0
    assert "1 shards written" in capsys.readouterr().out.splitlines()[-1]
    both = read_targets(out, Rules())
    assert np.array_equal(both["values"][: len(first["values"])], first["values"], equal_nan=True), "kept as written"
    assert len(both["outcomes"]) > len(first["outcomes"]) and np.isfinite(both["values"]).any()
    assert main([*base[:-1], "4", "--hands", "4"]) == 2
    assert "belongs to run" in capsys.readouterr().err
    assert main(["targets", "--out", str(tmp_path / "bot"), "--search", "hard"]) == 2
    assert "'hard' is not a search spec" in capsys.readouterr().err
    assert not (tmp_path / "bot").exists()
    mover = tmp_path / "moved"
    assert main(["targets", "--out", str(mover), "--search", SPEC, "--hands", "2", "--mover", "random"]) == 0
    manifest = check_manifest(mover)
    assert manifest["mover"] != "search" and "mover random" in manifest["run_id"]
