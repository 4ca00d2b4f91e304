"""Expert iteration (``mendikot train --algorithm exit``): a run that plays, resumes exactly and logs its keys."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
import mendikot_env
from agents.advice import make_advisor
from mendikot_env import Rules
from mendikot_env.arena import duplicate_arena
from mendikot_env.cli import main
from mendikot_env.observation import observation_layout
from mendikot_env.training import exit as expert_iteration
from mendikot_env.training.checkpoint import load_checkpoint
from mendikot_env.training.loop import Args, train
from mendikot_env.training.metrics import read_rows
from mendikot_env.training.search_targets import read_targets, target_folders

# Two hands a generation in one shard, two deals a move: seconds a generation.
TINY = {
    "algorithm": "exit",
    "exit_search": "search:k=2,infer=0,exact=1",
    "exit_hands": 2,
    "exit_shard_hands": 2,
    "eval_deals": 2,
    "eval_opponents": ("hard",),
    "epochs": 2,
    "minibatch": 64,
    "hidden": (32,),
    "card_hidden": 8,
    "threads": 1,
    "progress": False,
}


def tiny_args(out: Path, **changes: object) -> Args:
    return Args(out=str(out), **{**TINY, **changes})


def command(out: Path, *options: str) -> list[str]:
    return ["train", "--out", str(out), "--algorithm", "exit", "--exit-search", TINY["exit_search"], *options]


def test_a_resumed_run_ends_as_one_never_stopped_and_plays_as_an_agent(tmp_path: Path) -> None:
    tiny = ["--exit-hands", "2", "--exit-shard-hands", "2", "--eval-deals", "2", "--eval-opponents", "hard"]
    tiny += ["--epochs", "2", "--minibatch", "64", "--hidden", "32", "--card-hidden", "8", "--threads", "1"]
    tiny += ["--no-progress"]
    expert_iteration.train(tiny_args(tmp_path / "whole", max_iterations=2))
    assert main(command(tmp_path / "stopped", "--max-iterations", "1", *tiny)) == 0
    # Killed after writing generation 2's shards, before its checkpoint: the resume keeps them.
    shutil.copytree(tmp_path / "whole" / "targets" / "gen-000002", tmp_path / "stopped" / "targets" / "gen-000002")
    assert main(["train", "--resume", str(tmp_path / "stopped"), "--max-iterations", "2"]) == 0
    stopped = load_checkpoint(tmp_path / "stopped" / "checkpoint.pt", kind="training")
    whole = load_checkpoint(tmp_path / "whole" / "checkpoint.pt", kind="training")
    assert stopped["counters"]["iteration"] == whole["counters"]["iteration"] == 2
    for counter in ("samples", "hands", "decisions"):  # the kept shards' decisions count as the ones made
        assert stopped["counters"][counter] == whole["counters"][counter], counter
    for name, weights in whole["model"].items():
        assert torch.equal(stopped["model"][name], weights), f"{name} differs after the resume"
    rows = read_rows(tmp_path / "stopped" / "metrics.jsonl")
    assert [row["iteration"] for row in rows] == [1, 2]
    for key in ("eval/win_rate_vs_hard", "eval/win_rate_vs_previous", "losses/policy", "losses/value"):
        assert key in rows[-1], key
    assert rows[0]["charts/labelled_per_s"] > 0 and 0 <= rows[-1]["charts/agreement"] <= 1
    assert sorted(p.name for p in (tmp_path / "whole" / "targets").iterdir()) == ["gen-000001", "gen-000002"]
    learner = agents.load(tmp_path / "whole", Rules())
    result = duplicate_arena(Rules(), learner, agents.make("hard", Rules()), deals=2, seed=0)
    assert 0 <= result.win_rate <= 1


def test_the_policy_learns_the_search_values_and_the_search_rolls_out_with_it(tmp_path: Path) -> None:
    args = tiny_args(tmp_path, max_iterations=3, exit_window=3, epochs=20, learning_rate=3e-3)
    args.exit_network_rollout = args.exit_network_leaf = True
    out = expert_iteration.train(args)
    batch = expert_iteration.TargetBatch.of(out, Rules(), args, 3, torch.device("cpu"))
    logits, _ = agents.load(out, Rules()).network(batch.observations.float(), batch.masks)
    log_probs = torch.log_softmax(logits, dim=-1).masked_fill(~batch.masks, 0.0)
    fitted = -(batch.policy * log_probs).sum(dim=-1)[batch.searched].mean().item()
    uniform = torch.log(batch.masks.sum(dim=-1).float())[batch.searched].mean().item()
    assert fitted < uniform - 0.1, "the fit brings the policy from uniform to the targets"
    manifests = [json.loads((out / "targets" / f"gen-00000{g}" / "manifest.json").read_text()) for g in (1, 2)]
    assert "rollout spec" in manifests[0]["run_id"] and "rollout network" in manifests[1]["run_id"]
    assert manifests[1]["search"].endswith("(network of generation 1)")


def test_bad_settings_are_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="k='0'"):
        expert_iteration.train(tiny_args(tmp_path / "run", exit_search="search:k=0"))
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="--exit-temperature"):
        tiny_args(tmp_path, exit_temperature=0.0)
    with pytest.raises(ValueError, match="one of .*exit"):
        tiny_args(tmp_path, algorithm="alphazero")
    with pytest.raises(ValueError, match="mendikot_env.training.exit.train"):
        train(tiny_args(tmp_path))


def network_file(path: Path, rules: Rules) -> Path:
    """An untrained network's agent file, as a run would export it."""
    from agents.network import build_network
    from mendikot_env.training.args import network_spec
    from mendikot_env.training.checkpoint import export_agent

    args = Args(hidden=(32,), card_hidden=8, rules=rules.to_dict())
    path.parent.mkdir(parents=True, exist_ok=True)
    return export_agent(build_network(rules, network_spec(rules, args)), rules, args, path)


def test_the_search_rolls_out_with_a_network_named_by_its_path(tmp_path: Path) -> None:
    from agents.neural import NeuralAgent
    from agents.search import SearchAgent

    path = network_file(tmp_path / "Runs" / "Net" / "agent.pt", Rules())  # the path keeps its capitals
    for where in (path, path.parent):
        search = agents.make(f"search:k=2,infer=0,exact=1,rollout={where}", Rules(), seed=0)
        assert isinstance(search, SearchAgent) and isinstance(search.rollout, NeuralAgent)
        assert search.spec.rollout == str(where)
    result = duplicate_arena(Rules(), search, agents.make("random", Rules()), deals=1, seed=0)
    assert 0 <= result.win_rate <= 1
    band = network_file(tmp_path / "band.pt", Rules.preset("band"))
    with pytest.raises(ValueError, match="band.pt"):
        agents.make(f"search:rollout={band}", Rules())
    with pytest.raises(ValueError, match="rollout='runs/missing'.*does not exist"):
        agents.load("search:rollout=runs/missing", Rules())


def test_a_network_leaf_value_ends_the_rollouts_cut_tricks_after_the_move(tmp_path: Path) -> None:
    import numpy as np

    from mendikot_env import core
    from mendikot_env.observation import ObservationEncoder

    path = network_file(tmp_path / "net.pt", Rules())
    search = agents.make(f"search:k=2,infer=0,exact=1,leaf={path},cut=1", Rules(), seed=0)
    assert search.spec.leaf == str(path) and search.spec.cut == 1
    seen: list[np.ndarray] = []
    leaf = search.leaf

    def counted(state: core.State) -> np.ndarray:
        seen.append(state.trick_no.copy())
        return leaf(state)

    search.leaf = counted
    state = core.new_hands(Rules(), 2, rng=0)
    obs = ObservationEncoder(Rules(), history=True).encode(state, state.current)
    values = search.values(obs, core.legal_action_mask(state))
    assert np.isfinite(values[core.legal_action_mask(state)]).all()
    assert seen and all((tricks == 1).all() for tricks in seen), "every rollout from the first trick ends at the second"
    assert np.abs(leaf(state)).max() < 10
    with pytest.raises(ValueError, match="leaf='nobody' must be a trained network"):
        agents.make("search:leaf=nobody", Rules())
    with pytest.raises(ValueError, match="cut='-1' must be an integer >= 0"):
        agents.make(f"search:leaf={path},cut=-1", Rules())


def test_a_centralised_critic_learns_the_outcomes_and_serves_as_the_search_leaf(tmp_path: Path) -> None:
    out = expert_iteration.train(tiny_args(tmp_path, max_iterations=2, critic="state", exit_network_leaf=True))
    rows = read_rows(out / "metrics.jsonl")
    assert all(row["losses/critic"] > 0 for row in rows), "the critic is fitted"
    assert "leaf True" in json.loads((out / "targets" / "gen-000002" / "manifest.json").read_text())["run_id"]
    saved = load_checkpoint(out / "agent.pt", kind="agent")
    assert saved["network"]["value_head_trained"] and not any(name.startswith("critic.") for name in saved["model"])
    assert isinstance(agents.load(out, Rules()).act, object)


def test_a_network_with_an_advisor_learns_from_the_targets_with_the_advice_appended(tmp_path: Path) -> None:
    args = tiny_args(tmp_path, max_iterations=2, advisor="hard", critic="state", exit_network_leaf=True)
    out = expert_iteration.train(args)
    network = agents.load(out, Rules()).network
    assert network.advisor == "hard"
    advisor = make_advisor("hard", Rules(), network.advisor_level)
    batch = expert_iteration.TargetBatch.of(out, Rules(), args, 2, torch.device("cpu"), advisor)
    targets = read_targets(out / "targets" / "gen-000002", Rules())
    plain = targets["observations"][:, : observation_layout(Rules()).size]
    advice = batch.observations[-len(plain) :, -53:].float().numpy()
    assert (advice.sum(axis=1) == 1).all()
    assert np.array_equal(advice.argmax(axis=1), advisor.act(plain, targets["masks"])), "the advisor's move, appended"
    assert all(np.isfinite(row["losses/critic"]) for row in read_rows(out / "metrics.jsonl"))


def test_the_network_plays_the_labelled_hands_when_it_is_the_mover(tmp_path: Path, monkeypatch) -> None:
    start = network_file(tmp_path / "start.pt", Rules())
    observations = np.random.default_rng(0).random((64, observation_layout(Rules()).size), dtype=np.float32)
    masks = np.zeros((64, 53), dtype=bool)
    masks[:, :13] = True
    chosen = []  # the mover's moves on fixed inputs, when the generation starts
    real = expert_iteration.generate_targets

    def spy(*args, mover=None, **named):
        chosen.append(mover.act(observations, masks))
        return real(*args, mover=mover, **named)

    monkeypatch.setattr(expert_iteration, "generate_targets", spy)
    out = expert_iteration.train(tiny_args(tmp_path / "run", max_iterations=1, init=str(start), exit_mover="network"))
    first = agents.load(start, Rules()).act(observations, masks)
    assert len(chosen) == 1 and np.array_equal(chosen[0], first), "the run's network plays the first generation"
    manifest = json.loads((out / "targets" / "gen-000001" / "manifest.json").read_text())
    assert manifest["mover"] == "network" and "mover network" in manifest["run_id"]
    with pytest.raises(ValueError, match="exit_mover"):
        tiny_args(tmp_path, exit_mover="bot")


def test_a_gated_target_is_the_move_the_search_plays(tmp_path: Path) -> None:
    args = tiny_args(tmp_path, max_iterations=1, exit_target="gated", exit_search="search:k=4,infer=0,exact=1")
    out = expert_iteration.train(args)
    policy = expert_iteration.TargetBatch.of(out, Rules(), args, 1, torch.device("cpu")).policy.numpy()
    data = read_targets(out / "targets" / "gen-000001", Rules())
    rows, searched = np.arange(len(policy)), np.isfinite(data["values"]).any(axis=1)
    stays = searched & (data["chosen"] == data["base"])
    assert stays.any() and (stays != searched).any(), "the search stays on the base move in some decisions only"
    assert (policy[rows, data["chosen"]][stays] == 1).all(), "staying: all on the base move"
    moved = searched & ~stays
    assert (policy[rows, data["chosen"]][moved] > 0).all() and (policy[rows, data["base"]][moved] == 0).all()
    assert np.allclose(policy[searched].sum(axis=1), 1) and (policy[~searched] == 0).all()
    assert (policy[~data["masks"]] == 0).all()
    with pytest.raises(ValueError, match="exit_target"):
        tiny_args(tmp_path, exit_target="argmax")
    manifest = out / "targets" / "gen-000001" / "manifest.json"  # a folder written before the chosen moves were kept
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": 1}))
    with pytest.raises(expert_iteration.TargetsError, match="--exit-target gated needs the moves the search chose"):
        expert_iteration.TargetBatch.of(out, Rules(), args, 1, torch.device("cpu"))


def test_a_network_fits_saved_targets_alone_and_the_fit_resumes_exactly(tmp_path: Path) -> None:
    source = expert_iteration.train(tiny_args(tmp_path / "source", max_iterations=2))
    folders = [source / "targets" / "gen-000001", source / "targets" / "gen-000002"]
    assert target_folders(source) == target_folders(source / "targets") == folders
    assert target_folders(folders[0]) == folders[:1]
    tiny = ["--exit-hands", "0", "--exit-targets", str(source), "--eval-deals", "2", "--eval-opponents", "hard"]
    tiny += ["--epochs", "20", "--learning-rate", "3e-3", "--minibatch", "64", "--hidden", "32"]
    tiny += ["--card-hidden", "8", "--threads", "1", "--no-progress"]
    assert main(command(tmp_path / "whole", "--max-iterations", "2", *tiny)) == 0
    assert main(command(tmp_path / "stopped", "--max-iterations", "1", *tiny)) == 0
    assert main(["train", "--resume", str(tmp_path / "stopped"), "--max-iterations", "2"]) == 0
    whole = load_checkpoint(tmp_path / "whole" / "checkpoint.pt", kind="training")
    stopped = load_checkpoint(tmp_path / "stopped" / "checkpoint.pt", kind="training")
    for name, weights in whole["model"].items():
        assert torch.equal(stopped["model"][name], weights), f"{name} differs after the resume"
    assert not (tmp_path / "whole" / "targets").exists() or not any((tmp_path / "whole" / "targets").iterdir())
    args = Args.from_dict(whole["args"])
    kept, identity = expert_iteration.saved_targets(args, Rules(), None)
    batch = expert_iteration.TargetBatch.of(tmp_path / "whole", Rules(), args, 2, torch.device("cpu"), None, kept)
    assert len(batch) == sum(len(read_targets(folder, Rules())["outcomes"]) for folder in folders)
    assert whole["saved_targets"] == identity and [entry[1] for entry in identity] == [1, 1]
    assert whole["counters"]["hands"] == 0, "no search: no hands of its own"
    assert whole["counters"]["samples"] == 2 * int(batch.searched.sum()), "the decisions fitted, each generation"
    # A resume must fit the same targets: a folder that changed is refused.
    assert main(["train", "--resume", str(tmp_path / "stopped"), "--max-iterations", "3"]) == 0
    shutil.copy(folders[1] / "shard-000000.npz", folders[1] / "shard-000001.npz")
    with pytest.raises(expert_iteration.TargetsError, match="a resume fits the same targets"):
        expert_iteration.train(Args.from_dict({**whole["args"], "max_iterations": 4}), resume=True)
    logits, _ = agents.load(tmp_path / "whole", Rules()).network(batch.observations.float(), batch.masks)
    log_probs = torch.log_softmax(logits, dim=-1).masked_fill(~batch.masks, 0.0)
    fitted = -(batch.policy * log_probs).sum(dim=-1)[batch.searched].mean().item()
    uniform = torch.log(batch.masks.sum(dim=-1).float())[batch.searched].mean().item()
    assert fitted < uniform - 0.1, "the network learns the saved targets"
    # With search self-play too, a fit holds the run's own window and the saved targets.
    both = tiny_args(tmp_path / "both", max_iterations=1, exit_targets=(str(folders[1]),))
    expert_iteration.train(both)
    window = expert_iteration.TargetBatch.of(tmp_path / "both", Rules(), both, 1, torch.device("cpu"))
    saved, _ = expert_iteration.saved_targets(both, Rules(), None)
    joined = expert_iteration.TargetBatch.of(tmp_path / "both", Rules(), both, 1, torch.device("cpu"), None, saved)
    assert len(joined) == len(window) + len(saved["outcomes"]) and len(saved["outcomes"]) > 0


def test_saved_targets_that_cannot_be_fitted_are_refused_before_any_work(tmp_path: Path, capsys) -> None:
    with pytest.raises(ValueError, match="--exit-hands 0.*--exit-targets"):
        tiny_args(tmp_path, exit_hands=0)
    source = expert_iteration.train(tiny_args(tmp_path / "source", max_iterations=1))
    run = expert_iteration.train(tiny_args(tmp_path / "run", max_iterations=1))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(command(run, "--overwrite", "--exit-hands", "0", "--exit-targets", str(empty))) == 2
    assert "empty holds no search targets" in capsys.readouterr().err
    band = tmp_path / "band" / "gen-000001"
    shutil.copytree(source / "targets" / "gen-000001", band)
    manifest = json.loads((band / "manifest.json").read_text())
    (band / "manifest.json").write_text(json.dumps({**manifest, "rules": Rules.preset("band").to_dict()}))
    assert main(command(run, "--overwrite", "--exit-hands", "0", "--exit-targets", str(source), str(band.parent))) == 2
    assert "gen-000001 was made for rules" in capsys.readouterr().err
    assert (run / "checkpoint.pt").is_file(), "the run --overwrite would replace is still there"
    corrupt = tmp_path / "corrupt"
    shutil.copytree(source / "targets" / "gen-000001", corrupt)
    (corrupt / "shard-000000.npz").write_bytes(b"not a shard")
    assert main(command(run, "--overwrite", "--exit-hands", "0", "--exit-targets", str(corrupt))) == 2
    assert "shard-000000.npz cannot be read" in capsys.readouterr().err
    assert (run / "checkpoint.pt").is_file(), "a corrupt shard is found before --overwrite deletes"
    copy = tmp_path / "copy"
    shutil.copytree(source / "targets" / "gen-000001", copy)
    refusals = {
        "belong to one run": (str(source), str(copy)),  # the same deals twice
        "does not exist": (str(tmp_path / "missing"),),
        "inside the run folder": (str(run / "targets"),),
    }
    for message, paths in refusals.items():
        with pytest.raises(expert_iteration.TargetsError, match=message):
            expert_iteration.train(tiny_args(run, exit_hands=0, exit_targets=paths), overwrite=True)
    (copy / "shard-000000.npz").unlink()
    with pytest.raises(expert_iteration.TargetsError, match="hold no shards yet"):
        expert_iteration.train(tiny_args(tmp_path / "new", exit_hands=0, exit_targets=(str(copy),)))
    with pytest.raises(ValueError, match="fitted by --algorithm exit, not 'ppo'"):
        tiny_args(tmp_path, algorithm="ppo", exit_targets=(str(source),))


def test_a_prior_network_picks_the_moves_the_search_compares(monkeypatch) -> None:
    """``prior=PATH,top=N``: of each decision's distinct moves, the network's N likeliest and the
    rollout policy's own are searched (the baseline), and the move played is one of them."""
    from agents import search as search_module

    path = str(Path(agents.__file__).parent / "trained" / "standard.pt")
    search = agents.make(f"search:k=2,infer=0,exact=1,prior={path},top=1", Rules(), seed=0)
    compared: list[tuple[np.ndarray, np.ndarray]] = []
    real = search_module.SearchAgent._compare

    def spy(self, beliefs, moves, own):
        compared.extend(zip(moves, own, strict=True))
        return real(self, beliefs, moves, own)

    monkeypatch.setattr(search_module.SearchAgent, "_compare", spy)
    env = mendikot_env.env(history=True)
    env.reset(seed=3)
    for _agent in env.agent_iter():
        obs, _, done, truncated, _ = env.last()
        env.step(None if done or truncated else int(search.act(obs["observation"][None], obs["action_mask"][None])[0]))
    assert compared, "some decision had more than two distinct moves"
    assert all(moves.size <= 2 and own in moves for moves, own in compared)
    with pytest.raises(ValueError, match="top='0' must be an integer >= 1"):
        agents.make(f"search:prior={path},top=0", Rules())
    with pytest.raises(ValueError, match="prior='hard' must be a trained network"):
        agents.make("search:prior=hard", Rules())


def test_the_base_agent_is_the_move_the_others_must_beat(monkeypatch) -> None:
    """``base=apprentice``: the network's move is the baseline of every comparison (and what the
    search plays where every move is equivalent to it); without it, the rollout policy's."""
    from agents import search as search_module
    from mendikot_env import core
    from mendikot_env.observation import ObservationEncoder

    baselines: list[int] = []
    real = search_module.SearchAgent._compare

    def spy(self, beliefs, moves, own):
        assert all(mine in move for move, mine in zip(moves, own, strict=True))
        baselines.extend(int(mine) for mine in own)
        return real(self, beliefs, moves, own)

    monkeypatch.setattr(search_module.SearchAgent, "_compare", spy)
    rules = Rules()
    state = core.new_hands(rules, 48, rng=5)
    obs, masks = ObservationEncoder(rules, history=True).encode(state, state.current), core.legal_action_mask(state)
    plain = obs[:, : ObservationEncoder(rules).size]
    apprentice, hard = agents.make("apprentice", rules), agents.make("hard", rules)  # unseeded: no jitter
    assert (apprentice.act(plain, masks) != hard.act(plain, masks)).sum() > 5, "the two baselines differ"
    for spec, baseline in (
        ("search:k=2,infer=0,exact=1", hard),
        ("search:k=2,infer=0,exact=1,base=apprentice", apprentice),
    ):
        search, expected = agents.make(spec, rules), baseline.act(plain, masks)
        for row in range(len(obs)):
            baselines.clear()
            played = search.act(obs[row : row + 1], masks[row : row + 1])[0]
            assert baselines in ([], [expected[row]]), f"{spec}: the baseline of hand {row} is the base agent's move"
            assert baselines or played == expected[row], f"{spec}: with nothing to compare, the base's move is played"
    assert isinstance(agents.make("search:base=trained", rules).base, agents.neural.NeuralAgent)
    with pytest.raises(ValueError, match="base='nobody' is no agent a search can use"):
        agents.make("search:base=nobody", rules)
    with pytest.raises(ValueError, match="base='runs/missing'.*does not exist"):
        agents.load("search:base=runs/missing", rules)


def test_the_weighing_policy_is_the_one_that_replays_the_moves_seen(monkeypatch) -> None:
    """``weigh=hard`` with a network's rollouts: the deals are weighed by the bot's play of the
    history (cheap), the hands played out by the network."""
    from agents import search as search_module
    from agents.neural import NeuralAgent
    from mendikot_env import core
    from mendikot_env.observation import ObservationEncoder

    weighers: list[object] = []
    together, one = search_module.likeliest_together, search_module.Belief.likeliest

    def spy_together(beliefs, policy, *rest):
        weighers.append(policy)
        return together(beliefs, policy, *rest)

    def spy_one(self, policy, *rest, **named):
        weighers.append(policy)
        return one(self, policy, *rest, **named)

    monkeypatch.setattr(search_module, "likeliest_together", spy_together)
    monkeypatch.setattr(search_module.Belief, "likeliest", spy_one)
    rules = Rules()
    state = core.new_hands(rules, 4, rng=1)
    for _ in range(6):  # a trick and a half of history to weigh
        core.step(state, core.legal_action_mask(state).argmax(axis=1))
    obs, masks = ObservationEncoder(rules, history=True).encode(state, state.current), core.legal_action_mask(state)
    for spec, kind in (
        ("search:k=2,exact=1,rollout=apprentice,weigh=medium", "medium"),
        ("search:k=2,exact=1,rollout=medium", "medium"),
    ):
        weighers.clear()
        search = agents.make(spec, rules, seed=0)
        search.act(obs, masks)  # deals drawn decision by decision
        assert weighers, f"{spec}: act weighs its deals"
        drawn = len(weighers)
        search.values(obs, masks)  # deals drawn for all decisions together
        assert len(weighers) > drawn and all(getattr(policy, "level", None) == kind for policy in weighers), spec
    assert isinstance(agents.make("search:rollout=apprentice", rules).weigh, NeuralAgent), "default: the rollout policy"
    with pytest.raises(ValueError, match="weigh='nobody' is no agent a search can use"):
        agents.make("search:weigh=nobody", rules)


def test_own_plays_the_team_in_the_rollouts_and_stays_when_a_generation_s_network_rolls_out(tmp_path: Path) -> None:
    """``own=apprentice:views=24`` loads the network as the team's rollout policy; a network
    trained for other rules is an error naming the key; a generation's network replacing the
    rollout policy keeps every agent the spec names, the others following the new rollout."""
    from agents.neural import NeuralAgent

    search = agents.make("search:k=2,own=apprentice:views=24,weigh=medium", Rules(), seed=0)
    assert isinstance(search.own, NeuralAgent) and search.own.views == 24 and search.rollout.name == "hard"
    band = network_file(tmp_path / "band.pt", Rules.preset("band"))
    with pytest.raises(ValueError, match=f"own={str(band)!r}"):
        agents.make(f"search:own={band}", Rules())
    learner = agents.make("easy", Rules())
    named = search.with_rollout(learner, None, "generation 2", seed=1)
    assert named.rollout is learner and named.base is learner, "the base the spec left to the rollout follows it"
    assert named.own is search.own and named.weigh is search.weigh and named.spec == search.spec
    prior = agents.make(f"search:k=2,prior={band},base=medium", Rules.preset("band"))
    again = prior.with_rollout(learner, None, "generation 2", seed=1)
    assert again.prior is prior.prior and again.base is prior.base and again.weigh is learner and again.own is None


def test_a_run_started_from_a_trained_network_takes_its_layers_and_weights(tmp_path: Path) -> None:
    from agents.neural import load_neural_agent

    start = network_file(tmp_path / "start.pt", Rules())  # hidden (32,), card_hidden 8
    played = load_neural_agent(start).network.state_dict()
    args = tiny_args(
        tmp_path / "run", max_iterations=1, hidden=(16, 16), card_hidden=4, critic="state", init=str(start)
    )
    args.learning_rate = 1e-12  # a step that moves nothing: the run's weights stay the file's
    out = expert_iteration.train(args)
    saved = load_checkpoint(out / "checkpoint.pt", kind="training")
    assert saved["network"]["hidden"] == [32] and saved["network"]["card_hidden"] == 8
    assert any(name.startswith("critic.") for name in saved["model"]), "the critic starts fresh"
    for name, weights in played.items():
        assert torch.allclose(saved["model"][name], weights, atol=1e-6), name
    assert main(["train", "--resume", str(out), "--max-iterations", "2"]) == 0  # a resume needs no init file
    with pytest.raises(ValueError, match=r"--init \(Args.init\) 'runs/missing'.*does not exist"):
        expert_iteration.train(tiny_args(tmp_path / "other", init="runs/missing"))
    with pytest.raises(ValueError, match=r"--init \(Args.init\) 'hard' is not a trained network"):
        train(tiny_args(tmp_path / "ppo", algorithm="ppo", init="hard"))
    with pytest.raises(ValueError, match=r"'apprentice:views=24': views= is how a network plays"):
        train(tiny_args(tmp_path / "ppo", algorithm="ppo", init="apprentice:views=24"))
    band = network_file(tmp_path / "band.pt", Rules.preset("band"))
    with pytest.raises(ValueError, match="band.pt was trained for hands played otherwise"):
        expert_iteration.train(tiny_args(tmp_path / "third", init=str(band)))
    assert not (tmp_path / "other").exists() and not (tmp_path / "third").exists()


def test_a_kl_penalty_keeps_the_policy_near_the_network_the_run_started_from(tmp_path: Path) -> None:
    from agents.neural import load_neural_agent

    start = network_file(tmp_path / "start.pt", Rules())
    common = {"init": str(start), "epochs": 6, "learning_rate": 3e-3}
    held = expert_iteration.train(tiny_args(tmp_path / "held", max_iterations=2, exit_kl=10.0, **common))
    free = expert_iteration.train(tiny_args(tmp_path / "free", max_iterations=2, **common))
    targets = expert_iteration.TargetBatch.of(held, Rules(), tiny_args(held, exit_window=2), 2, torch.device("cpu"))
    first = load_neural_agent(start).network

    def kl_from_start(run: Path) -> float:
        network = load_neural_agent(run).network
        part = expert_iteration.minibatch(targets, torch.arange(len(targets)), None, torch.Generator())
        log_probs = torch.log_softmax(network(part.observations, part.masks)[0], -1)
        return expert_iteration.kl_from(first, part, log_probs).item()

    assert kl_from_start(held) < kl_from_start(free), "the penalty keeps the policy nearer its start"
    assert all(row["losses/kl"] > 0 for row in read_rows(held / "metrics.jsonl"))
    assert all(row["losses/kl"] == 0 for row in read_rows(free / "metrics.jsonl"))
    # A resume keeps the first network as the reference (saved in the checkpoint), not the resumed one.
    stopped = expert_iteration.train(tiny_args(tmp_path / "stopped", max_iterations=1, exit_kl=10.0, **common))
    assert main(["train", "--resume", str(stopped), "--max-iterations", "2"]) == 0
    whole = load_checkpoint(held / "checkpoint.pt", kind="training")["model"]
    for name, weights in load_checkpoint(stopped / "checkpoint.pt", kind="training")["model"].items():
        assert torch.equal(weights, whole[name]), name
