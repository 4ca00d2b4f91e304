"""The notebooks' experiments: intervals, hands in bulk, reveal counts, agent variants, plots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from agents import RandomAgent, make
from agents.variants import HIDE_STRATEGIES, HideChoice, NeverAsk
from mendikot_env import ObservationEncoder, Rules, core
from mendikot_env.analysis import (
    REVEAL_CATEGORIES,
    Table,
    deal,
    deal_cards,
    duplicate_outcomes,
    duplicate_vs_plain,
    learning_curve,
    mean_interval,
    num,
    paired_difference,
    pct,
    play_deals,
    redeal,
    reveal_counts,
    wilson,
)
from mendikot_env.cards import ASK_ACTION, card_id

BAND = Rules.preset("band")


# ------------------------------------------------------------------------------ intervals


def test_wilson_interval() -> None:
    p, lo, hi = wilson(5, 10)
    assert p == 0.5 and lo == pytest.approx(1 - hi) and 0.23 < lo < 0.24
    assert wilson(0, 20)[1] == 0.0 and wilson(20, 20)[2] == 1.0
    p, lo, hi = wilson(np.array([0, 3, 10]), 10)  # element-wise
    assert p.shape == lo.shape == hi.shape == (3,) and (lo <= p + 1e-12).all() and (p <= hi + 1e-12).all()


@pytest.mark.filterwarnings("error")  # the old nan came with RuntimeWarnings
@pytest.mark.parametrize(
    ("successes", "n", "shown"), [(5, 3, "5 of n=3"), (-1, 10, "-1 of n=10"), ([3, 11], 10, "11 of n=10")]
)
def test_wilson_refuses_counts_outside_0_to_n(successes, n, shown) -> None:
    with pytest.raises(ValueError, match=f"wilson needs 0 <= successes <= n, got successes={shown}"):
        wilson(successes, n)


def test_mean_interval_and_paired_difference() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, 10_000)
    m, lo, hi = mean_interval(x)
    assert lo < 1.0 < hi and hi - lo == pytest.approx(2 * 1.96 * 2.0 / 100, rel=0.05)
    y = x - 0.5 + rng.normal(0, 0.01, x.size)  # the same deals, shifted: a tight paired interval
    d, dlo, dhi = paired_difference(x, y)
    assert dlo < 0.5 < dhi and dhi - dlo < 0.01
    assert pct((0.5, 0.4, 0.6)) == "50.0% [40.0, 60.0]" and num((1, 0.5, 1.5), 1) == "1.0 [0.5, 1.5]"


def test_paired_difference_needs_the_same_deals() -> None:
    # [1, 0, 1] - [0] broadcast to a difference over three "pairs".
    for x, y in (([1, 0, 1], [0]), ([1, 0], [1, 0, 1]), (np.zeros((2, 2)), np.zeros(4))):
        with pytest.raises(ValueError, match=r"paired_difference needs x and y for the same deals .*got \("):
            paired_difference(x, y)


# ------------------------------------------------------------------------- hands in bulk


def test_redeal_keeps_cards_and_dealers() -> None:
    state = deal(BAND, 32, seed=1)
    for rules in (Rules(), Rules.preset("open"), Rules.preset("band_auto")):
        other = redeal(state, rules)
        assert other.rules == rules
        assert np.array_equal(deal_cards(other), deal_cards(state))
        assert np.array_equal(other.dealer, state.dealer)
    with pytest.raises(ValueError, match=r"deals have shape \(32, 4, 13\); 32 game\(s\) of 6 players need"):
        redeal(state, Rules(n_players=6))  # core.new_hands's own check of the deals, not a second one
    # A preset name or a dict, as env() takes them (both failed on rules.n_players).
    assert redeal(state, "open").rules == Rules.preset("open")
    assert redeal(state, {"trump": "open"}).rules == Rules.preset("open")
    with pytest.raises(ValueError, match="players"):
        redeal(state, {"n_players": 6})


def test_play_deals_refuses_an_agent_built_for_other_rules() -> None:
    # A bot made for cut trump quietly played band hukum hands; the arena refuses it.
    state = deal(BAND, 4)
    with pytest.raises(ValueError, match=r"agent 'hard' was built for .*trump: 'cut' vs 'band'"):
        play_deals(state, make("hard", Rules()))
    with pytest.raises(ValueError, match=r"other 'easy' was built for .*trump: 'cut' vs 'band'"):
        play_deals(state, make("hard", BAND), make("easy", Rules()))
    assert play_deals(state, make("hard", BAND), make("random", Rules(), seed=0)).hands == 4  # random plays any


def test_play_deals_facts_are_consistent() -> None:
    state = deal(BAND, 200, seed=2)
    before = state.copy()
    facts = play_deals(state, make("medium", BAND), chunk=64)
    assert np.array_equal(state.hands, before.hands)  # the deals are left as dealt
    assert facts.hands == 200
    assert (facts.tens.sum(axis=1) == 4).all() and (facts.tricks.sum(axis=1) == 13).all()
    assert np.array_equal(facts.first, (facts.dealer + 1) % 4)
    assert np.array_equal(facts.hider, facts.first)  # band hukum: the first player hides
    assert (facts.band_card >= 0).all() and (facts.reveal_trick >= 0).all()
    won = facts.first_team_score
    assert set(np.unique(won)) <= {0.0, 1.0}
    assert np.array_equal(won == 1, facts.winner == facts.first_team)
    assert np.array_equal(facts.first_team_tens(), facts.tens[np.arange(200), facts.first_team])
    assert set(np.unique(facts.revealer_side)) <= {0, 1}


def test_play_deals_by_first_team() -> None:
    state = deal(Rules(), 300, seed=3)
    strong, weak = make("hard", Rules()), make("random", Rules(), seed=0)
    first = play_deals(state, strong, weak, by_first_team=True).first_team_score.mean()
    second = play_deals(state, weak, strong, by_first_team=True).first_team_score.mean()
    assert first > 0.6 > 0.4 > second
    team0 = play_deals(state, strong, weak)  # hard on team 0 whoever leads
    assert (team0.team_score(np.zeros(300, int))).mean() > 0.6


def test_reveal_counts_add_up() -> None:
    facts = play_deals(deal(BAND, 300, seed=4), make("hard", BAND))
    counts = reveal_counts(facts)
    assert set(counts.counts) == set(REVEAL_CATEGORIES)
    total = sum(int(v.sum()) for v in counts.counts.values())
    assert total + counts.never == 300
    assert 1 <= counts.mean_trick() <= 13
    assert sum(counts.share(k)[0] for k in REVEAL_CATEGORIES) == pytest.approx(1 - counts.never / 300)
    with pytest.raises(ValueError, match="band"):
        reveal_counts(play_deals(deal(Rules(), 10), make("easy", Rules())))


def test_duplicate_vs_plain() -> None:
    rules = Rules()
    comp = duplicate_vs_plain(rules, make("hard", rules), make("random", rules, seed=1), 200, seed=0)
    assert comp.duplicate.shape == comp.plain.shape == (200,)
    assert set(np.unique(comp.duplicate)) <= {0.0, 0.5, 1.0}
    dup, plain = comp.std()
    assert dup > 0 and plain > 0
    need_dup, need_plain = comp.deals_needed(0.02)
    assert need_dup == int(np.ceil((1.959963984540054 * dup / 0.02) ** 2))
    ratio, lo, hi = comp.variance_ratio(resamples=200)
    assert lo <= ratio <= hi


def test_duplicate_outcomes_agree_with_the_arena() -> None:
    rules = Rules()
    out = duplicate_outcomes(rules, make("hard", rules), make("easy", rules), 120, seed=5)
    # One interval function: A's "won" interval is the arena's win-rate interval, to the bit.
    assert out.interval("won", 0) == (out.arena.win_rate, out.arena.ci_low, out.arena.ci_high)
    assert out.interval("tens", 0) == mean_interval(out.metrics["tens"][:, 0])  # a count: unbounded
    assert out.metrics["tens"].sum(axis=1) == pytest.approx(np.full(120, 4.0))
    assert out.tens_hist.sum(axis=1).tolist() == [240, 240]
    assert out.metrics["mendikot"][:, 0].sum() * 2 == out.arena.side_a.mendikots
    assert out.metrics["suffered mendikot"][:, 0].sum() == out.metrics["mendikot"][:, 1].sum()
    d, lo, hi = out.difference("tens")
    assert lo <= d <= hi
    for ask in (out.interval, out.difference):  # a bare KeyError named no metric there is
        with pytest.raises(ValueError, match=r"unknown metric 'wins'; choose one of \['won', 'tens', 'tricks'"):
            ask("wins")


def test_learning_curve_reads_metrics(tmp_path) -> None:
    rows = [
        {"iteration": 1, "samples": 10, "seconds": 30.0, "charts/win_rate_vs_pool": 0.4},
        {"iteration": 1, "samples": 10, "seconds": 60.0, "eval/win_rate_vs_hard": 0.3, "eval/ci_low_vs_hard": 0.2,
         "eval/ci_high_vs_hard": 0.4},
        {"iteration": 2, "samples": 20, "seconds": 90.0, "charts/win_rate_vs_pool": 0.5},
        {"iteration": 2, "samples": 20, "seconds": 120.0, "eval/win_rate_vs_hard": 0.35, "eval/ci_low_vs_hard": 0.25,
         "eval/ci_high_vs_hard": 0.45},
    ]  # fmt: skip
    rows.append({**rows[-1], "seconds": 125.0})  # the closing evaluation at the same point
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    curve = learning_curve(tmp_path)
    assert curve.samples.tolist() == [10, 20] and curve.minutes[0] == 1.0 and curve.minutes[1] > 2.0
    assert curve.rates["hard"].tolist() == [[0.3, 0.2, 0.4], [0.35, 0.25, 0.45]]
    assert curve.pool_win_rate.tolist() == [0.4, 0.5]


def write_metrics(tmp_path, lines: list[str]):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


EVAL_ROW = {
    "iteration": 1, "samples": 10, "seconds": 60.0,
    "eval/win_rate_vs_hard": 0.3, "eval/ci_low_vs_hard": 0.2, "eval/ci_high_vs_hard": 0.4,
}  # fmt: skip


def test_learning_curve_skips_a_torn_last_line(tmp_path) -> None:
    # A run killed while writing leaves half a line: it was a bare JSONDecodeError.
    write_metrics(tmp_path, [json.dumps(EVAL_ROW), "", json.dumps({**EVAL_ROW, "samples": 20})[:25]])
    curve = learning_curve(tmp_path)
    assert curve.samples.tolist() == [10]


def test_learning_curve_names_the_file_and_line_of_a_bad_row(tmp_path) -> None:
    path = write_metrics(tmp_path, [json.dumps(EVAL_ROW), "{not json", json.dumps(EVAL_ROW)])
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))} line 2 is not a metrics row"):
        learning_curve(tmp_path)
    no_low = {k: v for k, v in EVAL_ROW.items() if k != "eval/ci_low_vs_hard"}
    write_metrics(tmp_path, [json.dumps(EVAL_ROW), "", json.dumps({**no_low, "samples": 20})])
    with pytest.raises(
        ValueError, match=rf"{re.escape(str(path))} line 3: an evaluation row needs \['eval/ci_low_vs_hard'\]"
    ):
        learning_curve(tmp_path)
    write_metrics(tmp_path, [json.dumps({"samples": 10, "charts/win_rate_vs_pool": 0.5})])
    with pytest.raises(ValueError, match=r"line 1: a training row needs \['iteration'\]"):
        learning_curve(tmp_path)
    with pytest.raises(FileNotFoundError):
        learning_curve(tmp_path / "no such run")


def test_table_renders() -> None:
    table = Table(["a", "b"], [[1, 0.5], ["x", "y"]])
    assert table._repr_markdown_().splitlines()[0] == "| a | b |"
    assert "0.500" in str(table)


# ------------------------------------------------------------------------------ variants


def hiding_observation(rules: Rules, hand: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The observation of the first player, about to lay a card face down, holding ``hand``."""
    others = [c for c in range(52) if c not in hand]
    deals = [[hand, others[:13], others[13:26], others[26:39]]]
    state = core.new_hands(rules, 1, rng=0, deals=deals, dealers=3)
    return ObservationEncoder(rules).encode(state, state.current), core.legal_action_mask(state)


def test_hide_choice_strategies() -> None:
    # Spades: 5 low cards; hearts: A K Q (3 cards, 9 points); clubs: 4 cards; diamonds: 1.
    spades = [card_id(r, 3) for r in range(5)]
    hearts = [card_id(r, 2) for r in (12, 11, 10)]
    clubs = [card_id(r, 0) for r in (1, 3, 5, 7)]
    diamonds = [card_id(6, 1)]
    obs, mask = hiding_observation(BAND, spades + hearts + clubs + diamonds)
    base = make("hard", BAND)
    assert HideChoice(base, "longest").act(obs, mask)[0] == card_id(4, 3)  # top spade
    assert HideChoice(RandomAgent(seed=0), "longest", rules=BAND).act(obs, mask)[0] == card_id(4, 3)  # rules given
    assert HideChoice(base, "longest", rank="low").act(obs, mask)[0] == card_id(0, 3)
    assert HideChoice(base, "strongest").act(obs, mask)[0] == card_id(12, 2)  # the heart ace
    assert HideChoice(base, "shortest").act(obs, mask)[0] == card_id(6, 1)  # the lone diamond
    picks = {int(HideChoice(base, "random", seed=s).act(obs, mask)[0]) for s in range(40)}
    assert len(picks) > 5 and all(mask[0, c] for c in picks)
    with pytest.raises(ValueError, match="strategy"):
        HideChoice(base, "middle")
    with pytest.raises(ValueError, match="rules"):
        HideChoice(make("random", BAND), "longest")
    assert set(HIDE_STRATEGIES) == {"longest", "strongest", "shortest", "random"}


def test_hide_choice_changes_only_the_hide() -> None:
    state = deal(BAND, 200, seed=6)
    base = make("hard", BAND)
    facts = play_deals(state, HideChoice(base, "longest"))
    cards = deal_cards(state)
    first = core.first_player(state)
    for g in range(0, 200, 17):
        hand = cards[g, first[g]]
        lengths = np.bincount(hand // 13, minlength=4)
        assert lengths[facts.band_card[g] // 13] == lengths.max()
    # Once the card is down, the base agent plays: with the hard bot's own choice, the same hands.
    own = play_deals(state, base)
    same = facts.band_card == own.band_card
    assert np.array_equal(facts.winner[same], own.winner[same])


def test_never_ask_never_asks_and_plays_legally() -> None:
    facts = play_deals(deal(BAND, 200, seed=7), NeverAsk(make("hard", BAND)))
    assert not facts.asked.any()
    # The card then comes up only when the hider plays it (its last card).
    assert (facts.revealed_by == facts.hider).all()
    masks = np.zeros((2, 53), bool)
    masks[:, [3, ASK_ACTION]] = True

    class AlwaysAsks:
        name = "asker"

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return np.where(masks[:, ASK_ACTION], ASK_ACTION, masks.argmax(axis=1))

    assert NeverAsk(AlwaysAsks()).act(np.zeros((2, 4)), masks).tolist() == [3, 3]


# ---------------------------------------------------------------------------------- plots


def test_plots_draw(tmp_path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mendikot_env.arena import league
    from mendikot_env.plots import (
        interval_bars,
        plot_action_mask,
        plot_card_planes,
        plot_ci_width,
        plot_learning_curve,
        plot_reveals,
        plot_tens_histogram,
        plot_win_matrix,
    )

    rules = Rules()
    state = deal(BAND, 1, seed=0)
    encoder = ObservationEncoder(BAND)
    obs = encoder.encode(state, state.current)[0]
    plot_card_planes(encoder.layout, obs, ["hand", ("played", 1), "unseen", "masters"], columns=2)
    plot_action_mask(core.legal_action_mask(state)[0])
    interval_bars(["a", "b"], [(0.5, 0.4, 0.6), (0.7, 0.6, 0.8)], reference=0.5)
    players = [make(n, rules, seed=1) for n in ("random", "easy", "hard")]
    plot_win_matrix(league(rules, players, 20, seed=0))
    plot_ci_width([duplicate_vs_plain(rules, players[2], players[0], 40)])
    plot_reveals(reveal_counts(play_deals(deal(BAND, 50), make("easy", BAND))))
    plot_tens_histogram(duplicate_outcomes(rules, players[2], players[1], 30))
    (tmp_path / "metrics.jsonl").write_text(
        json.dumps({"iteration": 1, "samples": 5, "seconds": 6.0, "eval/win_rate_vs_random": 0.6,
                    "eval/ci_low_vs_random": 0.5, "eval/ci_high_vs_random": 0.7}) + "\n"
    )  # fmt: skip
    plot_learning_curve(learning_curve(tmp_path), {"hard": {"random": (0.8, 0.75, 0.85)}})
    assert len(plt.get_fignums()) >= 8
    plt.close("all")


def test_learning_curve_takes_evaluations_against_different_opponents(tmp_path: Path) -> None:
    """A resume with other --eval-opponents writes rows naming other opponents: not damage."""
    rows = [
        {"iteration": 1, "samples": 10, "seconds": 60.0, "eval/win_rate_vs_hard": 0.4, "eval/ci_low_vs_hard": 0.3,
         "eval/ci_high_vs_hard": 0.5},
        {"iteration": 2, "samples": 20, "seconds": 120.0, "eval/win_rate_vs_medium": 0.6,
         "eval/ci_low_vs_medium": 0.5, "eval/ci_high_vs_medium": 0.7},
    ]  # fmt: skip
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    curve = learning_curve(tmp_path)
    assert curve.rates["hard"][0].tolist() == [0.4, 0.3, 0.5] and np.isnan(curve.rates["hard"][1]).all()
    assert curve.rates["medium"][1].tolist() == [0.6, 0.5, 0.7]
