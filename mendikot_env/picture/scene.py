"""The table scene: every box, disc, label and suit pip of one game's picture, in painting order.

Computed once by :func:`table_scene` and drawn by :mod:`.svg` and :mod:`.raster`, so the SVG
a notebook shows and the ``rgb_array`` frame a video recorder stores are the same picture.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import core
from ..cards import NUM_RANKS, TEN_RANK, popcount, set_to_cards
from ..render import check_view, seat_label, trump_status
from ..rules import Rules

CARD_W, CARD_H = 42, 60  # a card on the table, in pixels
STEP = 26  # horizontal step between overlapping cards of a hand
MINI_W, MINI_H = 24, 32  # the small cards of the tens taken
RAISE = 10  # legal cards of the seat to act stand out by this much

FELT = "#2f6b45"
FELT_EDGE = "#24543a"
INK = "#f4f1e8"  # text on the felt
CARD_FACE = "#fffdf7"
CARD_EDGE = "#7a7a7a"
BLACK_SUIT = "#1b1b1b"
RED_SUIT = "#c8102e"
TEN_EDGE = "#d9a400"  # tens are what the game is about: gold edge
WIN_EDGE = "#ffd23f"  # the card winning the trick
BACK = "#2b4c8c"
BACK_INNER = "#4a6fb8"
TO_ACT = "#ffd23f"
TEAM_COLOURS = ("#8fd3ff", "#ffb27a")  # team 0, team 1 (on the felt)
HIDDEN_EDGE = "#b07cff"  # the face-down band card


@dataclass(frozen=True)
class Box:
    """A (rounded) rectangle."""

    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    stroke_width: float = 1.0
    rx: float = 0.0
    dashed: bool = False


@dataclass(frozen=True)
class Disc:
    """A filled circle."""

    cx: float
    cy: float
    r: float
    fill: str
    stroke: str | None = None


@dataclass(frozen=True)
class Label:
    """A line of text; ``y`` is the baseline, ``anchor`` is start, middle or end."""

    x: float
    y: float
    text: str
    size: float = 14.0
    fill: str = INK
    anchor: str = "start"
    bold: bool = False


@dataclass(frozen=True)
class Pip:
    """A suit shape of height ``size`` centred on (cx, cy)."""

    cx: float
    cy: float
    size: float
    suit: int
    fill: str


Shape = Box | Disc | Label | Pip


@dataclass
class Scene:
    """Everything to draw, in painting order (later shapes cover earlier ones)."""

    width: int
    height: int
    shapes: list[Shape] = field(default_factory=list)

    def add(self, *shapes: Shape) -> None:
        self.shapes.extend(shapes)


def _suit_colour(suit: int) -> str:
    return RED_SUIT if suit in (1, 2) else BLACK_SUIT


def _rank_text(card: int) -> str:
    return "10" if card % NUM_RANKS == TEN_RANK else "23456789TJQKA"[card % NUM_RANKS]


def _card(x: float, y: float, card: int | None, edge: str | None = None, edge_width: float = 1.0) -> list[Shape]:
    """A card with its top-left corner at (x, y): face up (``card`` id) or face down (None)."""
    if card is None:
        return [
            Box(x, y, CARD_W, CARD_H, BACK, CARD_EDGE if edge is None else edge, edge_width, rx=4),
            Box(x + 4, y + 4, CARD_W - 8, CARD_H - 8, BACK_INNER, None, rx=3),
            Box(x + 8, y + 8, CARD_W - 16, CARD_H - 16, BACK, None, rx=2),
        ]
    suit = card // NUM_RANKS
    is_ten = card % NUM_RANKS == TEN_RANK
    if edge is None:
        edge, edge_width = (TEN_EDGE, 2.5) if is_ten else (CARD_EDGE, 1.0)
    colour = _suit_colour(suit)
    return [
        Box(x, y, CARD_W, CARD_H, CARD_FACE, edge, edge_width, rx=4),
        Label(x + 3, y + 18, _rank_text(card), 17, colour, bold=True),
        Pip(x + 11, y + 30, 12, suit, colour),
        Pip(x + CARD_W - 12, y + CARD_H - 15, 17, suit, colour),
    ]


def card_scene(card: int | None) -> Scene:
    """One card alone, face up (a card id) or its back (None): for a page that lays out cards itself."""
    scene = Scene(CARD_W + 4, CARD_H + 4)
    scene.add(*_card(2, 2, card))
    return scene


def _mini(x: float, y: float, card: int) -> list[Shape]:
    """A small face-up card (the tens a team has taken)."""
    colour = _suit_colour(card // NUM_RANKS)
    return [
        Box(x, y, MINI_W, MINI_H, CARD_FACE, TEN_EDGE, 1.5, rx=3),
        Label(x + MINI_W / 2, y + 13, _rank_text(card), 11, colour, anchor="middle", bold=True),
        Pip(x + MINI_W / 2, y + 23, 9, card // NUM_RANKS, colour),
    ]


def _sorted_hand(cards: Sequence[int]) -> list[int]:
    """Spades first and high cards first, the way a hand is held (as the text render does)."""
    return sorted(cards, key=lambda c: (-(c // NUM_RANKS), -(c % NUM_RANKS)))


def _size(n_players: int) -> tuple[int, int]:
    return (1040, 720) if n_players == 4 else (1040, 780)


def seat_anchors(rules: Rules, bottom: int) -> dict[int, tuple[float, float]]:
    """Centre of each seat's hand: ``bottom`` at the foot of the table, the others in the
    order of play around an ellipse (to the left first when play is clockwise)."""
    n = rules.n_players
    width, height = _size(n)
    cx, cy, rx, ry = width / 2, height / 2, width / 2 - 200, height / 2 - 90
    sign = 1 if rules.direction == "clockwise" else -1
    out = {}
    for s in range(n):
        angle = math.radians(90 + sign * 360 * ((s - bottom) % n) / n)
        out[s] = (cx + rx * math.cos(angle), cy + ry * math.sin(angle))
    return out


def _trump_lines(state: core.State, game: int, names: Sequence[str] | None) -> list[str]:
    """The trump state in one or two short lines (the picture's corner is narrow)."""
    what, how = trump_status(state, game, names, short=True)
    return [f"Trump: {what}", how] if how else [f"Trump: {what}"]


def _result_text(state: core.State, game: int) -> str:
    r = core.hand_results(state.select([game])).as_dict(0)
    outcome = "Drawn hand" if r["winner"] is None else f"Team {r['winner']} wins"
    extras = [k for k in ("mendikot", "whitewash") if r[k]]
    return f"{outcome}: tens {r['tens'][0]}-{r['tens'][1]}, tricks {r['tricks'][0]}-{r['tricks'][1]}" + (
        f" ({', '.join(extras)})" if extras else ""
    )


seat_name = seat_label  # this module's older name of the one seat-label helper (in render)


def table_scene(
    state: core.State,
    game: int = 0,
    seat: int | None = None,
    names: Sequence[str] | None = None,
    match_score: Sequence[int] | None = None,
    trick: Sequence[tuple[int, int]] | None = None,
    trick_winner: int | None = None,
    caption: str | None = None,
    show_legal: bool = True,
) -> Scene:
    """The scene of one game of a batch (what :func:`table_svg` and :func:`table_image` draw).

    Args:
        state: the batch.
        game: which game of the batch.
        seat: draw only this seat's hand face up, at the foot of the table (a player's
            view); None shows every hand, seat 0 at the foot.
        names: display names of the seats.
        match_score: optional match points of team 0 and team 1.
        trick: (seat, card) pairs to show in the middle instead of the current trick
            (a record viewer shows the trick just completed, which the core has cleared).
        trick_winner: the seat to outline as winning ``trick``.
        caption: the line at the foot; by default who is to act, or the result.
        show_legal: raise the legal cards of the seat to act (when its hand is face up).

    Returns:
        The scene, shapes in painting order: felt, seats, trick, corners, foot.

    Raises:
        ValueError: a seat off the table, or names or a match score of the wrong length.
    """
    n = state.rules.n_players
    check_view(n, seat, names, match_score)
    width, height = _size(n)
    scene = Scene(width, height)
    scene.add(
        Box(0, 0, width, height, FELT_EDGE),
        Box(6, 6, width - 12, height - 12, FELT, None, rx=18),
    )
    anchors = seat_anchors(state.rules, 0 if seat is None else seat)
    over = int(state.phase[game]) == core.OVER
    current = -1 if over else int(state.current[game])
    legal = int(core.legal_bits(state.select([game]))[0]) if show_legal and not over else 0
    for s in range(n):
        _add_seat(scene, state, game, s, anchors[s], seat is None or s == seat, current, legal, names)
    _add_trick(scene, state, game, anchors, trick, trick_winner)
    _add_game_corner(scene, state, game, over, names)
    _add_team_corner(scene, state, game, match_score)
    if caption is None:
        caption = "" if over else f"{seat_label(current, names)} to act"
    scene.add(Label(20, height - 18, caption, 15, INK))
    if over:
        scene.add(Label(width - 20, height - 18, _result_text(state, game), 15, TO_ACT, "end", True))
    return scene


def _add_seat(
    scene: Scene,
    state: core.State,
    game: int,
    s: int,
    anchor: tuple[float, float],
    visible: bool,
    current: int,
    legal: int,
    names: Sequence[str] | None,
) -> None:
    """Seat ``s``: its label (the seat to act highlighted, the dealer's chip) and its hand."""
    ax, ay = anchor
    face_down = int(state.face_down[game])
    hider = int(state.hider[game])
    cards = _sorted_hand(set_to_cards(state.hands[game, s]))
    count = len(cards) + (1 if face_down >= 0 and s == hider else 0)
    span = STEP * max(count - 1, 0) + CARD_W
    left = ax - span / 2
    top = ay - CARD_H / 2
    label = f"{seat_label(s, names)} (team {s % 2})"
    label_y = top - 14
    text_w = 7.6 * len(label)
    if s == current:
        scene.add(Box(ax - text_w / 2 - 8, label_y - 15, text_w + 16, 21, TO_ACT, None, rx=10))
    scene.add(Label(ax, label_y, label, 14, BLACK_SUIT if s == current else TEAM_COLOURS[s % 2], "middle", True))
    if s == int(state.dealer[game]):
        chip_x = ax + text_w / 2 + 18
        scene.add(Disc(chip_x, label_y - 5, 10, CARD_FACE, BLACK_SUIT))
        scene.add(Label(chip_x, label_y, "D", 13, BLACK_SUIT, "middle", True))
    for k, card in enumerate(cards):
        lift = RAISE if s == current and visible and legal >> card & 1 else 0
        scene.add(*_card(left + k * STEP, top - lift, card if visible else None))
    if face_down >= 0 and s == hider:
        x = left + len(cards) * STEP + (CARD_W - STEP) + 10
        scene.add(*_card(x, top, face_down if visible else None, HIDDEN_EDGE, 2.5))
        scene.add(Label(x + CARD_W / 2, top + CARD_H + 14, "face down", 11, HIDDEN_EDGE, "middle", True))


def _add_trick(
    scene: Scene,
    state: core.State,
    game: int,
    anchors: dict[int, tuple[float, float]],
    trick: Sequence[tuple[int, int]] | None,
    trick_winner: int | None,
) -> None:
    """The trick in the middle, each card pushed towards the seat that played it; a trick
    given by the caller is a completed one ("takes it"), the current one is "winning"."""
    cx, cy = scene.width / 2, scene.height / 2
    done = trick is not None
    if trick is None:
        trick = [(s, int(c)) for s, c in enumerate(state.trick_cards[game]) if c >= 0]
        winning, _ = core.trick_outlook(state.select([game]))
        trick_winner = int(winning[0]) if trick else None
    pull = 0.32 if state.rules.n_players == 4 else 0.4
    for s, card in trick:
        ax, ay = anchors[s]
        x = cx + pull * (ax - cx) - CARD_W / 2
        y = cy + pull * (ay - cy) - CARD_H / 2
        if s == trick_winner:
            scene.add(*_card(x, y, card, WIN_EDGE, 4.0))
            scene.add(
                Label(x + CARD_W / 2, y + CARD_H + 14, "takes it" if done else "winning", 12, WIN_EDGE, "middle", True)
            )
        else:
            scene.add(*_card(x, y, card))


def _add_game_corner(scene: Scene, state: core.State, game: int, over: bool, names: Sequence[str] | None) -> None:
    """Top left: the game, the trick number and the trump (with the open card, if any)."""
    rules = state.rules
    n = rules.n_players
    head = "Hand over" if over else f"Trick {min(int(state.trick_no[game]) + 1, rules.n_tricks)}/{rules.n_tricks}"
    lines = [f"Mendikot: {rules.trump} trump, {n} players", head, *_trump_lines(state, game, names)]
    if rules.collects_two_in_a_row:
        lines.append(f"Middle: {int(popcount(state.middle[game : game + 1])[0]) // n} trick(s) face down")
    for i, line in enumerate(lines):
        scene.add(Label(20, 30 + 20 * i, line, 15 if i else 16, INK, bold=i == 0))
    if rules.trump_known_from_start:
        y = 30 + 20 * len(lines) - 8
        scene.add(*_card(20, y, int(state.open_card[game])))
        scene.add(Label(20 + CARD_W + 8, y + 34, "open card", 12, INK))


def _add_team_corner(scene: Scene, state: core.State, game: int, match_score: Sequence[int] | None) -> None:
    """Top right: each team's tens (as small cards), tricks and match points."""
    width = scene.width
    tens, tricks = core.team_counts(state.select([game]))
    for team in (0, 1):
        y = 30 + 58 * team
        k, t = int(tens[0, team]), int(tricks[0, team])
        text = f"Team {team}: {k} ten{'' if k == 1 else 's'}, {t} trick{'' if t == 1 else 's'}"
        if match_score is not None:
            text += f", {int(match_score[team])} pts"
        scene.add(Label(width - 20, y, text, 15, TEAM_COLOURS[team], "end", True))
        taken = [c for c in set_to_cards(state.taken[game, team]) if c % NUM_RANKS == TEN_RANK]
        for k, card in enumerate(taken):
            scene.add(*_mini(width - 20 - (len(taken) - k) * (MINI_W + 4), y + 6, card))
