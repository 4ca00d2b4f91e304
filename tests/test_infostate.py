"""The information state is one record: built from the core state (one game or a batch) and
decoded from the observation, it holds the same facts."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from mendikot_env import core
from mendikot_env.infostate import SeatInfo, seat_info, seat_infos
from mendikot_env.observation import ObservationEncoder, decode_info
from mendikot_env.rules import PRESETS, Rules


def same(a: SeatInfo, b: SeatInfo, skip: tuple[str, ...] = ()) -> None:
    for f in fields(SeatInfo):
        if f.name not in skip:
            x, y = getattr(a, f.name), getattr(b, f.name)
            assert np.array_equal(np.asarray(x), np.asarray(y)), f.name


@pytest.mark.parametrize("rules", [Rules.preset(name) for name in PRESETS] + [Rules(n_players=6, trump="band")])
def test_built_and_decoded_records_agree(rules: Rules) -> None:
    encoder = ObservationEncoder(rules, history=True)
    state = core.new_hands(rules, 3, rng=1)
    rng = np.random.default_rng(1)
    while not state.done.all():
        for seat in range(rules.n_players):
            seats = np.full(3, seat)
            built = seat_infos(state, seats, history=True)
            decoded = decode_info(rules, encoder.encode(state, seats))
            # The state's trick count runs to the end; the observation's trick piece is empty then.
            same(built, decoded, skip=("match_score", "trick_no"))
            live = ~state.done
            assert np.array_equal(built.trick_no[live], decoded.trick_no[live])
            for g in range(3):
                one = seat_info(state.select([g]), seat, history=True)
                same(one, built.game(g), skip=("match_score",))
                same(decode_info(rules, encoder.encode_one(state.select([g]), seat)), decoded.game(g))
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))


def test_history_of_a_record_is_read_history() -> None:
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules, history=True)
    state = core.new_hands(rules, 1, rng=4)
    for _ in range(15):
        core.step(state, core.random_legal_actions(core.legal_bits(state), 4))
    history = seat_info(state, 2, history=True).history
    assert history is not None and len(history.plays) > 0
    assert history == decode_info(rules, encoder.encode_one(state, 2)).history
