"""Differential test: the batched core against the slow scalar reference (tests/reference.py).

For every variant, 2,000 random hands run batched in the core (B = 2000) and one by one in
the reference with the same actions. At every step of every game the core's legal-action
set must equal the reference's, and the acting seat, trump and face-down card must agree;
at the end the whole hand result must agree, under each of the three rotation rules (which
only change ``next_dealer``, so they are rescored on the same finished hands).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from reference import ReferenceGame, next_dealer
from support import ROTATIONS, VARIANTS, reference_games

from mendikot_env import core
from mendikot_env.rules import Rules

GAMES = 2000
PHASES = {core.HIDE: "hide", core.PLAY: "play", core.OVER: "over"}


def compare_step(state: core.State, refs: list[ReferenceGame], legal: list[int], live: list[int]) -> None:
    """Masks, acting seat, phase, trump and face-down card of every live game agree."""
    current = state.current.tolist()
    trump = state.trump.tolist()
    face_down = state.face_down.tolist()
    phase = state.phase.tolist()
    for g in live:
        ref = refs[g]
        expected = 0
        for a in ref.legal_actions():
            expected |= 1 << a
        if legal[g] != expected or current[g] != ref.current_player:
            core_list = [a for a in range(53) if legal[g] >> a & 1]
            raise AssertionError(
                f"game {g} after {ref.history}: core seat {current[g]} legal {core_list}, "
                f"reference seat {ref.current_player} legal {ref.legal_actions()}"
            )
        assert PHASES[phase[g]] == ref.phase, (g, ref.history)
        assert trump[g] == (-1 if ref.trump is None else ref.trump), (g, ref.history)
        assert face_down[g] == (-1 if ref.hidden_card is None else ref.hidden_card), (g, ref.history)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_core_matches_reference(name: str) -> None:
    rules = VARIANTS[name]
    seed = sorted(VARIANTS).index(name)
    rng = np.random.default_rng([2024, seed])
    state = core.new_hands(rules, GAMES, rng)
    refs = reference_games(state)
    live = list(range(GAMES))
    while live:
        bits = core.legal_bits(state)
        legal = bits.tolist()
        compare_step(state, refs, legal, live)
        actions = core.random_legal_actions(bits, rng)
        chosen = actions.tolist()
        for g in live:
            refs[g].step(chosen[g])  # the reference checks it is one of its legal actions
        core.step(state, np.maximum(actions, 0))
        live = [g for g in live if refs[g].phase != "over"]
    assert state.done.all() and core.legal_bits(state).sum() == 0

    # Every rotation rule on the same finished hands: only next_dealer may differ.
    drawn = 0
    for rotation in ROTATIONS:
        rotated = rules.replace(rotation=rotation)
        results = core.hand_results(dataclasses.replace(state, rules=rotated))
        for g, ref in enumerate(refs):
            expected = ref.result()
            expected["next_dealer"] = next_dealer(rotated, ref.dealer, expected["winner"], expected["tricks"])
            got = results.as_dict(g)
            assert got == expected, f"game {g} ({rotation}) after {ref.history}"
            drawn += expected["winner"] is None
    # The games really cover the variant's special cases.
    if rules.n_players > 4:
        assert drawn > 0
    if rules.trump == "band":
        assert (state.band_card >= 0).all()
    if rules.trump == "band" and rules.reveal == "ask":
        asked = sum(52 in [a for _, a in ref.history] for ref in refs)
        assert 0 < asked < GAMES


def test_reference_rejects_what_the_core_rejects() -> None:
    # A spot check that the differential really compares legal sets: an action legal in
    # neither is refused by both.
    rules = Rules(trump="band")
    state = core.new_hands(rules, 1, 7)
    ref = reference_games(state)[0]
    not_held = next(c for c in range(52) if not int(state.hands[0, int(state.current[0])]) >> c & 1)
    with pytest.raises(ValueError):
        ref.step(not_held)
    with pytest.raises(core.IllegalActionError):
        core.step(state, np.array([not_held]))
