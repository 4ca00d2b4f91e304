"""Viewers for notebooks: a game state as a picture, and a record stepped through trick by trick."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import core
from ..cards import ASK_ACTION, NUM_RANKS, TEN_RANK, card_str, is_integer
from ..checks import check_choice
from ..records import TrickEvent, load_record, replay_record
from ..render import check_view, seat_label
from ..rules import Rules
from .raster import scene_image
from .scene import Scene, table_scene
from .svg import FONT, scene_svg


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
        check_choice("by", by, ("trick", "card"))
        dealt: list[core.State] = []  # the replay's dealt state
        steps: list[tuple[core.State, TrickEvent]] = []  # and its state after each action

        def keep(state: core.State, event: TrickEvent | None) -> None:
            if event is None:
                dealt.append(state.copy())
            else:
                steps.append((state.copy(), event))

        # the one replay, which raises RecordError naming the first bad entry (and the file)
        if isinstance(record, str | Path):
            data = load_record(record, on_step=keep)
        else:
            data = record
            replay_record(data, on_step=keep)
        self.record = data
        self.rules = Rules.from_dict(data["rules"])
        check_view(self.rules.n_players, seat, names, None)  # here, not at the first picture
        self.seat = seat
        players = data.get("players")
        if names is None and players:
            names = [f"{p} ({s})" for s, p in enumerate(players)]
        self.names = list(names) if names is not None else None
        self.by = by
        self.frames = self._frames(dealt[0], steps)

    def _name(self, seat: int) -> str:
        return seat_label(seat, self.names)

    def _frames(self, state: core.State, steps: list[tuple[core.State, TrickEvent]]) -> list[Frame]:
        """The frames of a replay: the dealt ``state``, then each trick (or each action) of ``steps``."""
        rules, dealer = self.rules, self.record["dealer"]
        start = f"The deal: {self._name(dealer)} deals, {self._name((dealer + 1) % rules.n_players)} leads"
        taken = 0
        if rules.has_face_down:  # the face-down card is part of the deal's picture
            state, taken = steps[0][0], 1
            start += " and lays a card face down"
        frames = [Frame(state, taken, None, None, start)]
        notes: list[str] = []
        for state, event in steps[taken:]:
            seat, action, trick_no = event.seat, event.action, event.trick
            if event.revealed is not None:
                how = "asked for by" if action == ASK_ACTION else "turned up by"
                notes.append(f"{card_str(event.revealed, symbols=True)} {how} {self._name(int(state.revealed_by[0]))}")
            if event.trick_winner is not None:
                winner, cards = event.trick_winner, event.trick_cards
                tens = sum(1 for _, c in cards if c % NUM_RANKS == TEN_RANK)
                caption = f"After trick {trick_no + 1}/{rules.n_tricks}: {self._name(winner)} takes it"
                caption += f" ({tens} ten{'s' if tens != 1 else ''})" if tens else ""
                caption += "; " + "; ".join(notes) if notes else ""
                notes = []
                frames.append(Frame(state, event.index + 1, cards, winner, caption))
            elif self.by == "card":
                caption = f"Trick {trick_no + 1}/{rules.n_tricks}: {self._name(seat)} "
                caption += "asks for the face-down card" if action == ASK_ACTION else f"plays {card_str(action, True)}"
                frames.append(Frame(state, event.index + 1, None, None, caption))
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
            problem = f"columns must be an integer 1 or more, got {columns!r}"
        elif not scale > 0:
            problem = f"scale must be a number above 0, got {scale!r}"
        else:
            problem = ""
        if problem:
            raise ValueError(problem)
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
