"""Agents: legal play in every variant, batch invariance, the factory, and the club-player habits."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from agents import AGENT_NAMES, Agent, RandomAgent, RuleBasedAgent, check_plays, load, make, register_checkpoint_loader
from agents.registry import CHECKPOINT_LOADERS, SHIPPED_AGENTS, SHIPPED_NETWORKS
from mendikot_env import ObservationEncoder, Rules, core
from mendikot_env.arena import ActionLog, AgentError, play_hands
from mendikot_env.cards import ASK_ACTION, parse_card
from mendikot_env.rules import PRESETS

C = parse_card


# ------------------------------------------------------------------------ legal play


VARIANTS = [(preset, n) for preset in PRESETS for n in (4, 6, 8)]


@pytest.mark.parametrize(("preset", "n_players"), VARIANTS)
def test_every_agent_plays_only_legal_actions(preset: str, n_players: int) -> None:
    """Every level against every other, batched, in every preset and table size: each action is
    checked against the core's legal set (play_hands raises AgentError on an illegal one, and
    core.step checks again)."""
    rules = Rules.preset(preset, n_players=n_players)
    # The shipped networks play only their presets' hands (checked in test_training.py and below);
    # the search agent's legal play is checked in test_search.py (its rollouts are slow here).
    names = [name for name in AGENT_NAMES if name not in (*SHIPPED_NETWORKS, "search")]
    agents = [make(name, rules, seed=i) for i, name in enumerate(names)]
    pairs = list(itertools.permutations(range(len(names)), 2))
    per_pair = 16
    B = per_pair * len(pairs)
    state = core.new_hands(rules, B, rng=VARIANTS.index((preset, n_players)))
    team_agent = np.repeat(np.array(pairs), per_pair, axis=0)
    log = ActionLog.empty(rules, B)
    play_hands(state, agents, team_agent, log=log)
    assert state.done.all()
    # Replay every logged action through the core with its own legality check.
    replay = core.new_hands(rules, B, deals=_deal_ids(state), dealers=state.dealer, open_cards=_open(state))
    for step in range(log.actions.shape[1]):
        live = ~replay.done
        if not live.any():
            break
        assert (log.seats[live, step] == replay.current[live]).all()
        core.step(replay, np.where(live, log.actions[:, step], 0), check=True)
    assert replay.done.all()
    assert core.hand_results(replay).winner.tolist() == core.hand_results(state).winner.tolist()


def _deal_ids(state: core.State) -> np.ndarray:
    flags = core.unpack_sets(state.deal)
    return np.nonzero(flags)[2].reshape(state.batch_size, state.rules.n_players, -1)


def _open(state: core.State) -> np.ndarray | None:
    return state.open_card if state.rules.trump == "open" else None


def test_play_hands_rejects_an_illegal_agent() -> None:
    class Cheater:
        name = "cheater"

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return np.argmin(masks, axis=1)  # always an illegal action

    rules = Rules()
    state = core.new_hands(rules, 4, rng=0)
    with pytest.raises(AgentError, match="cheater.*illegal"):
        play_hands(state, [Cheater(), RandomAgent(0)], np.array([[0, 1]] * 4))


# --------------------------------------------------------------------- batch and view


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
@pytest.mark.parametrize("preset", ["standard", "band"])
def test_rule_based_agent_is_a_function_of_each_row(level: str, preset: str) -> None:
    """Acting on a batch equals acting row by row: no game leaks into another."""
    rules = Rules.preset(preset)
    agent = RuleBasedAgent(rules, level)
    encoder = ObservationEncoder(rules)
    state = core.new_hands(rules, 24, rng=5)
    rng = np.random.default_rng(5)
    obs_rows, mask_rows = [], []
    for _ in range(30):  # collect positions from the middle of hands
        obs_rows.append(encoder.encode(state, state.current))
        mask_rows.append(core.legal_action_mask(state))
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    obs = np.concatenate(obs_rows)
    masks = np.concatenate(mask_rows)
    batched = agent.act(obs, masks)
    single = np.array([agent.act(obs[i : i + 1], masks[i : i + 1])[0] for i in range(0, len(obs), 7)])
    assert (batched[::7] == single).all()
    assert masks[np.arange(len(obs)), batched].all()


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
@pytest.mark.parametrize("preset", ["standard", "band", "app"])
def test_utilities_are_what_the_rule_based_agent_maximises(level: str, preset: str) -> None:
    """``utilities`` scores every legal action (finite) and no illegal one (-inf), and ``act``
    plays an action it rates highest (up to act's tie-breaking nudge of 1e-9 per action id),
    over whole hands including the band hide."""
    rules = Rules.preset(preset)
    agent = RuleBasedAgent(rules, level)
    encoder = ObservationEncoder(rules)
    state = core.new_hands(rules, 16, rng=2)
    rng = np.random.default_rng(2)
    while (state.current >= 0).any():  # whole hands: the hide, the cards and the asks
        live = np.flatnonzero(state.current >= 0)
        playing = state.select(live)
        obs, masks = encoder.encode(playing, playing.current), core.legal_action_mask(playing)
        utility = agent.utilities(obs, masks)
        assert np.isfinite(utility[masks]).all() and np.isneginf(utility[~masks]).all()
        played = utility[np.arange(live.size), agent.act(obs, masks)]
        assert (played >= utility.max(axis=1) - 1e-7).all()
        actions = core.legal_action_mask(state).argmax(axis=1)
        actions[live] = core.random_legal_actions(core.legal_bits(playing), rng)
        core.step(state, actions)


@pytest.mark.parametrize(("preset", "n_players"), VARIANTS)
def test_act_state_plays_what_act_plays_on_the_observation(preset: str, n_players: int) -> None:
    """``act_state`` (the seat's view read from the core state, for the search's rollouts)
    chooses what ``act`` chooses on the encoded observation, at every level and with the same
    tie-breaking draws (seeded, and lowest id without a seed), over whole hands: the band hide
    and asks included, and a batch that mixes games hiding with games playing."""
    rules = Rules.preset(preset, n_players=n_players)
    encoder = ObservationEncoder(rules)
    for level, seed in [("easy", 1), ("medium", None), ("hard", 2), ("hard", None)]:
        by_observation, by_state = RuleBasedAgent(rules, level, seed=seed), RuleBasedAgent(rules, level, seed=seed)
        state = core.new_hands(rules, 40, rng=VARIANTS.index((preset, n_players)))
        rng = np.random.default_rng(0)
        ahead = np.arange(40) % 2 == 0  # half the games one move ahead: hiding and playing in one batch
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng), active=ahead)
        while not state.done.all():
            live = np.flatnonzero(~state.done)
            playing = state.select(live)
            bits = core.legal_bits(playing)
            masks = core.legal_action_mask(playing)
            chosen = by_observation.act(encoder.encode(playing, playing.current, legal=bits), masks)
            np.testing.assert_array_equal(by_state.act_state(playing, bits), chosen)
            # A third of the moves random: positions the bots would not reach by themselves.
            chosen = np.where(rng.random(live.size) < 0.3, core.random_legal_actions(bits, rng), chosen)
            actions = np.zeros(state.batch_size, np.int64)
            actions[live] = chosen
            core.step(state, actions, active=~state.done)


def test_a_random_agent_gives_its_chances_uniform_over_the_legal_actions() -> None:
    masks = np.zeros((3, 53), bool)
    masks[0, :5], masks[1, 52], masks[2, ::2] = True, True, True
    p = RandomAgent(0).probabilities(np.zeros((3, 864), np.float32), masks)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (p[~masks] == 0).all() and p[0, 0] == 0.2 and p[1, 52] == 1.0 and p[2, 0] == 1 / 27


def test_agents_follow_the_protocol_and_validate_input() -> None:
    rules = Rules()
    for name in AGENT_NAMES:
        assert isinstance(make(name, Rules() if name in SHIPPED_NETWORKS else rules), Agent)
    agent = RuleBasedAgent(rules, "hard")
    with pytest.raises(ValueError, match="observations"):
        agent.act(np.zeros((2, 10), np.float32), np.ones((2, 53), bool))
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros((1, ObservationEncoder(rules).size), np.float32), np.zeros((1, 53), bool))
    assert agent.act(np.zeros((0, ObservationEncoder(rules).size), np.float32), np.zeros((0, 53), bool)).shape == (0,)
    with pytest.raises(ValueError, match="unknown level"):
        RuleBasedAgent(rules, "expert")


def test_agents_make_and_check_plays_take_a_preset_name() -> None:
    # The boundary (agents.make, check_plays) resolves a name or a dict; RuleBasedAgent takes Rules.
    band = Rules.preset("band")
    assert make("hard", "band").rules == band
    assert make("easy", {"trump": "band"}).rules == band
    state = core.new_hands(band, 8, rng=0)
    obs = ObservationEncoder(band).encode(state, state.current)
    masks = core.legal_action_mask(state)
    assert np.array_equal(make("hard", "band").act(obs, masks), RuleBasedAgent(band, "hard").act(obs, masks))
    check_plays(make("hard", band), "band")
    check_plays(make("hard", band), {"trump": "band"})
    with pytest.raises(ValueError, match=r"'hard' was built for .*trump: 'cut' vs 'band'"):
        check_plays(make("hard", Rules()), "band")
    with pytest.raises(ValueError, match="unknown rules preset"):
        make("hard", "bnad")


def test_random_agent_checks_its_batch_as_the_others_do() -> None:
    agent, size = RandomAgent(0), ObservationEncoder(Rules()).size
    ones = np.ones(53, bool)
    bad = [
        (np.zeros(size), ones),  # unbatched: was a numpy AxisError
        (np.zeros((1, size)), ones[None].repeat(2, axis=0)),  # two mask rows for one observation
        (np.zeros(size), ones[None]),  # a (1, 53) mask for an unbatched observation
        (np.zeros((1, size)), np.ones((1, 52), bool)),
    ]
    for obs, masks in bad:
        with pytest.raises(ValueError, match=r"act needs \(B, D\) observations and \(B, 53\) masks, got"):
            agent.act(obs, masks)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros((1, size)), np.zeros((1, 53), bool))
    # Any rule set's width: random plays six and eight players too.
    wide = np.zeros((3, ObservationEncoder(Rules(n_players=8)).size), np.float32)
    assert agent.act(wide, np.ones((3, 53), bool)).shape == (3,)
    assert agent.act(np.zeros((0, size)), np.zeros((0, 53), bool)).shape == (0,)


def agent_of_kind(kind: str, rules: Rules) -> Agent:
    """An agent of each trained kind for ``rules`` (the shipped network, an ensemble of two,
    a numpy ``.rllib`` policy; greedy, or ``-sampling``), or the ``hard`` bot they follow."""
    from agents import EnsembleAgent
    from mendikot_env.integrations.policy_file import MLPPolicyAgent

    base = kind.removesuffix("-sampling")
    if base == "rllib":
        rng = np.random.default_rng(0)
        size = ObservationEncoder(rules).size
        agent = MLPPolicyAgent(
            [(rng.normal(size=(size, 8)), np.zeros(8)), (rng.normal(size=(8, 53)), np.zeros(53))], rules
        )
    elif base == "ensemble":
        agent = EnsembleAgent([make("trained", rules), make("trained", rules)])
    else:
        agent = make(base, rules)
    if kind.endswith("-sampling"):
        agent.greedy = False
    return agent


@pytest.mark.parametrize("kind", ["hard", "trained", "trained-sampling", "ensemble", "rllib", "rllib-sampling"])
def test_trained_agents_refuse_bad_batches_in_the_rule_based_agents_words(kind: str) -> None:
    """An all-illegal mask row, a mask of another batch size or observations of another table
    size: every kind of agent refuses them with one message (none plays action 0 or fails
    inside torch or numpy), and a valid batch still gets legal actions."""
    rules = Rules()
    agent = agent_of_kind(kind, rules)
    size = ObservationEncoder(rules).size
    six = ObservationEncoder(Rules(n_players=6)).size
    obs, ones = np.zeros((2, size), np.float32), np.ones((2, 53), bool)
    empty_row = ones.copy()
    empty_row[1] = False
    bad = [
        ((obs, empty_row), "mask row 1 has no legal action; every row needs at least one"),
        ((obs, np.zeros((2, 53), bool)), "mask row 0 has no legal action"),
        (
            (obs, ones[:1]),
            rf"act needs \(B, {size}\) observations \(the width for 4 players\) and \(B, 53\) masks, "
            rf"got \(2, {size}\) and \(1, 53\)",
        ),
        ((np.zeros((2, six), np.float32), ones), rf"act needs \(B, {size}\) .*got \(2, {six}\) and \(2, 53\)"),
    ]
    for args, message in bad:
        with pytest.raises(ValueError, match=message):
            agent.act(*args)
        if hasattr(agent, "probabilities"):
            with pytest.raises(ValueError, match=message):
                agent.probabilities(*args)
    masks = empty_row.copy()
    masks[1, 7] = True
    actions = agent.act(obs, masks)
    assert actions.dtype == np.int64 and masks[np.arange(2), actions].all(), actions
    assert agent.act(obs[:0], masks[:0]).shape == (0,)


# ---------------------------------------------------------------------------- factory


def test_make_and_load_resolve_names() -> None:
    rules = Rules.preset("band")
    assert isinstance(make("random", rules, seed=1), RandomAgent)
    for level in ("easy", "medium", "hard"):
        agent = load(level.upper(), rules)
        assert isinstance(agent, RuleBasedAgent) and agent.level == level and agent.name == level
    with pytest.raises(ValueError, match="known agents: random, easy, medium, hard, trained"):
        make("grandmaster", rules)
    with pytest.raises(ValueError, match="does not exist"):
        load("runs/ppo/agent.pt", rules)
    shipped = load("trained", rules)  # the shipped agent trained for these rules (band)
    assert shipped.rules == rules and shipped.name == "trained"
    with pytest.raises(ValueError, match="the shipped ones play hands as the presets standard, band do"):
        load("trained", Rules.preset("open"))
    # Rules that differ only between hands or on screen get the preset's agent; the others do not.
    app = Rules.preset("app", direction="anticlockwise", target=9)  # standard hands, tiered match
    assert load("trained", app).rules == Rules() and load(str(SHIPPED_AGENTS["standard"]), app).rules == Rules()
    assert load("trained", Rules(reveal="auto")).rules == Rules()  # reveal is for band hukum only
    with pytest.raises(ValueError, match="trained for hands played otherwise .reveal: 'ask' vs 'auto'"):
        load(str(SHIPPED_AGENTS["band"]), Rules.preset("band_auto"))
    with pytest.raises(ValueError, match="no shipped trained agent plays"):
        load("trained", Rules.preset("band_auto"))
    # Rules may be given as a preset name, as env() takes them; bad names and specs are clear errors.
    assert make("hard", "band").rules == rules and load("trained", "band").rules == rules
    with pytest.raises(ValueError, match="agent name must be text, got None; known agents: random"):
        make(None)
    with pytest.raises(ValueError, match="agent spec '': give an agent name"):
        load("")


def test_the_apprentice_is_its_own_network_for_each_shipped_preset() -> None:
    """``apprentice`` (expert iteration) ships for the presets ``trained`` does, under its own
    name and weights, and refuses rules it was not trained for as ``trained`` does."""
    import torch

    for preset in SHIPPED_AGENTS:
        rules = Rules.preset(preset)
        apprentice, trained = make("apprentice", rules), make("trained", rules)
        assert apprentice.name == "apprentice" and apprentice.rules == rules
        weights = zip(apprentice.network.state_dict().values(), trained.network.state_dict().values(), strict=True)
        assert not all(torch.equal(a, b) for a, b in weights)
        assert SHIPPED_NETWORKS["apprentice"][preset].stat().st_size < 20 * 2**20
    with pytest.raises(ValueError, match="no shipped apprentice agent plays"):
        load("apprentice", Rules.preset("open"))


def test_checkpoint_loader_hook(tmp_path: Path) -> None:
    """Trained agents plug in by registering a loader for their file suffix."""
    checkpoint = tmp_path / "policy.fake"
    checkpoint.write_text("weights")
    seen = {}

    def loader(path: Path, rules: Rules, seed: int | None) -> Agent:
        seen["args"] = (path, rules, seed)
        return RandomAgent(seed, name="fake-policy")

    register_checkpoint_loader(".fake", loader)
    try:
        agent = load(str(checkpoint), Rules(), seed=3)
        assert agent.name == "fake-policy"
        assert seen["args"] == (checkpoint, Rules(), 3)
        with pytest.raises(ValueError, match="does not exist"):
            load(str(tmp_path / "missing.fake"), Rules())
    finally:
        CHECKPOINT_LOADERS.pop(".fake")


# ----------------------------------------------------------------- club-player habits


def _position(rules: Rules, hands: list[str], dealer: int, plays: list[str]) -> core.State:
    """A one-game state from hands written as card lists, after the given plays."""
    deal = [[C(c) for c in hand.split()] for hand in hands]
    state = core.new_hands(rules, 1, deals=[deal], dealers=dealer)
    for text in plays:
        core.step(state, np.array([52 if text == "ASK" else C(text)]))
    return state


def _choice(level: str, state: core.State) -> int:
    rules = state.rules
    obs = ObservationEncoder(rules).encode(state, state.current)
    return int(RuleBasedAgent(rules, level).act(obs, core.legal_action_mask(state))[0])


# Seat 1 leads; seat 0 (the agent) plays last in the first trick.
HANDS = [
    "TS 5S 2H 3H 4H 5H 6H 2D 3D 4D 5D 6D 7D",  # seat 0
    "2S 3S 4S 7H 8H 9H TH 8D 9D TD JD QD KD",  # seat 1
    "AS 6S 7S JH QH KH AH AD 2C 3C 4C 5C 6C",  # seat 2
    "8S 9S JS QS KS 7C 8C 9C TC JC QC KC AC",  # seat 3
]


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_throws_a_ten_onto_the_partners_trick(level: str) -> None:
    state = _position(Rules(), HANDS, dealer=0, plays=["2S", "AS", "8S"])  # partner (seat 2) wins with A♠
    assert _choice(level, state) == C("TS")


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_keeps_its_ten_out_of_a_lost_trick(level: str) -> None:
    state = _position(Rules(), HANDS, dealer=0, plays=["2S", "6S", "KS"])  # opponent (seat 3) wins with K♠
    assert _choice(level, state) == C("5S")


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_wins_a_trick_holding_a_ten_as_cheaply_as_possible(level: str) -> None:
    hands = [
        "2S 3S 4S 5S 6S 7S 8S JH KH AH 3H 2D 3D",  # seat 0: K♥ and A♥ both beat the Q♥
        "TH 2H 4D 5D 6D 7D 8D 9D TD JD QD KD AD",  # seat 1 leads T♥
        "4H 5H 6H 7H 8H 9H TS JS QS KS AS 2C 3C",  # seat 2
        "QH 9S 4C 5C 6C 7C 8C 9C TC JC QC KC AC",  # seat 3
    ]
    state = _position(Rules(), hands, dealer=0, plays=["TH", "4H", "QH"])
    assert _choice(level, state) == C("KH")


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_asks_for_the_band_card_to_take_a_ten(level: str) -> None:
    hands = [
        "2S 3S 4S 5S 6S 7S 8S 2C 3C 4C 5C 6C 7C",  # seat 0: no hearts; spades will be trump
        "TH 2H 3H 4D 5D 6D 7D 8D 9D TD JD QD KD",  # seat 1 leads T♥
        "4H 5H 6H 7H 8H 9H TS JS QS KS AS 8C 9C",  # seat 2
        "QH KH AH JH AD 2D 3D TC JC QC KC AC 9S",  # seat 3 (dealer's partner... hides)
    ]
    rules = Rules.preset("band")
    # Dealer 0: seat 1 hides first (2♥ face down), leads T♥; seat 2 plays 4♥, seat 3 A♥ wins.
    state = _position(rules, hands, dealer=0, plays=["2H", "TH", "4H", "AH"])
    assert _choice(level, state) == ASK_ACTION
    core.step(state, np.array([ASK_ACTION]))  # hearts are trump: seat 0 holds none, plays freely
    assert int(state.trump[0]) == 2
    assert _choice(level, state) != ASK_ACTION


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_band_card_comes_from_the_strongest_suit(level: str) -> None:
    hands = [
        "2S 3S 4S 5S 6S 7S 8S 9S TS 2C 3C 4C 5C",
        "AH KH QH JH 9H 8H 2D 3D 4D 5D 6D 7D 8D",  # seat 1 hides: hearts are long and strong
        "TH 7H 6H 5H 4H 3H 2H 9D TD JD QD KD AD",
        "JS QS KS AS 6C 7C 8C 9C TC JC QC KC AC",
    ]
    state = _position(Rules.preset("band"), hands, dealer=0, plays=[])
    choice = _choice(level, state)
    assert choice // 13 == 2  # a heart
    assert choice == (C("AH") if level == "hard" else C("8H"))


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_cuts_in_its_strong_suit(level: str) -> None:
    """Void in the suit led with no trump yet: the card played sets trump, so it comes from the
    strong suit (hearts: A K Q J), not the longer weak one (clubs: 2 to 8)."""
    hands = [
        "AH KH QH JH 9H 8H 2C 3C 4C 5C 6C 7C 8C",  # seat 0: void in spades and diamonds
        "2S 3S 4S 5S 6S 7S 8S 9S 9D TD JD QD KD",  # seat 1 leads spades
        "TS JS TH 7H 6H 5H 4H 3H 2H AD 2D 3D 4D",
        "QS KS AS 5D 6D 7D 8D 9C TC JC QC KC AC",
    ]
    state = _position(Rules(), hands, dealer=0, plays=["2S", "JS", "AS"])
    assert int(state.trump[0]) == -1
    assert _choice(level, state) // 13 == 2


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_rule_based_agent_plays_in_the_aec_env(preset: str) -> None:
    """The same agent object plays in the PettingZoo env, a batch of one."""
    from mendikot_env import env as make_env

    env = make_env(preset)
    env.reset(seed=3)
    agent = make("hard", Rules.preset(preset))
    for _ in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            assert "result" in info
            env.step(None)
            continue
        env.step(int(agent.act(obs["observation"][None], obs["action_mask"][None])[0]))
    assert env.unwrapped.result is not None
