"""Duplicate arena, matches and league: fairness, reproducibility, statistics and strength order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents import RandomAgent, make
from mendikot_env import Rules, core
from mendikot_env.arena import (
    AgentError,
    bradley_terry,
    deal_cards,
    duplicate_arena,
    duplicate_matches,
    league,
    mean_ci,
    mean_interval,
    play_hands,
)
from mendikot_env.cli import main
from mendikot_env.observation import observation_layout, read_history
from mendikot_env.records import load_record


def test_same_deterministic_agent_on_both_sides_splits_every_deal_pair() -> None:
    """A deterministic agent against itself: each deal is won once from each side, so every
    pair scores exactly 0.5. This fails if the seats are not swapped or the cards differ."""
    rules = Rules.preset("band")
    agent = make("medium", rules)
    result = duplicate_arena(rules, agent, agent, deals=60, seed=3, chunk=25)
    assert (result.pair_scores == 0.5).all()
    assert result.win_rate == 0.5 and 0.47 < result.ci_low < 0.5 < result.ci_high < 0.53
    assert result.side_a.hands_won == result.side_b.hands_won == 60
    assert result.side_a.tens == result.side_b.tens


@pytest.mark.parametrize("preset", ["standard", "open"])
def test_random_against_random_interval_contains_half(preset: str) -> None:
    rules = Rules.preset(preset)
    result = duplicate_arena(rules, RandomAgent(1), RandomAgent(2), deals=400, seed=11)
    assert result.ci_low < 0.5 < result.ci_high
    assert result.side_a.hands_won + result.side_b.hands_won + result.drawn == result.hands == 800
    assert 0 < result.ci_high - result.ci_low < 0.15


@pytest.mark.parametrize("n_players", [4, 6])
def test_hands_won_hiding_the_band_card_match_the_hands_played(n_players: int) -> None:
    """Each deal is hidden once by each team's seat, so each side hid in ``deals`` hands; the
    hands each side won hiding are recounted from the finished hands (hider and winner)."""
    rules = Rules.preset("band", n_players=n_players)
    won = {0: 0, 1: 0}  # side (0: A, 1: B) -> hands won hiding

    def recount(state: core.State, log: Any, pairs: np.ndarray, a_team: np.ndarray) -> None:
        winner = core.hand_results(state).winner
        hiding_team = state.hider % 2
        for side, team in ((0, a_team), (1, 1 - a_team)):
            won[side] += int(np.count_nonzero((hiding_team == team) & (winner == team)))

    result = duplicate_arena(rules, make("hard", rules), RandomAgent(4), deals=40, seed=6, chunk=15, on_hand=recount)
    assert result.side_a.hands_hiding == result.side_b.hands_hiding == 40
    assert (result.side_a.won_hiding, result.side_b.won_hiding) == (won[0], won[1])
    assert result.side_b.won_hiding < result.side_a.won_hiding  # random hides and plays worse
    assert "won hiding" in result.summary()
    standard = duplicate_arena(Rules(), make("hard", Rules()), RandomAgent(4), deals=10, seed=6)
    assert standard.side_a.hands_hiding == standard.side_b.won_hiding == 0
    assert "won hiding" not in standard.summary()


def test_results_are_reproducible_from_the_seed() -> None:
    rules = Rules.preset("standard", n_players=6)

    def run(seed: int) -> dict:
        out = duplicate_arena(rules, make("random", rules, seed=1), make("easy", rules), deals=50, seed=seed)
        return {k: v for k, v in out.to_dict().items() if k not in ("seconds", "deals_per_s")}

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_drawn_hands_count_half_with_six_players() -> None:
    rules = Rules.preset("standard", n_players=6)
    result = duplicate_arena(rules, RandomAgent(1), RandomAgent(2), deals=300, seed=2)
    assert result.drawn > 0  # 2 tens each and 4 tricks each happens with six players
    wins = result.side_a.hands_won + 0.5 * result.drawn
    assert result.win_rate == pytest.approx(wins / result.hands)


def test_agents_built_for_other_hands_are_refused_by_name() -> None:
    band = Rules.preset("band")
    with pytest.raises(ValueError, match="agent B 'medium' was built for .*trump: 'cut' vs 'band'"):
        duplicate_arena(band, make("hard", band), make("medium", Rules()), deals=4)
    with pytest.raises(ValueError, match="agent A 'easy' was built for .*n_players: 4 vs 6"):
        duplicate_matches(Rules(n_players=6), make("easy", Rules()), RandomAgent(), pairs=2)
    with pytest.raises(ValueError, match=r"agents\[0\] 'easy' was built for .*trump: 'cut' vs 'band'"):
        league(band, [make("easy", Rules()), make("hard", band)], deals=4)  # before any pair plays
    assert duplicate_arena(Rules.preset("app"), make("hard", Rules()), RandomAgent(), deals=4).hands == 8


def test_mean_ci() -> None:
    mean, low, high = mean_ci(np.array([0.0, 1.0] * 50))
    assert mean == 0.5  # one pseudo-pair at 0 and one at 1 join the 100 pairs for the interval
    half = 1.959964 * np.std([0, 1] * 51, ddof=1) / np.sqrt(102)
    assert high - 0.5 == pytest.approx(0.5 - low) == pytest.approx(half)
    # A few pairs all won by A: the mean is 100%, the interval is not a single point.
    mean, low, high = mean_ci(np.ones(10))
    adjusted = [1.0] * 11 + [0.0]
    assert (mean, high) == (1.0, 1.0) and low == pytest.approx(
        11 / 12 - 1.959964 * np.std(adjusted, ddof=1) / np.sqrt(12)
    )
    assert 0.7 < low < 0.8
    assert mean_ci(np.ones(2))[1] < 0.3 and mean_ci(np.array([0.5] * 400))[1:] == pytest.approx(
        (0.4965, 0.5035), abs=1e-4
    )
    assert np.isnan(mean_ci(np.array([]))[0])


def test_mean_ci_is_mean_interval_with_bounds_and_the_notebooks_use_the_same() -> None:
    from mendikot_env import analysis

    x = np.random.default_rng(0).random(30)
    assert mean_ci(x) == mean_interval(x, bounds=(0.0, 1.0))
    assert analysis.mean_ci is mean_ci and analysis.mean_interval is mean_interval
    assert analysis.deal_cards is deal_cards
    m, lo, hi = mean_interval(x)  # unbounded: the plain normal interval, not clipped
    assert m == pytest.approx(x.mean()) and hi - m == pytest.approx(m - lo)
    assert hi - m == pytest.approx(1.959963984540054 * x.std(ddof=1) / np.sqrt(30))
    assert mean_interval(np.array([3.0])) == (3.0, -np.inf, np.inf)
    assert mean_interval(np.array([2.0, 4.0]), bounds=(0.0, 4.0))[2] == 4.0  # clipped to the bounds


# ----------------------------------------------------------------------- strength order


@pytest.mark.parametrize(
    ("a", "b", "deals", "floor"),
    [
        ("hard", "random", 200, 0.70),
        ("easy", "random", 200, 0.62),
        ("hard", "easy", 400, 0.5),
        ("medium", "easy", 400, 0.5),
    ],
)
def test_strength_order(a: str, b: str, deals: int, floor: float) -> None:
    """The levels' order with a generous margin: the whole 95% interval lies above ``floor``.
    (Full numbers on 2000 deal pairs are in the README.)"""
    rules = Rules()
    result = duplicate_arena(rules, make(a, rules), make(b, rules, seed=9), deals=deals, seed=2024)
    assert result.ci_low > floor, result.summary()


# ------------------------------------------------------------------------------ matches


def test_duplicate_matches_play_to_the_target() -> None:
    rules = Rules.preset("app", target=3)
    out = duplicate_matches(rules, make("easy", rules), make("random", rules, seed=1), pairs=30, seed=4)
    assert out["a_won"] + out["b_won"] + out["drawn"] == 60
    assert out["hands_per_match"] >= 2  # tiered: at least two hands to reach 3 points... or a whitewash
    assert out["win_rate"] > 0.5
    again = duplicate_matches(rules, make("easy", rules), make("random", rules, seed=1), pairs=30, seed=4)
    assert again == out


def test_fixed_deals_matches_can_be_drawn() -> None:
    rules = Rules(scoring="fixed_deals", target=2)
    out = duplicate_matches(rules, RandomAgent(1), RandomAgent(2), pairs=40, seed=0)
    assert out["hands_per_match"] == 2
    assert out["drawn"] > 0


# ------------------------------------------------------------------------------- league


def test_bradley_terry_recovers_strength_order() -> None:
    strengths = np.array([1.0, 2.0, 8.0])
    games = np.full((3, 3), 4000.0) - np.diag([4000.0] * 3)
    wins = games * strengths[:, None] / (strengths[:, None] + strengths[None, :])
    ratings = bradley_terry(wins, games, prior=0.0)
    assert ratings.mean() == pytest.approx(1500)
    assert ratings[1] - ratings[0] == pytest.approx(400 * np.log10(2), abs=1)
    assert ratings[2] - ratings[1] == pytest.approx(400 * np.log10(4), abs=1)


def test_league_table_and_ratings() -> None:
    rules = Rules()
    agents = [make("random", rules, seed=1), make("easy", rules), make("medium", rules)]
    result = league(rules, agents, deals=150, seed=8)
    k = len(agents)
    assert result.names == ["random", "easy", "medium"]
    assert np.isnan(np.diag(result.win_rate)).all()
    off = ~np.eye(k, dtype=bool)
    assert np.allclose((result.win_rate + result.win_rate.T)[off], 1.0)
    assert list(np.argsort(result.ratings)) == [0, 1, 2]
    assert len(result.pairs) == 3
    text = result.summary()
    assert "rating" in text and "medium" in text
    json.dumps(result.to_dict())


# ---------------------------------------------------------------------------------- CLI


def test_arena_command_writes_json_and_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    save = tmp_path / "records"
    code = main(
        ["arena", "--a", "easy", "--b", "random", "--deals", "12", "--rules", "band", "--n-players", "6",
         "--seed", "1", "--matches", "4", "--json", str(out), "--save", str(save), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "win rate of A" in text and "95% CI" in text and "deal pairs/s" in text and "matches:" in text
    data = json.loads(out.read_text())
    assert data["a"] == "easy" and data["deals"] == 12 and data["rules"]["n_players"] == 6
    assert data["matches"]["pairs"] == 4
    files = sorted(save.glob("*.json"))
    assert len(files) == 24
    record = load_record(files[0])
    assert record["players"][0] in ("easy", "random") and record["meta"]["deal_pair"] == 0
    # A second run into the folder would mix with these: refused, unless --overwrite.
    again = ["arena", "--a", "hard", "--b", "random", "--deals", "3", "--save", str(save), "--no-progress"]
    assert main(again) == 2
    assert f"--save {save} already holds 24 arena record(s) (pair000000_a0.json, ...)" in capsys.readouterr().err
    assert sorted(save.glob("*.json")) == files and load_record(files[-1])["players"][0] in ("easy", "random")
    (save / "notes.txt").write_text("mine")
    # --overwrite deletes only once every other input is good: a mistyped agent keeps the records.
    assert main([*again, "--a", "hrad", "--overwrite"]) == 2
    assert "unknown agent 'hrad'" in capsys.readouterr().err and sorted(save.glob("*.json")) == files
    assert main([*again, "--rules", "band", "--n-players", "6", "--overwrite"]) == 0
    assert len(list(save.glob("*.json"))) == 6 and (save / "notes.txt").read_text() == "mine"
    assert {load_record(path)["meta"]["a"] for path in save.glob("*.json")} == {"hard"}


def test_league_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "league.json"
    code = main(["league", "--agents", "random", "easy", "--deals", "20", "--json", str(out), "--no-progress"])
    assert code == 0
    assert "Bradley-Terry" in capsys.readouterr().out
    assert set(json.loads(out.read_text())["ratings"]) == {"random", "easy"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["arena", "--a", "random", "--b", "random", "--chunk", "-2"], "argument --chunk: must be a positive integer"),
        (["arena", "--a", "random", "--b", "random", "--matches", "-1"], "--matches: must be an integer 0 or more"),
        (["arena", "--a", "random", "--b", "random", "--seed", "-1"], "--seed: must be a seed: an integer 0 to 922"),
        (["arena", "--a", "random", "--b", "random", "--seed", str(2**64)], f"an integer 0 to {2**63 - 1} (2**63 - 1)"),
        (["league", "--agents", "random", "easy", "--deals", "0"], "--deals: must be a positive integer, got 0"),
        (["bench", "--batch-sizes", "-5"], "--batch-sizes: must be a positive integer, got -5"),
        (["bench", "--seconds", "-1"], "--seconds: must be a positive finite number, got -1"),
        (["bench", "--seconds", "inf"], "--seconds: must be a positive finite number, got inf"),
        (["league", "--agents", "random", "easy", "--deals", "9" * 400], "--deals: must be a positive integer up to"),
        (["bench", "--batch-sizes", str(2**63)], f"up to {2**63 - 1} (2**63 - 1), got {2**63}"),
        (["arena", "--a", "random", "--b", "random", "--deals", "9" * 5000], "--deals: must be a positive integer up"),
        (["demo", "--target", "9" * 30], "--target: must be a positive integer up to 9223372036854775807"),
        (["demo", "--seed", "x"], "--seed: must be a seed: an integer 0 to 9223372036854775807 (2**63 - 1), got 'x'"),
    ],
)
def test_bad_counts_and_seeds_are_usage_errors(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_count_too_large_for_memory_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["league", "--agents", "random", "easy", "--deals", str(10**17), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mendikot league: error: not enough memory (Unable to allocate") and error.count("\n") == 1


def test_bad_chunk_or_matches_in_the_library_raise() -> None:
    with pytest.raises(ValueError, match="chunk .* must be an integer 1 or more, got -2"):
        duplicate_arena(Rules(), RandomAgent(), RandomAgent(), 3, chunk=-2)
    with pytest.raises(ValueError, match="matches must be an integer 0 or more, got -1"):
        duplicate_arena(Rules(), RandomAgent(), RandomAgent(), 3, matches=-1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda r: duplicate_arena(Rules(), "hard", r, 2),
            r"agent A must be an agent .* got 'hard'; pass agents.make\(",
        ),
        (
            lambda r: duplicate_arena(Rules(), r, RandomAgent, 2),
            r"agent B must be an agent .* got <class .*an instance",
        ),
        (lambda r: duplicate_arena(Rules(), r, r, 10.0), r"^deals must be an integer 1 or more, got 10.0$"),
        (lambda r: duplicate_arena(Rules(), r, r, True), r"^deals must be an integer 1 or more, got True$"),
        (lambda r: duplicate_arena(Rules(), r, r, "10"), r"^deals must be an integer 1 or more, got '10'$"),
        (lambda r: duplicate_matches(Rules(), r, r, 1.5), r"^match pairs must be an integer 1 or more, got 1.5$"),
        (lambda r: league(Rules(), [r, r], 2, names=["a", "b", "c"]), r"names needs one name per agent: 2, got 3"),
        (lambda r: league(Rules(), [r, "easy"], 2), r"agents\[1\] must be an agent"),
    ],
)
def test_the_arena_functions_refuse_what_is_not_an_agent_or_a_count(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(RandomAgent(seed=0))


def test_the_arena_functions_take_a_preset_name() -> None:
    result = duplicate_arena("band", make("easy", Rules.preset("band")), RandomAgent(seed=0), 4, seed=1)
    assert result.hands == 8 and result.rules == Rules.preset("band").to_dict()


@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_an_agent_returning_floats_or_small_unsigned_out_of_range_actions_is_named(dtype: type) -> None:
    class Odd(RandomAgent):
        def __init__(self, seed: int) -> None:
            super().__init__(seed=seed)
            self.name = "odd"

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            chosen = super().act(observations, masks)
            return chosen.astype(dtype) if dtype is np.float64 else np.full(len(chosen), 200, dtype)

    with pytest.raises(
        AgentError, match="agent 'odd' (returned actions of shape .* dtype float64|played illegal action 200)"
    ):
        duplicate_arena(Rules(), Odd(seed=0), RandomAgent(seed=1), 2)


def test_output_paths_are_checked_before_playing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("")
    base = ["arena", "--a", "random", "--b", "random", "--deals", "2", "--no-progress"]
    assert main([*base, "--save", str(a_file)]) == 2
    assert "--save" in capsys.readouterr().err and not list(tmp_path.glob("*.json"))
    assert main([*base, "--json", str(tmp_path)]) == 2
    assert f"--json {tmp_path}: that is a folder" in capsys.readouterr().err
    assert main(["league", "--agents", "random", "easy", "--deals", "2", "--json", str(tmp_path)]) == 2
    assert "that is a folder" in capsys.readouterr().err
    assert main([*base, "--json", str(a_file / "out.json")]) == 2
    assert f"{a_file} is a file, so the folder cannot be made" in capsys.readouterr().err
    # A folder that cannot be made is a one-line error too, before playing (not an OSError after).
    assert main([*base, "--save", str(a_file / "records")]) == 2
    assert capsys.readouterr().err == (
        f"mendikot arena: error: --save {a_file / 'records'}: {a_file} is a file, so the folder cannot be made\n"
    )


def test_an_output_in_a_missing_or_unwritable_folder_is_refused_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from mendikot_env.commands import arena

    base = ["arena", "--a", "random", "--b", "random", "--deals", "2", "--no-progress"]
    assert main([*base, "--json", str(tmp_path / "new" / "deeper" / "out.json")]) == 0  # missing folders are made
    assert (tmp_path / "new" / "deeper" / "out.json").is_file()
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and real_access(path, mode))
    monkeypatch.setattr(arena, "duplicate_arena", lambda *a, **k: pytest.fail("played before checking its output"))
    for flag, name in (("--json", locked / "missing" / "out.json"), ("--save", locked / "records")):
        assert main([*base, flag, str(name)]) == 2
        assert capsys.readouterr().err == f"mendikot arena: error: {flag} {name}: {locked} is not writable\n"


def test_arena_command_rejects_unknown_agent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--a", "wizard", "--b", "random", "--deals", "2", "--no-progress"]) == 2
    assert "unknown agent 'wizard'" in capsys.readouterr().err


def test_trained_agents_play_on_the_asked_torch_threads(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch  # the train extra (the test command installs it)

    before = torch.get_num_threads()
    asked: list[int] = []
    real = torch.set_num_threads

    def spy(threads: int) -> None:
        asked.append(threads)
        real(threads)

    monkeypatch.setattr(torch, "set_num_threads", spy)
    assert main(["arena", "--a", "trained", "--b", "random", "--deals", "2", "--no-progress"]) == 0
    assert asked == [1, before] and torch.get_num_threads() == before  # one thread by default, then restored
    command = ["league", "--agents", "trained", "easy", "--deals", "2", "--no-progress", "--threads", "3"]
    assert main(command) == 0 and asked[2:] == [3, before] and torch.get_num_threads() == before
    with pytest.raises(SystemExit):  # argparse's own exit for a bad option value
        main(["arena", "--a", "hard", "--b", "random", "--deals", "2", "--threads", "0"])
    assert "argument --threads: must be a positive integer, got 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["arena", "--a", "hard", "--b", "random", "--save", ""], "--save must name a folder, got ''"),
        (["league", "--agents", "hard", "random", "--json", " "], "--json must name a file, got ' '"),
        (["train", "--out", ""], "--out (Args.out) must name a run folder, got ''"),
    ],
)
def test_an_empty_output_name_is_refused_not_ignored(
    argv: list[str], message: str, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # an empty --out would be the working folder
    assert main(argv) == 2
    assert message in capsys.readouterr().err and not any(tmp_path.iterdir())


class _HistoryReader(RandomAgent):
    """A random agent that reads the history pieces, and checks them against its own record."""

    reads_history = True

    def __init__(self, rules: Rules) -> None:
        super().__init__(seed=0)
        self.rules, self.widths = rules, set()

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.widths.add(observations.shape[1])
        for obs in observations:
            history = read_history(self.rules, obs)
            played = observation_layout(self.rules).view(obs[: observation_layout(self.rules).size], "played")
            assert len(history.plays) == int(played.sum())
        return super().act(observations, masks)


class _Widths(RandomAgent):
    def __init__(self) -> None:
        super().__init__(seed=1)
        self.widths: set[int] = set()

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.widths.add(observations.shape[1])
        return super().act(observations, masks)


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_play_hands_gives_the_history_to_an_agent_that_reads_it_and_the_plain_observation_to_others(
    preset: str,
) -> None:
    rules = Rules.preset(preset)
    reader, other = _HistoryReader(rules), _Widths()
    state = core.new_hands(rules, 8, rng=0)
    play_hands(state, [reader, other], np.array([[0, 1]] * 4 + [[1, 0]] * 4))
    assert state.done.all()
    assert reader.widths == {observation_layout(rules, history=True).size}
    assert other.widths == {observation_layout(rules).size}
