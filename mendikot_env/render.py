"""Text rendering of one game of a batch: hands, the trick, trump state, tens and tricks."""

from __future__ import annotations

from collections.abc import Sequence

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


def trump_text(state: State, game: int = 0, names: Sequence[str] | None = None, symbols: bool = True) -> str:
    """One line on the trump: none yet, face down, or the suit and how it was set."""
    rules = state.rules
    trump = int(state.trump[game])
    if trump < 0:
        if int(state.face_down[game]) >= 0:
            return f"face down (hidden by {seat_label(int(state.hider[game]), names)})"
        return "none yet" if rules.trump != "band" else "not chosen yet"
    text = f"{SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]}" if symbols else SUIT_NAMES[trump]
    if rules.trump == "open":
        return text + f" (open card {card_str(int(state.open_card[game]), symbols=symbols)})"
    if rules.trump == "band":
        by = seat_label(int(state.revealed_by[game]), names)
        how = "asked for by" if state.asked[game] else "turned up at the turn of"
        return text + f" (band card {card_str(int(state.band_card[game]), symbols=symbols)}, {how} {by})"
    return text + " (cut)"


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
    if rules.collection == "dehla":
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
