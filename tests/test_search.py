"""The search agent: its spec, legal play in whole games, and choices that never see hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.search import (
    SearchAgent,
    SearchSpec,
    distinct_moves,
    exact_values,
    parse_search_spec,
    settled,
    team_value,
)
from mendikot_env import core
from mendikot_env.arena import duplicate_arena
from mendikot_env.belief import Belief, InfoState, sample_worlds
from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules


def test_make_and_load_build_it_from_a_spec() -> None:
    agent = agents.make("search", Rules())
    assert isinstance(agent, SearchAgent) and agent.spec == SearchSpec()
    agent = agents.load("search:k=8, rollout=medium, exact=1, budget_ms=5000", Rules.preset("band"), seed=1)
    assert agent.spec == SearchSpec(k=8, rollout="medium", exact=1, budget_ms=5000.0)
    assert agent.rollout.name == "medium" and agent.name == "search:k=8, rollout=medium, exact=1, budget_ms=5000"
    assert parse_search_spec("search:k=4,rollout=random").rollout == "random"
    assert parse_search_spec("search:infer=0,draws=2") == SearchSpec(infer=0, draws=2)  # uniform deals


@pytest.mark.parametrize(
    "spec,named",
    [
        ("search:k=0", "k='0'"),
        ("search:k=two", "k='two'"),
        ("search:k=4097", "k='4097' must be an integer from 1 to 4096"),
        ("search:depth=3", "'depth=3'"),
        ("search:k", "'k'"),
        ("search:rollout=nobody", "rollout='nobody'"),
        ("search:budget_ms=-5", "budget_ms='-5'"),
        ("search:exact=-1", "exact='-1'"),
        ("search:exact=4", "exact='4'"),
        ("search:z=-1", "z='-1'"),
        ("search:infer=4", "infer='4'"),
        ("search:draws=0", "draws='0'"),
    ],
)
def test_a_malformed_spec_is_a_clear_error_naming_the_value(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        agents.make(spec, Rules())


def test_a_budget_that_cannot_hold_one_rollout_is_refused() -> None:
    with pytest.raises(ValueError, match="budget_ms=0.001 cannot hold one rollout"):
        agents.make("search:budget_ms=0.001", Rules())


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_it_plays_legal_whole_hands_and_beats_random(preset: str) -> None:
    """A search that valued the wrong team's outcome, or moves at random, would lose these."""
    rules = Rules.preset(preset)
    search = agents.make("search:k=8,rollout=random,exact=1", rules, seed=0)
    result = duplicate_arena(rules, search, agents.make("random", rules, seed=1), deals=16, seed=3)
    assert result.win_rate >= 0.75


def test_decisions_are_grouped_to_fit_max_games() -> None:
    """A batch of decisions larger than ``max_games`` is searched in groups (one decision alone
    when even it does not fit), each row getting a legal move."""
    rules = Rules()
    state = core.new_hands(rules, 5, rng=2)
    encoder = ObservationEncoder(rules)
    agent = SearchAgent(rules, agents.make("easy", rules), SearchSpec(k=2), seed=0, max_games=1)
    calls = []
    search = agent._search
    agent._search = lambda obs, legal: calls.append(len(obs)) or search(obs, legal)  # type: ignore[method-assign]
    mask = core.legal_action_mask(state)
    actions = agent.act(encoder.encode(state, state.current), mask)
    assert mask[np.arange(5), actions].all() and calls == [1] * 5


def test_seed_restarts_the_rollout_agent_too() -> None:
    """With a random rollout, the choices after ``seed(s)`` repeat only if the rollout's own
    generator restarts with the sampler's."""
    rules = Rules()
    state = core.new_hands(rules, 8, rng=5)
    obs, mask = ObservationEncoder(rules).encode(state, state.current), core.legal_action_mask(state)
    agent = agents.make("search:k=3,rollout=random,exact=0,z=0", rules)
    first = [(agent.seed(s), agent.act(obs, mask))[1] for s in range(4)]
    again = [(agent.seed(s), agent.act(obs, mask))[1] for s in range(4)]
    np.testing.assert_array_equal(first, again)


class _ObservationsOnly:
    """A rule-based bot without ``act_state``: the search must encode an observation for it."""

    def __init__(self, bot: agents.RuleBasedAgent) -> None:
        self.bot, self.name, self.rules, self.layout = bot, bot.name, bot.rules, bot.layout

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.bot.act(observations, masks)

    def seed(self, seed: int | None) -> None:
        self.bot.seed(seed)


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_rollouts_on_the_core_state_value_every_move_as_on_observations(preset: str) -> None:
    """The search rolls out and weighs deals with ``hard.act_state`` (no observation encoded);
    the same search with the observation path gives every move of every decision of a hand the
    same value, bit for bit (the same deals, moves and tie-breaking draws)."""
    rules = Rules.preset(preset)
    spec = SearchSpec(k=6)
    fast = SearchAgent(rules, agents.make("hard", rules), spec, seed=4)
    slow = SearchAgent(rules, _ObservationsOnly(agents.make("hard", rules)), spec, seed=4)
    assert fast._act_state is not None and slow._act_state is None
    encoder = ObservationEncoder(rules, history=True)
    state = core.new_hands(rules, 1, rng=8)
    others = agents.make("hard", rules, seed=0)
    searched = 0
    while not state.done[0]:
        obs, mask = encoder.encode(state, state.current)[0], core.legal_action_mask(state)[0]
        if state.current[0] % 2 == 0 and mask.sum() > 1:
            moves, values = fast.move_values(obs, mask)
            np.testing.assert_array_equal(slow.move_values(obs, mask)[1], values)
            searched += 1
            action = moves[np.argmax(values)]
        else:
            action = others.act(obs[None, : encoder.plain_size], mask[None])[0]
        core.step(state, np.array([action]))
    assert searched >= 8


class _FirstLegal:
    """Plays the lowest legal action, from observations (no ``act_state``)."""

    name = "first legal"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.argmax(masks, axis=1)

    def seed(self, seed: int | None) -> None:
        pass


@pytest.mark.parametrize("preset", ["standard", "band"])
@pytest.mark.parametrize("own_is_the_bot", [False, True])
def test_own_rolls_out_the_observer_s_team_and_the_rollout_the_other(preset: str, own_is_the_bot: bool) -> None:
    """With ``own``, the seats of team 0 (the observer's in the sampled deals) play by it and
    the others by the rollout policy: each hand played out one move at a time that way, until
    settled, has the value the batched rollout gives it, whichever of the two reads the core
    state (the bot's ``act_state``) and which an observation."""
    rules = Rules.preset(preset)
    hard = agents.make("hard", rules)  # unseeded: no tie-breaking draws, the same move in any batch
    team, others = (hard, _FirstLegal()) if own_is_the_bot else (_FirstLegal(), hard)
    agent = SearchAgent(rules, others, SearchSpec(k=4, exact=0), own=team)
    state = core.new_hands(rules, 12, rng=3)
    encoder = ObservationEncoder(rules)
    expected = []
    for game in range(12):
        one = state.select(np.array([game]))
        while not settled(one)[0]:
            mover = team if one.current[0] % 2 == 0 else others
            core.step(one, mover.act(encoder.encode(one, one.current), core.legal_action_mask(one)))
        expected.append(team_value(one)[0])
    np.testing.assert_array_equal(agent._play_out(state.select(np.arange(12))), expected)
    plain = SearchAgent(rules, others, SearchSpec(k=4, exact=0))._play_out(state.select(np.arange(12)))
    assert (plain != expected).any(), "the team's policy changes some outcomes"


def test_seed_restarts_the_team_s_rollout_agent_too() -> None:
    """``own=random``: the choices after ``seed(s)`` repeat only if its generator restarts too."""
    rules = Rules()
    state = core.new_hands(rules, 8, rng=5)
    obs, mask = ObservationEncoder(rules).encode(state, state.current), core.legal_action_mask(state)
    agent = agents.make("search:k=3,own=random,exact=0,z=0", rules)
    assert agent.own.name == "random" and agent.rollout.name == "hard"
    first = [(agent.seed(s), agent.act(obs, mask))[1] for s in range(4)]
    again = [(agent.seed(s), agent.act(obs, mask))[1] for s in range(4)]
    np.testing.assert_array_equal(first, again)
    with pytest.raises(ValueError, match="own='nobody' is no agent a search can use"):
        agents.make("search:own=nobody", rules)
    assert agents.registry.names_files("search:own=runs/x") and not agents.registry.names_files("search:own=hard")


@pytest.mark.parametrize(("seed", "seat"), [(4, 1), (7, 2)])
def test_weighing_through_the_core_state_tells_apart_the_cards_a_hider_kept_and_hid(seed: int, seat: int) -> None:
    """``Belief.weigh`` asks a bot that reads the core state once per distinct view of the mover:
    its hand and, if it hid the band card, that card. Two deals where the hider holds one card
    and hid another, and the reverse, are two views. At the start of trick 8 of these band hands
    (where 64 draws hold such pairs) the log weights equal those of the bot read through
    observations, deal by deal."""
    band = Rules.preset("band")
    hard = agents.make("hard", band)
    encoder = ObservationEncoder(band, history=True)
    state = core.new_hands(band, 1, rng=seed)
    while not (state.trick_no[0] == 7 and state.trick_size[0] == 0):
        obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
        core.step(state, hard.act(obs[:, : hard.layout.size], mask))
    assert state.face_down[0] >= 0 and state.hider[0] != seat  # the band card still down, hidden by another
    belief = Belief(InfoState(band, encoder.encode(state, np.array([seat]))[0], None))
    by_state = belief.weigh(hard, 64, rng=0)
    by_observation = belief.weigh(_ObservationsOnly(hard), 64, rng=0)
    np.testing.assert_array_equal(by_state.log_weights, by_observation.log_weights)


def _reference_value(state: core.State) -> float:
    """Plain recursive minimax of one game (team 0 maximising) played to its end, one copy per move."""
    if state.done[0]:
        return float(team_value(state)[0])
    values = []
    for action in np.flatnonzero(core.legal_action_mask(state)[0]):
        child = state.copy()
        core.step(child, np.array([action]))
        values.append(_reference_value(child))
    return max(values) if state.current[0] % 2 == 0 else min(values)


@pytest.mark.parametrize("preset", ["standard", "band", "dehla_pakad", "app"])
def test_the_exact_search_is_the_minimax_of_every_line(preset: str) -> None:
    """Games stopped at random points of the last two tricks (band: the card often still
    face down, so asking is a branch) get the points a plain recursive minimax of every line to
    the end gives (lines stopped once settled keep their points; only the hundredths of the
    tie-break may differ), the tiered points of ``app`` included."""
    rules = Rules.preset(preset)
    state = core.new_hands(rules, 48, rng=6)
    rng = np.random.default_rng(6)
    stop = rules.n_tricks - 2
    while True:  # random play to the last two tricks, then a random number of moves more
        going = ~state.done & ((state.trick_no < stop) | (rng.random(48) < 0.3))
        if not going.any():
            break
        bits = core.legal_bits(state) & ~core.ASK_BIT  # no asking: band cards stay face down, asks are in the trees
        core.step(state, core.random_legal_actions(bits, rng), active=going)
    expected = np.array([_reference_value(state.select([g])) for g in range(48)])
    values = exact_values(state)
    np.testing.assert_array_equal(np.round(values), np.round(expected))
    assert np.abs(values - expected).max() < 0.02
    assert preset != "band" or (state.face_down >= 0).sum() >= 2


@pytest.mark.parametrize("preset", ["standard", "band", "dehla_pakad"])
def test_moves_merged_as_equal_have_equal_values_in_every_deal(preset: str) -> None:
    """Two legal cards that :func:`distinct_moves` merges are worth exactly the same under
    perfect play of the last three tricks, in every deal the seat cannot rule out (cards in
    the current trick and the revealed band card keep runs apart); the search plays only one
    of them. Moves it keeps apart do differ somewhere, so the check has teeth."""
    rules = Rules.preset(preset)
    encoder = ObservationEncoder(rules, history=True)
    state = core.new_hands(rules, 150, rng=2)
    rng = np.random.default_rng(2)
    stopped = np.zeros(150, bool)
    while True:  # random play into the last three tricks, then a random number of moves more
        stopped |= (state.trick_no >= rules.n_tricks - 3) & (rng.random(150) < 0.3)
        going = ~state.done & ~stopped
        if not going.any():
            break
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng), active=going)
    merged = kept_apart_differ = 0
    for g in np.flatnonzero(~state.done):
        game = state.select([g])
        obs, mask = encoder.encode(game, game.current)[0], core.legal_action_mask(game)[0]
        belief = Belief(InfoState(rules, obs, mask))
        worlds = belief.worlds(4, rng=int(g), seat=int(game.current[0]))
        moves = np.flatnonzero(mask)
        values = []
        for move in moves:
            after = worlds.copy()
            core.step(after, np.full(4, move), check=False)
            values.append(exact_values(after))
        for i in range(moves.size):
            for j in range(i + 1, moves.size):
                if distinct_moves(belief, moves[[i, j]], int(moves[i])).size == 1:
                    merged += 1
                    np.testing.assert_array_equal(values[i], values[j])
                else:
                    kept_apart_differ += bool((values[i] != values[j]).any())
    assert merged >= 10 and kept_apart_differ >= 10


@pytest.mark.parametrize("preset", ["standard", "app", "dehla_pakad"])
def test_settled_hands_are_those_no_play_can_change(preset: str) -> None:
    """Every hand found settled midway ends with the winner and points it had when found so
    (the tiered points of ``app`` and Dehla Pakad's middle pile included)."""
    rules = Rules.preset(preset)
    state = core.new_hands(rules, 64, rng=3)
    rng = np.random.default_rng(3)
    found, early = np.full(64, np.nan), 0
    while not state.done.all():
        now = settled(state) & np.isnan(found)
        found[now] = np.round(team_value(state)[now])
        early += int((now & ~state.done).sum())
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    assert early >= 16 and settled(state).all()
    np.testing.assert_array_equal(found[~np.isnan(found)], np.round(team_value(state))[~np.isnan(found)])
    assert not settled(core.new_hands(rules, 64, rng=3)).any()


def test_a_huge_z_keeps_the_rollout_policy_s_move_and_z0_does_not() -> None:
    """The z gate: with z = 1e9 no gain is ever enough, so every choice is the rollout
    policy's own; with z = 0 the best mean wins and some choices differ from the policy's."""
    rules = Rules()
    hard = agents.make("hard", rules)
    state = core.new_hands(rules, 16, rng=9)
    rng = np.random.default_rng(9)
    for _ in range(6):  # a few tricks in, where the moves differ
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    obs, mask = ObservationEncoder(rules).encode(state, state.current), core.legal_action_mask(state)
    policy = hard.act(obs, mask)
    gated = agents.make("search:k=8,z=1e9", rules, seed=0).act(obs, mask)
    np.testing.assert_array_equal(gated, policy)
    assert (agents.make("search:k=8,z=0", rules, seed=0).act(obs, mask) != policy).any()


def test_the_budget_stops_the_rounds_of_deals() -> None:
    """A budget that holds a rollout but not the most deals a spec may ask (4096; about 300 were
    dealt here): a first round of 8 deals is timed, and the rounds after it stop well short of K."""
    rules = Rules()
    agent = agents.make("search:k=4096,rollout=random,budget_ms=200", rules, seed=0)
    dealt = []
    evaluate = agent._evaluate
    agent._evaluate = lambda beliefs, moves, n: dealt.append(n) or evaluate(beliefs, moves, n)  # type: ignore[method-assign]
    state = core.new_hands(rules, 1, rng=0)
    agent.act(ObservationEncoder(rules).encode(state, state.current), core.legal_action_mask(state))
    assert dealt[0] == 8 and sum(dealt) < 4096


def test_an_observation_of_other_rules_is_refused() -> None:
    band = Rules.preset("band")
    state = core.new_hands(band, 1, rng=0)
    core.step(state, core.random_legal_actions(core.legal_bits(state), 0))  # the band card is down
    obs = ObservationEncoder(band).encode(state, state.current)
    with pytest.raises(ValueError, match="not an observation of"):
        agents.make("search:k=2", Rules()).act(obs, core.legal_action_mask(state))


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_choices_do_not_change_when_the_hidden_cards_do(preset: str) -> None:
    """Another true deal the seat cannot tell apart (other hands, another face-down card)
    gives the same observation, and the seeded agent plays the same moves."""
    rules = Rules.preset(preset)
    encoder = ObservationEncoder(rules)
    agent = agents.make("search:k=6", rules, seed=0)
    rng = np.random.default_rng(4)
    state = core.new_hands(rules, 1, rng=8)
    checked = 0
    while not state.done.all():
        seat = int(state.current[0])
        obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
        if mask.sum() > 1 and state.phase[0] == core.PLAY:
            other = sample_worlds(InfoState(rules, obs[0], mask[0]), 1, rng=checked, seat=seat)
            other_obs = encoder.encode(other, other.current)
            np.testing.assert_array_equal(other_obs, obs)
            hidden_differ = (other.hands != state.hands).any() or other.face_down[0] != state.face_down[0]
            agent.seed(checked)
            mine = agent.act(obs, mask)
            agent.seed(checked)
            assert (agent.act(other_obs, core.legal_action_mask(other)) == mine).all()
            checked += bool(hidden_differ)
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    assert checked >= 5


def test_asking_is_searched_through_the_sampled_deals() -> None:
    """Where asking is legal the ask is one of the moves evaluated on the sampled deals, and the
    search both asks and declines in some of these positions (a search that never weighed it,
    or always asked, fails)."""
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    agent = agents.make("search:k=16,z=0", rules, seed=0)
    evaluated = []
    evaluate = agent._evaluate
    agent._evaluate = lambda beliefs, moves, n: evaluated.append(moves) or evaluate(beliefs, moves, n)  # type: ignore[method-assign]
    rng = np.random.default_rng(0)
    asked = []
    for game in range(40):
        state = core.new_hands(rules, 1, rng=game)
        while not state.done.all() and len(asked) < 12:
            mask = core.legal_action_mask(state)
            if mask[0, NUM_ACTIONS - 1]:
                evaluated.clear()
                action = int(agent.act(encoder.encode(state, state.current), mask)[0])
                assert mask[0, action] and NUM_ACTIONS - 1 in evaluated[0][0]
                asked.append(action == NUM_ACTIONS - 1)
            core.step(state, core.random_legal_actions(core.legal_bits(state) & ~core.ASK_BIT, rng))
    assert len(asked) == 12 and 0 < sum(asked) < 12


def test_it_plays_a_hand_in_the_aec_env_from_observations_alone() -> None:
    from mendikot_env import env as make_env

    game = make_env(rules="band")
    game.reset(seed=0)
    agent = agents.make("search:k=2", Rules.preset("band"), seed=0)
    steps = 0
    for _ in game.agent_iter():
        obs, _, terminated, truncated, _ = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        game.step(int(agent.act(obs["observation"][None], obs["action_mask"][None])[0]))
        steps += 1
    assert steps >= 52


def _hide_choices(rules: Rules, worlds: core.State) -> np.ndarray:
    """The card ``hard`` hides, dealt each world's hider's hand (as the world's first player)."""
    ids = np.nonzero(core.unpack_sets(worlds.deal))[2].reshape(worlds.batch_size, rules.n_players, -1)
    dealt = core.new_hands(rules, worlds.batch_size, deals=ids, dealers=worlds.dealer)
    return agents.make("hard", rules).act(
        ObservationEncoder(rules).encode(dealt, dealt.current), core.legal_action_mask(dealt)
    )


def test_infer_keeps_the_deals_where_the_rollout_policy_hides_the_card_drawn() -> None:
    """Policy inference (``infer=1``): the deals kept are consistent with the observation and,
    far more often than uniform draws, deals where ``hard`` would have hidden the card face down."""
    from mendikot_env.belief import Belief

    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    hard = agents.make("hard", rules)
    state = core.new_hands(rules, 1, rng=3)
    core.step(state, hard.act(encoder.encode(state, state.current), core.legal_action_mask(state)))
    core.step(state, core.random_legal_actions(core.legal_bits(state) & ~core.ASK_BIT, 1))  # the next seat's turn
    obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
    belief = Belief(InfoState(rules, obs[0], mask[0]))
    agent = agents.make("search:k=16,infer=1", rules, seed=0)
    kept = agent._worlds(belief, 16)
    np.testing.assert_array_equal(encoder.encode(kept, kept.current), np.repeat(obs, 16, axis=0))
    uniform = belief.worlds(64, 0, seat=0)
    agree = (_hide_choices(rules, kept) == kept.face_down).mean()
    assert agree >= 0.5 and agree > 2 * (_hide_choices(rules, uniform) == uniform.face_down).mean()


def test_infer_2_keeps_the_deals_likeliest_under_the_rollout_policy() -> None:
    """Policy-weighted deals (``infer=2``): seven or more cards into a band hand played by ``hard``
    without asking, the deals kept are replays of the history (they re-encode to the
    observation with history), they are the likeliest quarter of the deals weighed, and far
    more often than uniform draws they are deals where ``hard`` would have hidden the card face
    down (the hide is one of the moves weighed). On a plain
    observation (no history to weigh) the agent falls back to uniform deals and still plays."""
    from mendikot_env.belief import Belief

    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules, history=True)
    hard = agents.make("hard", rules)
    state = core.new_hands(rules, 1, rng=3)
    for move in range(10):  # the hide and seven or more cards, no asks, to a seat that did not hide
        if move >= 8 and state.hider[0] != state.current[0]:
            break
        obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
        mask[:, NUM_ACTIONS - 1] = False
        core.step(state, hard.act(obs[:, : hard.layout.size], mask))
    assert state.face_down[0] >= 0 and state.hider[0] != state.current[0]
    obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
    belief = Belief(InfoState(rules, obs[0], mask[0]))
    agent = agents.make("search:k=16,infer=2", rules, seed=0)
    kept = agent._worlds(belief, 16)
    np.testing.assert_array_equal(encoder.encode(kept, kept.current), np.repeat(obs, 16, axis=0))
    agent.seed(0)
    weighed = belief.weigh(agent.rollout, 64, agent.rng, seat=0)  # the agent's 64 draws, weighed again
    likeliest = np.argsort(-weighed.log_weights, kind="stable")[:16]
    np.testing.assert_array_equal(kept.deal, weighed.worlds.deal[likeliest])
    assert weighed.log_weights[likeliest].min() > np.median(weighed.log_weights)
    agree = (_hide_choices(rules, kept) == kept.face_down).mean()
    uniform = belief.worlds(64, 0, seat=0)
    assert agree > 4 * (_hide_choices(rules, uniform) == uniform.face_down).mean()
    plain = obs[:, : hard.layout.size]
    assert mask[0, agent.act(plain, mask)[0]]


def test_the_sampler_and_a_random_rollout_draw_different_streams() -> None:
    agent = agents.make("search:k=2,rollout=random", Rules(), seed=5)
    assert agent.rng.random(3).tolist() != agent.rollout.rng.random(3).tolist()


def test_three_exact_tricks_are_refused_beyond_four_players() -> None:
    with pytest.raises(ValueError, match="exact=3 with 6 players"):
        agents.make("search:exact=3", Rules(n_players=6))
    assert agents.make("search:exact=2", Rules(n_players=8)).spec.exact == 2
