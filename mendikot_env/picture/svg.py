"""The table scene as SVG: one standalone document, text drawn by the viewer's own fonts."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from .. import core
from ..cards import SUIT_SYMBOLS
from .scene import Box, Disc, Label, Scene, Shape, table_scene

FONT = "DejaVu Sans, Segoe UI Symbol, Arial, sans-serif"


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


def table_svg(state: core.State, game: int = 0, **options: Any) -> str:
    """SVG of one game of a batch; ``options`` are those of :func:`table_scene`."""
    return scene_svg(table_scene(state, game, **options))
