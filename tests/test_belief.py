"""The belief of one seat: consistent samples, exact marginals, and no leak of hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import seed_agent
from mendikot_env import core
from mendikot_env.belief import Belief, InfoState, _mixed_deals, read_view, replay_worlds, sample_worlds
from mendikot_env.cards import NUM_CARDS, NUM_RANKS, SUIT_MASKS, popcount, set_to_cards
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules

PRESETS = ["standard", "band", "band_auto", "open", "dehla_pakad"]


def positions(rules: Rules, games: int, seed: int, every: int = 1, history: bool = False):
    """(state, seat, InfoState) of every seat at every ``every``-th step of random games."""
    encoder = ObservationEncoder(rules, history=history)
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


@pytest.mark.parametrize("history", [False, True])
@pytest.mark.parametrize("preset", [*PRESETS, "six"])
def test_every_world_gives_back_the_observation_and_respects_voids_and_sizes(preset: str, history: bool) -> None:
    rules = Rules.preset("band", n_players=6) if preset == "six" else Rules.preset(preset)
    encoder = ObservationEncoder(rules, history=history)
    for state, seat, info in positions(rules, games=2, seed=3, every=3, history=history):
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
        # Every card of the pack is in exactly one hand, played or face down.
        face_down = core.CARD_SETS[worlds.face_down]
        every = np.bitwise_or.reduce(worlds.hands, axis=1) | np.bitwise_or.reduce(worlds.played, axis=1) | face_down
        count = popcount(worlds.hands).sum(axis=1) + popcount(worlds.played).sum(axis=1) + popcount(face_down)
        assert (popcount(every) == rules.pack_size).all() and (count == rules.pack_size).all()
        if history:  # the past is public: the worlds' tricks, takings and order are the true ones
            for name in ("trick_winners", "taken", "middle", "play_index", "reveal_trick", "duty", "trick_trumps"):
                truth = np.repeat(getattr(state, name), 8, axis=0)
                np.testing.assert_array_equal(getattr(worlds, name), truth, err_msg=name)
            if state.revealed_by[0] >= 0:
                assert (worlds.band_card == state.band_card[0]).all()


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
            if c.holds is not None and not any(s == c.holds[0] and x // NUM_RANKS == c.holds[1] for s, x in where):
                return  # the seat to act must hold the suit led (auto reveal)
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


def end_positions(
    preset: str, tricks_left: int, want_face_down: bool = False, history: bool = False
) -> list[InfoState]:
    """Observations of every seat to act with ``tricks_left`` tricks to go, from seeded random games."""
    rules = Rules.preset(preset)
    found = []
    for state, seat, info in positions(rules, games=40, seed=11, history=history):
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


def auto_face_down_positions(history: bool, tricks_left: int = 3) -> list[InfoState]:
    """band_auto observations of seats waiting for another to follow while the card is still
    face down late in the hand: the leader leads a suit every other hand still holds, so no
    one is void and the card stays down (random play turns it up early)."""
    rules = Rules.preset("band_auto")
    encoder = ObservationEncoder(rules, history=history)
    rng = np.random.default_rng(4)
    found: list[InfoState] = []
    for game in range(60):
        state = core.new_hands(rules, 1, rng=game)
        while not state.done[0] and state.face_down[0] >= 0 or state.phase[0] == core.HIDE:
            bits = core.legal_bits(state)
            if state.trick_size[0] == 0 and state.phase[0] == core.PLAY:
                others = [int(state.hands[0, s]) for s in range(4) if s != state.current[0]]
                safe = [c for c in set_to_cards(bits[0]) if all(h & int(SUIT_MASKS[c // NUM_RANKS]) for h in others)]
                bits = np.array([sum(1 << c for c in safe) or int(bits[0])], np.uint64)
            core.step(state, core.random_legal_actions(bits, rng))
            if state.trick_no[0] == rules.n_tricks - tricks_left and state.trick_size[0] == 1:
                for seat in range(4 * int(state.face_down[0] >= 0)):
                    if seat not in (state.current[0], state.hider[0]):
                        found.append(InfoState(rules, encoder.encode(state, np.array([seat]))[0]))
                break
        if len(found) >= 4:
            break
    return found


@pytest.mark.parametrize(
    "preset,face_down,history,acting",
    [
        ("standard", False, False, True),
        ("band", True, False, True),
        ("band_auto", False, False, True),
        ("dehla_pakad", False, False, True),
        ("band", False, True, True),
        ("band_auto", True, True, False),  # seats waiting: the seat to act must hold the suit led
        ("band_auto", True, False, False),
    ],
)
def test_marginals_match_enumeration_of_small_end_positions(
    preset: str, face_down: bool, history: bool, acting: bool
) -> None:
    if acting:
        infos = end_positions(preset, 3, want_face_down=face_down, history=history)
    else:
        infos = auto_face_down_positions(history)
    assert infos, "no end position found"
    if not acting:
        assert any(Belief(info).constraints.holds is not None for info in infos)
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


@pytest.mark.parametrize("history", [False, True])
def test_no_leak_the_hidden_cards_of_the_others_never_change_the_samples(history: bool) -> None:
    """Swap the true hidden cards for another consistent deal: same observation, same samples
    (and, with the history, the same policy weights)."""
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules, history=history)
    policy = agents.make("easy", rules, seed=0)
    compared = 0
    for state, seat, info in positions(rules, games=2, seed=7, every=5, history=history):
        candidates = sample_worlds(info, 16, rng=99, seat=seat)  # deals the seat cannot tell apart
        differ = (candidates.hands != state.hands).any(axis=1) | (candidates.face_down != state.face_down)
        if not differ.any():
            continue  # a single consistent deal: nothing to swap
        other_truth = candidates.select([int(np.flatnonzero(differ)[0])])
        other_obs = encoder.encode(other_truth, np.array([seat]))[0]
        np.testing.assert_array_equal(other_obs, info.observation)
        twin = InfoState(rules, other_obs, info.mask)
        a, b = sample_worlds(info, 16, rng=5, seat=seat), sample_worlds(twin, 16, rng=5, seat=seat)
        np.testing.assert_array_equal(a.hands, b.hands)
        np.testing.assert_array_equal(a.face_down, b.face_down)
        np.testing.assert_allclose(Belief(info).trump_posterior(), Belief(twin).trump_posterior())
        if history and compared % 4 == 0:
            weighed = []
            for x in (info, twin):
                seed_agent(policy, 0)  # the policy's own randomness, the same in both
                weighed.append(Belief(x).weigh(policy, 32, rng=3, seat=seat))
            np.testing.assert_array_equal(weighed[0].log_weights, weighed[1].log_weights)
        compared += 1
    assert compared >= 20


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


def asker_without_trumps(rules: Rules) -> tuple[core.State, int, int]:
    """A random band game stopped after the trick in which a player asked for the band card
    and then played no trump, with trumps still unseen by another seat (the observer).
    Returns the state, the asker and the observer."""
    rng = np.random.default_rng(0)
    for game in range(300):
        state = core.new_hands(rules, 1, rng=game)
        asker, trick = -1, -1
        while not state.done[0]:
            bits = core.legal_bits(state)
            ask = bool(int(bits[0]) >> 52 & 1) and rng.random() < 0.5
            mover = int(state.current[0])
            action = 52 if ask else int(core.random_legal_actions(bits, rng)[0])
            if action == 52 and asker < 0:
                asker, trick = mover, int(state.trick_no[0])
            elif asker == mover and trick == state.trick_no[0]:
                if action // NUM_RANKS == state.trump[0] or state.led_suit[0] == state.trump[0]:
                    break  # a trump played, or trumps led: the void shows without the history
                core.step(state, [action])
                while state.trick_size[0]:  # finish the trick: the card leaves the trick piece
                    core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
                trumps = int(SUIT_MASKS[state.trump[0]])
                for observer in range(rules.n_players):
                    others = [s for s in range(rules.n_players) if s not in (asker, observer)]
                    if observer != asker and any(int(state.hands[0, s]) & trumps for s in others):
                        return state, asker, observer
                break
            core.step(state, [action])
    raise AssertionError("no game found where an asker plays no trump")


def test_an_asker_who_plays_no_trump_has_none_and_only_the_history_says_so() -> None:
    rules = Rules.preset("band")
    state, asker, observer = asker_without_trumps(rules)
    trump = int(state.trump[0])
    assert not int(state.hands[0, asker]) & int(SUIT_MASKS[trump])  # the truth
    rel = (asker - observer) % rules.n_players
    trumps = np.arange(NUM_CARDS) // NUM_RANKS == trump
    plain = Belief(InfoState(rules, ObservationEncoder(rules).encode(state, np.array([observer]))[0]))
    full_obs = ObservationEncoder(rules, history=True).encode(state, np.array([observer]))[0]
    full = Belief(InfoState(rules, full_obs))
    assert plain.constraints.allowed[rel][trump] and plain.card_marginals()[rel, trumps].sum() > 0.1
    assert not full.constraints.allowed[rel][trump] and full.card_marginals()[rel, trumps].sum() == 0
    assert full.count < plain.count
    worlds = full.worlds(64, rng=0, seat=observer)
    assert not (worlds.hands[:, asker] & SUIT_MASKS[trump]).any()


def hard_positions(games: int, seed: int):
    """(state, seat, history observation) at the start of tricks 1, 3 and 5 of band games
    that the hard bot plays at every seat."""
    rules = Rules.preset("band")
    encoder, plain = ObservationEncoder(rules, history=True), ObservationEncoder(rules)
    bot = agents.make("hard", rules, seed=0)
    for game in range(games):
        state = core.new_hands(rules, 1, rng=1000 * seed + game)
        while not state.done[0]:
            if state.phase[0] == core.PLAY and state.trick_no[0] in (1, 3, 5) and state.trick_size[0] == 0:
                for seat in range(rules.n_players):
                    yield state, seat, encoder.encode(state, np.array([seat]))[0]
            core.step(state, bot.act(plain.encode(state, state.current), core.legal_action_mask(state)))


def test_policy_weighting_moves_probability_toward_the_true_deal() -> None:
    """On games the hard bot plays, weighting by the hard bot's moves puts more chance on
    the cards each hand truly holds and on the true hidden trump than the uniform belief.
    (Measured over two seeds: about 0.34 -> 0.40 on the true cards, standard error 0.005,
    and 0.31..0.33 -> 0.44..0.53 on the true trump, standard error 0.04.)"""
    rules = Rules.preset("band")
    bot = agents.make("hard", rules, seed=0)
    on_cards, on_trump, ess = [], [], []
    for state, seat, obs in hard_positions(games=6, seed=0):
        belief = Belief(InfoState(rules, obs))
        weighed = belief.weigh(bot, 300, rng=seat, seat=seat)
        uniform, weighted = belief.card_marginals(), weighed.card_marginals()
        assert weighted.sum(axis=1) == pytest.approx(np.array(belief.constraints.sizes, float))
        for k in range(1, rules.n_players):
            truth = set_to_cards(state.hands[0, (seat + k) % rules.n_players] & ~core.CARD_SETS[state.known_card[0]])
            on_cards.append((uniform[k, truth].mean(), weighted[k, truth].mean()))
        if state.face_down[0] >= 0 and state.hider[0] != seat:
            suit = state.face_down[0] // NUM_RANKS
            on_trump.append((belief.trump_posterior()[suit], weighed.trump_posterior()[suit]))
        ess.append(weighed.ess)
        assert 1.0 <= weighed.ess <= 300.0 + 1e-9
    cards, trump = np.array(on_cards), np.array(on_trump)
    assert len(cards) > 150 and len(trump) > 30
    assert cards[:, 1].mean() > cards[:, 0].mean() + 0.03
    assert trump[:, 1].mean() > trump[:, 0].mean() + 0.05


def test_the_likeliest_deals_are_the_highest_weights() -> None:
    """``likeliest``: with no pruning, exactly the n highest weights of ``weigh`` on the same
    draws; weighing none of the moves (``recent=0``), the first n draws; with the default
    pruning margin, most of the exact n, for fewer of the policy's rows."""
    rules = Rules.preset("band")
    bot = agents.make("hard", rules)  # unseeded: ties broken by card order, so every replay weighs alike
    overlap, rows = [], {"all": 0, "pruned": 0}

    class Counted:  # the bot, counting the deals it is asked about
        def __init__(self, key: str) -> None:
            self.key = key

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            rows[self.key] += len(observations)
            return bot.act(observations, masks)

    for _, seat, obs in hard_positions(games=2, seed=1):
        belief = Belief(InfoState(rules, obs))
        weighed = belief.weigh(bot, 64, rng=seat, seat=seat)
        top = weighed.worlds.deal[np.argsort(-weighed.log_weights, kind="stable")[:16]]
        exact = belief.likeliest(Counted("all"), 16, 64, rng=seat, seat=seat, margin=np.inf)
        np.testing.assert_array_equal(exact.deal, top)
        np.testing.assert_array_equal(
            belief.likeliest(bot, 16, 64, rng=seat, seat=seat, recent=0).deal, weighed.worlds.deal[:16]
        )
        pruned = belief.likeliest(Counted("pruned"), 16, 64, rng=seat, seat=seat).deal
        overlap.append(len({row.tobytes() for row in pruned} & {row.tobytes() for row in top}) / 16)
    assert len(overlap) >= 20 and np.mean(overlap) >= 0.75
    assert rows["pruned"] < 0.9 * rows["all"]


def test_opponents_only_never_asks_the_policy_about_the_partner_s_moves() -> None:
    """``likeliest(opponents_only=True)`` weighs the other team's moves only. The policy is a
    spy: a mover whose partner has played exactly the observer's cards is the observer's
    partner, and with opponents_only the spy never sees one (without it, it does)."""
    rules = Rules.preset("band")
    bot = agents.make("hard", rules)
    layout = ObservationEncoder(rules).layout
    asked = {True: 0, False: 0}

    class Spy:
        def __init__(self, mine: np.ndarray, only: bool) -> None:
            self.mine, self.only = mine, only

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            partner_played = layout.view(observations, "played")[:, 2] > 0.5  # the mover's partner
            asked[self.only] += int((partner_played == self.mine).all(axis=1).sum())
            return bot.act(observations, masks)

    positions = 0
    for _, seat, obs in hard_positions(games=2, seed=2):
        belief = Belief(InfoState(rules, obs))
        mine = np.zeros(NUM_CARDS, bool)
        mine[set_to_cards(belief.view.played[0])] = True
        if not mine.any():
            continue
        positions += 1
        for only in (True, False):
            belief.likeliest(Spy(mine, only), 8, 32, rng=seat, seat=seat, opponents_only=only)
    assert positions >= 16 and asked[True] == 0 and asked[False] > 0


def test_mixed_deals_are_consistent_and_weigh_what_their_two_opponents_weigh() -> None:
    """``likeliest(mix=True)``: every deal re-encodes to the observation; re-weighed from
    scratch, each deal's weight is the sum of its two opponents' weights in the draws they came
    from (a seat's moves depend on its own cards alone); the deals are distinct and at least as
    likely, rank by rank, as the likeliest draws themselves (each draw is one of the pairs).
    Positions where each relative seat hid the band card are among those checked."""
    rules = Rules.preset("band")
    bot = agents.make("hard", rules)  # unseeded: every replay weighs alike
    encoder = ObservationEncoder(rules, history=True)
    hiders = set()
    for _, seat, obs in hard_positions(games=3, seed=3):
        belief = Belief(InfoState(rules, obs))
        hiders.add(belief.view.hider)
        worlds = belief.likeliest(bot, 16, 64, rng=seat, seat=seat, mix=True)
        np.testing.assert_array_equal(encoder.encode(worlds, np.full(16, seat)), np.repeat(obs[None], 16, axis=0))
        assert len({row.tobytes() for row in worlds.deal}) == 16
        hidden = belief.sample_hands(64, seat)
        _, by_seat = replay_worlds(belief, hidden, seat, bot, opponents_only=True, by_seat=True)
        drawn = np.sort(by_seat.sum(axis=1))[::-1][:16]
        mixed = _mixed_deals(belief, hidden, by_seat, 16, np.random.default_rng(seat))
        _, again = replay_worlds(belief, mixed, seat, bot, opponents_only=True)
        assert (np.sort(again)[::-1] >= drawn - 1e-9).all()
        down = belief.view.hider, belief.constraints.sizes[4] > 0  # an opponent's unit holds its face-down card
        for row, weight in zip(mixed, again, strict=True):  # the pair each deal came from
            first = np.flatnonzero((hidden[:, 1] == row[1]) & ((hidden[:, 4] == row[4]) | (down != (1, True))))[0]
            second = np.flatnonzero((hidden[:, 3] == row[3]) & ((hidden[:, 4] == row[4]) | (down != (3, True))))[0]
            assert weight == pytest.approx(by_seat[first, 1] + by_seat[second, 3])
    assert {1, 2, 3} <= hiders


def test_mixed_deals_of_equal_weight_do_not_share_one_opponent_s_hand() -> None:
    """Pairs that weigh alike (no move weighed yet, or the same moves unexpected) are taken in
    random order: in the grid's order, late in a hand where most pairs fit, the deals kept
    would mostly give opponent 1 the same hand."""
    rules = Rules()
    bot = agents.make("hard", rules)
    encoder, plain = ObservationEncoder(rules, history=True), ObservationEncoder(rules)
    state = core.new_hands(rules, 1, rng=4)
    while state.trick_no[0] < 9:
        core.step(state, bot.act(plain.encode(state, state.current), core.legal_action_mask(state)))
    seat = int(state.current[0])
    belief = Belief(InfoState(rules, encoder.encode(state, np.array([seat]))[0]))
    hidden = belief.sample_hands(64, 0)
    mixed = _mixed_deals(belief, hidden, np.zeros((64, 4)), 16, np.random.default_rng(0))
    assert len(set(mixed[:, 1].tolist())) >= 8 and len(set(mixed[:, 3].tolist())) >= 8


def test_policy_weighting_needs_the_history_and_a_sensible_epsilon() -> None:
    rules = Rules.preset("band")
    state = core.new_hands(rules, 1, rng=0)
    bot = agents.make("hard", rules)
    plain = Belief(InfoState(rules, ObservationEncoder(rules).encode(state, np.array([0]))[0]))
    with pytest.raises(ValueError, match="history=True"):
        plain.weigh(bot, 8)
    full = Belief(InfoState(rules, ObservationEncoder(rules, history=True).encode(state, np.array([0]))[0]))
    with pytest.raises(ValueError, match="epsilon"):
        full.weigh(bot, 8, epsilon=0.0)
    with pytest.raises(ValueError, match="draws must be a positive integer, got 0"):
        full.weigh(bot, 0)
    with pytest.raises(ValueError, match="draws must be a positive integer, got True"):
        full.weigh(bot, True)
    worlds = full.worlds(5, rng=0, policy=bot, draws=20)
    assert worlds.batch_size == 5
    with pytest.raises(ValueError, match="history=True"):
        plain.likeliest(bot, 4, 8)
    with pytest.raises(ValueError, match=r"n must be an integer from 1 to draws \(8\), got 9"):
        full.likeliest(bot, 9, 8)
    with pytest.raises(ValueError, match="recent must be None or an integer >= 0, got -1"):
        full.likeliest(bot, 4, 8, recent=-1)
    assert full.likeliest(bot, 4, 8, rng=0).batch_size == 4


def decisions_along_hands(rules: Rules, every: int = 6) -> list[Belief]:
    """Beliefs of several seats at several points of 12 hands played by hard (histories of
    several lengths, band hides and asks included)."""
    history, plain = ObservationEncoder(rules, history=True), ObservationEncoder(rules)
    state = core.new_hands(rules, 12, rng=3)
    bot = agents.make("hard", rules, seed=0)
    beliefs = []
    for t in range(30):
        obs, masks = history.encode(state, state.current), core.legal_action_mask(state)
        if t % every == every - 1:
            beliefs += [Belief(InfoState(rules, obs[i], masks[i])) for i in range(0, 12, 3)]
        core.step(state, bot.act(plain.encode(state, state.current), masks))
    return beliefs


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_the_histories_of_many_decisions_replayed_together_weigh_as_one_by_one(preset: str) -> None:
    from mendikot_env.belief import Weighing
    from mendikot_env.belief.together import replay_states, replay_together

    rules = Rules.preset(preset)
    beliefs = decisions_along_hands(rules)
    assert len({len(b.view.history.plays) for b in beliefs}) >= 4, "several history lengths in one call"
    rng = np.random.default_rng(0)
    hidden = [belief.sample_hands(24, rng) for belief in beliefs]
    policy = agents.make("hard", rules)  # ties broken by card id: the same choice in any batch
    weights = replay_together(beliefs, hidden, 0, policy)
    states = replay_states(beliefs, hidden, 0)
    for belief, deals, weight, state in zip(beliefs, hidden, weights, states, strict=True):
        alone, by_seat = replay_worlds(belief, deals, 0, policy, Weighing(opponents_only=True), by_seat=True)
        np.testing.assert_array_equal(by_seat, weight)
        for name in ("hands", "current", "trick_no", "face_down", "trump"):
            np.testing.assert_array_equal(getattr(alone, name), getattr(state, name))
    assert any((w != 0).any() for w in weights), "some deals are less likely than others"


def test_the_likeliest_deals_of_one_decision_drawn_together_are_those_drawn_alone() -> None:
    from mendikot_env.belief import likeliest_together

    for rules in (Rules(), Rules.preset("band")):
        beliefs = decisions_along_hands(rules, every=10)
        for belief in beliefs[:6]:
            bots = [agents.make("hard", rules, seed=1) for _ in range(2)]  # one jitter stream each
            together = likeliest_together([belief], bots[0], 16, 64, np.random.default_rng(5))
            alone = belief.likeliest(bots[1], 16, 64, np.random.default_rng(5), mix=True)
            np.testing.assert_array_equal(together[0].hands, alone.hands)
        random_policy = [agents.make("random", rules, seed=2), agents.make("random", rules, seed=2)]
        rng = np.random.default_rng(1)  # one generator, decision after decision
        asked_alone = [b.likeliest(random_policy[0], 8, 32, rng, mix=True) for b in beliefs]
        fallback = likeliest_together(beliefs, random_policy[1], 8, 32, np.random.default_rng(1))
        for one, other in zip(asked_alone, fallback, strict=True):  # no act_state: each decision on its own
            np.testing.assert_array_equal(one.hands, other.hands)


def test_two_decisions_never_share_the_policy_s_answer_even_for_one_hand() -> None:
    """The policy reads one hand once per decision: two games with the same cards for the mover
    may have different histories (rare across games, never ruled out), so the answer is per decision."""
    from mendikot_env.belief.together import replay_together

    rules = Rules()
    belief = decisions_along_hands(rules)[-1]
    hidden = belief.sample_hands(16, np.random.default_rng(0))
    bot = agents.make("hard", rules)
    asked: list[int] = []

    class Counting:
        def act_state(self, state: core.State, legal: np.ndarray, games: np.ndarray) -> np.ndarray:
            asked.append(np.unique(games).size)
            return bot.act_state(state, legal, games)

    replay_together([belief], [hidden], 0, Counting())
    once, asked[:] = list(asked), []
    replay_together([belief, belief], [hidden, hidden], 0, Counting())
    assert asked == [2 * n for n in once] and sum(once) > 0
