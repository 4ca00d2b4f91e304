"""Random-play invariants on every variant, checked on whole batches at every step.

Unlike the differential test these checks do not need a second implementation: they are
facts that hold in any legal hand (cards are conserved, masks are never empty before the
end, the tens add to four, the winner follows from the tens and tricks, ...).
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest
from support import ROTATIONS, VARIANTS

from mendikot_env import core
from mendikot_env.analysis import deal_cards
from mendikot_env.cards import ASK_ACTION, CARD_BITS, SUIT_MASKS, TENS_MASK, set_to_cards
from mendikot_env.rules import PRESETS, Rules

GAMES = 600
SUIT_SETS = np.append(SUIT_MASKS, np.uint64(0))  # index -1 (no suit) -> empty set
CARD_SETS = np.append(CARD_BITS[:52], np.uint64(0))  # index -1 (no card) -> empty set


def count(bits: np.ndarray) -> np.ndarray:
    return np.bitwise_count(bits).astype(np.int64)


class Tracker:
    """What the test itself records from the actions, to compare with the state."""

    def __init__(self, state: core.State) -> None:
        B, n = state.batch_size, state.rules.n_players
        self.rules = state.rules
        self.games = np.arange(B)
        self.plays = np.zeros(B, dtype=np.int64)  # cards played so far
        self.seen = np.zeros(B, dtype=np.uint64)  # every card played so far
        self.first_off_suit = np.full(B, -1)  # suit of the first card that failed to follow
        self.voids = np.zeros((B, n), dtype=np.uint8)  # suits each seat failed to follow
        self.hidden = np.full(B, -1)  # the card chosen face down (band)
        self.asks = np.zeros(B, dtype=np.int64)

    def before_step(self, state: core.State, actions: np.ndarray) -> None:
        """Record the actions about to be stepped (the state is still the one they were chosen in)."""
        live = state.phase != core.OVER
        hide = live & (state.phase == core.HIDE)
        ask = live & ~hide & (actions == ASK_ACTION)
        play = live & ~hide & ~ask
        self.hidden[hide] = actions[hide]
        self.asks += ask
        cards = np.where(play, actions, -1)
        bits = CARD_SETS[cards]
        assert not (self.seen & bits).any(), "a card was played twice"
        self.seen |= bits
        self.plays += play
        led = state.led_suit
        off = play & (led >= 0) & (cards // 13 != led)
        first = off & (self.first_off_suit < 0)
        self.first_off_suit[first] = cards[first] // 13
        seat = np.maximum(state.current, 0)
        self.voids[self.games[off], seat[off]] |= (1 << led[off]).astype(np.uint8)


def check_state(state: core.State, tracker: Tracker) -> None:
    """Invariants that hold between any two steps."""
    rules = state.rules
    n, B = rules.n_players, state.batch_size
    games = np.arange(B)
    live = state.phase != core.OVER
    bits = core.legal_bits(state)
    mask = core.legal_action_mask(state)
    assert mask.shape == (B, 53) and mask.dtype == bool
    # The mask and the 53-bit set agree.
    assert (mask.sum(axis=1) == count(bits)).all()
    assert (mask == (((bits[:, None] >> np.arange(53, dtype=np.uint64)) & np.uint64(1)) == 1)).all()
    # Masks are never empty before the end, and always empty after it.
    assert (count(bits[live]) > 0).all(), "empty mask in a live game"
    assert (bits[~live] == 0).all() and not mask[~live].any(), "non-empty mask after the end"
    assert (state.current[~live] == core.NO_SEAT).all()
    assert ((state.current[live] >= 0) & (state.current[live] < n)).all()

    # Every card is in exactly one place: a hand, a seat's played cards, or face down.
    face_down = CARD_SETS[state.face_down]
    hider = state.hider
    fd_by_seat = np.where(np.arange(n)[None, :] == hider[:, None], face_down[:, None], np.uint64(0))
    held = state.hands | state.played | fd_by_seat
    assert (held == state.deal).all(), "cards not conserved per seat"
    assert (count(state.hands) + count(state.played) + count(fd_by_seat) == rules.hand_size).all()
    pack = np.bitwise_or.reduce(state.deal, axis=1)
    expected_pack = int(sum(1 << c for c in range(52) if n == 4 or c % 13 != 0))
    assert (pack == np.uint64(expected_pack)).all() and (count(state.deal).sum(axis=1) == rules.pack_size).all()
    assert (np.bitwise_or.reduce(state.played, axis=1) == tracker.seen).all()
    assert (count(state.played).sum(axis=1) == tracker.plays).all()
    assert (tracker.plays == state.trick_no * n + (state.trick_cards >= 0).sum(axis=1)).all()

    # Legal cards are cards of the acting seat's hand (plus the ask action).
    seat = np.maximum(state.current, 0)
    hand = state.hands[games, seat]
    card_bits = bits & np.uint64((1 << 52) - 1)
    assert ((card_bits & ~hand) == 0).all(), "a legal card not in the hand"
    led = state.led_suit
    follow = hand & SUIT_SETS[led]
    # Follow suit if you can (always, even after asking).
    can_follow = live & (led >= 0) & (follow != 0)
    assert (card_bits[can_follow] == follow[can_follow]).all(), "must follow suit"
    # A leader (and the band hider choosing a card) may play any card of the hand.
    free = live & (led < 0)
    assert (card_bits[free] == hand[free]).all()

    # Asking is legal exactly when the band card is face down and a follower cannot follow.
    ask = ((bits >> np.uint64(ASK_ACTION)) & np.uint64(1)) == 1
    may_ask = live & (state.phase == core.PLAY) & (state.face_down >= 0) & (led >= 0) & (follow == 0)
    if rules.trump == "band" and rules.reveal == "ask":
        assert (ask == may_ask).all(), "ask legal when it should not be, or missing"
    else:
        assert not ask.any(), "ask is only an action of band hukum with reveal='ask'"

    # Trump state per method.
    if rules.trump == "cut":
        assert (state.trump == tracker.first_off_suit).all(), "cut trump is the first off-suit card's suit"
    elif rules.trump == "open":
        assert (state.trump == state.open_card // 13).all()
    else:
        hidden = state.phase == core.HIDE
        assert (state.face_down[hidden] == -1).all() and (state.trump[hidden] == -1).all()
        down = state.face_down >= 0
        assert (state.trump[down] == -1).all(), "no trump while the card is face down"
        assert (state.face_down[down] == tracker.hidden[down]).all()
        up = ~hidden & ~down
        assert (state.trump[up] == tracker.hidden[up] // 13).all(), "trump is the band card's suit"
        assert (state.hider == (state.dealer + 1) % n).all()
        # The hider is never to play with only the face-down card left.
        stuck = live & down & (state.current == hider) & (hand == 0)
        assert not stuck.any()
        if rules.reveal == "auto":
            # Auto reveal: nobody faces a suit they cannot follow while the card is face down.
            assert not (live & down & (led >= 0) & (follow == 0)).any()
            assert tracker.asks.sum() == 0

    # Voids (public) are exactly the suits each seat failed to follow.
    assert (state.voids == tracker.voids).all()

    # Taken cards: tricks so far, disjoint between the teams (and the Dehla middle).
    taken = state.taken
    assert ((taken[:, 0] & taken[:, 1]) == 0).all() and ((taken[:, 0] | taken[:, 1]) & state.middle == 0).all()
    done_cards = count(taken).sum(axis=1) + count(state.middle)
    assert (done_cards == state.trick_no * n).all()
    if rules.collection == "mendikot":
        assert (state.middle == 0).all()


def check_results(state: core.State, tracker: Tracker) -> None:
    """Invariants of finished hands."""
    rules = state.rules
    n, T = rules.n_players, rules.n_tricks
    assert state.done.all()
    assert (state.hands == 0).all() and (state.face_down == -1).all() and (state.middle == 0).all()
    assert (state.played == state.deal).all(), "each card played exactly once, by its holder"
    assert (tracker.plays == rules.pack_size).all()
    r = core.hand_results(state)
    tens, tricks, winner = r.tens, r.tricks, r.winner
    assert (tens.sum(axis=1) == 4).all(), "tens add to 4"
    assert (tricks.sum(axis=1) == T).all(), "tricks add to the number of tricks"
    assert (count(state.taken[:, 0] | state.taken[:, 1]) == rules.pack_size).all()
    assert (tens == count(state.taken & TENS_MASK)).all()
    assert ((r.trick_winners >= 0) & (r.trick_winners < n)).all() and r.trick_winners.shape == (state.batch_size, T)
    if rules.collection == "mendikot":
        by_winners = np.stack([(r.trick_winners % 2 == t).sum(axis=1) for t in (0, 1)], axis=1)
        assert (tricks == by_winners).all(), "tricks are the tricks each team won"
    # The winner follows the rules: 3 or 4 tens win, else more tricks, else drawn.
    on_tricks = np.where(tricks[:, 0] > tricks[:, 1], 0, np.where(tricks[:, 1] > tricks[:, 0], 1, -1))
    expected = np.where(tens[:, 0] >= 3, 0, np.where(tens[:, 1] >= 3, 1, on_tricks))
    assert (winner == expected).all()
    if n == 4:
        assert (winner >= 0).all(), "13 tricks cannot tie"
    assert (r.mendikot == (tens == 4).any(axis=1)).all()
    assert (r.whitewash == (tricks == T).any(axis=1)).all()
    assert (~r.whitewash | r.mendikot).all(), "a whitewash takes every ten"
    assert (~r.mendikot | (winner >= 0)).all()
    if rules.trump == "band":
        assert (r.trump == tracker.hidden // 13).all()
    elif rules.trump == "open":
        assert (r.trump == state.open_card // 13).all()
    else:
        assert (r.trump == tracker.first_off_suit).all()
    for g in range(min(5, state.batch_size)):
        d = r.as_dict(g)
        assert set(d) == {"tens", "tricks", "winner", "mendikot", "whitewash", "next_dealer", "trump", "trick_winners"}
        assert d["winner"] in (0, 1, None) and (d["trump"] is None or 0 <= d["trump"] < 4)

    # Next dealer under every rotation rule.
    dealer = state.dealer
    for rotation in ROTATIONS:
        nd = core.hand_results(dataclasses.replace(state, rules=rules.replace(rotation=rotation))).next_dealer
        dealer_team = dealer % 2
        dealer_won = winner == dealer_team
        swept = tricks[np.arange(state.batch_size), dealer_team] == 0
        if rotation == "rotate":
            want = (dealer + 1) % n
        else:
            after_sweep = dealer + (2 if rotation == "loser_deals" else 1)
            want = np.where(dealer_won, dealer + 1, np.where(swept, after_sweep, dealer)) % n
        want = np.where(winner < 0, dealer, want)
        assert (nd == want).all(), rotation


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_random_play_invariants(name: str) -> None:
    rules = VARIANTS[name]
    rng = np.random.default_rng([7, sorted(VARIANTS).index(name)])
    state = core.new_hands(rules, GAMES, rng)
    tracker = Tracker(state)
    steps = 0
    while True:
        check_state(state, tracker)
        bits = core.legal_bits(state)
        if not bits.any():
            break
        actions = core.random_legal_actions(bits, rng)
        live = state.phase != core.OVER
        assert ((actions >= 0) == live).all()
        # A trick winner leads the next trick.
        before = state.trick_no.copy()
        tracker.before_step(state, actions)
        core.step(state, np.maximum(actions, 0))
        ended = (state.trick_no > before) & (state.phase != core.OVER)
        assert (state.current[ended] == state.trick_winners[ended, before[ended]]).all()
        assert (state.leader[ended] == state.current[ended]).all()
        steps += 1
    check_results(state, tracker)
    extra = 1 if rules.trump == "band" else 0
    assert steps >= rules.pack_size + extra
    if rules.trump == "band" and rules.reveal == "ask":
        assert tracker.asks.sum() > 0


@pytest.mark.parametrize("name", [name for name in sorted(VARIANTS) if "-mendikot-" in name])
def test_what_if_agrees_with_playing_the_card(name: str) -> None:
    """core.if_played and core.beating_ranks (the what-if the bots use) against the core
    itself: each legal card, played in a copy, takes the lead exactly when its what-if
    strength beats the best so far, with that strength and the trump it said; and
    beating_ranks agrees with if_played on every card of the pack, all suits or one asked.
    (The collection does not change how a trick is won.)"""
    rules = VARIANTS[name]
    rng = np.random.default_rng([11, sorted(VARIANTS).index(name)])
    B = 32
    rows = np.arange(B)
    state = core.new_hands(rules, B, rng)
    cut = rules.trump == "cut"
    pack = np.broadcast_to(np.arange(52), (B, 52))
    while not state.done.all():
        bits = core.legal_bits(state)
        led, trump = state.led_suit, state.trump
        best = core.card_strength(state.trick_cards, led, trump, state.trick_trumps).max(axis=1)
        started = state.trick_size > 0
        strength, _ = core.if_played(pack, led[:, None], trump[:, None], cut)
        lowest = core.beating_ranks(best, led, trump, cut)
        beats = pack % 13 >= lowest[rows[:, None], pack // 13]
        assert (beats == (strength > best[:, None]))[started].all()
        for suit in range(4):  # one suit asked: that suit's column
            np.testing.assert_array_equal(
                core.beating_ranks(best, led, trump, cut, suit=np.full(B, suit)), lowest[:, suit]
            )

        playing = state.phase == core.PLAY
        flags = core.unpack_sets(bits & ~np.uint64(1 << ASK_ACTION), 52).astype(bool)
        order = np.argsort(~flags, axis=1, kind="stable")
        for k in range(rules.hand_size):  # the k-th legal card of every game at once
            active = playing & (flags.sum(axis=1) > k)
            if not active.any():
                break
            card = order[:, k]
            now, trump_after = core.if_played(card[:, None], led[:, None], trump[:, None], cut)
            after = state.copy()
            core.step(after, np.where(active, card, 0), active=active)
            seat = state.current
            done = after.trick_no > state.trick_no
            winner = np.where(
                done,
                after.trick_winners[rows, np.minimum(state.trick_no, rules.n_tricks - 1)],
                core.trick_outlook(after)[0],
            )
            takes = ~started | (now[:, 0] > best)
            assert (takes == (winner == seat))[active].all()
            same_trump = active & ~done & (after.trump == trump_after[:, 0])  # not changed by a band reveal after it
            in_trick = core.card_strength(after.trick_cards, after.led_suit, after.trump, after.trick_trumps)
            assert (in_trick[rows, seat] == now[:, 0])[same_trump].all()
            if rules.trump != "band":
                assert (after.trump == trump_after[:, 0])[active].all()
        core.step(state, np.maximum(core.random_legal_actions(bits, rng), 0))


@pytest.mark.parametrize("rules", [Rules(), Rules(trump="band"), Rules(n_players=6, collection="dehla")], ids=str)
def test_finished_games_ignore_their_actions(rules: Rules) -> None:
    rng = np.random.default_rng(3)
    state = core.new_hands(rules, 64, rng)
    while not state.done.all():
        core.step(state, np.maximum(core.random_legal_actions(core.legal_bits(state), rng), 0))
    before = state.copy()
    for action in (0, 17, 52):
        core.step(state, np.full(64, action))  # any action, checked or not, is a no-op
        core.step(state, np.full(64, action), check=False)
    for f in dataclasses.fields(state):
        if f.name != "rules":
            assert np.array_equal(getattr(state, f.name), getattr(before, f.name)), f.name


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_seat_after_the_dealer_starts_every_hand(name: str) -> None:
    rules = VARIANTS[name]
    state = core.new_hands(rules, 64, 3)
    first = (state.dealer + 1) % rules.n_players
    assert set(state.dealer.tolist()) == set(range(rules.n_players))  # every seat deals sometimes
    assert np.array_equal(core.first_player(state), first)
    assert np.array_equal(state.current, first) and np.array_equal(state.leader, first)
    if rules.trump == "band":  # the first player hides the band card
        assert np.array_equal(state.hider, first)


def test_copy_and_select_are_independent() -> None:
    rules = Rules(trump="band")
    rng = np.random.default_rng(11)
    state = core.new_hands(rules, 32, rng)
    for _ in range(10):
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    clone = state.copy()
    picked = state.select([5, 2, 9])
    assert picked.batch_size == 3 and (picked.hands == state.hands[[5, 2, 9]]).all()
    actions = core.random_legal_actions(core.legal_bits(state), np.random.default_rng(0))
    core.step(state, actions)
    # The copy and the selection did not move with the original ...
    assert not np.array_equal(clone.played, state.played)
    # ... and stepping them with the same actions catches up exactly.
    core.step(clone, actions)
    core.step(picked, actions[[5, 2, 9]])
    for f in dataclasses.fields(state):
        if f.name != "rules":
            assert np.array_equal(getattr(clone, f.name), getattr(state, f.name)), f.name
            assert np.array_equal(getattr(picked, f.name), getattr(state, f.name)[[5, 2, 9]]), f.name


def test_illegal_action_is_a_value_error_naming_the_game_action_and_legal_ones() -> None:
    state = core.new_hands(Rules(), 4, 5)
    bits = core.legal_bits(state)
    actions = core.random_legal_actions(bits, np.random.default_rng(0))
    bad_game = 2
    seat = int(state.current[bad_game])
    illegal = next(c for c in range(52) if not int(state.hands[bad_game, seat]) >> c & 1)
    actions[bad_game] = illegal
    before = state.copy()
    with pytest.raises(core.IllegalActionError) as info:
        core.step(state, actions)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert f"game {bad_game}" in message and str(illegal) in message
    legal_cards = [c for c in range(53) if int(bits[bad_game]) >> c & 1]
    assert str(legal_cards) in message
    assert (state.hands == before.hands).all() and (state.current == before.current).all()
    for junk in (np.full(4, 53), np.full(4, -1), np.full(4, 1.5)):
        with pytest.raises(ValueError):
            core.step(state, junk)
    with pytest.raises(ValueError):
        core.step(state, np.zeros(3, dtype=np.int64))  # wrong batch size


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda d: d[:2], ["shape (2, 4, 13)", "3 game(s) of 4 players need shape (3, 4, 13)"]),
        (lambda d: [d[0], d[1][:3], d[2]], ["the deal of game 1 has 3 hands", "4 players need 4 hands of 13"]),
        (lambda d: [d[0], d[1], [d[2][0][:-1], *d[2][1:]]], ["the deal of game 2: seat 0 has 12 cards"]),
        (lambda d: [d[0], [[52, *d[1][0][1:]], *d[1][1:]], d[2]], ["the deal of game 1: seat 0 holds card 52"]),
        (
            lambda d: [d[0], d[1], [[*d[2][0][:-1], d[2][1][0]], *d[2][1:]]],
            ["dealt more than once in the deal of game 2", "seat(s) [0, 1]"],
        ),
        (lambda d: 7, ["deals must have shape (games, 4, 13)", "got 7"]),
    ],
    ids=["missing-game", "missing-hand", "short-hand", "out-of-range", "duplicate", "a-number"],
)
def test_malformed_batched_deals_name_the_game(mutate, words: list[str]) -> None:
    deals = deal_cards(core.new_hands(Rules(), 3, 0)).tolist()
    with pytest.raises(ValueError) as info:
        core.new_hands(Rules(), 3, 1, deals=mutate(deals))
    for word in words:
        assert word in str(info.value), str(info.value)


def test_random_legal_actions_are_uniform_and_legal() -> None:
    rng = np.random.default_rng(0)
    bits = np.array([0b1011, 1 << 52 | 1, 0], dtype=np.uint64)
    draws = np.stack([core.random_legal_actions(bits, rng) for _ in range(3000)])
    assert set(np.unique(draws[:, 0]).tolist()) == {0, 1, 3}
    assert set(np.unique(draws[:, 1]).tolist()) == {0, 52}
    assert (draws[:, 2] == -1).all()
    freq = np.bincount(draws[:, 0], minlength=4)[[0, 1, 3]] / 3000
    assert (abs(freq - 1 / 3) < 0.05).all()


@pytest.mark.parametrize("size", [100, 2000])  # both ways of finding it (small and large batches)
def test_random_legal_action_is_the_drawn_rank_among_the_legal_ones(size: int) -> None:
    # The k-th legal action for k = floor(u * count), u the generator's next uniform.
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**53, size=size, dtype=np.uint64) & rng.integers(0, 2**53, size=size, dtype=np.uint64)
    bits[:64] = np.uint64(1) << np.arange(64, dtype=np.uint64) % np.uint64(53)  # single actions, 0..52
    bits[64] = np.uint64(2**53 - 1)
    chosen = core.random_legal_actions(bits, np.random.default_rng(11))
    uniforms = np.random.default_rng(11).random(bits.size)
    for b, u, c in zip(bits, uniforms, chosen, strict=True):
        legal = set_to_cards(b)
        assert c == (legal[int(u * len(legal))] if legal else -1)


@pytest.mark.parametrize("n", [4, 6, 8])
def test_tens_and_tricks_at_the_end_of_every_player_count_batch_of_one(n: int) -> None:
    # B = 1 takes the same code path as large batches must; check it plays to a valid end.
    for seed in range(20):
        rng = np.random.default_rng(seed)
        state = core.new_hands(Rules(n_players=n, trump="band"), 1, rng)
        tracker = Tracker(state)
        while not state.done.all():
            check_state(state, tracker)
            actions = core.random_legal_actions(core.legal_bits(state), rng)
            tracker.before_step(state, actions)
            core.step(state, actions)
        check_results(state, tracker)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_small_batches_step_exactly_as_large_ones(name: str) -> None:
    """Up to core._FEW_GAMES games the core picks its paths (step's fast path, the band
    duty and reveal checks) on Python lists, above it with numpy: that many games alone and
    the same games twice over in a batch twice as large stay equal, legal sets included,
    through hides, asks, games over before others, and inactive games."""
    rules = VARIANTS[name]
    rng = np.random.default_rng([77, sorted(VARIANTS).index(name)])
    few = core._FEW_GAMES
    small = core.new_hands(rules, few, rng)
    large = small.select(np.r_[0:few, 0:few])
    paths = set()
    while not small.done.all():
        bits = core.legal_bits(small)
        assert np.array_equal(core.legal_bits(large), np.tile(bits, 2))
        actions = core.random_legal_actions(bits, rng)
        active = rng.random(few) < 0.9 if rng.random() < 0.3 else None
        paths.add(core._all_plain_plays(small, actions, active))
        core.step(small, actions, active=active)
        core.step(large, np.tile(actions, 2), active=None if active is None else np.tile(active, 2))
        for f in dataclasses.fields(small):
            if f.name != "rules":
                assert np.array_equal(getattr(large, f.name)[:few], getattr(small, f.name)), f.name
                assert np.array_equal(getattr(large, f.name)[few:], getattr(small, f.name)), f.name
    assert paths == {True, False}


@pytest.mark.parametrize("name", sorted(VARIANTS) + [f"preset {name}" for name in PRESETS])
def test_a_batch_of_one_steps_exactly_as_a_batch(name: str) -> None:
    """At B = 1 the core runs its rules on one game's Python ints (the AEC env's case), in a
    batch on arrays: each game played alone equals the same game in the batch, every field
    and legal set after every step, through hides, asks, trick ends and the end of the hand,
    for every variant and every preset."""
    rules = Rules.preset(name.removeprefix("preset ")) if name.startswith("preset ") else VARIANTS[name]
    rng = np.random.default_rng([78, zlib.crc32(name.encode())])
    games = 24
    batch = core.new_hands(rules, games, rng)
    alone = [batch.select([g]) for g in range(games)]
    steps = 0
    while not batch.done.all():
        bits = core.legal_bits(batch)
        actions = core.random_legal_actions(bits, rng)
        core.step(batch, np.maximum(actions, 0))
        for g, one in enumerate(alone):
            assert core.legal_bits(one).tolist() == [bits[g]], (name, steps, g)
            if actions[g] >= 0:
                core.step(one, actions[g : g + 1])
            for f in dataclasses.fields(batch):
                if f.name != "rules":
                    assert np.array_equal(getattr(one, f.name)[0], getattr(batch, f.name)[g]), (name, steps, g, f.name)
        steps += 1
    assert steps >= rules.n_tricks * rules.n_players


def test_step_refuses_an_active_mask_of_the_wrong_shape() -> None:
    state = core.new_hands(Rules(), 3, 0)
    actions = core.random_legal_actions(core.legal_bits(state), np.random.default_rng(0))
    for active in (np.ones(2, bool), np.ones(4, bool), True, [0, 1, 2], ["no", "no", "no"]):
        with pytest.raises(ValueError, match=r"active needs one bool per game: shape \(3,\) bool"):
            core.step(state, actions, active=active)  # [0, 1, 2] would be game indices


@pytest.mark.parametrize(
    ("actions", "words"),
    [
        (np.zeros(2, np.int64), "got shape (2,): [0, 0]"),
        (np.zeros((3, 1), np.int64), "got shape (3, 1): [[0], [0], [0]]"),
        ([[0, 0, 0]], "got shape (1, 3): [[0, 0, 0]]"),
    ],
)
def test_step_refuses_actions_of_the_wrong_shape_in_one_line(actions, words: str) -> None:
    state = core.new_hands(Rules(), 3, 0)
    with pytest.raises(ValueError) as info:
        core.step(state, actions)
    message = str(info.value)
    assert message.startswith("actions needs one action per game (shape (3,)) or one for all, ") and words in message
    assert "\n" not in message and not isinstance(info.value, core.IllegalActionError)


@pytest.mark.parametrize(
    ("rules", "batch_size", "words"),
    [
        (Rules(), -1, "batch_size must be an integer 0 or more (the number of games), got -1"),
        (Rules(), 2.5, "batch_size must be an integer 0 or more (the number of games), got 2.5"),
        (Rules(), "3", "batch_size must be an integer 0 or more (the number of games), got '3'"),
        (Rules(), True, "got True"),
        ("band", 2, "rules must be a Rules, got the preset name 'band': use Rules.preset('band')"),
        ({"trump": "band"}, 2, "rules must be a Rules"),
    ],
)
def test_new_hands_refuses_a_bad_batch_size_or_rules_in_one_line(rules, batch_size, words: str) -> None:
    with pytest.raises(ValueError) as info:
        core.new_hands(rules, batch_size, 0)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_an_empty_batch_is_still_dealt() -> None:
    state = core.new_hands(Rules(), np.int64(0), 0)
    assert state.batch_size == 0 and core.legal_bits(state).shape == (0,)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.int8])
def test_an_out_of_range_action_of_any_integer_dtype_is_named(dtype: type) -> None:
    state = core.new_hands(Rules(), 2, 0)
    with pytest.raises(
        core.IllegalActionError, match=r"illegal action 60 \(out of range: actions are 0..52\) in game 0"
    ):
        core.step(state, np.array([60, 60], dtype))
