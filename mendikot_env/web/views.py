"""What the server sends to one seat: built from the core state by the observing seat only.

A seat sees its own hand, its face-down card if it hid one, the cards played, the public trump,
tens and tricks, the match score and the log of public actions; the other hands only as card
backs (their number is public). The table picture is the project's own SVG
(:func:`mendikot_env.picture.svg.table_svg` with ``seat=``, which draws the hidden hands face
down), and each card of the seat's hand comes as its own small SVG for the page to click.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .. import core
from ..cards import ASK_ACTION, NUM_RANKS, SUIT_NAMES, action_str, card_str, set_to_cards
from ..commands.play import seat_names
from ..picture.scene import card_scene
from ..picture.svg import scene_svg, table_svg
from ..render import trump_status
from ..rules import Rules
from .tables import PERSON, Table

PHASES = {core.HIDE: "hide", core.PLAY: "play", core.OVER: "over"}


@cache
def card_svg(card: int) -> str:
    """One card face as a small standalone SVG."""
    return scene_svg(card_scene(card))


def held(cards: list[int]) -> list[int]:
    """Cards the way a hand is held: spades first, high cards first (as the pictures draw them)."""
    return sorted(cards, key=lambda c: (-(c // NUM_RANKS), -(c % NUM_RANKS)))


def table_names(players: list[str], seat: int | None, rules: Rules) -> list[str]:
    """Each seat's display name: seen from ``seat`` (You, Partner, Left opp, ...) with its
    player, or ``Seat k (player)`` for a viewer of every hand."""
    if seat is None:
        return [f"Seat {s} ({p})" for s, p in enumerate(players)]
    names = seat_names(rules, seat)
    return [
        name if s == seat else f"{name} ({'friend' if player == PERSON else player})"
        for s, (name, player) in enumerate(zip(names, players, strict=True))
    ]


def trick_shown(state: core.State, last: tuple[list[tuple[int, int]], int] | None) -> dict[str, Any]:
    """The picture's middle: the trick in progress, or the trick just taken while the next is empty."""
    if int(state.trick_size[0]) == 0 and last is not None:
        return {"trick": last[0], "trick_winner": last[1]}
    return {}


def seat_view(table: Table, seat: int) -> dict[str, Any]:
    """Everything seat ``seat`` may know of the table, as JSON-ready values."""
    state, rules = table.state, table.rules
    over = bool(state.done[0])
    current = None if over else int(state.current[0])
    yours = current == seat
    legal = set_to_cards(core.legal_bits(state)[0]) if yours else []
    hand = held(set_to_cards(state.hands[0, seat]))
    face_down = int(state.face_down[0]) if int(state.hider[0]) == seat else -1
    tens, tricks = core.team_counts(state)
    names = table_names(table.players, seat, rules)
    scores = [int(x) for x in table.match.scores[0]]
    svg = table_svg(
        state, seat=seat, names=names, match_score=scores, show_legal=yours, **trick_shown(state, table.last_trick)
    )
    trump = int(state.trump[0])
    return {
        "game": table.id,
        "seat": seat,
        "version": table.version,
        "rules": rules.to_dict(),
        "names": names,
        "players": table.players,
        "hand_number": table.hands,
        "dealer": int(state.dealer[0]),
        "phase": PHASES[int(state.phase[0])],
        "to_act": current,
        "your_turn": yours,
        "hand": [card_str(c) for c in hand],
        "face_down": card_str(face_down) if face_down >= 0 else None,
        "face_down_lies": int(state.face_down[0]) >= 0,
        "legal": [action_str(a) for a in legal],
        "can_ask": ASK_ACTION in legal,
        "trick": [[s, card_str(int(c))] for s, c in enumerate(state.trick_cards[0]) if c >= 0],
        "last_trick": None
        if table.last_trick is None
        else {"cards": [[s, card_str(c)] for s, c in table.last_trick[0]], "winner": table.last_trick[1]},
        "trump": None if trump < 0 else SUIT_NAMES[trump],
        "trump_text": " ".join(trump_status(state, 0, names, symbols=False)).strip(),  # the text table's words
        "tens": [int(x) for x in tens[0]],
        "tricks": [int(x) for x in tricks[0]],
        "match": {
            "scores": scores,
            "target": rules.target,
            "over": bool(table.match.over[0]),
            "winner": int(table.match.winner()[0]) if bool(table.match.over[0]) else None,
        },
        "result": table.result,
        "records": [number for number, _ in table.records],
        "log": table.log,
        "svg": svg,
        "cards": {card_str(c): card_svg(c) for c in (*hand, *([face_down] if face_down >= 0 else []))},
    }
