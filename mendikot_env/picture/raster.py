"""The table scene as an RGB image, with nothing but numpy (the env's ``rgb_array`` render).

A tiny rasteriser of rounded boxes, discs, suit shapes and a 5x7 bitmap font. Pillow would
bring a dependency to the base install and draw text with whatever fonts the machine has
(images would differ between machines); this one is exact everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import core
from ..cards import SUIT_SYMBOLS
from .scene import Box, Disc, Label, Pip, Scene, table_scene

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


def table_image(state: core.State, game: int = 0, scale: float = 1.0, **options: Any) -> np.ndarray:
    """(H, W, 3) uint8 image of one game (the env's ``rgb_array`` render); ``options`` as
    for :func:`table_scene`."""
    return scene_image(table_scene(state, game, **options), scale)
