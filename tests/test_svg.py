"""Pictures of the table: valid SVG, the rgb_array image, record frames, no hidden cards shown."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from pettingzoo.test import render_test

import mendikot_env
from agents import make
from mendikot_env import Rules, core
from mendikot_env.arena import ActionLog, play_hands
from mendikot_env.picture import (
    _GLYPHS,
    CARD_FACE,
    CARD_W,
    RecordViewer,
    SvgImage,
    TableView,
    table_image,
    table_scene,
    table_svg,
)
from mendikot_env.records import RecordError, make_record

SVG = "{http://www.w3.org/2000/svg}"
CASES = [("standard", 4), ("band", 4), ("open", 4), ("dehla_pakad", 4), ("band_auto", 6), ("standard", 8), ("open", 8)]


def midway(rules: Rules, actions: int, seed: int = 0) -> core.State:
    """One game after ``actions`` random legal actions."""
    state = core.new_hands(rules, 1, rng=seed)
    rng = np.random.default_rng(seed)
    for _ in range(actions):
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    return state


def face_up_cards(svg: str) -> int:
    """Cards drawn face up: rectangles of a card's size filled with the face colour."""
    root = ET.fromstring(svg)
    return sum(
        1
        for r in root.iter(f"{SVG}rect")
        if r.get("fill") == CARD_FACE and float(r.get("width")) == CARD_W and r.get("stroke") is not None
    )


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def band_record(seed: int = 5) -> dict:
    rules = Rules.preset("band")
    state = core.new_hands(rules, 1, rng=seed)
    log = ActionLog.empty(rules, 1)
    play_hands(state, [make("hard", rules), make("medium", rules)], np.array([[0, 1]]), log=log)
    return make_record(state, 0, log.entries(0), players=["hard", "medium", "hard", "medium"])


# ------------------------------------------------------------------------------- SVG


@pytest.mark.parametrize(("preset", "n"), CASES)
def test_table_svg_is_valid_and_shows_every_seat(preset: str, n: int) -> None:
    rules = Rules.preset(preset, n_players=n)
    state = midway(rules, n + 3)
    svg = table_svg(state)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == f"{SVG}svg"
    assert int(root.get("width")) > 0 and int(root.get("height")) > 0
    words = " ".join(texts(svg))
    for s in range(n):
        assert f"player_{s} (team {s % 2})" in words
    assert "Team 0:" in words and "Team 1:" in words and "Trump:" in words
    # Every hand and the trick face up (the debug view), the face-down card too.
    shown = int(core.popcount(state.hands[0]).sum()) + int(np.count_nonzero(state.trick_cards[0] >= 0))
    shown += int(state.face_down[0] >= 0)
    shown += int(rules.trump == "open")  # the open card in the corner
    assert face_up_cards(svg) == shown


def test_a_seat_view_shows_only_that_hand_face_up() -> None:
    rules = Rules.preset("band")
    state = midway(rules, 7)
    hider = int(state.hider[0])
    for seat in range(4):
        svg = table_svg(state, seat=seat)
        expected = int(core.popcount(state.hands[0, seat])) + int(np.count_nonzero(state.trick_cards[0] >= 0))
        expected += int(seat == hider and state.face_down[0] >= 0)  # only the hider sees its face-down card
        assert face_up_cards(svg) == expected, seat


def test_names_match_score_and_result_are_drawn() -> None:
    rules = Rules()
    state = midway(rules, 52)  # a whole hand: 13 tricks of 4 cards
    assert bool(state.done[0])
    words = " ".join(texts(table_svg(state, names=["N", "E", "S", "W"], match_score=[3, 1])))
    assert "N (team 0)" in words and "W (team 1)" in words and "pts" in words
    assert "Hand over" in words and ("wins" in words or "Drawn" in words)


def test_text_is_escaped() -> None:
    state = midway(Rules(), 2)
    svg = table_svg(state, names=["<a&b>", "x", "y", "z"])
    ET.fromstring(svg)
    assert "&lt;a&amp;b&gt;" in svg


def test_table_view_reprs_and_from_env() -> None:
    env = mendikot_env.env("band", render_seat=1)
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.unwrapped.action_mask())[0]))
    view = TableView.from_env(env)
    assert view.options["seat"] == 1
    assert view._repr_svg_() == view.svg
    ET.fromstring(view.svg)
    image = view.image(scale=0.5)
    assert image.shape == (360, 520, 3) and image.dtype == np.uint8


# ---------------------------------------------------------------------------- images


@pytest.mark.parametrize(("preset", "n"), CASES)
def test_table_image_shape_dtype_and_colours(preset: str, n: int) -> None:
    state = midway(Rules.preset(preset, n_players=n), 2 * n)
    image = table_image(state)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[:2] == ((720, 1040) if n == 4 else (780, 1040))
    face = np.array([int(CARD_FACE[i : i + 2], 16) for i in (1, 3, 5)])
    assert (image == face).all(axis=2).sum() > 1000  # cards are drawn


def test_a_seat_view_image_shows_fewer_faces() -> None:
    state = midway(Rules(), 5)
    face = np.array([int(CARD_FACE[i : i + 2], 16) for i in (1, 3, 5)])
    full = (table_image(state) == face).all(axis=2).sum()
    seat = (table_image(state, seat=0) == face).all(axis=2).sum()
    assert seat < full


def test_bitmap_font_and_text_pixels() -> None:
    assert _GLYPHS.shape == (95, 8, 5)
    assert not _GLYPHS[0].any()  # space
    assert _GLYPHS[ord("A") - 32].sum() > 10
    state = midway(Rules(), 1)
    a = table_image(state, caption="")
    b = table_image(state, caption="Hello, table 10")
    assert (a != b).any(axis=2).sum() > 40  # the caption's pixels


def test_table_view_and_render_text_refuse_options_that_do_not_fit_the_table() -> None:
    # Short names or match scores failed with an IndexError deep in the drawing; seat 9
    # quietly hid every hand.
    from mendikot_env.render import render_text

    state = midway(Rules(), 5)
    bad = [
        ({"names": ["a"]}, r"names needs one name per seat \(4\), got 1: \['a'\]"),
        ({"names": ["a", "b", "c", "d", "e"]}, r"names needs one name per seat \(4\), got 5"),
        ({"match_score": [1]}, r"match_score needs the points of team 0 and team 1 \(2 numbers\), got \[1\]"),
        ({"seat": 9}, r"seat must be None \(every hand\) or a seat 0..3, got 9"),
        ({"seat": -1}, r"seat must be None \(every hand\) or a seat 0..3, got -1"),
        ({"seat": 1.0}, r"seat must be None .* got 1.0"),
    ]
    for options, message in bad:
        for draw in (TableView, table_svg, table_image, render_text):
            with pytest.raises(ValueError, match=message):
                draw(state, 0, **options)
    assert "W" in render_text(state, 0, seat=np.int64(1), names=["N", "E", "S", "W"], match_score=(3, 1))


def test_record_viewer_refuses_bad_frames_names_seats_and_columns() -> None:
    viewer = RecordViewer(band_record())
    count = len(viewer)
    for k in (count, 99, -count - 1, 1.0):
        with pytest.raises(
            ValueError, match=rf"frame k must be an integer 0..{count - 1} \(or -{count}..-1 from the end\)"
        ):
            viewer.svg(k)
    assert viewer.svg(-1) == viewer.svg(count - 1)
    for columns in (0, -2, 2.5):
        with pytest.raises(ValueError, match=rf"columns must be an integer 1 or more, got {columns}"):
            viewer.filmstrip(columns=columns)
    with pytest.raises(ValueError, match="scale must be a number above 0, got 0"):
        viewer.filmstrip(scale=0)
    with pytest.raises(ValueError, match=r"names needs one name per seat \(4\), got 1"):
        RecordViewer(band_record(), names=["x"])
    with pytest.raises(ValueError, match="seat must be None .* got 9"):
        RecordViewer(band_record(), seat=9)


def test_table_view_from_env_needs_a_reset() -> None:
    env = mendikot_env.env()
    with pytest.raises(ValueError, match=r"no game to show yet: call env.reset\(\) first"):
        TableView.from_env(env)
    env.reset(seed=0)
    assert TableView.from_env(env).svg.startswith("<svg")


# -------------------------------------------------------------------------------- env


@pytest.mark.parametrize("preset", ["standard", "band", "dehla_pakad"])
def test_pettingzoo_render_test_with_rgb_array(preset: str, capsys: pytest.CaptureFixture) -> None:
    assert "rgb_array" in mendikot_env.raw_env.metadata["render_modes"]
    render_test(lambda **kw: mendikot_env.env(preset, **kw))
    capsys.readouterr()


def test_env_rgb_array_changes_as_the_hand_goes_on() -> None:
    env = mendikot_env.env("standard", render_mode="rgb_array")
    env.reset(seed=1)
    frames = [env.render()]
    for _ in range(4):  # one whole trick
        env.step(int(np.flatnonzero(env.unwrapped.action_mask())[0]))
        frames.append(env.render())
    for before, after in zip(frames, frames[1:], strict=False):
        assert before.shape == after.shape == (720, 1040, 3)
        assert (before != after).any()


def test_env_rgb_array_respects_render_seat() -> None:
    env = mendikot_env.env("standard", render_mode="rgb_array", render_seat=2)
    env.reset(seed=1)
    view = TableView.from_env(env)
    assert np.array_equal(env.render(), view.image())


# ---------------------------------------------------------------------------- records


def test_record_viewer_steps_trick_by_trick() -> None:
    record = band_record()
    viewer = RecordViewer(record)
    assert len(viewer) == 14  # the deal, then after each of the 13 tricks
    svgs = [viewer.svg(k) for k in range(len(viewer))]
    for svg in svgs:
        ET.fromstring(svg)
    for k in range(1, len(viewer)):
        assert svgs[k] != svgs[k - 1]
        a, b = viewer.image(k - 1, scale=0.5), viewer.image(k, scale=0.5)
        assert a.shape == b.shape == (360, 520, 3) and (a != b).any()
    # After trick k the trick just completed is in the middle, its winner outlined.
    frame = viewer.frames[3]
    assert len(frame.trick) == 4 and frame.trick_winner == record["result"]["trick_winners"][2]
    assert "takes it" in " ".join(texts(svgs[3]))
    assert f"After trick 3/13: {viewer.names[frame.trick_winner]} takes it" in frame.caption
    # The deal: every card in a hand, the face-down card beside its hider.
    assert face_up_cards(svgs[0]) == 52


def test_record_viewer_by_card_and_seat_view() -> None:
    record = band_record(seed=8)
    viewer = RecordViewer(record, by="card", seat=1)
    plays = sum(1 for a in record["actions"] if a["kind"] != "hide")
    assert len(viewer) == plays + 1
    assert viewer.frames[-1].actions == len(record["actions"])
    ET.fromstring(viewer.svg(5))
    with pytest.raises(ValueError, match="by"):
        RecordViewer(record, by="tricks")


def test_record_viewer_html_and_filmstrip() -> None:
    viewer = RecordViewer(band_record())
    html = viewer._repr_html_()
    assert html.count("<svg") == len(viewer) and 'type="range"' in html and "<script>" in html
    strip = viewer.filmstrip(columns=5)
    assert isinstance(strip, SvgImage)
    root = ET.fromstring(strip._repr_svg_())
    assert len(root.findall(f"{SVG}svg")) == len(viewer)
    assert "after trick 13" in " ".join(t.text or "" for t in root.iter(f"{SVG}text"))


def test_record_viewer_reads_files_and_refuses_bad_records(tmp_path) -> None:
    from mendikot_env.records import save_record

    record = band_record()
    path = save_record(record, tmp_path / "hand.json")
    assert len(RecordViewer(path)) == 14
    bad = dict(record, actions=record["actions"][:-1])
    with pytest.raises(RecordError):
        RecordViewer(bad)


def test_table_scene_shows_a_given_trick() -> None:
    state = midway(Rules(), 8)  # two full tricks: the middle is empty
    assert not (state.trick_cards[0] >= 0).any()
    trick = [(0, 12), (1, 11), (2, 10), (3, 0)]
    svg = table_svg(state, trick=trick, trick_winner=0)
    assert face_up_cards(svg) == int(core.popcount(state.hands[0]).sum()) + 4
    scene = table_scene(state, trick=trick, trick_winner=0)
    assert any(getattr(s, "text", "") == "takes it" for s in scene.shapes)
