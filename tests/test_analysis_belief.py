"""The belief studies of notebook 05 measure what they say, and the HideWith variant."""

from __future__ import annotations

import numpy as np

import agents
from agents.variants import HideWith
from mendikot_env import ObservationEncoder, Rules, core
from mendikot_env.analysis import deal, play_deals
from mendikot_env.analysis_belief import ask_values, true_places, trump_sharpening
from mendikot_env.belief import Belief
from mendikot_env.cards import unpack_sets

BAND = Rules.preset("band")


def test_trump_sharpening_reads_every_non_hider_while_the_card_is_down() -> None:
    study = trump_sharpening(BAND, agents.make("easy", BAND), 12, seed=3)
    tricks = np.arange(BAND.n_tricks)
    down = tricks[None, :] <= study.reveal_trick[:, None]  # still face down when trick t starts
    for r in range(BAND.n_players - 1):
        values = study.prob[:, :, r]
        assert np.array_equal(~np.isnan(values), down)
        assert ((values[down] > 0) & (values[down] <= 1)).all()
    mean, counts = study.by_trick(1)
    assert counts[0] == 12 and (np.diff(counts) <= 0).all()
    assert np.isnan(mean[counts == 0]).all()


def test_trump_sharpening_uses_the_belief_it_is_given() -> None:
    class Sure(Belief):
        def trump_posterior(self) -> np.ndarray:
            return np.full(4, 1.0)

    study = trump_sharpening(BAND, agents.make("easy", BAND), 4, seed=1, belief_of=Sure)
    assert np.nanmin(study.prob) == 1.0


class _LowestHide:
    name = "lowest"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.argmax(np.asarray(masks) != 0, axis=1)


def test_hide_with_lets_the_chooser_lay_the_card_and_the_base_play() -> None:
    hands = deal(BAND, 16, seed=2)
    hard = agents.make("hard", BAND)
    facts = play_deals(hands, HideWith(hard, _LowestHide(), BAND))
    first = core.first_player(hands)
    lowest = [int(np.flatnonzero(unpack_sets(hands.hands[i : i + 1, first[i]], 52)[0])[0]) for i in range(16)]
    assert facts.band_card.tolist() == lowest
    own = play_deals(hands, hard)
    assert not np.array_equal(own.band_card, facts.band_card)


class _FixedValues:
    """A stand-in search that values asking at 0.5 and every card at its id / 100."""

    def move_values(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        moves = np.flatnonzero(mask)
        return moves, np.where(moves == 52, 0.5, moves / 100)


def test_ask_values_scores_the_estimate_and_plays_both_moves_out_on_the_true_deal() -> None:
    hard = agents.make("hard", BAND)
    study = ask_values(BAND, hard, _FixedValues(), 6, seed=4)
    assert study.estimate.size == study.realised.size == study.asked.size > 0
    assert (study.estimate < 0.5).all() and np.array_equal(study.asked, study.estimate > 0)
    # outcomes are points (+-1 for a win or loss) plus a hundredth of the margins: a difference of two
    assert (np.abs(study.realised) <= 2.05).all() and (np.abs(study.realised) > 0.5).any()


def test_search_move_values_cover_every_legal_move() -> None:
    search = agents.make("search:k=4", BAND, seed=0)
    state = core.new_hands(BAND, 1, rng=0)
    obs = ObservationEncoder(BAND, history=True).encode(state, state.current)[0]
    mask = core.legal_action_mask(state)[0]
    moves, values = search.move_values(obs, mask)
    assert np.array_equal(moves, np.flatnonzero(mask)) and values.shape == moves.shape
    assert (np.abs(values) <= 3.1).all()


def test_true_places_are_the_cards_the_seat_cannot_see() -> None:
    """Another seat's hand and the face-down card, never the seat's own cards nor the revealed
    band card back in the hider's hand (public, so no belief holds it unseen)."""
    rules = Rules.preset("band")
    state = core.new_hands(rules, 64, rng=5)
    rng = np.random.default_rng(5)
    while not (state.known_card >= 0).any():
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    game = int(np.flatnonzero(state.known_card >= 0)[0])
    one = state.select(np.array([game]))
    known = int(one.known_card[0])
    for seat in range(rules.n_players):
        truth = true_places(one, seat)
        assert truth[:, known].sum() == 0 and truth[0].sum() == 0
        assert truth[4].sum() == 0  # the band card is up: no face-down slot
        others = [unpack_sets(one.hands[0, (seat + r) % 4]) for r in range(1, 4)]
        for r, cards in enumerate(others, start=1):
            expected = cards.copy()
            expected[known] = 0
            assert np.array_equal(truth[r], expected)
