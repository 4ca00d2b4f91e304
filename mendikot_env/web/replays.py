"""Replays on the web server: records stepped through action by action, seen by any seat.

A :class:`ReplaySession` holds records that replayed soundly (each checked by
:func:`mendikot_env.records.replay_record`, the one record replayer). The state at step ``i``
(after ``i`` actions) is dealt again and stepped by the core on each request, so a session
keeps only its records. Seen by one seat, a step shows exactly what that seat knew (the table
drawn with ``seat=``), its belief (:class:`mendikot_env.belief.Belief`: the chance that each
other seat holds each unseen card, and in band hukum the chance of each suit for the face-down
card) and, at its decisions, the search's value of every legal move
(:meth:`agents.search.SearchAgent.move_values`).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from functools import cache
from typing import Any

import numpy as np

from agents import load

from .. import core
from ..belief import Belief, InfoState
from ..cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, SUIT_NAMES, action_str, card_str
from ..commands.replay import RECORD_KEYS, SUMMARY_KEY, replayed
from ..observation import ObservationEncoder
from ..picture.svg import table_svg
from ..records import RecordError, Replay
from ..render import trump_set_text
from ..rules import Rules
from .tables import HINT_SPEC, Refused
from .views import held, table_names

KEEP_REPLAYS = 32  # replay sessions the server keeps (the oldest is dropped for a new one)


class ReplaySession:
    """Records to step through, each replayed and checked once.

    Args:
        replay_id: the id in the URLs.
        named: (name, JSON value) of each record, in order; an arena or league summary
            among them is skipped.
    """

    def __init__(self, replay_id: str, named: list[tuple[str, Any]]) -> None:
        self.id = replay_id
        kept = [(name, data) for name, data in named if not _summary(data)]
        if not kept:
            raise Refused(
                400, "no game record to replay (give the .json records of play, arena, league or the web table)"
            )
        self.names, self.data, self.replays, self.states = [], [], [], []
        for name, data in kept:
            states: list[core.State] = []  # the state before each action and at the end, from the one replayer
            try:
                replay = replayed(name, data, lambda state, _event, kept=states: kept.append(state.copy()))
            except (ValueError, KeyError, TypeError, AttributeError) as error:  # a RecordError names the record
                why = (
                    str(error) if isinstance(error, RecordError) else f"{name}: this record does not replay: {error!r}"
                )
                raise Refused(400, why) from None
            self.names.append(name)
            self.data.append(data)
            self.replays.append(replay)
            self.states.append(states)
        self.searchers: dict[Any, Any] = {}
        self.lock = threading.Lock()

    def state_at(self, k: int, step: int) -> core.State:
        """The state of record ``k`` after its first ``step`` actions (a copy: callers may step it)."""
        return self.states[k][step].copy()

    def where(self, k: Any, step: Any, seat: Any) -> tuple[int, int, int | None]:
        """The record, step and seat of a request, checked (seat None: every hand shown)."""
        k = _number(k, "record", len(self.replays) - 1)
        step = _number(step, "step", len(self.replays[k].events))
        seat = None if seat in (None, "", "all") else _number(seat, "seat", self.replays[k].rules.n_players - 1)
        return k, step, seat

    def view(self, k: int, step: int, seat: int | None) -> dict[str, Any]:
        """Step ``step`` of record ``k``: every hand (seat None) or what ``seat`` knew."""
        replay = self.replays[k]
        state = self.state_at(k, step)
        players = self.data[k].get("players") or [f"seat {s}" for s in range(replay.rules.n_players)]
        names = table_names([str(p) for p in players], None, replay.rules)  # a record's seats by number
        # A seat's view tells only what that seat knew at this step: the moves so far, and the
        # face-down card's name only to its hider; every hand shows the whole record.
        known = replay.events if seat is None else replay.events[:step]
        events = [_event_text(names, e, seat is None or e.seat == seat) for e in known]
        shown = _last_trick(replay, step) if int(state.trick_size[0]) == 0 else {}
        caption = f"Step {step}/{len(replay.events)}" + (f": {events[step - 1]}" if step else ": the deal")
        over = bool(state.done[0])
        current = None if over else int(state.current[0])
        return {
            "replay": self.id,
            "record": k,
            "records": self.names,
            "step": step,
            "steps": len(replay.events),
            "tricks": _trick_starts(replay),
            "trick": min(int(state.trick_no[0]), replay.rules.n_tricks - 1),
            "events": events,
            "seat": seat,
            "names": names,
            "to_act": current,
            "decision": seat is not None and current == seat,
            "result": replay.result if over else None,
            "svg": table_svg(state, seat=seat, names=names, caption=caption, **shown),
            "belief": None if seat is None or over else belief_of(state, seat),
        }

    def search_values(self, k: int, step: int, seat: int) -> list[dict[str, Any]]:
        """The search's value of every legal move of ``seat`` at step ``step`` (its decision)."""
        state = self.state_at(k, step)
        if bool(state.done[0]) or int(state.current[0]) != seat:
            raise Refused(409, f"seat {seat} does not decide at step {step}")
        rules = state.rules
        with self.lock:
            searcher = self.searchers.get(rules) or self.searchers.setdefault(rules, load(HINT_SPEC, rules, seed=0))
        observation = history_encoder(rules).encode(state, state.current)[0]
        moves, values = searcher.move_values(observation, core.legal_action_mask(state)[0])
        return [{"action": action_str(int(m)), "value": round(float(v), 3)} for m, v in zip(moves, values, strict=True)]


@cache
def history_encoder(rules: Rules) -> ObservationEncoder:
    """The observations the belief and the search read (with the history pieces), one encoder per rules."""
    return ObservationEncoder(rules, history=True)


def belief_of(state: core.State, seat: int) -> dict[str, Any] | None:
    """What ``seat`` believes of the unseen cards: per unseen card the chance that each other
    seat holds it (and that it is the face-down card), and the face-down card's suit chances."""
    rules = state.rules
    n = rules.n_players
    observation = history_encoder(rules).encode(state, np.array([seat]))[0]
    mask = core.legal_action_mask(state)[0] if int(state.current[0]) == seat else None
    belief = Belief(InfoState(rules, observation, mask))
    marginals = belief.card_marginals()  # (slots, 52): relative seats, then the face-down card
    unseen = [c for c in range(NUM_CARDS) if marginals[:, c].sum() > 0]
    suits = None
    if int(state.face_down[0]) >= 0 and int(state.hider[0]) != seat:
        posterior = belief.face_down_posterior().reshape(NUM_SUITS, NUM_RANKS).sum(axis=1)
        suits = {SUIT_NAMES[s]: round(float(p), 3) for s, p in enumerate(posterior)}
    return {
        "seats": [(seat + r) % n for r in range(1, n)],
        "face_down_slot": bool(marginals[n].sum() > 0),
        "cards": [
            {"card": card_str(c), "chances": [round(float(p), 3) for p in marginals[1:, c]]} for c in held(unseen)
        ],
        "face_down_suits": suits,
    }


def _summary(data: Any) -> bool:
    """An arena or league ``--json`` summary saved beside the records (skipped)."""
    return isinstance(data, dict) and SUMMARY_KEY in data and not any(key in data for key in RECORD_KEYS)


def _number(value: Any, what: str, most: int) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= most:
        raise Refused(400, f"{what} must be a number from 0 to {most}, got {value!r}")
    return value


def _event_text(names: list[str], event: Any, shows_hidden: bool) -> str:
    """One move in words, with what it showed of trump (the cut that set it, the face-down
    card turned up); ``shows_hidden``: the reader may see which card was laid face down."""
    what = {"hide": "lays a card face down", "ask": "asks for the trump"}.get(event.kind, "")
    text = f"{names[event.seat]} {what or 'plays ' + card_str(event.action)}"
    if event.kind == "hide" and shows_hidden:
        text += f" ({card_str(event.action)})"
    if event.trump_after is not None:  # a cut or the face-down card turned up
        text += trump_set_text(event.trump_after, event.revealed)
    if event.trick_winner is not None:
        text += f"; {names[event.trick_winner]} takes trick {event.trick + 1}"
    return text


def _last_trick(replay: Replay, step: int) -> dict[str, Any]:
    """The trick last completed before ``step`` (the picture's middle between tricks)."""
    for event in reversed(replay.events[:step]):
        if event.trick_winner is not None:
            return {"trick": event.trick_cards, "trick_winner": event.trick_winner}
    return {}


def _trick_starts(replay: Replay) -> list[int]:
    """The step at which each trick starts (its first card not played yet)."""
    starts: dict[int, int] = {}
    for event in replay.events:
        if event.kind == "play":
            starts.setdefault(event.trick, event.index)
    return [starts[t] for t in sorted(starts)]


class Replays:
    """The replay sessions of a server by id; the oldest is dropped past ``KEEP_REPLAYS``."""

    def __init__(self) -> None:
        self.sessions: OrderedDict[str, ReplaySession] = OrderedDict()
        self.lock = threading.Lock()

    def create(self, named: list[tuple[str, Any]]) -> ReplaySession:
        session = ReplaySession(secrets.token_hex(6), named)
        with self.lock:
            self.sessions[session.id] = session
            while len(self.sessions) > KEEP_REPLAYS:
                self.sessions.popitem(last=False)
        return session

    def get(self, replay_id: str) -> ReplaySession:
        session = self.sessions.get(replay_id)
        if session is None:
            raise Refused(404, f"no replay {replay_id!r} here (open the record again)")
        return session
