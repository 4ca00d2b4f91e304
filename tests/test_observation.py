"""Observations: the layout against its documentation, named views that read back the
state, and no leaks.

The named-view test plays random games in the core and, in step, in the scalar reference
(tests/reference.py), and rebuilds every piece of the observation from them in the plainest
way: the public facts from the state, the "what would win" pieces from the reference's own
trick rule. The no-leak tests build pairs of games that differ only in cards a seat cannot
see (cards swapped between two other seats' hands, or a different face-down card) and replay
the same action history in both: as long as that history stays legal in both games, every
seat that cannot see the difference must get bit-identical observations.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest
from reference import ASK, Play, ReferenceGame
from support import VARIANTS, reference_games

import mendikot_env
from mendikot_env import core
from mendikot_env.analysis import deal_cards
from mendikot_env.cards import set_to_cards
from mendikot_env.env import raw_env
from mendikot_env.observation import (
    History,
    ObservationEncoder,
    encode_state,
    hidden_planes,
    observation_layout,
    read_history,
    state_layout,
)
from mendikot_env.rules import Rules

VARIANT_NAMES = sorted(VARIANTS)
# The module, not the env() function that the package exports under the same name.
env_module = importlib.import_module("mendikot_env.env")
TENS = (8, 21, 34, 47)


def unpack(bits: np.ndarray, width: int = 52) -> np.ndarray:
    """(..., width) 0/1 float32 flags of uint64 card sets, by plain shifting."""
    bits = np.asarray(bits, dtype=np.uint64)
    return ((bits[..., None] >> np.arange(width, dtype=np.uint64)) & np.uint64(1)).astype(np.float32)


def onehot(index: np.ndarray, width: int) -> np.ndarray:
    """(B, width) one-hot rows; all zero where index is negative or >= width."""
    index = np.asarray(index)
    out = np.zeros((index.size, width), dtype=np.float32)
    ok = (index >= 0) & (index < width)
    out[np.flatnonzero(ok), index[ok]] = 1
    return out


def random_states(rules: Rules, seed: int, batch: int, with_reference: bool = False):
    """Yield a batch of games (and their reference twins) at every step of random play."""
    rng = np.random.default_rng(seed)
    state = core.new_hands(rules, batch, rng)
    refs = reference_games(state) if with_reference else None
    while True:
        yield (state, refs) if with_reference else state
        bits = core.legal_bits(state)
        if not bits.any():
            return
        actions = np.maximum(core.random_legal_actions(bits, rng), 0)
        if refs is not None:
            for g, ref in enumerate(refs):
                if ref.phase != "over":
                    ref.step(int(actions[g]))
        core.step(state, actions)


# =========================================================================== layout and its documentation


def documented_table() -> list[tuple[str, str]]:
    """(piece, shape text) rows of the "Observation Space" table of the env's docstring."""
    doc = env_module.__doc__
    section = doc[doc.index("## Observation Space") : doc.index("## Legal Actions Mask")]
    return re.findall(r"^\|\s*`(\w+)`\s*\|\s*(\([^)]*\))\s*\|", section, flags=re.MULTILINE)


def documented_formulas() -> list[str]:
    """Every "Size = <formula> ... for four players" in the env and observation docstrings."""
    texts = [env_module.__doc__, observation_layout.__doc__]
    found = [re.search(r"Size = (.*?)\s*[:(]\s*\d+ for four players", t, flags=re.DOTALL) for t in texts]
    assert all(found), "the size formula is documented in the env and in observation_layout"
    return [m.group(1) for m in found]


def evaluate(formula: str, n: int, t: int) -> int:
    """Evaluate a documented size formula such as ``52 (3 + 3n) + 9n + T + 30``."""
    expr = re.sub(r"(\d)\s*\(", r"\1*(", formula)
    expr = re.sub(r"(\d)\s*([nT])", r"\1*\2", expr)
    assert re.fullmatch(r"[\d\s+*()nT]+", expr), formula
    return eval(expr, {"n": n, "T": t})  # noqa: S307 (digits, n, T and + * only)


@pytest.mark.parametrize("n", [4, 6, 8])
def test_layout_is_contiguous_and_named(n: int) -> None:
    rules = Rules(n_players=n)
    layout = observation_layout(rules)
    assert ObservationEncoder(rules).size == layout.size
    start = 0
    for piece in layout.pieces.values():
        assert piece.start == start and piece.size == int(np.prod(piece.shape)) and piece.doc
        start = piece.stop
    assert start == layout.size
    shapes = {name: p.shape for name, p in layout.pieces.items()}
    assert shapes["hand"] == (52,) and shapes["trick"] == shapes["played"] == (n, 52)
    assert shapes["voids"] == (n, 4) and shapes["tens"] == (2, 5) and shapes["trick_number"] == (rules.n_tricks,)
    assert "total" in layout.describe() and str(layout.size) in layout.describe()


@pytest.mark.parametrize("n", [4, 6, 8])
def test_layout_matches_its_documentation(n: int) -> None:
    # The env docstring is the env's documentation page: its table and size formula must
    # be the layout the encoder builds (piece names, order and shapes), for every n.
    rules = Rules(n_players=n)
    layout = observation_layout(rules, history=True)  # the table ends with the history pieces
    t = rules.n_tricks
    table = documented_table()
    assert [name for name, _ in table] == list(layout.pieces), "env docstring table vs observation_layout"
    for name, shape_text in table:
        shape = eval(shape_text.replace("n", str(n)).replace("T", str(t)))  # noqa: S307 (a tuple literal)
        assert layout.pieces[name].shape == tuple(shape), name


@pytest.mark.parametrize("n", [4, 6, 8])
def test_documented_size_formulas(n: int) -> None:
    rules = Rules(n_players=n)
    size = observation_layout(rules).size
    formulas = documented_formulas()
    assert evaluate("52 (3 + 3n) + 9n + T + 30", 4, 13) == 859  # the evaluator itself
    for formula in formulas:
        assert evaluate(formula, n, rules.n_tricks) == size, f"documented size {formula!r} for n={n}"


@pytest.mark.parametrize("name", ["cut-mendikot-4p", "band_ask-dehla-6p", "open-mendikot-8p"])
def test_shapes_dtypes_and_range(name: str) -> None:
    rules = VARIANTS[name]
    encoder = ObservationEncoder(rules)
    state = core.new_hands(rules, 5, 0)
    obs = encoder.encode(state, state.current)
    assert obs.shape == (5, encoder.size) and obs.dtype == np.float32
    assert ((obs >= 0) & (obs <= 1)).all()
    out = np.full((5, encoder.size), 7.0, dtype=np.float32)
    assert encoder.encode(state, state.current, out=out) is out and np.array_equal(out, obs)
    # A strided view of a larger array is written in place too (the slower scatter path).
    wide = np.full((5, encoder.size + 9), 7.0, dtype=np.float32)
    encoder.encode(state, state.current, out=wide[:, 3 : 3 + encoder.size])
    assert np.array_equal(wide[:, 3 : 3 + encoder.size], obs) and (wide[:, :3] == 7.0).all()
    # The same for one game (encode's one-game path).
    one = state.select([2])
    wide_one = np.full((1, encoder.size + 9), 7.0, dtype=np.float32)
    encoder.encode(one, one.current, out=wide_one[:, 3 : 3 + encoder.size])
    assert np.array_equal(wide_one[:, 3 : 3 + encoder.size], obs[2:3]) and (wide_one[:, :3] == 7.0).all()
    # Buffers with strided or Fortran-order rows are written in place too, on both paths.
    for buffer in (np.zeros((5, 2 * encoder.size), np.float32)[:, ::2], np.zeros((5, encoder.size), np.float32, "F")):
        assert encoder.encode(state, state.current, out=buffer) is buffer and np.array_equal(buffer, obs)
        encoder.encode(one, one.current, out=buffer[2:3])
        assert np.array_equal(buffer[2:3], obs[2:3])
    for bad in (np.zeros((5, encoder.size + 1), np.float32), np.zeros((5, encoder.size), np.float64)):
        with pytest.raises(ValueError, match="out must be"):
            encoder.encode(state, state.current, out=bad)
    assert encoder.encode(state.select([]), np.zeros(0, np.int64)).shape == (0, encoder.size)
    n = rules.n_players
    for seats, bad in (([0, 1, 2, 3, -2], -2), ([0, 1, n, 0, 0], n)):
        with pytest.raises(ValueError, match=rf"seats must be 0..{n - 1} \(or -1 for a finished game\), got \[{bad}\]"):
            encoder.encode(state, np.array(seats))
    with pytest.raises(ValueError, match=rf"seats must be 0..{n - 1} \(or -1 for a finished game\), got \[{n}\]"):
        encoder.encode(one, np.array([n]))
    with pytest.raises(ValueError, match=r"one observing seat per game: 5, got shape \(4,\)"):
        encoder.encode(state, np.array([0, 1, 2, 3]))
    other = Rules(n_players=6) if n == 4 else Rules()
    with pytest.raises(ValueError, match=rf"this encoder is for .*n_players: {other.n_players} vs {n}"):
        ObservationEncoder(other).encode(state, state.current)
    # NO_SEAT (a finished game's current seat) reads as seat 0, on both paths.
    seats = np.array([-1, 1, 2, -1, 0])
    assert np.array_equal(encoder.encode(state, seats), encoder.encode(state, np.maximum(seats, 0)))
    assert np.array_equal(encoder.encode(one, np.array([-1])), encoder.encode(one, np.array([0])))
    assert encoder.layout.view(obs, "trick").shape == (5, rules.n_players, 52)
    assert encoder.layout.view(obs[0], "hand").shape == (52,)
    split = encoder.layout.split(obs)
    assert list(split) == list(encoder.layout.pieces) and sum(v[0].size for v in split.values()) == encoder.size
    full = encode_state(state, encoder)
    assert full.shape == (5, state_layout(rules).size) and full.dtype == np.float32


def test_encode_refuses_seats_that_are_not_integers() -> None:
    # Seats were cast with astype: 1.9 read as seat 1 and True as seat 1, unseen.
    encoder = ObservationEncoder(Rules())
    state = core.new_hands(Rules(), 2, rng=0)
    one = state.select([0])
    for seats in ([1.9, 0.5], np.array([1.0, 0.0]), [True, False], ["0", "1"], np.array(["0", "1"])):
        with pytest.raises(ValueError, match=r"seats must be integers 0\.\.3 \(or -1 for a finished game\), got"):
            encoder.encode(state, seats)
    for seats in ([0.0], [True], ["0"], 1.5):
        with pytest.raises(ValueError, match="seats must be integers"):
            encoder.encode(one, seats)
    # Python ints, numpy integers of any width, and an empty batch's [] still work.
    expected = encoder.encode(state, np.array([1, 2]))
    for seats in ([1, 2], np.array([1, 2], np.int8), np.array([1, 2], np.uint32), (np.int64(1), np.int16(2))):
        assert np.array_equal(encoder.encode(state, seats), expected)
    assert np.array_equal(encoder.encode(one, 1)[0], expected[0])
    assert encoder.encode(state.select([]), []).shape == (0, encoder.size)


@pytest.mark.parametrize("B", [1, 4])
def test_encode_refuses_a_match_score_of_the_wrong_shape(B: int) -> None:
    # (2,) and (1, 2) for four games failed with an IndexError; (2, B) was read in the
    # wrong order (its B = 2 case is (B, 2) and cannot be told apart).
    encoder = ObservationEncoder(Rules())
    state = core.new_hands(Rules(), B, rng=0)
    good = np.arange(2 * B).reshape(B, 2) % 5
    want = encoder.encode(state, state.current, good)
    assert np.array_equal(encoder.encode(state, state.current, good.tolist()), want)
    for bad in (np.array([1, 2]), np.zeros((1, 2)), good.T, np.zeros((B, 3)), np.zeros(2 * B)):
        if bad.shape == (B, 2):
            continue
        with pytest.raises(ValueError, match=rf"match_score must be \({B}, 2\).*got shape {re.escape(str(bad.shape))}"):
            encoder.encode(state, state.current, bad)


def test_the_env_resolves_a_preset_name_or_a_dict_for_its_encoder() -> None:
    # env() is the boundary that takes names and dicts; the encoder and layout take Rules.
    band = Rules.preset("band")
    assert raw_env("band").encoder.rules == band and raw_env({"trump": "band"}).encoder.rules == band
    assert raw_env(n_players=6).observation_layout.size == observation_layout(Rules(n_players=6)).size
    with pytest.raises(ValueError, match="unknown rules preset 'bandd'"):
        raw_env("bandd")


# =========================================================================== named views


def trick_winner_with(ref: ReferenceGame, plays: list[Play], trump: int | None) -> int:
    """The reference's trick rule applied to a (partial) trick."""
    saved = ref.trick, ref.trump
    ref.trick, ref.trump = plays, trump
    try:
        return ref._trick_winner()
    finally:
        ref.trick, ref.trump = saved


def reference_outlook(ref: ReferenceGame, seat: int) -> tuple[int, int]:
    """(seat winning the trick so far or -1, the legal cards of ``seat`` that would win it if
    played now) from the reference; the second is 0 unless ``seat`` is to play a card."""
    winning = trick_winner_with(ref, ref.trick, ref.trump) if ref.trick else -1
    if ref.phase != "play" or ref.current_player != seat:
        return winning, 0
    legal = [a for a in ref.legal_actions() if a != ASK]
    if not ref.trick:
        return winning, sum(1 << c for c in legal)
    takers = 0
    led = ref.led_suit
    for c in legal:
        trump = ref.trump
        if ref.rules.trump == "cut" and trump is None and c // 13 != led:
            trump = c // 13  # the first card off the led suit sets the cut trump
        counts = trump is not None and c // 13 == trump
        if trick_winner_with(ref, [*ref.trick, Play(seat, c, counts)], trump) == seat:
            takers |= 1 << c
    return winning, takers


def expected_pieces(
    state: core.State, refs: list[ReferenceGame], seats: np.ndarray, match_score: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Every piece of the observation of ``seats``, rebuilt from the state and the reference."""
    rules = state.rules
    n, T, B = rules.n_players, rules.n_tricks, state.batch_size
    games = np.arange(B)
    rel = (seats[:, None] + np.arange(n)) % n  # absolute seat of each relative seat

    def relative(absolute: np.ndarray) -> np.ndarray:
        return onehot(np.where(np.asarray(absolute) < 0, -1, (np.asarray(absolute) - seats) % n), n)

    results = core.hand_results(state)
    tens, tricks = results.tens, results.tricks
    mine = np.stack([seats % 2, 1 - seats % 2], axis=1)
    pack = sum(1 << c for c in range(52) if n == 4 or c % 13 != 0)

    known = np.full(B, -1)
    unseen = np.zeros(B, dtype=np.uint64)
    masters = np.zeros(B, dtype=np.uint64)
    takers = np.zeros(B, dtype=np.uint64)
    winning = np.full(B, -1)
    for g, ref in enumerate(refs):
        seat = int(seats[g])
        # The revealed band card, while it is back in the hider's hand.
        if rules.trump == "band" and ref.hidden_card is None and ref.history:
            band = ref.history[0][1]
            if band in ref.hands[ref.hider]:
                known[g] = band
        hand = set(ref.hands[seat])
        own = hand | {ref.hidden_card} if ref.hidden_card is not None and ref.hider == seat else hand
        played = {a for _, a in ref.history[1 if rules.trump == "band" else 0 :] if a != ASK}
        outside = [c for c in range(52) if pack >> c & 1 and c not in own and c not in played]
        unseen[g] = sum(1 << c for c in outside if c != known[g])
        masters[g] = sum(1 << c for c in hand if not any(o // 13 == c // 13 and o > c for o in outside))
        w, t = reference_outlook(ref, seat)
        winning[g], takers[g] = w, t

    trump_state = np.where(state.trump >= 0, 2, np.where(state.face_down >= 0, 1, 0))
    previous = np.where(state.trick_no > 0, state.trick_winners[games, np.maximum(state.trick_no - 1, 0)], -1)
    tens_mask = np.uint64(sum(1 << t for t in TENS))
    trick_set = np.zeros(B, dtype=np.uint64)
    for s in range(n):
        on = state.trick_cards[:, s] >= 0
        trick_set[on] |= np.uint64(1) << state.trick_cards[on, s].astype(np.uint64)
    phase = np.zeros((B, 2), dtype=np.float32)
    phase[state.phase == core.HIDE, 0] = 1
    phase[state.phase == core.PLAY, 1] = 1
    return {
        "hand": unpack(state.hands[games, seats]),
        "face_down": np.where((state.hider == seats)[:, None], onehot(state.face_down, 52), 0),
        "open_card": onehot(state.open_card, 52),
        "known": onehot(known, 52),
        "take_lead": unpack(takers),
        "unseen": unpack(unseen),
        "masters": unpack(masters),
        "trick": np.stack([onehot(state.trick_cards[games, rel[:, k]], 52) for k in range(n)], axis=1),
        "played": unpack(state.played[games[:, None], rel]),
        "voids": unpack(state.voids[games[:, None], rel].astype(np.uint64), 4),
        "winning": relative(winning),
        "trick_tens": (np.bitwise_count(trick_set & tens_mask) / 4).astype(np.float32)[:, None],
        "led_suit": onehot(state.led_suit, 4),
        "trump_state": onehot(trump_state, 3),
        "trump_suit": onehot(state.trump, 4),
        "asked": state.asked.astype(np.float32)[:, None],
        "hider": relative(state.hider),
        "revealed_by": relative(state.revealed_by),
        "leader": relative(np.where(state.phase == core.OVER, -1, state.leader)),
        "dealer": relative(state.dealer),
        "tens": np.stack([onehot(tens[games, mine[:, t]], 5) for t in (0, 1)], axis=1),
        "tricks": (tricks[games[:, None], mine] / T).astype(np.float32),
        "middle": np.stack(
            [np.bitwise_count(state.middle & tens_mask) / 4, np.bitwise_count(state.middle) / (n * T)], axis=1
        ).astype(np.float32),
        "run_holder": relative(previous),
        "trick_number": onehot(np.where(state.phase == core.OVER, -1, state.trick_no), T),
        "phase": phase,
        "match_score": np.zeros((B, 2), np.float32)
        if match_score is None
        else (match_score[games[:, None], mine] / rules.target).astype(np.float32),
    }


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_named_views_read_back_the_state(name: str) -> None:
    rules = VARIANTS[name]
    encoder = ObservationEncoder(rules)
    n, B = rules.n_players, 48
    score_rng = np.random.default_rng(1)
    steps = 0
    for state, refs in random_states(rules, sorted(VARIANTS).index(name), B, with_reference=True):
        score = score_rng.integers(0, rules.target + 1, size=(B, 2)) if steps % 2 else None
        # Every game is seen by a different seat; the acting seat half of the time (so that
        # the pieces only the player to act gets are checked too).
        seats = np.where(np.arange(B) % 2 == 0, np.maximum(state.current, 0), (np.arange(B) + steps) % n)
        obs = encoder.encode(state, seats, score)
        want = expected_pieces(state, refs, seats, score)
        unknown = set(encoder.layout.pieces) - set(want)
        assert not unknown, f"pieces {sorted(unknown)} have no expectation in this test: add them"
        expected = np.concatenate([want[p].reshape(B, -1) for p in encoder.layout.pieces], axis=1)
        if not np.allclose(obs, expected, atol=1e-6):
            for piece in encoder.layout.pieces:
                got = encoder.layout.view(obs, piece)
                bad = np.flatnonzero(~np.isclose(got, want[piece], atol=1e-6).reshape(B, -1).all(axis=1))
                assert bad.size == 0, (
                    f"{piece} at step {steps}, game {bad[0]} seen by seat {seats[bad[0]]} after "
                    f"{refs[bad[0]].history}: got {np.flatnonzero(got[bad[0]])}, "
                    f"expected {np.flatnonzero(want[piece][bad[0]])}"
                )
        steps += 1
    assert steps > rules.n_tricks * n


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_one_game_path_equals_the_batched_path(name: str) -> None:
    # encode() at B = 1 (the AEC env's case) runs the pieces' rules on Python ints, a batch on
    # arrays: the same vector bit for bit, from every seat, with and without match scores.
    rules = VARIANTS[name]
    encoder = ObservationEncoder(rules)
    n, B = rules.n_players, 6
    score_rng = np.random.default_rng(2)
    checked = 0
    for steps, state in enumerate(random_states(rules, 100 + sorted(VARIANTS).index(name), B)):
        score = score_rng.integers(0, rules.target + 3, size=(B, 2)) if steps % 2 else None
        legal = core.legal_bits(state)
        for seat in range(n):
            batched = encoder.encode(state, np.full(B, seat), score)
            for game in range(B):
                one = state.select([game])
                extra = {"legal": legal[game : game + 1], "out": np.full((1, encoder.size), 7.0, np.float32)}
                extra = extra if (game + steps) % 3 == 0 else {}  # also with the caller's legal set and buffer
                got = encoder.encode(one, [seat], None if score is None else score[game : game + 1], **extra)
                if not np.array_equal(got[0], batched[game]):
                    diff = [p for p in encoder.layout.pieces if not np.array_equal(
                        encoder.layout.view(got[0], p), encoder.layout.view(batched[game], p))]  # fmt: skip
                    raise AssertionError(f"step {steps}, game {game}, seat {seat}: pieces {diff} differ")
                winning, takers = core.trick_outlook(one, legal[game : game + 1])
                tables = core.OUTLOOK_LISTS[int(rules.trump == "cut")]  # the same rule on Python ints
                ints = core.trick_outlook_of(
                    one.trick_cards.tolist()[0], one.led_suit.item(0), one.trump.item(0), one.trick_trumps.item(0),
                    int(legal[game]), tables,
                )  # fmt: skip
                assert ints == (int(winning[0]), int(takers[0]))
                checked += 1
    assert checked > B * n * rules.n_tricks * n


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_encode_one_is_encode_at_a_batch_of_one(name: str) -> None:
    # The AEC env's entry: encode() at B = 1 without the argument checks, legal set as an int;
    # with and without the history pieces.
    rules = VARIANTS[name]
    encoders = [ObservationEncoder(rules), ObservationEncoder(rules, history=True)]
    score = np.array([[1, rules.target + 2]])
    for steps, state in enumerate(random_states(rules, 300 + sorted(VARIANTS).index(name), 3)):
        legal = core.legal_bits(state)
        for game in range(3):
            one = state.select([game])
            for seat in range(rules.n_players):
                encoder = encoders[(steps + game + seat) % 2]
                given = (score if steps % 2 else None, int(legal[game]) if (steps + seat) % 3 else None)
                got = encoder.encode_one(one, seat, *given)
                assert got.dtype == np.float32 and got.shape == (encoder.size,)
                assert np.array_equal(got, encoder.encode(one, [seat], given[0])[0]), (steps, game, seat)


def test_views_on_a_scripted_band_state() -> None:
    # Seat 0 hides 2H; seat 1 (void in spades) asks; hearts are trump and 2H is back in hand.
    hands = [
        [39 + 12, 26] + list(range(0, 11)),  # AS 2H + clubs 2..Q
        [38, 11, 12] + list(range(13, 23)),  # AH KC AC + diamonds 2..J
        list(range(39, 51)) + [23],  # spades 2..K + QD
        list(range(27, 38)) + [24, 25],  # hearts 3..K + KD AD
    ]
    rules = Rules(trump="band")
    state = core.new_hands(rules, 1, 0, deals=[hands], dealers=3)
    encoder = ObservationEncoder(rules)
    layout = encoder.layout

    def views() -> list[dict[str, np.ndarray]]:
        return [layout.split(encoder.encode(state, np.array([s]))[0]) for s in range(4)]

    core.step(state, np.array([26]))  # hide 2H
    v = views()
    assert v[0]["face_down"][26] == 1 and v[0]["face_down"].sum() == 1
    assert all(x["face_down"].sum() == 0 for x in v[1:])
    assert all(list(x["trump_state"]) == [0, 1, 0] for x in v)
    assert [list(x["hider"]).index(1) for x in v] == [0, 3, 2, 1]
    assert list(v[0]["phase"]) == [0, 1]
    assert v[1]["unseen"][26] == 1 and v[0]["unseen"][26] == 0  # where 2H is: unknown to seat 1
    assert v[0]["take_lead"].sum() == 12 and v[1]["take_lead"].sum() == 0  # seat 0 leads: any card
    core.step(state, np.array([51]))  # seat 0 leads AS
    core.step(state, np.array([52]))  # seat 1 asks
    v = views()
    for s, x in enumerate(v):
        assert list(x["trump_state"]) == [0, 0, 1] and list(x["trump_suit"]) == [0, 0, 1, 0]
        assert x["asked"][0] == 1
        assert x["revealed_by"][(1 - s) % 4] == 1  # seat 1 asked
        assert x["known"][26] == 1 and x["known"].sum() == 1  # 2H is known, with the hider
        assert x["unseen"][26] == 0
        assert x["trick"][(0 - s) % 4, 51] == 1 and x["trick"].sum() == 1
        assert x["winning"][(0 - s) % 4] == 1  # AS so far
        assert x["led_suit"][3] == 1 and x["leader"][(0 - s) % 4] == 1
        assert x["dealer"][(3 - s) % 4] == 1
        assert x["face_down"].sum() == 0  # no longer face down
    assert v[0]["hand"][26] == 1  # back in the hider's hand
    assert np.flatnonzero(v[1]["take_lead"]).tolist() == [38]  # seat 1 must trump: the AH wins
    core.step(state, np.array([38]))  # seat 1: AH
    core.step(state, np.array([39]))  # seat 2 follows 2S
    assert layout.split(encoder.encode(state, np.array([3]))[0])["take_lead"].sum() == 0  # no heart beats AH
    core.step(state, np.array([27]))  # seat 3: 3H
    v1 = layout.split(encoder.encode(state, np.array([1]))[0])
    assert list(v1["tens"][0]) == [1, 0, 0, 0, 0] and list(v1["tricks"]) == [1 / 13, 0]
    assert v1["run_holder"][0] == 1 and v1["leader"][0] == 1  # seat 1 won and leads
    assert v1["voids"][0].tolist() == [0, 0, 0, 1] and v1["voids"][2].tolist() == [0, 0, 0, 1]
    assert v1["trick_number"][1] == 1 and v1["trick"].sum() == 0 and v1["winning"].sum() == 0
    assert v1["played"][0, 38] == 1 and v1["played"][3, 51] == 1  # relative 3 = seat 0
    # Seat 1's masters: AC and KC (no club outside its hand outranks them), but not the JD
    # (QD, KD and AD are still out).
    assert np.flatnonzero(v1["masters"]).tolist() == [11, 12]


# =========================================================================== state tensor


@pytest.mark.parametrize("name", ["band_ask-mendikot-4p", "open-dehla-6p", "cut-mendikot-8p"])
def test_state_tensor_holds_every_hand(name: str) -> None:
    rules = VARIANTS[name]
    encoder = ObservationEncoder(rules)
    layout = state_layout(rules)
    for i, state in enumerate(random_states(rules, 4, 16)):
        if i % 7:
            continue
        full = encode_state(state, encoder)
        assert full.shape == (16, layout.size) and full.dtype == np.float32
        assert np.array_equal(layout.view(full, "hands"), unpack(state.hands))
        assert np.array_equal(layout.view(full, "face_down"), onehot(state.face_down, 52))
        assert np.array_equal(layout.view(full, "current"), onehot(state.current, rules.n_players))
        public = encoder.encode(state, np.zeros(16, dtype=np.int64))
        assert np.array_equal(layout.view(full, "public"), public)


@pytest.mark.parametrize("name", ["band_ask-mendikot-4p", "cut-mendikot-6p"])
def test_hidden_planes_hold_every_hand_from_the_seats_view(name: str) -> None:
    rules = VARIANTS[name]
    n = rules.n_players
    for i, state in enumerate(random_states(rules, 5, 16)):
        if i % 5:
            continue
        seats = np.arange(16) % n
        planes = hidden_planes(state, seats).reshape(16, n + 1, 52)
        assert planes.dtype == np.float32
        for b in range(16):
            for k in range(n):  # relative seat k is absolute seat seats[b] + k
                assert np.array_equal(planes[b, k], unpack(state.hands[b, (seats[b] + k) % n]))
        assert np.array_equal(planes[:, n], onehot(state.face_down, 52))


def test_env_state_is_the_state_tensor() -> None:
    env = mendikot_env.env("band")
    env.reset(seed=0)
    raw = env.unwrapped
    full = raw.state()
    assert full.dtype == np.float32 and full.shape == (raw.state_layout.size,)
    assert np.array_equal(raw.state_layout.view(full, "hands"), unpack(raw.game.hands[0]))


# =========================================================================== no leaks


def play_and_record(rules: Rules, seed: int, batch: int):
    """Random play of a batch to the end: the initial state, the actions, and the last card
    each seat played in each game."""
    rng = np.random.default_rng(seed)
    state = core.new_hands(rules, batch, rng)
    start = state.copy()
    history = []
    last_played = np.full((batch, rules.n_players), -1)
    games = np.arange(batch)
    while True:
        bits = core.legal_bits(state)
        if not bits.any():
            break
        actions = np.maximum(core.random_legal_actions(bits, rng), 0)
        playing = (state.phase == core.PLAY) & (actions != 52)
        last_played[games[playing], state.current[playing]] = actions[playing]
        history.append(actions)
        core.step(state, actions)
    return start, history, last_played


def swap_in_deal(state: core.State, a: np.ndarray, x: np.ndarray, b: np.ndarray, y: np.ndarray) -> core.State:
    """The same games with card x (seat a) and card y (seat b) exchanged in the deal."""
    rules = state.rules
    deal = state.deal.copy()
    games = np.arange(state.batch_size)
    bx, by = np.uint64(1) << x.astype(np.uint64), np.uint64(1) << y.astype(np.uint64)
    deal[games, a] ^= bx | by
    deal[games, b] ^= bx | by
    deals = [[[c for c in range(52) if int(bits) >> c & 1] for bits in game] for game in deal]
    open_cards = state.open_card if rules.trump == "open" else None
    return core.new_hands(rules, state.batch_size, 0, deals=deals, dealers=state.dealer, open_cards=open_cards)


def compare_replay(
    first: core.State,
    second: core.State,
    history: list[np.ndarray],
    blind: np.ndarray,
    second_history: list[np.ndarray] | None = None,
    while_face_down: bool = False,
    history_pieces: bool = False,
) -> tuple[int, np.ndarray]:
    """Replay ``history`` in both games; while it stays legal in both, every seat with
    ``blind[g, seat]`` must see identical observations (with the history pieces if
    ``history_pieces``). Returns the number of observation pairs compared and, per game,
    whether some non-blind seat's observation ever differed."""
    rules = first.rules
    n, B = rules.n_players, first.batch_size
    encoder = ObservationEncoder(rules, history=history_pieces)
    valid = np.ones(B, dtype=bool)
    noticed = np.zeros(B, dtype=bool)
    compared = 0
    score = np.random.default_rng(0).integers(0, 3, size=(B, 2))
    second_history = history if second_history is None else second_history
    for t, actions in enumerate(history):
        # The pair is only meaningful while the public situation is the same in both games
        # (with auto reveal, a different hand can turn the band card up in one game only).
        valid &= (first.phase == second.phase) & (first.current == second.current) & (first.trump == second.trump)
        valid &= (first.face_down >= 0) == (second.face_down >= 0)
        if while_face_down:
            valid &= (first.face_down >= 0) | (first.phase == core.HIDE)
        live = valid & (first.phase != core.OVER)
        if not live.any():
            break
        for seat in range(n):
            seats = np.full(B, seat)
            obs1 = encoder.encode(first, seats, score)
            obs2 = encoder.encode(second, seats, score)
            same = (obs1 == obs2).all(axis=1)
            check = live & blind[:, seat]
            bad = np.flatnonzero(check & ~same)
            if bad.size:
                g = int(bad[0])
                diff = [
                    name
                    for name in encoder.layout.pieces
                    if not np.array_equal(encoder.layout.view(obs1[g], name), encoder.layout.view(obs2[g], name))
                ]
                raise AssertionError(f"seat {seat} of game {g} at step {t} sees hidden cards through {diff}")
            compared += int(check.sum())
            noticed |= live & ~blind[:, seat] & ~same
        other = second_history[t]
        legal_second = core.legal_bits(second)
        still = ((legal_second >> other.astype(np.uint64)) & np.uint64(1)) == 1
        valid &= still | (first.phase == core.OVER)
        fallback = core.random_legal_actions(legal_second, np.random.default_rng(t))
        core.step(first, actions)
        core.step(second, np.where(valid, other, np.maximum(fallback, 0)))
    return compared, noticed


@pytest.mark.parametrize("history_pieces", [False, True])
@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_no_leak_of_other_hands(name: str, history_pieces: bool) -> None:
    rules = VARIANTS[name]
    n, B = rules.n_players, 48
    rng = np.random.default_rng(sorted(VARIANTS).index(name))
    start, history, last_played = play_and_record(rules, 100 + sorted(VARIANTS).index(name), B)
    games = np.arange(B)
    a = rng.integers(0, n, size=B)
    b = (a + rng.integers(1, n, size=B)) % n
    # Swap the card each of the two seats plays last (keeps the history legal the longest);
    # in half of the games, any two cards of theirs (the history may stop being legal early).
    x, y = last_played[games, a], last_played[games, b]
    band_card = np.full(B, -2) if rules.trump != "band" else history[0]
    for g in range(B):
        if g % 2 or x[g] == band_card[g] or y[g] == band_card[g]:
            held_a = [c for c in range(52) if int(start.deal[g, a[g]]) >> c & 1 and c != band_card[g]]
            held_b = [c for c in range(52) if int(start.deal[g, b[g]]) >> c & 1 and c != band_card[g]]
            x[g], y[g] = rng.choice(held_a), rng.choice(held_b)
    swapped = swap_in_deal(start, a, x, b, y)
    assert (swapped.deal != start.deal).any(axis=1).all()
    blind = np.ones((B, n), dtype=bool)
    blind[games, a] = blind[games, b] = False
    compared, noticed = compare_replay(start.copy(), swapped, history, blind, history_pieces=history_pieces)
    assert compared > B * (n - 2) * 10  # many mid-game observations, not just the start
    assert noticed.all()  # the two seats involved do see the difference (their hands)


@pytest.mark.parametrize("history_pieces", [False, True])
@pytest.mark.parametrize("name", [v for v in VARIANT_NAMES if v.startswith("band")])
def test_no_leak_of_the_face_down_card(name: str, history_pieces: bool) -> None:
    rules = VARIANTS[name]
    n, B = rules.n_players, 48
    rng = np.random.default_rng(sorted(VARIANTS).index(name))
    start, history, last_played = play_and_record(rules, 200 + sorted(VARIANTS).index(name), B)
    games = np.arange(B)
    hider = start.hider
    x = history[0].copy()  # the card hidden in the first game
    b = (hider + rng.integers(1, n, size=B)) % n
    y = last_played[games, b]  # exchanged with the last card another seat plays
    swapped = swap_in_deal(start, hider, x, b, y)
    # The other game hides y (now in the hider's hand) instead of x, then plays the same cards.
    second_history = [y.copy(), *history[1:]]
    blind = np.ones((B, n), dtype=bool)
    blind[games, hider] = blind[games, b] = False
    compared, noticed = compare_replay(
        start.copy(), swapped, history, blind, second_history, while_face_down=True, history_pieces=history_pieces
    )
    assert compared > B * (n - 2) * 3
    assert noticed.all()


@pytest.mark.parametrize("name", ["band_ask-mendikot-4p", "band_auto-dehla-6p", "band_ask-mendikot-8p"])
def test_face_down_card_is_only_in_the_hiders_observation(name: str) -> None:
    rules = VARIANTS[name]
    encoder = ObservationEncoder(rules)
    n, B = rules.n_players, 32
    seen_face_down = 0
    for state in random_states(rules, 5, B):
        for seat in range(n):
            obs = encoder.encode(state, np.full(B, seat))
            view = encoder.layout.view(obs, "face_down")
            down = (state.face_down >= 0) & (state.hider == seat)
            assert (view[~down] == 0).all()
            assert (view[down].sum(axis=1) == 1).all()
            assert (view[np.flatnonzero(down), state.face_down[down]] == 1).all()
            # The face-down card appears nowhere else in the vector of any seat.
            for piece in ("hand", "trick", "played", "known"):
                flags = encoder.layout.view(obs, piece).reshape(B, -1, 52)
                g = np.flatnonzero(state.face_down >= 0)
                assert (flags[g, :, state.face_down[g]] == 0).all(), piece
            seen_face_down += int(down.sum())
    assert seen_face_down > 0


def test_env_observations_do_not_depend_on_hidden_cards() -> None:
    # Through the env: two deals that differ only between seats 2 and 3; seats 0 and 1 see
    # the same first observation, seats 2 and 3 do not.
    env = mendikot_env.env()
    env.reset(seed=0)
    deal = deal_cards(env.unwrapped.game)[0].tolist()
    other = [list(hand) for hand in deal]
    other[2][0], other[3][0] = deal[3][0], deal[2][0]
    seen = []
    for d in (deal, other):
        env.reset(options={"deal": d, "dealer": 3})
        seen.append({agent: env.observe(agent)["observation"] for agent in env.agents})
    one, two = seen
    assert np.array_equal(one["player_0"], two["player_0"]) and np.array_equal(one["player_1"], two["player_1"])
    assert not np.array_equal(one["player_2"], two["player_2"]) and not np.array_equal(one["player_3"], two["player_3"])


# ======================================================================== the history pieces


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_history_decodes_to_the_true_sequence_and_leaves_the_plain_observation_as_it_was(name: str) -> None:
    """Random games of every variant, one step at a time: every seat's decoded history is
    the (relative seat, card) sequence played and the place of the reveal; the plain
    observation is the prefix of the one with history, at batch one and batched."""
    rules = VARIANTS[name]
    n, B = rules.n_players, 6
    plain, full = ObservationEncoder(rules), ObservationEncoder(rules, history=True)
    assert plain.size == observation_layout(rules).size and full.size == plain.size + 105
    assert list(full.layout.pieces)[-3:] == ["play_order", "reveal_at", "revealed_card"]
    rng = np.random.default_rng(sorted(VARIANTS).index(name))
    state = core.new_hands(rules, B, rng)
    plays: list[list[tuple[int, int]]] = [[] for _ in range(B)]
    reveal = [-1] * B
    checked = 0
    while True:
        for g in range(B):
            if reveal[g] < 0 and state.revealed_by[g] >= 0:
                reveal[g] = len(plays[g])  # turned up before the next card
        for seat in range(n):
            seats = np.full(B, seat)
            obs = full.encode(state, seats)
            np.testing.assert_array_equal(obs[:, : plain.size], plain.encode(state, seats))
            for g in range(B):
                one = full.encode(state.select([g]), seats[:1])[0]
                np.testing.assert_array_equal(one, obs[g])
                decoded = read_history(rules, one)
                assert decoded.plays == tuple(((s - seat) % n, c) for s, c in plays[g])
                assert decoded.reveal == reveal[g]
                assert decoded.band_card == (state.band_card[g] if reveal[g] >= 0 else -1)
                checked += 1
        bits = core.legal_bits(state)
        if not bits.any():
            break
        actions = np.maximum(core.random_legal_actions(bits, rng), 0)
        playing = (state.phase == core.PLAY) & (actions != 52)
        for g in np.flatnonzero(playing):
            plays[g].append((int(state.current[g]), int(actions[g])))
        core.step(state, actions)
    assert all(len(p) == rules.pack_size for p in plays)
    if rules.trump == "band":
        assert all(r >= 0 for r in reveal)  # the band card is always turned up by the end
    assert checked > B * n * rules.pack_size


def test_history_of_a_scripted_band_hand() -> None:
    """Band hukum: seat 1 hides, trick 0 is led; the third seat to play asks before playing."""
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules, history=True)
    for seed in range(200):  # deals until the third player of the first trick cannot follow
        state = core.new_hands(rules, 1, rng=seed, dealers=0)
        for _ in range(3):  # seat 1 hides, leads, seat 2 follows
            core.step(state, [int(np.flatnonzero(core.legal_action_mask(state)[0])[0])])
        if core.legal_action_mask(state)[0, 52]:
            break
    first_two = [(1, *set_to_cards(state.played[0, 1])), (2, *set_to_cards(state.played[0, 2]))]
    assert read_history(rules, encoder.encode(state, np.array([0]))[0]) == History(tuple(first_two), -1)
    core.step(state, [52])  # seat 3 asks
    after_ask = read_history(rules, encoder.encode(state, np.array([0]))[0])
    assert after_ask == History(tuple(first_two), 2, int(state.band_card[0]))
    assert encoder.layout.view(encoder.encode(state, np.array([0]))[0], "reveal_at")[0] == np.float32(3 / 52)
    core.step(state, [int(np.flatnonzero(core.legal_action_mask(state)[0])[0])])
    seen_by_3 = read_history(rules, encoder.encode(state, np.array([3]))[0])
    assert [s for s, _ in seen_by_3.plays] == [2, 3, 0] and seen_by_3.reveal == 2


def test_read_history_refuses_a_plain_observation() -> None:
    rules = Rules()
    state = core.new_hands(rules, 1, rng=0)
    with pytest.raises(ValueError, match="history=True"):
        read_history(rules, ObservationEncoder(rules).encode(state, np.array([0]))[0])


def test_the_env_takes_history_and_checks_it() -> None:
    env = mendikot_env.env("band", history=True)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)["observation"]
    assert obs.shape == (observation_layout(Rules.preset("band"), history=True).size,)
    assert env.observation_space(env.agent_selection)["observation"].shape == obs.shape
    assert env.state().shape == env.unwrapped.state_space.shape  # the state tensor has no history
    plain = mendikot_env.env("band")
    plain.reset(seed=3)
    np.testing.assert_array_equal(obs[:864], plain.observe(plain.agent_selection)["observation"])
    with pytest.raises(ValueError, match="history 'yes' is not allowed"):
        mendikot_env.env(history="yes")
