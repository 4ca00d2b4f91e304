"""Pictures of the table: an SVG of a game state or a record, and an RGB image for videos.

People read a table faster than a text dump: the seats sit around the table with their
hands drawn as cards (every hand, or one seat's view with the others face down), the
trick lies in the middle with the card winning it outlined, and the corners hold the
trump state and each team's tens and tricks.

One module per job:

* `scene`: the picture as a list of boxes, discs, labels and suit pips
  (:func:`table_scene`), computed once;
* `svg`: the scene as an SVG document (:func:`scene_svg`, :func:`table_svg`);
* `raster`: the scene as an (H, W, 3) uint8 image with numpy only and a 5x7 bitmap font
  (:func:`scene_image`, :func:`table_image`), so the SVG a notebook shows and the
  ``rgb_array`` frame a PettingZoo video recorder stores are the same picture;
* `viewer`: notebook objects (:class:`TableView`, :class:`RecordViewer`, :class:`SvgImage`).

Example:
    >>> from mendikot_env import Rules, core
    >>> state = core.new_hands(Rules.preset("band"), 1, rng=0)
    >>> TableView(state).svg.startswith("<svg")
    True
    >>> table_image(state).shape
    (720, 1040, 3)
"""

from __future__ import annotations

# Every name the single picture module had stays importable from here ("X as X": a re-export).
from .raster import _GLYPHS as _GLYPHS
from .raster import scene_image, table_image
from .scene import CARD_FACE as CARD_FACE
from .scene import CARD_H as CARD_H
from .scene import CARD_W as CARD_W
from .scene import Box as Box
from .scene import Disc as Disc
from .scene import Label as Label
from .scene import Pip as Pip
from .scene import Scene, table_scene
from .scene import Shape as Shape
from .scene import seat_anchors as seat_anchors
from .scene import seat_name as seat_name
from .svg import FONT as FONT
from .svg import scene_svg, table_svg
from .viewer import Frame, RecordViewer, SvgImage, TableView

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
