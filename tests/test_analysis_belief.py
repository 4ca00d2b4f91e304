"""The belief studies of notebook 05 measure what they say, and the HideWith variant."""

from __future__ import annotations

import numpy as np

import agents
from agents.variants import HideWith
from mendikot_env import Rules, core
from mendikot_env.analysis import deal, play_deals
from mendikot_env.analysis_belief import trump_sharpening
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
