"""Pictures of the table: an SVG of a game state or a record, and an RGB image for videos.

People read a table faster than a text dump: the seats sit around the table with their
hands drawn as cards (every hand, or one seat's view with the others face down), the
trick lies in the middle with the card winning it outlined, and the corners hold the
trump state and each team's tens and tricks.

Both outputs draw one *scene* (a list of boxes, discs, labels and suit pips computed
once by :func:`table_scene`), so the SVG a notebook shows and the ``rgb_array`` frame a
PettingZoo video recorder stores are the same picture. The image needs nothing but
numpy: a tiny rasteriser of rounded boxes, discs, suit shapes and a 5x7 bitmap font.
Pillow would bring a dependency to the base install and draw text with whatever fonts
the machine has (images would differ between machines); this one is exact everywhere.

Example:
    >>> from mendikot_env import Rules, core
    >>> state = core.new_hands(Rules.preset("band"), 1, rng=0)
    >>> TableView(state).svg.startswith("<svg")
    True
    >>> table_image(state).shape
    (720, 1040, 3)
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from . import core
from .cards import (
    ASK_ACTION,
    NUM_RANKS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    TEN_RANK,
    card_str,
    is_integer,
    parse_card,
    popcount,
    set_to_cards,
)
from .render import check_view
from .rules import Rules

# ---------------------------------------------------------------------------- the scene

CARD_W, CARD_H = 42, 60  # a card on the table, in pixels
STEP = 26  # horizontal step between overlapping cards of a hand
MINI_W, MINI_H = 24, 32  # the small cards of the tens taken
RAISE = 10  # legal cards of the seat to act stand out by this much
FONT = "DejaVu Sans, Segoe UI Symbol, Arial, sans-serif"

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


def seat_name(seat: int, names: Sequence[str] | None) -> str:
    """Display name of a seat (``player_k`` as in the env, unless names are given)."""
    return names[seat] if names is not None else f"player_{seat}"


def _trump_lines(state: core.State, game: int, names: Sequence[str] | None) -> list[str]:
    """The trump state in one or two short lines (the picture's corner is narrow)."""
    rules = state.rules
    trump = int(state.trump[game])
    if trump < 0:
        if int(state.face_down[game]) >= 0:
            return ["Trump: face down", f"(hidden by {seat_name(int(state.hider[game]), names)})"]
        return ["Trump: none yet" if rules.trump != "band" else "Trump: not chosen yet"]
    head = f"Trump: {SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]}"
    if rules.trump == "open":
        return [head + " (open card)"]
    if rules.trump == "band":
        by = seat_name(int(state.revealed_by[game]), names)
        how = "asked for by" if state.asked[game] else "turned up by"
        return [head, f"(band card {card_str(int(state.band_card[game]), symbols=True)} {how} {by})"]
    return [head + " (cut)"]


def _result_text(state: core.State, game: int) -> str:
    r = core.hand_results(state.select([game])).as_dict(0)
    outcome = "Drawn hand" if r["winner"] is None else f"Team {r['winner']} wins"
    extras = [k for k in ("mendikot", "whitewash") if r[k]]
    return f"{outcome}: tens {r['tens'][0]}-{r['tens'][1]}, tricks {r['tricks'][0]}-{r['tricks'][1]}" + (
        f" ({', '.join(extras)})" if extras else ""
    )


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

    Raises:
        ValueError: a seat off the table, or names or a match score of the wrong length.
    """
    rules = state.rules
    n = rules.n_players
    check_view(n, seat, names, match_score)
    width, height = _size(n)
    scene = Scene(width, height)
    scene.add(
        Box(0, 0, width, height, FELT_EDGE),
        Box(6, 6, width - 12, height - 12, FELT, None, rx=18),
    )
    bottom = 0 if seat is None else seat
    anchors = seat_anchors(rules, bottom)
    over = int(state.phase[game]) == core.OVER
    current = -1 if over else int(state.current[game])
    legal = int(core.legal_bits(state.select([game]))[0]) if show_legal and not over else 0
    face_down = int(state.face_down[game])
    hider = int(state.hider[game])

    # Seats: label (to act highlighted, dealer chip) and the hand.
    for s in range(n):
        ax, ay = anchors[s]
        visible = seat is None or s == seat
        cards = _sorted_hand(set_to_cards(state.hands[game, s]))
        count = len(cards) + (1 if face_down >= 0 and s == hider else 0)
        span = STEP * max(count - 1, 0) + CARD_W
        left = ax - span / 2
        top = ay - CARD_H / 2
        label = f"{seat_name(s, names)} (team {s % 2})"
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

    # The trick in the middle, each card pushed towards the seat that played it.
    cx, cy = width / 2, height / 2
    done = trick is not None  # a trick given by the caller is a completed one
    if trick is None:
        trick = [(s, int(c)) for s, c in enumerate(state.trick_cards[game]) if c >= 0]
        winning, _ = core.trick_outlook(state.select([game]))
        trick_winner = int(winning[0]) if trick else None
    pull = 0.32 if n == 4 else 0.4
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

    # Top left: the game and the trump.
    head = "Hand over" if over else f"Trick {min(int(state.trick_no[game]) + 1, rules.n_tricks)}/{rules.n_tricks}"
    lines = [f"Mendikot: {rules.trump} trump, {n} players", head, *_trump_lines(state, game, names)]
    if rules.collection == "dehla":
        lines.append(f"Middle: {int(popcount(state.middle[game : game + 1])[0]) // n} trick(s) face down")
    for i, line in enumerate(lines):
        scene.add(Label(20, 30 + 20 * i, line, 15 if i else 16, INK, bold=i == 0))
    if rules.trump == "open":
        y = 30 + 20 * len(lines) - 8
        scene.add(*_card(20, y, int(state.open_card[game])))
        scene.add(Label(20 + CARD_W + 8, y + 34, "open card", 12, INK))

    # Top right: each team's tens (as small cards) and tricks.
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

    # The foot: a caption and, once the hand is over, the result.
    if caption is None:
        caption = "" if over else f"{seat_name(current, names)} to act"
    scene.add(Label(20, height - 18, caption, 15, INK))
    if over:
        scene.add(Label(width - 20, height - 18, _result_text(state, game), 15, TO_ACT, "end", True))
    return scene


# ------------------------------------------------------------------------------- SVG


def scene_svg(scene: Scene) -> str:
    """The scene as a standalone SVG document (one string)."""
    w, h = scene.width, scene.height
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">'
    ]
    for shape in scene.shapes:
        out.append(_svg_shape(shape))
    out.append("</svg>")
    return "".join(out)


def _svg_shape(s: Shape) -> str:
    if isinstance(s, Box):
        stroke = "" if s.stroke is None else f' stroke="{s.stroke}" stroke-width="{s.stroke_width:g}"'
        dash = ' stroke-dasharray="5,3"' if s.dashed else ""
        return (
            f'<rect x="{s.x:.1f}" y="{s.y:.1f}" width="{s.w:.1f}" height="{s.h:.1f}" rx="{s.rx:g}" '
            f'fill="{s.fill}"{stroke}{dash}/>'
        )
    if isinstance(s, Disc):
        stroke = "" if s.stroke is None else f' stroke="{s.stroke}"'
        return f'<circle cx="{s.cx:.1f}" cy="{s.cy:.1f}" r="{s.r:g}" fill="{s.fill}"{stroke}/>'
    if isinstance(s, Label):
        weight = ' font-weight="bold"' if s.bold else ""
        return (
            f'<text x="{s.x:.1f}" y="{s.y:.1f}" font-size="{s.size:g}" fill="{s.fill}" '
            f'text-anchor="{s.anchor}"{weight}>{escape(s.text)}</text>'
        )
    # A pip: the suit symbol, its visual centre on (cx, cy).
    return (
        f'<text x="{s.cx:.1f}" y="{s.cy + 0.36 * s.size:.1f}" font-size="{s.size * 1.05:.1f}" fill="{s.fill}" '
        f'text-anchor="middle">{SUIT_SYMBOLS[s.suit]}</text>'
    )


# ------------------------------------------------------------------------ rasteriser

# The classic 5x7 font of small LCDs, printable ASCII 32..126: five column bytes per
# character, bit 0 at the top (bit 7 is the descender row of g, j, p, q, y and the comma).
_FONT_HEX = (
    "0000000000 00005f0000 0007000700 147f147f14 242a7f2a12 2313086462 3649562050 0008070300"
    " 001c224100 0041221c00 2a1c7f1c2a 08083e0808 0080703000 0808080808 0000606000 2010080402"
    " 3e5149453e 00427f4000 7249494946 2141494d33 1814127f10 2745454539 3c4a494931 4121110907"
    " 3649494936 464949291e 0000140000 0040340000 0008142241 1414141414 0041221408 0201590906"
    " 3e415d594e 7c1211127c 7f49494936 3e41414122 7f4141413e 7f49494941 7f09090901 3e41415173"
    " 7f0808087f 00417f4100 2040413f01 7f08142241 7f40404040 7f021c027f 7f0408107f 3e4141413e"
    " 7f09090906 3e4151215e 7f09192946 2649494932 03017f0103 3f4040403f 1f2040201f 3f4038403f"
    " 6314081463 0304780403 6159494d43 007f414141 0204081020 004141417f 0402010204 4040404040"
    " 0003070800 2054547840 7f28444438 3844444428 384444287f 3854545418 00087e0902 18a4a49c78"
    " 7f08040478 00447d4000 2040403d00 7f10284400 00417f4000 7c0478047c 7c08040478 3844444438"
    " fc18242418 18242418fc 7c08040408 4854545424 04043f4424 3c4040207c 1c2040201c 3c4030403c"
    " 4428102844 4c9090907c 4464544c44 0008364100 0000770000 0041360800 0201020402"
)
_GLYPHS = np.array(
    [[[(int(h[2 * c : 2 * c + 2], 16) >> r) & 1 for c in range(5)] for r in range(8)] for h in _FONT_HEX.split()],
    dtype=bool,
)  # (95, 8, 5): rows, columns


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


def _font_scale(size: float) -> int:
    """Pixel scale of the 5x7 font for a font size (the bitmap font is coarse: 1, 2 or 3)."""
    return 1 if size < 16.5 else 2 if size < 28 else 3


def _text_width(text: str, scale: int) -> int:
    return max(len(text) * 6 * scale - scale, 0)


class _Canvas:
    """An (H, W, 3) uint8 image with the few drawing operations a scene needs."""

    def __init__(self, width: int, height: int) -> None:
        self.img = np.zeros((height, width, 3), dtype=np.uint8)
        self.h, self.w = height, width

    def _region(self, x0: float, y0: float, x1: float, y1: float) -> tuple[slice, slice, np.ndarray, np.ndarray] | None:
        """Clipped pixel slices of a box, and the pixel-centre coordinates inside it."""
        c0, c1 = max(int(round(x0)), 0), min(int(round(x1)), self.w)
        r0, r1 = max(int(round(y0)), 0), min(int(round(y1)), self.h)
        if c0 >= c1 or r0 >= r1:
            return None
        ys = np.arange(r0, r1)[:, None] + 0.5
        xs = np.arange(c0, c1)[None, :] + 0.5
        return slice(r0, r1), slice(c0, c1), ys, xs

    def fill(self, x: float, y: float, w: float, h: float, rx: float, colour: str) -> None:
        region = self._region(x, y, x + w, y + h)
        if region is None:
            return
        rows, cols, ys, xs = region
        if rx > 0:
            dx = np.maximum(np.maximum(x + rx - xs, xs - (x + w - rx)), 0)
            dy = np.maximum(np.maximum(y + rx - ys, ys - (y + h - rx)), 0)
            self.img[rows, cols][dx * dx + dy * dy <= rx * rx] = _rgb(colour)  # a view: writes through
        else:
            self.img[rows, cols] = _rgb(colour)

    def box(self, b: Box) -> None:
        if b.stroke is not None:
            sw = max(1, int(round(b.stroke_width)))
            self.fill(b.x, b.y, b.w, b.h, b.rx, b.stroke)
            self.fill(b.x + sw, b.y + sw, b.w - 2 * sw, b.h - 2 * sw, max(b.rx - sw, 0), b.fill)
        else:
            self.fill(b.x, b.y, b.w, b.h, b.rx, b.fill)

    def mask(self, x0: float, y0: float, x1: float, y1: float, inside: Any, colour: str) -> None:
        """Paint the pixels of a box where ``inside(xs, ys)`` holds."""
        region = self._region(x0, y0, x1, y1)
        if region is None:
            return
        rows, cols, ys, xs = region
        self.img[rows, cols][inside(xs, ys)] = _rgb(colour)

    def disc(self, d: Disc) -> None:
        rings = [(d.r, d.stroke), (d.r - 1.5, d.fill)] if d.stroke is not None else [(d.r, d.fill)]
        for r, colour in rings:
            self.mask(d.cx - r, d.cy - r, d.cx + r, d.cy + r, lambda x, y, r=r: _circle(x, y, d.cx, d.cy, r), colour)

    def pip(self, p: Pip) -> None:
        s = p.size
        shape = _SUIT_SHAPES[p.suit]
        self.mask(p.cx - s, p.cy - s, p.cx + s, p.cy + s, lambda x, y: shape((x - p.cx) / s, (y - p.cy) / s), p.fill)

    def label(self, t: Label) -> None:
        scale = _font_scale(t.size)
        width = _text_width(t.text, scale)
        x = t.x - (width / 2 if t.anchor == "middle" else width if t.anchor == "end" else 0)
        x, top = int(round(x)), int(round(t.y)) - 7 * scale
        colour = _rgb(t.fill)
        for i, ch in enumerate(t.text):
            gx = x + 6 * scale * i
            if ch in SUIT_SYMBOLS:
                size = 7 * scale
                self.pip(Pip(gx + 2.5 * scale, top + 3.5 * scale, size, SUIT_SYMBOLS.index(ch), t.fill))
                continue
            code = ord(ch) - 32
            if not 0 <= code < len(_GLYPHS):
                code = ord("?") - 32
            glyph = _GLYPHS[code]
            if t.bold:
                glyph = glyph | np.pad(glyph, ((0, 0), (1, 0)))[:, :5]
            bitmap = np.kron(glyph, np.ones((scale, scale), dtype=bool))
            self._stamp(gx, top, bitmap, colour)

    def _stamp(self, x: int, y: int, bitmap: np.ndarray, colour: np.ndarray) -> None:
        h, w = bitmap.shape
        r0, c0 = max(y, 0), max(x, 0)
        r1, c1 = min(y + h, self.h), min(x + w, self.w)
        if r0 >= r1 or c0 >= c1:
            return
        self.img[r0:r1, c0:c1][bitmap[r0 - y : r1 - y, c0 - x : c1 - x]] = colour


def _circle(x: np.ndarray, y: np.ndarray, cx: float, cy: float, r: float) -> np.ndarray:
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


# Suit shapes on the unit box (-0.5..0.5 is the symbol's height; y grows downwards).
def _heart(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    lobes = _circle(x, y, -0.21, -0.17, 0.24) | _circle(x, y, 0.21, -0.17, 0.24)
    point = (y >= -0.17) & (y <= 0.45) & (np.abs(x) <= 0.44 * (0.45 - y) / 0.62)
    return lobes | point


def _spade(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    lobes = _circle(x, y, -0.2, 0.1, 0.22) | _circle(x, y, 0.2, 0.1, 0.22)
    point = (y <= 0.1) & (y >= -0.47) & (np.abs(x) <= 0.41 * (y + 0.47) / 0.57)
    return lobes | point | _stem(x, y)


def _club(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    leaves = _circle(x, y, 0, -0.24, 0.2) | _circle(x, y, -0.23, 0.07, 0.2) | _circle(x, y, 0.23, 0.07, 0.2)
    return leaves | _circle(x, y, 0, 0.0, 0.1) | _stem(x, y)


def _stem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (y >= 0.0) & (y <= 0.47) & (np.abs(x) <= 0.04 + 0.2 * (y / 0.47) ** 2)


def _diamond(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x) / 0.36 + np.abs(y) / 0.5 <= 1


_SUIT_SHAPES = (_club, _diamond, _heart, _spade)


def scene_image(scene: Scene, scale: float = 1.0) -> np.ndarray:
    """The scene as an (H, W, 3) uint8 RGB image (``scale`` resizes it, nearest pixel)."""
    canvas = _Canvas(scene.width, scene.height)
    for shape in scene.shapes:
        if isinstance(shape, Box):
            canvas.box(shape)
        elif isinstance(shape, Disc):
            canvas.disc(shape)
        elif isinstance(shape, Label):
            canvas.label(shape)
        else:
            canvas.pip(shape)
    img = canvas.img
    if scale != 1.0:
        rows = np.minimum((np.arange(int(img.shape[0] * scale)) / scale).astype(np.int64), img.shape[0] - 1)
        cols = np.minimum((np.arange(int(img.shape[1] * scale)) / scale).astype(np.int64), img.shape[1] - 1)
        img = img[rows][:, cols]
    return np.ascontiguousarray(img)


# --------------------------------------------------------------------- the public API


def table_svg(state: core.State, game: int = 0, **options: Any) -> str:
    """SVG of one game of a batch; ``options`` are those of :func:`table_scene`."""
    return scene_svg(table_scene(state, game, **options))


def table_image(state: core.State, game: int = 0, scale: float = 1.0, **options: Any) -> np.ndarray:
    """(H, W, 3) uint8 image of one game (the env's ``rgb_array`` render); ``options`` as
    for :func:`table_scene`."""
    return scene_image(table_scene(state, game, **options), scale)


class SvgImage:
    """An SVG string that notebooks display as a picture (``_repr_svg_``)."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        """Write the SVG to a file."""
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path


class TableView(SvgImage):
    """A game state as a picture: shown by notebooks, saved as SVG, or as an RGB array.

    Args:
        state: a batch of games (a copy is kept, so later steps do not change the view).
        game: which game of the batch.
        **options: those of :func:`table_scene` (``seat``, ``names``, ``match_score``, ...).
    """

    def __init__(self, state: core.State, game: int = 0, **options: Any) -> None:
        self.state = state.select([game])
        self.options = options
        self.scene = table_scene(self.state, 0, **options)
        super().__init__(scene_svg(self.scene))

    @classmethod
    def from_env(cls, env: Any, **options: Any) -> TableView:
        """The table of a PettingZoo env (wrapped or raw), from its ``render_seat`` view.

        Raises:
            ValueError: the env has no game yet (call ``env.reset()`` first).
        """
        raw = env.unwrapped
        if getattr(raw, "game", None) is None:
            raise ValueError("the env has no game to show yet: call env.reset() first")
        match = getattr(raw, "match", None)
        options.setdefault("seat", raw.render_seat)
        if match is not None:
            options.setdefault("match_score", [int(x) for x in match.scores[0]])
        return cls(raw.game, 0, **options)

    def image(self, scale: float = 1.0) -> np.ndarray:
        """(H, W, 3) uint8 RGB image of the same picture."""
        return scene_image(self.scene, scale)


# ----------------------------------------------------------------------------- records


@dataclass
class Frame:
    """One picture of a record: the state after some actions, and what to show with it."""

    state: core.State
    actions: int  # actions of the record taken so far
    trick: list[tuple[int, int]] | None  # the completed trick to show in the middle, if any
    trick_winner: int | None
    caption: str


class RecordViewer:
    """Step through a game record trick by trick (or card by card) in a notebook.

    ``viewer.svg(k)`` is the table after trick ``k`` (0: the deal), with the trick just
    completed in the middle; ``viewer.filmstrip()`` is every frame in one SVG (no
    JavaScript, so it reads on any notebook viewer); displaying the viewer itself gives
    a slider (plain HTML and a few lines of JavaScript, no ipywidgets).

    Args:
        record: a record dict or the path of a record file (checked by replaying it).
        seat: show only this seat's hand face up (None: every hand).
        names: display names (default: the record's players with their seats).
        by: ``"trick"`` (a frame per trick) or ``"card"`` (a frame per action).

    Raises:
        mendikot_env.records.RecordError: the record does not replay.
        ValueError: a seat off the table, or names of the wrong length.
    """

    _ids = itertools.count()

    def __init__(
        self,
        record: dict[str, Any] | str | Path,
        seat: int | None = None,
        names: Sequence[str] | None = None,
        by: str = "trick",
    ) -> None:
        from .records import load_record, replay_record

        if by not in ("trick", "card"):
            raise ValueError(f"by must be 'trick' or 'card', got {by!r}")
        data = load_record(record) if isinstance(record, str | Path) else record
        replay_record(data)  # raises RecordError naming the first bad entry
        self.record = data
        self.rules = Rules.from_dict(data["rules"])
        check_view(self.rules.n_players, seat, names, None)  # here, not at the first picture
        self.seat = seat
        players = data.get("players")
        if names is None and players:
            names = [f"{p} ({s})" for s, p in enumerate(players)]
        self.names = list(names) if names is not None else None
        self.by = by
        self.frames = self._frames()

    def _name(self, seat: int) -> str:
        return seat_name(seat, self.names)

    def _frames(self) -> list[Frame]:
        data, rules = self.record, self.rules
        deal = [[parse_card(t) for t in hand] for hand in data["deal"]]
        open_card = None if data["open_card"] is None else parse_card(data["open_card"])
        state = core.new_hand(rules, rng=0, deal=deal, dealer=data["dealer"], open_card=open_card)
        actions = [
            (e["seat"], ASK_ACTION if e["action"] == "ASK" else parse_card(e["action"])) for e in data["actions"]
        ]
        dealer = data["dealer"]
        start = f"The deal: {self._name(dealer)} deals, {self._name((dealer + 1) % rules.n_players)} leads"
        i = 0
        if rules.trump == "band":  # the face-down card is part of the deal's picture
            core.step(state, np.array([actions[0][1]]))
            start += " and lays a card face down"
            i = 1
        frames = [Frame(state.copy(), i, None, None, start)]
        notes: list[str] = []
        for seat, action in actions[i:]:
            trick_no = int(state.trick_no[0])
            before = [(s, int(c)) for s, c in enumerate(state.trick_cards[0]) if c >= 0]
            face_down = int(state.face_down[0])
            core.step(state, np.array([action]))
            i += 1
            if face_down >= 0 and int(state.face_down[0]) < 0:
                how = "asked for by" if action == ASK_ACTION else "turned up by"
                notes.append(f"{card_str(face_down, symbols=True)} {how} {self._name(int(state.revealed_by[0]))}")
            done = int(state.trick_no[0]) > trick_no
            if done:
                winner = int(state.trick_winners[0, trick_no])
                cards = [*before, (seat, action)]
                tens = sum(1 for _, c in cards if c % NUM_RANKS == TEN_RANK)
                caption = f"After trick {trick_no + 1}/{rules.n_tricks}: {self._name(winner)} takes it"
                caption += f" ({tens} ten{'s' if tens != 1 else ''})" if tens else ""
                caption += "; " + "; ".join(notes) if notes else ""
                notes = []
                frames.append(Frame(state.copy(), i, cards, winner, caption))
            elif self.by == "card":
                caption = f"Trick {trick_no + 1}/{rules.n_tricks}: {self._name(seat)} "
                caption += "asks for the face-down card" if action == ASK_ACTION else f"plays {card_str(action, True)}"
                frames.append(Frame(state.copy(), i, None, None, caption))
        return frames

    def __len__(self) -> int:
        return len(self.frames)

    def scene(self, k: int) -> Scene:
        """The scene of frame ``k`` (with ``by="trick"``: after trick k; 0 is the deal).

        Raises:
            ValueError: ``k`` is not a frame (0..len - 1; -len..-1 count from the end).
        """
        count = len(self.frames)
        if not is_integer(k) or not -count <= k < count:
            raise ValueError(f"frame k must be an integer 0..{count - 1} (or -{count}..-1 from the end), got {k!r}")
        f = self.frames[k]
        return table_scene(
            f.state, 0, seat=self.seat, names=self.names, trick=f.trick, trick_winner=f.trick_winner, caption=f.caption
        )

    def svg(self, k: int) -> str:
        """SVG of frame ``k``."""
        return scene_svg(self.scene(k))

    def view(self, k: int) -> SvgImage:
        """Frame ``k`` as a displayable picture."""
        return SvgImage(self.svg(k))

    def image(self, k: int, scale: float = 1.0) -> np.ndarray:
        """(H, W, 3) uint8 image of frame ``k``."""
        return scene_image(self.scene(k), scale)

    def filmstrip(self, columns: int = 4, scale: float = 0.25) -> SvgImage:
        """Every frame, small, in one SVG grid (reads on viewers that run no JavaScript).

        Raises:
            ValueError: ``columns`` not a positive integer, or ``scale`` not positive.
        """
        if not is_integer(columns) or columns < 1:
            raise ValueError(f"columns must be an integer 1 or more, got {columns!r}")
        if not scale > 0:
            raise ValueError(f"scale must be a number above 0, got {scale!r}")
        first = self.scene(0)
        w, h = first.width * scale, first.height * scale
        rows = math.ceil(len(self) / columns)
        gap, title = 6, 16
        total_w, total_h = columns * (w + gap) - gap, rows * (h + gap + title) - gap
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}">']
        for k in range(len(self)):
            inner = self.svg(k)
            x, y = (k % columns) * (w + gap), (k // columns) * (h + gap + title) + title
            name = "the deal" if k == 0 else f"after action {self.frames[k].actions}"
            if self.by == "trick" and k > 0:
                name = f"after trick {k}"
            parts.append(f'<text x="{x + 2:.1f}" y="{y - 4:.1f}" font-size="12" font-family="{FONT}">{name}</text>')
            parts.append(
                inner.replace("<svg ", f'<svg x="{x:.1f}" y="{y:.1f}" ', 1).replace(
                    f'width="{first.width}" height="{first.height}"', f'width="{w:.1f}" height="{h:.1f}"', 1
                )
            )
        parts.append("</svg>")
        return SvgImage("".join(parts))

    def html(self) -> str:
        """A slider over the frames: plain HTML and a few lines of JavaScript."""
        uid = f"mendikot-viewer-{next(self._ids)}"
        frames = "".join(
            f'<div class="frame" style="display:{"block" if k == 0 else "none"}">{self.svg(k)}</div>'
            for k in range(len(self))
        )
        captions = json.dumps([f.caption for f in self.frames])
        return (
            f'<div id="{uid}" style="font-family:sans-serif">'
            f'<div style="margin:4px 0"><button data-step="-1">&#9664;</button> '
            f'<input type="range" min="0" max="{len(self) - 1}" value="0" style="width:360px;vertical-align:middle"> '
            f'<button data-step="1">&#9654;</button> <span class="caption"></span></div>{frames}</div>'
            "<script>(function(){"
            f'var root=document.getElementById("{uid}");var captions={captions};'
            'var slider=root.querySelector("input");var frames=root.querySelectorAll(".frame");'
            'var label=root.querySelector(".caption");'
            "function show(k){k=Math.max(0,Math.min(frames.length-1,k));slider.value=k;"
            'for(var i=0;i<frames.length;i++){frames[i].style.display=(i==k)?"block":"none";}'
            'label.textContent=(k+1)+"/"+frames.length+": "+captions[k];}'
            'slider.addEventListener("input",function(){show(parseInt(slider.value));});'
            'root.querySelectorAll("button").forEach(function(b){b.addEventListener("click",function(){'
            'show(parseInt(slider.value)+parseInt(b.getAttribute("data-step")));});});show(0);'
            "})();</script>"
        )

    def _repr_html_(self) -> str:
        return self.html()


__all__ = [
    "Frame",
    "RecordViewer",
    "Scene",
    "SvgImage",
    "TableView",
    "scene_image",
    "scene_svg",
    "table_image",
    "table_scene",
    "table_svg",
]
