"""The belief of one seat: consistent samples, exact marginals, and no leak of hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

from mendikot_env import core
from mendikot_env.belief import Belief, InfoState, read_view, sample_worlds
from mendikot_env.cards import NUM_CARDS, NUM_RANKS, SUIT_MASKS, popcount, set_to_cards
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules

PRESETS = ["standard", "band", "band_auto", "open", "dehla_pakad"]


def positions(rules: Rules, games: int, seed: int, every: int = 1):
    """(state, seat, InfoState) of every seat at every ``every``-th step of random games."""
    encoder = ObservationEncoder(rules)
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = core.new_hands(rules, 1, rng=seed * 100 + g)
        step = 0
        while not state.done.all():
            if step % every == 0:
                mask = core.legal_action_mask(state)[0]
                for seat in range(rules.n_players):
                    obs = encoder.encode(state, np.array([seat]))[0]
                    yield state, seat, InfoState(rules, obs, mask if seat == state.current[0] else None)
            core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
            step += 1


@pytest.mark.parametrize("preset", [*PRESETS, "six"])
def test_every_world_gives_back_the_observation_and_respects_voids_and_sizes(preset: str) -> None:
    rules = Rules.preset("band", n_players=6) if preset == "six" else Rules.preset(preset)
    encoder = ObservationEncoder(rules)
    for state, seat, info in positions(rules, games=2, seed=3, every=3):
        worlds = sample_worlds(info, 8, rng=seat, seat=seat)
        np.testing.assert_array_equal(encoder.encode(worlds, np.full(8, seat)), np.tile(info.observation, (8, 1)))
        if info.mask is not None:
            np.testing.assert_array_equal(core.legal_action_mask(worlds), np.tile(info.mask, (8, 1)))
        sizes = popcount(state.hands[0]) + (state.face_down[0] >= 0) * (np.arange(rules.n_players) == state.hider[0])
        world_sizes = popcount(worlds.hands) + (worlds.face_down >= 0)[:, None] * (
            np.arange(rules.n_players) == worlds.hider[:, None]
        )
        np.testing.assert_array_equal(world_sizes, np.tile(sizes, (8, 1)))
        for s in range(rules.n_players):
            void_cards = sum(int(SUIT_MASKS[x]) for x in range(4) if state.voids[0, s] >> x & 1)
            hidden = worlds.hands[:, s] & ~core.CARD_SETS[worlds.known_card]  # a revealed band card may lie in a void
            assert not (hidden & np.uint64(void_cards)).any()
        assert (worlds.hands[:, seat] == state.hands[0, seat]).all()
        assert popcount(np.bitwise_or.reduce(worlds.hands, axis=1) | worlds.played.sum(axis=1)).min() >= 0


def test_worlds_play_to_the_end_on_the_core() -> None:
    rules = Rules.preset("band")
    rng = np.random.default_rng(0)
    for _, seat, info in positions(rules, games=1, seed=5, every=7):
        worlds = sample_worlds(info, 32, rng=1, seat=seat)
        while not worlds.done.all():
            core.step(worlds, core.random_legal_actions(core.legal_bits(worlds), rng))
        assert set(core.hand_results(worlds).winner.tolist()) <= {0, 1}


def enumerate_deals(belief: Belief) -> np.ndarray:
    """(slots, 52) exact chance of each card in each slot, by listing every consistent deal."""
    c = belief.constraints
    sizes = list(c.sizes)
    counts = np.zeros((len(sizes), NUM_CARDS))
    total = 0

    def place(cards: list[int], room: list[int], where: list[tuple[int, int]]) -> None:
        nonlocal total
        if not cards:
            total += 1
            for slot, card in where:
                counts[slot, card] += 1
            return
        card, rest = cards[0], cards[1:]
        for slot, free in enumerate(room):
            if free and c.allowed[slot][card // NUM_RANKS]:
                room[slot] -= 1
                place(rest, room, [*where, (slot, card)])
                room[slot] += 1

    place(set_to_cards(c.unseen), sizes, [])
    assert total == round(belief.count)
    return counts / total


def end_positions(preset: str, tricks_left: int, want_face_down: bool = False) -> list[InfoState]:
    """Observations of every seat to act with ``tricks_left`` tricks to go, from seeded random games."""
    rules = Rules.preset(preset)
    found = []
    for state, seat, info in positions(rules, games=40, seed=11):
        if state.trick_no[0] != rules.n_tricks - tricks_left or seat != state.current[0]:
            continue
        if want_face_down and not (state.face_down[0] >= 0 and state.hider[0] != seat):
            continue
        if any(info.observation is f.observation for f in found):
            continue
        found.append(info)
        if len(found) == 4:
            break
    return found


@pytest.mark.parametrize(
    "preset,face_down", [("standard", False), ("band", True), ("band_auto", False), ("dehla_pakad", False)]
)
def test_marginals_match_enumeration_of_small_end_positions(preset: str, face_down: bool) -> None:
    infos = end_positions(preset, 3, want_face_down=face_down)
    assert infos, "no end position found"
    for info in infos:
        belief = Belief(info)
        exact = enumerate_deals(belief)
        np.testing.assert_allclose(belief.card_marginals(), exact, atol=1e-12)
        hands = belief.sample_hands(20000, rng=0)
        freq = np.stack(
            [
                [(hands[:, s] >> np.uint64(c) & np.uint64(1)).mean() for c in range(NUM_CARDS)]
                for s in range(hands.shape[1])
            ]
        )
        sigma = np.sqrt(exact * (1 - exact) / 20000)
        assert (np.abs(freq - exact) <= 5 * sigma + 1e-12).all()
        if face_down:
            posterior = belief.face_down_posterior()
            np.testing.assert_allclose(posterior, exact[-1], atol=1e-12)
            np.testing.assert_allclose(belief.trump_posterior(), posterior.reshape(4, NUM_RANKS).sum(axis=1))
            assert posterior.sum() == pytest.approx(1.0)


def test_sampler_frequencies_pass_a_chi_square_test_over_whole_deals() -> None:
    info = end_positions("band", 2, want_face_down=False)[0]
    belief = Belief(info)
    hands = belief.sample_hands(6000, rng=2)
    _, counts = np.unique(hands, axis=0, return_counts=True)
    deals = round(belief.count)
    assert len(counts) == deals  # every consistent deal turns up, and nothing else
    expected = 6000 / deals
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < deals - 1 + 5 * np.sqrt(2 * (deals - 1))


def test_no_leak_the_hidden_cards_of_the_others_never_change_the_samples() -> None:
    """Swap the true hidden cards for another consistent deal: same observation, same samples."""
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    for _, seat, info in positions(rules, games=2, seed=7, every=5):
        other_truth = sample_worlds(info, 1, rng=99, seat=seat)  # a different deal the seat cannot tell apart
        other_obs = encoder.encode(other_truth, np.array([seat]))[0]
        np.testing.assert_array_equal(other_obs, info.observation)
        twin = InfoState(rules, other_obs, info.mask)
        a, b = sample_worlds(info, 16, rng=5, seat=seat), sample_worlds(twin, 16, rng=5, seat=seat)
        np.testing.assert_array_equal(a.hands, b.hands)
        np.testing.assert_array_equal(a.face_down, b.face_down)
        np.testing.assert_allclose(Belief(info).trump_posterior(), Belief(twin).trump_posterior())


def test_the_hider_knows_the_trump_and_the_others_do_not() -> None:
    rules = Rules.preset("band")
    for state, seat, info in positions(rules, games=1, seed=1, every=4):
        belief = Belief(info)
        posterior = belief.trump_posterior()
        if state.face_down[0] >= 0 and seat == state.hider[0]:
            assert posterior[state.face_down[0] // NUM_RANKS] == 1.0
        elif state.face_down[0] >= 0:
            assert posterior.sum() == pytest.approx(1.0)
            assert read_view(rules, info.observation).my_face_down == -1
            cards = belief.face_down_posterior()
            assert cards[set_to_cards(state.hands[0, seat] | state.played[0].sum())].sum() == 0
        elif state.trump[0] >= 0:
            assert posterior[state.trump[0]] == 1.0


def test_an_observation_of_other_rules_is_refused() -> None:
    rules = Rules.preset("band", n_players=6)
    state = core.new_hands(rules, 1, rng=0)
    obs = ObservationEncoder(rules).encode(state, state.current)[0]
    with pytest.raises(ValueError, match="observation"):
        Belief(InfoState(Rules(), obs))
