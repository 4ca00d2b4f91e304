"""Core states built from what one seat knows and a sampled deal of the cards it cannot see:
the worlds a search plays its moves out in, each stepped by :func:`mendikot_env.core.step`
exactly as the true state would be.

With the history (an observation with the history pieces) each world is the sampled deal
dealt afresh by the core and replayed from the start of the hand through the moves seen
(:func:`replay_start`; :func:`mendikot_env.belief.replay_worlds` steps them), so its whole past
(tricks, takings, order of play) is the observed one. Without it (:func:`build_worlds`) the
fields of a hand under way are filled in and put together by the core's own
:func:`~mendikot_env.core.assemble_state`, what the seat does not know chosen so that the rules
play on identically: which cards each team took (only the counts of tens and tricks matter to
the rules), the winners of earlier tricks (only the last one, the run holder, is kept), the
order of the earlier tricks' cards and, after the band card was played, which card it was.
Either way the first world, encoded for the seat, must give back its observation (and legal
mask): the check that the observation was one of these rules, unaltered.
"""

from __future__ import annotations

import numpy as np

from ..cards import ASK_ACTION, CARD_BITS, NUM_CARDS, NUM_RANKS, TENS_MASK, pack_sets, set_to_cards, unpack_sets
from ..core import CARD_SETS, HIDE, NO_CARD, NO_SEAT, NO_SUIT, OVER, PLAY, State, assemble_state, legal_bits
from ..infostate import SeatInfo
from ..observation import ObservationEncoder, same_but_match_score
from ..rules import Rules
from .sampler import DealSampler, _encoder


def replay_start(belief: DealSampler, hidden: np.ndarray, seat: int) -> tuple[State, list[np.ndarray | int]]:
    """The sampled deals dealt afresh by the core, and the public moves that replay the observed
    history in them (with the history pieces): the hide (each deal's own band card), then each
    card, the ask just before the card it came before."""
    rules, view = belief.rules, belief.view
    history = view.history
    assert history is not None
    n, M = rules.n_players, hidden.shape[0]
    absolute = [(seat + k) % n for k in range(n)]
    deal = np.zeros((M, n), np.uint64)
    deal[:, absolute] = hidden[:, :n] | np.array(view.played, np.uint64)
    deal[:, seat] |= np.uint64(view.hand)
    if view.my_face_down >= 0:
        band = np.full(M, view.my_face_down)
    elif view.phase == PLAY and view.trump_state == 1:
        band = _first_card(hidden[:, n])
    else:
        band = np.full(M, history.band_card)  # -1 before the hide
    if view.hider >= 0 and view.phase != HIDE:
        deal[:, absolute[view.hider]] |= CARD_BITS[band]
    open_cards = np.full(M, view.open_card if rules.trump_known_from_start else NO_CARD)
    worlds = assemble_state(rules, deal, np.full(M, absolute[view.dealer]), open_cards)  # dealt, nothing played
    moves: list[np.ndarray | int] = [band] if view.hider >= 0 and view.phase != HIDE else []
    for i, (_, card) in enumerate(history.plays):
        moves += [ASK_ACTION, card] if view.asked and i == history.reveal else [card]
    if view.asked and history.reveal == len(history.plays):
        moves.append(ASK_ACTION)
    return worlds, moves


def _check_replay(belief: DealSampler, worlds: State, seat: int) -> None:
    """The first world, encoded for the seat, must give back its observation (and mask)."""
    history = belief.view.play_order is not None  # the observation holds the history pieces
    if not _gives_back(belief, worlds, seat, _encoder(belief.rules, history)):
        raise ValueError(
            f"no game state of {belief.rules} gives this observation: it was encoded for other rules or altered"
        )


def _gives_back(belief: DealSampler, worlds: State, seat: int, encoder: ObservationEncoder) -> bool:
    """Whether the first world, encoded for the seat, is the seat's observation (the match
    score aside: worlds are single hands) and has its legal mask, when it acts."""
    info = belief.info
    first = worlds.select([0])
    if not same_but_match_score(belief.rules, encoder.encode(first, np.array([seat]))[0], info.observation):
        return False
    return info.mask is None or int(legal_bits(first)[0]) == int(pack_sets(np.asarray(info.mask) != 0))


def build_worlds(belief: DealSampler, hidden: np.ndarray, seat: int = 0) -> State:
    """Core states from a belief's view and sampled unseen cards (see :func:`sample_worlds`).

    Two public facts are not in the observation: whether the band card was revealed in the
    current trick (trump-suit cards played before the reveal do not count as trumps) and
    whether an asker still owes a trump. Each reading is tried on the first world until its
    encoding (and legal mask) matches the seat's; the facts are public, so all worlds share it.

    Raises:
        ValueError: no reading reproduces the observation (it is not one of these rules).
    """
    rules, view = belief.rules, belief.view
    readings = [(now, duty) for now in (False, True) for duty in (False, True)]
    for reveal_now, duty in readings:
        state = _world_state(rules, view, hidden, seat, reveal_now, duty)
        if _gives_back(belief, state, seat, _encoder(rules)):
            return state
    raise ValueError(f"no game state of {rules} gives this observation: it was encoded for other rules or altered")


def _world_state(rules: Rules, view: SeatInfo, hidden: np.ndarray, seat: int, reveal_now: bool, duty: bool) -> State:
    """The States of one reading of the public facts (see :func:`build_worlds`), put together
    by the core's own :func:`~mendikot_env.core.assemble_state`."""
    n, B = rules.n_players, hidden.shape[0]
    absolute = [(seat + k) % n for k in range(n)]  # absolute seat of relative seat k

    def seat_of(rel: int) -> int:
        return absolute[rel] if rel >= 0 else NO_SEAT

    def per_seat(values: tuple[int, ...], dtype: type) -> np.ndarray:
        row = np.zeros(n, dtype=dtype)
        row[absolute] = values
        return np.tile(row, (B, 1))

    hands = np.zeros((B, n), np.uint64)
    hands[:, absolute] = hidden[:, :n]
    hands[:, seat] = view.hand
    hider = seat_of(view.hider)
    if view.known >= 0:
        hands[:, hider] |= np.uint64(1 << view.known)
    face_down_up = view.phase == PLAY and view.trump_state == 1
    if view.my_face_down >= 0:
        face_down = np.full(B, view.my_face_down)
    elif face_down_up:
        face_down = _first_card(hidden[:, n])
    else:
        face_down = np.full(B, NO_CARD)
    trick_cards = per_seat(view.trick, np.int64)
    trump = view.trump if view.trump_state == 2 else NO_SUIT
    played = per_seat(view.played, np.uint64)
    deal = hands | played
    if hider >= 0:
        deal[:, hider] |= CARD_SETS[face_down]
    taken, middle = _taken_sets(rules, view, seat)
    full = lambda value: np.full(B, value, dtype=np.int64)  # noqa: E731
    return assemble_state(
        rules,
        hands,
        full(seat_of(view.dealer)),
        full(view.open_card),
        phase=full(view.phase),
        current=full(_current(rules, view, absolute)),
        leader=full(seat_of(view.leader) if view.phase != OVER else NO_SEAT),
        trick_no=full(view.trick_no),
        trick_cards=trick_cards,
        trick_size=full(sum(card >= 0 for card in view.trick)),
        led_suit=full(view.led),
        trick_trumps=np.full(B, _trick_trumps(rules, view, trump, reveal_now), dtype=np.uint64),
        trump=full(trump),
        face_down=face_down.astype(np.int64),
        band_card=np.where(face_down >= 0, face_down, view.known).astype(np.int64),
        known_card=full(view.known),
        hider=full(hider),
        revealed_by=full(seat_of(view.revealed_by)),
        reveal_trick=full(-1 if view.revealed_by < 0 else (view.trick_no if reveal_now else max(view.trick_no - 1, 0))),
        asked=np.full(B, view.asked),
        duty=np.full(B, duty),
        played=played,
        voids=per_seat(view.voids, np.uint8),
        taken=np.tile(np.array(taken, np.uint64), (B, 1)),
        middle=np.full(B, middle, dtype=np.uint64),
        last_winner=full(seat_of(view.run_holder)),
        trick_winners=np.tile(_trick_winners(rules, view, absolute), (B, 1)),
        deal=deal,
        play_index=np.tile(_play_index(rules, view), (B, 1)),
    )


def _play_index(rules: Rules, view: SeatInfo) -> np.ndarray:
    """(52,) int8 places in the play order: the current trick's from its leader on; without
    the history the earlier tricks' order is not observed, so their cards are numbered in
    card order (the rules never read it; observe with history to sample it exactly)."""
    n = rules.n_players
    out = np.full(NUM_CARDS, -1, np.int8)
    earlier = set_to_cards(view.all_played & ~view.trick_cards)
    out[earlier] = np.arange(len(earlier))
    for k, card in enumerate(view.trick):
        if card >= 0:
            out[card] = view.trick_no * n + (k - view.leader) % n
    return out


def _first_card(sets: np.ndarray) -> np.ndarray:
    """(B,) the card of each one-card set."""
    return np.argmax(unpack_sets(sets), axis=1).astype(np.int64)


def _current(rules: Rules, view: SeatInfo, absolute: list[int]) -> int:
    """The absolute seat to act: the hider while hiding, the next in the trick while playing."""
    if view.phase == OVER:
        return NO_SEAT
    if view.phase == HIDE:
        return absolute[view.hider]
    return absolute[(view.leader + sum(card >= 0 for card in view.trick)) % rules.n_players]


def _trick_trumps(rules: Rules, view: SeatInfo, trump: int, reveal_now: bool) -> int:
    """Card set of the current trick's cards that count as trumps. Band hukum with the reveal
    in this trick (``reveal_now``): only those played from the revealing seat's turn on."""
    if trump < 0:
        return 0
    n = rules.n_players
    counted = 0
    for k, card in enumerate(view.trick):
        after_reveal = not reveal_now or (k - view.leader) % n >= (view.revealed_by - view.leader) % n
        if card >= 0 and card // NUM_RANKS == trump and after_reveal:
            counted |= 1 << card
    return counted


def _taken_sets(rules: Rules, view: SeatInfo, seat: int) -> tuple[list[int], int]:
    """Card sets of team 0, team 1 and the Dehla Pakad middle with the observed counts of tens
    and cards: which cards each took is not observed, and the rules read only the counts."""
    n = rules.n_players
    done = view.all_played & ~view.trick_cards
    tens = set_to_cards(done & int(TENS_MASK))
    plain = set_to_cards(done & ~int(TENS_MASK))
    wanted = [(view.middle[0], view.middle[1]), (view.tens[0], view.tricks[0] * n), (view.tens[1], view.tricks[1] * n)]
    sets = []
    for ten_count, card_count in wanted:
        chosen, tens = tens[:ten_count], tens[ten_count:]
        rest, plain = plain[: card_count - ten_count], plain[card_count - ten_count :]
        sets.append(sum(1 << card for card in chosen + rest))
    mine = seat % 2
    teams = [sets[1], sets[2]] if mine == 0 else [sets[2], sets[1]]
    return teams, sets[0]


def _trick_winners(rules: Rules, view: SeatInfo, absolute: list[int]) -> np.ndarray:
    """(T,) winners of the completed tricks as far as the counts tell: the last is the run
    holder; the earlier ones are filled with a seat of each team as often as it took tricks."""
    out = np.full(rules.n_tricks, NO_SEAT, dtype=np.int64)
    done = min(view.trick_no, rules.n_tricks)
    if done == 0 or view.run_holder < 0:
        return out
    last_mine = view.run_holder % 2 == 0
    earlier = [absolute[0]] * max(view.tricks[0] - last_mine, 0) + [absolute[1]] * max(
        view.tricks[1] - (not last_mine), 0
    )
    earlier = (earlier + [absolute[0]] * done)[: done - 1]
    out[: done - 1] = earlier
    out[done - 1] = absolute[view.run_holder]
    return out
