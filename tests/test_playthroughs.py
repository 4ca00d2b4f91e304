"""The golden playthroughs (tests/playthrough.py) replayed and compared line for line with
the checked-in transcripts in tests/playthroughs/."""

from __future__ import annotations

import difflib

import numpy as np
import playthrough
import pytest

MAX_DIFF_LINES = 80


@pytest.mark.parametrize("name", list(playthrough.VARIANTS))
def test_playthrough_matches_the_checked_in_transcript(name: str) -> None:
    path = playthrough.path_of(name)
    assert path.exists(), f"{path} is missing; run: {playthrough.REGENERATE}"
    expected = path.read_text(encoding="utf-8")
    actual = playthrough.transcript(name)
    if actual != expected:
        diff = list(
            difflib.unified_diff(
                expected.splitlines(), actual.splitlines(), f"{path.name} (checked in)", f"{name} (now)", lineterm=""
            )
        )
        shown = "\n".join(diff[:MAX_DIFF_LINES])
        more = f"\n... {len(diff) - MAX_DIFF_LINES} more diff lines" if len(diff) > MAX_DIFF_LINES else ""
        pytest.fail(
            f"the {name} playthrough changed. If the change is intended, run {playthrough.REGENERATE}"
            f" and commit the new transcripts.\n{shown}{more}",
            pytrace=False,
        )


def test_every_transcript_on_disk_is_a_variant() -> None:
    """A transcript left behind by a renamed or removed variant would be compared by nothing."""
    on_disk = {path.stem for path in playthrough.DIRECTORY.glob("*.txt")}
    assert on_disk == set(playthrough.VARIANTS), f"run {playthrough.REGENERATE} and delete stale files"


def test_a_transcript_shows_every_piece_legal_actions_rewards_and_the_closing_none_steps() -> None:
    text = playthrough.path_of("band").read_text(encoding="utf-8")
    for piece in ("hand", "face_down", "unseen", "trick", "played", "voids", "tens", "trick_number", "match_score"):
        assert f"{piece}=" in text or f"    {piece} " in text, piece
    assert "action ask (52)" in text and "legal" in text
    assert "terminations T T T T" in text
    assert text.count("is done: reward") == 4
    assert text.rstrip().splitlines()[-1].startswith("end: agents []; result {")


def test_the_formatter_names_cards_and_refuses_a_fraction_as_flags() -> None:
    flags = [0] * 52
    for card in (51, 49, 8):  # AS, QS, TC
        flags[card] = 1
    assert playthrough.card_set(flags) == "S AQ C T"
    assert playthrough.action_name(52) == "ask" and playthrough.action_name(34) == "TH"
    with pytest.raises(ValueError, match="SCALAR_PIECES"):
        playthrough.flags_text("new_piece", np.array([0.5, 0.0]))
