"""Text rendering of one game of a batch: hands, the trick, trump state, tens and tricks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import SUIT_NAMES, SUIT_SYMBOLS, card_str, hand_str, is_integer, set_to_cards
from .core import OVER, State, team_counts


def seat_label(seat: int, names: Sequence[str] | None = None) -> str:
    """Display name of a seat (``player_k`` unless names are given)."""
    return names[seat] if names is not None else f"player_{seat}"


def check_view(
    n_players: int, seat: int | None, names: Sequence[str] | None, match_score: Sequence[int] | None
) -> None:
    """Refuse view options that do not fit the table: short names or a short match score
    would fail deep in the drawing with an IndexError, and a seat off the table would
    quietly hide every hand.

    Raises:
        ValueError: naming the option, the value given and what the table needs.
    """
    n = n_players
    if seat is not None and (not is_integer(seat) or not 0 <= seat < n):
        problem = f"seat must be None (every hand) or a seat 0..{n - 1}, got {seat!r}"
    elif names is not None and len(names) != n:
        problem = f"names needs one name per seat ({n}), got {len(names)}: {list(names)!r}"
    elif match_score is not None and len(match_score) != 2:
        problem = f"match_score needs the points of team 0 and team 1 (2 numbers), got {match_score!r}"
    else:
        return
    raise ValueError(problem)


def trump_change_text(state: State, trump_before: int, card_text: Callable[[int], str] = card_str) -> str:
    """What an action just taken in game 0 showed of trump, as words to append to it: the cut
    that set it, or the face-down card turned up as the turn passed ("" when trump did not
    change). The terminal player and the web table narrate moves with it."""
    trump = int(state.trump[0])
    if trump == trump_before or trump < 0:
        return ""
    return trump_set_text(trump, None if state.rules.trump_by_first_cut else int(state.band_card[0]), card_text)


def trump_set_text(trump: int, revealed: int | None, card_text: Callable[[int], str] = card_str) -> str:
    """The words appended to a move that set ``trump``: the cut, or the face-down card
    ``revealed`` turned up (the replays narrate their events with it too)."""
    if revealed is None:
        return f" (cuts: {SUIT_NAMES[trump]} are trump)"
    return f"; the face-down {card_text(revealed)} is turned up, {SUIT_NAMES[trump]} are trump"


def trump_status(
    state: State, game: int = 0, names: Sequence[str] | None = None, symbols: bool = True, short: bool = False
) -> tuple[str, str]:
    """The trump as (what it is, how it was set): none yet, face down or the suit, and a note
    in brackets ("" when there is none). The text table joins the two; ``short`` is the
    picture's narrow corner: the note stays a line of its own only where it names a seat,
    else it joins the first part (the second is then "")."""
    rules = state.rules
    trump = int(state.trump[game])
    if trump < 0 and int(state.face_down[game]) >= 0:
        return "face down", f"(hidden by {seat_label(int(state.hider[game]), names)})"
    if trump < 0:
        return ("not chosen yet" if rules.has_face_down else "none yet"), ""
    suit = f"{SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]}" if symbols else SUIT_NAMES[trump]
    if rules.has_face_down:
        card = card_str(int(state.band_card[game]), symbols=symbols)
        how = "asked for by" if state.asked[game] else "turned up by" if short else "turned up at the turn of"
        by = seat_label(int(state.revealed_by[game]), names)
        return suit, f"(band card {card} {how} {by})" if short else f"(band card {card}, {how} {by})"
    if rules.trump_known_from_start:
        note = "(open card)" if short else f"(open card {card_str(int(state.open_card[game]), symbols=symbols)})"
    else:
        note = "(cut)"
    return (f"{suit} {note}", "") if short else (suit, note)


def trump_text(state: State, game: int = 0, names: Sequence[str] | None = None, symbols: bool = True) -> str:
    """One line on the trump: none yet, face down, or the suit and how it was set."""
    what, how = trump_status(state, game, names, symbols)
    return f"{what} {how}" if how else what


def render_text(
    state: State,
    game: int = 0,
    seat: int | None = None,
    names: Sequence[str] | None = None,
    match_score: Sequence[int] | None = None,
    symbols: bool = True,
) -> str:
    """A readable table of one game.

    Args:
        state: the batch.
        game: which game of the batch.
        seat: show only this seat's hand (a human player's view); None shows every hand.
        names: display names of the seats.
        match_score: optional points of team 0 and team 1.
        symbols: suits as symbols (♠); False gives letters (S) for terminals without them.

    Raises:
        ValueError: a seat off the table, or names or a match score of the wrong length.
    """
    rules = state.rules
    n = rules.n_players
    check_view(n, seat, names, match_score)
    trick_no = int(state.trick_no[game])
    over = int(state.phase[game]) == OVER
    current = int(state.current[game])
    dealer = int(state.dealer[game])
    tens, tricks = team_counts(state)
    head = "hand over" if over else f"trick {trick_no + 1}/{rules.n_tricks}"
    arrow = " -> " if rules.direction == "clockwise" else " <- "
    lines = [
        f"Mendikot ({rules.trump} trump, {n} players) | {head} | dealer {seat_label(dealer, names)}"
        + ("" if over else f" | to act: {seat_label(current, names)}"),
        f"Play order ({rules.direction}): " + arrow.join(seat_label(s, names) for s in range(n)),
        f"Trump: {trump_text(state, game, names, symbols)}",
    ]
    for team in (0, 1):
        members = ", ".join(seat_label(s, names) for s in range(team, n, 2))
        score = f" | match points {match_score[team]}" if match_score is not None else ""
        lines.append(f"Team {team} ({members}): tens {int(tens[game, team])}, tricks {int(tricks[game, team])}{score}")
    if rules.collects_two_in_a_row:
        middle = set_to_cards(state.middle[game])
        lines.append(f"Middle: {len(middle) // n} trick(s) face down")
    played = [(s, int(c)) for s, c in enumerate(state.trick_cards[game]) if c >= 0]
    leader = int(state.leader[game])
    order = sorted(played, key=lambda sc: (sc[0] - leader) % n)
    trick = "  ".join(f"{seat_label(s, names)}: {card_str(c, symbols=symbols)}" for s, c in order)
    lines.append("Trick: " + (trick if trick else "(empty)"))
    lines.append("Hands:")
    for s in range(n):
        if seat is not None and s != seat:
            continue
        marker = "*" if s == current and not over else " "
        cards = set_to_cards(state.hands[game, s])
        extra = ""
        if int(state.face_down[game]) >= 0 and s == int(state.hider[game]) and (seat is None or seat == s):
            extra = f"  [face down: {card_str(int(state.face_down[game]), symbols=symbols)}]"
        lines.append(f" {marker}{seat_label(s, names):<10} {hand_str(cards, symbols)}{extra}")
    return "\n".join(lines)
