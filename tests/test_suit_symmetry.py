"""The suit relabelling of a fit (``--exit-suit-symmetry``) against the game itself: a deal and
its relabelled twin, played with relabelled moves, give relabelled observations, masks and
hands at every step, in every variant."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from playthrough import VARIANTS
from test_exit import command, tiny_args

from agents.suit_symmetry import RELABELLINGS, SuitSymmetry
from mendikot_env import Rules, core
from mendikot_env.cards import NUM_ACTIONS, NUM_RANKS, unpack_sets
from mendikot_env.cli import main
from mendikot_env.observation import ObservationEncoder, hidden_planes, observation_layout
from mendikot_env.training import exit as expert_iteration
from mendikot_env.training.checkpoint import load_checkpoint


def relabelled_cards(new_suit: tuple[int, ...], cards: np.ndarray) -> np.ndarray:
    """Card ids with their suits relabelled (the ask, 52, kept)."""
    suits = np.asarray(new_suit)[np.minimum(cards, 51) // NUM_RANKS]
    return np.where(cards == NUM_ACTIONS - 1, cards, suits * NUM_RANKS + cards % NUM_RANKS)


def cards_of(bits: np.ndarray) -> np.ndarray:
    """(B, n, h) the cards of each seat's hand bits, ascending."""
    return np.stack([np.flatnonzero(row) for row in unpack_sets(bits).reshape(-1, 52)]).reshape(*bits.shape, -1)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_relabelled_deal_plays_as_the_tables_relabel_every_observation_mask_and_hand(variant: str) -> None:
    options = {k: v for k, v in VARIANTS[variant].items() if k != "reward"}
    rules = Rules.preset(options.pop("rules"), **options)
    encoder = ObservationEncoder(rules)
    symmetry = SuitSymmetry(rules, True, torch.device("cpu"))  # with an advisor's move after the observation
    rng = np.random.default_rng(len(variant))
    games = 24
    which = torch.arange(games) % len(RELABELLINGS)  # every relabelling, the identity included
    maps = np.stack([relabelled_cards(RELABELLINGS[k], np.arange(NUM_ACTIONS)) for k in which.tolist()])
    first = core.new_hands(rules, games, rng=rng)
    deals = np.take_along_axis(maps[:, None, None, :], cards_of(first.hands)[..., None], axis=3)[..., 0]
    opens = maps[np.arange(games), first.open_card] if rules.trump_known_from_start else None
    twin = core.new_hands(rules, games, rng=rng, deals=np.sort(deals, axis=2), dealers=first.dealer, open_cards=opens)
    steps = 0
    while not first.done.all():
        seen, twin_seen = encoder.encode(first, first.current), encoder.encode(twin, twin.current)
        masks, twin_masks = core.legal_action_mask(first), core.legal_action_mask(twin)
        moves = core.random_legal_actions(core.legal_bits(first), rng)
        twin_moves = maps[np.arange(games), moves]
        advised = np.concatenate([seen, np.eye(NUM_ACTIONS, dtype=np.float32)[moves]], axis=1)
        twin_advised = np.concatenate([twin_seen, np.eye(NUM_ACTIONS, dtype=np.float32)[twin_moves]], axis=1)
        live = ~first.done
        assert np.array_equal(symmetry.observations(torch.from_numpy(advised), which).numpy()[live], twin_advised[live])
        assert np.array_equal(symmetry.actions(torch.from_numpy(masks), which).numpy()[live], twin_masks[live])
        hands = torch.from_numpy(hidden_planes(first, first.current))
        assert np.array_equal(symmetry.hands(hands, which).numpy()[live], hidden_planes(twin, twin.current)[live])
        core.step(first, moves, active=live)
        core.step(twin, twin_moves, active=live)
        steps += 1
    assert steps >= rules.n_tricks * rules.n_players
    assert np.array_equal(core.hand_results(first).tens, core.hand_results(twin).tens)


def test_a_fit_with_suit_symmetry_resumes_exactly_and_learns_other_weights(tmp_path: Path) -> None:
    source = expert_iteration.train(tiny_args(tmp_path / "source", max_iterations=1))
    tiny = ["--exit-hands", "0", "--exit-targets", str(source), "--eval-deals", "2", "--eval-opponents", "hard"]
    tiny += ["--epochs", "3", "--learning-rate", "3e-3", "--minibatch", "64", "--hidden", "32"]
    tiny += ["--card-hidden", "8", "--threads", "1", "--no-progress"]
    assert main(command(tmp_path / "whole", "--max-iterations", "2", "--exit-suit-symmetry", *tiny)) == 0
    assert main(command(tmp_path / "stopped", "--max-iterations", "1", "--exit-suit-symmetry", *tiny)) == 0
    assert main(["train", "--resume", str(tmp_path / "stopped"), "--max-iterations", "2"]) == 0
    assert main(command(tmp_path / "plain", "--max-iterations", "2", *tiny)) == 0
    whole, stopped, plain = (
        load_checkpoint(tmp_path / name / "checkpoint.pt", kind="training")["model"]
        for name in ("whole", "stopped", "plain")
    )
    for name, weights in whole.items():
        assert torch.equal(stopped[name], weights), f"{name} differs after the resume"
    assert any(not torch.equal(plain[name], weights) for name, weights in whole.items()), "the suits were relabelled"


def test_each_relabelling_is_a_permutation_and_the_first_keeps_every_column() -> None:
    symmetry = SuitSymmetry(Rules(), False, torch.device("cpu"))
    assert torch.equal(symmetry.observation[0], torch.arange(symmetry.observation.shape[1]))
    for table in itertools.chain(symmetry.observation, symmetry.action):
        assert torch.equal(table.sort().values, torch.arange(len(table)))
    assert len({tuple(table.tolist()) for table in symmetry.action}) == 24


def test_a_minibatch_relabels_each_decision_whole_and_a_plain_one_draws_nothing(tmp_path: Path) -> None:
    args = tiny_args(tmp_path / "run", max_iterations=1)
    expert_iteration.train(args)
    batch = expert_iteration.TargetBatch.of(tmp_path / "run", Rules(), args, 1, torch.device("cpu"))
    idx = torch.arange(len(batch))
    generator = torch.Generator().manual_seed(0)
    plain = expert_iteration.minibatch(batch, idx, None, generator)
    assert torch.equal(generator.get_state(), torch.Generator().manual_seed(0).get_state()), "no draw without it"
    symmetry = SuitSymmetry(Rules(), False, torch.device("cpu"))
    part = expert_iteration.minibatch(batch, idx, symmetry, generator)
    moved = (part.observations != plain.observations).any(dim=1)
    assert moved.float().mean() > 0.8, "nearly every decision is relabelled (1 in 24 keeps its suits)"
    layout = observation_layout(Rules())
    hand = layout.view(part.observations.numpy(), "hand") > 0
    assert not (part.masks[:, :52].numpy() & ~hand).any(), "a legal card is in the relabelled hand"
    assert not (part.policy[~part.masks] != 0).any(), "no target on a relabelled illegal move"
    assert torch.allclose(part.policy.sum(dim=1), plain.policy.sum(dim=1))
    assert torch.equal(part.observations.sum(dim=1), plain.observations.sum(dim=1))
    assert torch.equal(part.searched, plain.searched) and torch.equal(part.outcomes, plain.outcomes)


def test_suit_symmetry_is_refused_outside_expert_iteration(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--exit-suit-symmetry .* not 'ppo'"):
        tiny_args(tmp_path, algorithm="ppo", exit_suit_symmetry=True)


def test_a_views_reference_is_the_policy_a_views_agent_plays_and_needs_the_kl_penalty(tmp_path: Path) -> None:
    from test_exit import network_file

    from agents.neural import load_neural_agent

    args = tiny_args(tmp_path / "run", max_iterations=1)
    expert_iteration.train(args)
    batch = expert_iteration.TargetBatch.of(tmp_path / "run", Rules(), args, 1, torch.device("cpu"))
    path = network_file(tmp_path / "start.pt", Rules())
    reference = load_neural_agent(path).network
    viewed = load_neural_agent(path)
    viewed.set_views(24)
    symmetry = SuitSymmetry(Rules(), False, torch.device("cpu"))
    batch = batch.with_reference(reference, symmetry, rows=64)  # worked out once, in chunks
    generator = torch.Generator().manual_seed(3)
    plain = expert_iteration.minibatch(batch, torch.arange(len(batch)), None, generator)
    relabelled = expert_iteration.minibatch(batch, torch.arange(len(batch)), symmetry, generator)
    assert (relabelled.observations != plain.observations).any(dim=1).float().mean() > 0.8
    for part in (plain, relabelled):  # a relabelled decision carries its reference relabelled
        legal = part.masks.numpy()
        averaged = torch.from_numpy(viewed.probabilities(part.observations.numpy(), legal))
        log_probs = torch.log(averaged.clamp(min=1e-30)).masked_fill(~part.masks, 0.0)
        same = expert_iteration.kl_from(reference, part, log_probs).item()
        part.reference = None
        one_view = expert_iteration.kl_from(reference, part, log_probs).item()
        assert abs(same) < 1e-6 and one_view > 100 * abs(same) + 1e-6, (same, one_view)  # one view reads suits apart
    with pytest.raises(ValueError, match=r"--exit-kl-views .* give --exit-kl too"):
        tiny_args(tmp_path / "other", exit_kl_views=True)
    common = {"max_iterations": 1, "init": str(path), "exit_kl": 10.0}
    held = expert_iteration.train(tiny_args(tmp_path / "held", exit_kl_views=True, **common))
    one_viewed = expert_iteration.train(tiny_args(tmp_path / "plain", **common))
    held_model, one_view_model = (
        load_checkpoint(run / "checkpoint.pt", kind="training")["model"] for run in (held, one_viewed)
    )
    assert any(not torch.equal(one_view_model[name], weights) for name, weights in held_model.items())
