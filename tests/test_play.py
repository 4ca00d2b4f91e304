"""``mendikot play`` driven by scripted input: whole matches, bad input, asking, EOF and quit."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mendikot_env import Rules
from mendikot_env.cards import RANK_LETTERS, SUIT_SYMBOLS, card_str
from mendikot_env.cli import main
from mendikot_env.commands.play import TerminalGame, seat_names
from mendikot_env.records import load_record


class Script:
    """An input function: answers from a list first, then the first (or a chosen) legal action.

    It reads the legal actions from the prompt, as a person reads them from the screen, and
    keeps every prompt so the test can check what was asked.
    """

    def __init__(self, answers: list[str] | None = None, pick: Callable[[list[str]], str] | None = None) -> None:
        self.answers = list(answers or [])
        self.pick = pick or (lambda legal: legal[0])
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.answers:
            return self.answers.pop(0)
        legal = re.search(r"\(legal: ([^)]*)\)", prompt).group(1).split()
        return self.pick(legal)


def play(rules: Rules, script: Callable[[str], str], **kwargs) -> tuple[int, str]:
    out = io.StringIO()
    code = TerminalGame(rules, input_fn=script, out=out, **kwargs).run()
    return code, out.getvalue()


def test_a_whole_match_with_scores_and_dealer_rotation() -> None:
    rules = Rules(target=3)
    script = Script()
    code, text = play(rules, script, level="easy", seat=1, seed=7)
    assert code == 0
    assert "wins the match" in text or "match is drawn" in text
    deals = re.findall(r"=== Deal (\d+) \(dealer: (.+?)\)", text)
    assert len(deals) >= 3 and [int(d) for d, _ in deals] == list(range(1, len(deals) + 1))
    assert text.count("Trick 13:") == len(deals)
    assert len({name for _, name in deals}) >= 1
    assert re.search(r"Match score: you \d, them \d\.", text)
    assert "Hands:" in text and " *You" in text  # the human's hand is shown, marked to act
    assert len(script.prompts) == 13 * len(deals)  # one prompt per card: no bad input here


def test_ascii_shows_no_suit_symbols_anywhere() -> None:
    code, text = play(Rules.preset("band", target=1), Script(), level="easy", seed=3, symbols=False)
    assert code == 0 and "Hands:" in text and "Trump:" in text
    assert not any(symbol in text for symbol in SUIT_SYMBOLS), [
        line for line in text.splitlines() if any(symbol in line for symbol in SUIT_SYMBOLS)
    ][:3]


def test_bad_input_is_rejected_and_asked_again() -> None:
    answers = ["", "hello", "1S", "ask", "help", "show"]
    script = Script(answers)
    code, text = play(Rules(target=1), script, level="random", seed=3)
    assert code == 0
    assert "cannot read 'hello' as a card" in text
    assert "cannot read '1S'" in text
    assert "There is no hidden trump to ask for in this game." in text
    assert "Type a card as rank then suit" in text
    assert len(script.prompts) > 13  # the bad answers did not play a card


def _hand_cards(text: str) -> list[str]:
    """The human's cards from the last rendered table (``*You  ♠ AK2  ♥ T9``)."""
    line = [ln for ln in text.splitlines() if ln.lstrip(" *").startswith("You ")][-1]
    cards = []
    for group in re.findall(r"([♣♦♥♠]) ([2-9TJQKA]+)", line):
        suit = "CDHS"[SUIT_SYMBOLS.index(group[0])]
        cards += [rank + suit for rank in group[1]]
    return cards


def test_cards_not_held_and_not_following_suit_are_refused() -> None:
    out = io.StringIO()
    state = {"tried_missing": False, "tried_revoke": False}

    def script(prompt: str) -> str:
        legal = re.search(r"\(legal: ([^)]*)\)", prompt).group(1).split()
        hand = _hand_cards(out.getvalue())
        if not state["tried_missing"]:
            state["tried_missing"] = True
            missing = next(card_str(c) for c in range(52) if card_str(c) not in hand)
            return "10" + missing[1] if missing[0] == "T" else missing
        revoke = [c for c in hand if c not in legal]
        if revoke and not state["tried_revoke"]:
            state["tried_revoke"] = True
            return revoke[0]
        return legal[-1]

    game = TerminalGame(Rules(target=1), level="medium", seed=11, input_fn=script, out=out)
    assert game.run() == 0
    text = out.getvalue()
    assert "You do not hold" in text
    assert state["tried_revoke"] and "You must follow suit" in text


def test_band_hide_and_ask(tmp_path: Path) -> None:
    """In band hukum the human lays a card face down when first to play and may ask when void."""
    asked = []

    def pick(legal: list[str]) -> str:
        if "ASK" in legal:
            asked.append(True)
            return "ask"
        return legal[0]

    code, text = play(Rules.preset("band", target=2), Script(pick=pick), level="hard", seed=5, save_dir=tmp_path)
    assert code == 0
    assert "lays a card face down" in text or "You lay" in text
    assert asked and "You ask for the trump" in text
    records = sorted(tmp_path.glob("deal*.json"))
    assert records and all(load_record(p)["players"][0] == "you" for p in records)
    # A second session into the folder adds its records after these, overwriting none.
    first = {path: path.read_bytes() for path in records}
    code, _ = play(Rules.preset("band", target=1), Script(pick=pick), level="easy", seed=6, save_dir=tmp_path)
    added = sorted(set(tmp_path.glob("deal*.json")) - set(records))
    assert [path.name for path in records][0] == "deal001.json"
    assert code == 0 and added and added[0].name == f"deal{len(records) + 1:03d}.json"
    assert all(path.read_bytes() == content for path, content in first.items())


def test_end_of_input_and_quit_exit_cleanly() -> None:
    def eof(prompt: str) -> str:
        raise EOFError

    code, text = play(Rules(), eof, seed=1)
    assert code == 0 and "End of input. Goodbye." in text
    code, text = play(Rules(), Script(["TS?", "quit"]), seed=1)
    assert code == 0 and "You left the game. Goodbye." in text


def test_symbols_and_ten_forms_are_accepted() -> None:
    """'TS', '10S' and '10♠' name the same card: typing any form plays it."""
    for form in ("{r}{s}", "10{s}", "10{sym}"):
        out = io.StringIO()
        played = []

        def script(prompt: str, form: str = form, played: list[str] = played) -> str:
            legal = re.search(r"\(legal: ([^)]*)\)", prompt).group(1).split()
            tens = [c for c in legal if c[0] == "T"]
            if tens and not played:
                card = tens[0]
                played.append(card)
                sym = SUIT_SYMBOLS["CDHS".index(card[1])]
                return form.format(r="T", s=card[1].lower(), sym=sym)
            return legal[0]

        assert TerminalGame(Rules(target=1), level="easy", seed=2, input_fn=script, out=out).run() == 0
        assert played, "the scripted player never held a legal ten"
        shown = RANK_LETTERS[8] + SUIT_SYMBOLS["CDHS".index(played[0][1])]
        assert f"You {shown}" in out.getvalue()


def test_seat_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert seat_names(Rules(), 0) == ["You", "Left opp", "Partner", "Right opp"]
    assert seat_names(Rules(direction="anticlockwise"), 2) == ["Partner", "Left opp", "You", "Right opp"]
    assert seat_names(Rules(n_players=6), 1)[1:3] == ["You", "Opp 1"]
    for seat in ("4", "-1"):  # the command checks the seat, before any bot is loaded
        assert main(["play", "--seat", seat]) == 2
        assert f"error: --seat {seat} is not a seat; seats are 0..3" in capsys.readouterr().err


def test_play_command_with_stdin_closed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def no_input(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", no_input)
    assert main(["play", "--rules", "band", "--level", "medium", "--seat", "2", "--seed", "4"]) == 0
    assert "Goodbye" in capsys.readouterr().out


def test_play_refuses_a_save_folder_it_cannot_make_before_the_first_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("asked for a card before checking --save"))
    a_file = tmp_path / "taken"
    a_file.write_text("")
    for save, problem in (
        (a_file, "a file of that name exists; give a folder"),
        (a_file / "records", f"{a_file} is a file, so the folder cannot be made"),
    ):
        assert main(["play", "--seed", "1", "--save", str(save)]) == 2
        assert capsys.readouterr().err == f"mendikot play: error: --save {save}: {problem}\n"
