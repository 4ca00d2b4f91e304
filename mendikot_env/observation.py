"""Per-seat observation encoders and the perfect-information state tensor.

An observation is one flat float32 vector, relative to the observing seat: relative
seat 0 is "me", 1 the next to play after me, and so on round the table (so for four
players 1 and 3 are my opponents and 2 is my partner). It is built from named pieces,
listed in :func:`observation_layout` in order; :class:`Layout` gives named views into a
vector or a batch of them. Card pieces come first, as 52-wide 0/1 planes indexed by
card id, then the small features.

Only what the observing seat may know goes in: its own hand, its own face-down card,
and public facts (cards played, failures to follow suit, the revealed band card while
it is back in the hider's hand, trump once it is public, tens and tricks taken). The
tests check this by changing hidden cards and comparing observations.

The encoder writes each vector from the seat's information state
(:class:`mendikot_env.infostate.SeatInfo`, built from the core state), and
:func:`decode_info` reads one back: this module alone knows the pieces' names, and the
belief, the search and the bots read the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .cards import NUM_CARDS, TENS_MASK, pack_sets, popcount, relabelled_card_sources, unpack_sets, up_to_highest
from .core import CARD_SETS, HIDE, NO_SEAT, OVER, PLAY, State, batch_rows, pack_cards
from .infostate import History, SeatInfo, by_column, seat_info, seat_infos, tables_of
from .rules import Rules

_WORD = (1 << 64) - 1  # one uint64 word of a Python int
_CARD_PLANES = unpack_sets(CARD_SETS)  # (53, 52): the plane of each card, and at -1 the empty one


@dataclass(frozen=True)
class Piece:
    """One named block of a flat vector: where it starts and its shape."""

    name: str
    start: int
    shape: tuple[int, ...]
    doc: str

    @property
    def size(self) -> int:
        """Number of floats in the block."""
        return int(np.prod(self.shape))

    @property
    def stop(self) -> int:
        """End offset (exclusive)."""
        return self.start + self.size


class Layout:
    """Named pieces of a flat vector, in order; gives named views into vectors."""

    def __init__(self, pieces: list[tuple[str, tuple[int, ...], str]]) -> None:
        self.pieces: dict[str, Piece] = {}
        start = 0
        for name, shape, doc in pieces:
            piece = Piece(name, start, shape, doc)
            self.pieces[name] = piece
            start = piece.stop
        self.size = start
        # Each piece's slice and shape, read on every view (agents view pieces on every call).
        self._places = {name: (slice(p.start, p.stop), p.shape) for name, p in self.pieces.items()}

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """The piece ``name`` of a vector (D,) or batch (..., D), reshaped to its shape."""
        place, shape = self._places[name]
        return vector[..., place].reshape(*vector.shape[:-1], *shape)

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Every piece of a vector by name."""
        return {name: self.view(vector, name) for name in self.pieces}

    def describe(self) -> str:
        """A text table of the pieces (name, offset, shape, meaning)."""
        rows = [f"{'piece':<14}{'offset':>7}  {'shape':<10}meaning"]
        for p in self.pieces.values():
            rows.append(f"{p.name:<14}{p.start:>7}  {str(p.shape):<10}{p.doc}")
        rows.append(f"{'total':<14}{self.size:>7}")
        return "\n".join(rows)


def observation_layout(rules: Rules, history: bool = False) -> Layout:
    """The observation pieces for a rule set (n seats, T tricks), in order.

    Size = 52 * (7 + 2n) + 10n + T + 31 (864 for four players). With ``history`` three pieces
    follow, 105 floats: the order in which the cards were played, where the band card's
    reveal came and which card it was (see :func:`read_history`); the plain observation is
    their prefix.
    """
    n, t = rules.n_players, rules.n_tricks
    plays = n * t  # cards played in a hand
    extra = [
        ("play_order", (NUM_CARDS,), f"(place of the card in the hand's play order + 1) / {plays}; 0 unplayed"),
        ("reveal_at", (1,), f"(cards played before the band card's reveal + 1) / {plays}; 0 no reveal"),
        ("revealed_card", (NUM_CARDS,), "the band card once it was turned up (kept after it is played)"),
    ]
    return Layout(
        [
            ("hand", (NUM_CARDS,), "cards in my hand"),
            ("face_down", (NUM_CARDS,), "my face-down band card (the hider only, while face down)"),
            ("open_card", (NUM_CARDS,), "the card shown by the open draw (trump='open')"),
            ("known", (NUM_CARDS,), "the revealed band card while it is back in the hider's hand (see hider)"),
            ("take_lead", (NUM_CARDS,), "my legal cards that would win the trick so far if played now (when I act)"),
            ("unseen", (NUM_CARDS,), "cards whose place I do not know: not mine, not played, not known"),
            ("masters", (NUM_CARDS,), "my cards that no card outside my hand and the played ones outranks in suit"),
            ("trick", (n, NUM_CARDS), "card each relative seat played to the current trick"),
            ("played", (n, NUM_CARDS), "cards each relative seat has played this hand (trick included)"),
            ("voids", (n, 4), "suits each relative seat has failed to follow this hand"),
            ("winning", (n,), "relative seat whose card is winning the current trick so far"),
            ("trick_tens", (1,), "tens in the current trick / 4"),
            ("led_suit", (4,), "suit led to the current trick (all zero when I lead)"),
            ("trump_state", (3,), "one-hot: no trump yet / trump face down (band) / trump known"),
            ("trump_suit", (4,), "the public trump suit, once known"),
            ("asked", (1,), "the band card was revealed by asking (not automatically)"),
            ("hider", (n,), "relative seat that laid the band card face down"),
            ("revealed_by", (n,), "relative seat whose turn revealed the band card (the asker)"),
            ("leader", (n,), "relative seat that leads (led) the current trick"),
            ("dealer", (n,), "relative seat of the dealer"),
            ("tens", (2, 5), "one-hot count of tens taken (0..4): my team, their team"),
            ("tricks", (2,), "tricks taken / tricks per hand: my team, their team"),
            ("middle", (2,), "Dehla Pakad middle pile: tens / 4, tricks / tricks per hand"),
            ("run_holder", (n,), "relative seat that won the previous trick (Dehla Pakad runs)"),
            ("trick_number", (t,), "one-hot index of the current trick"),
            ("phase", (2,), "one-hot: choosing the band card / playing"),
            ("match_score", (2,), "match points / target: my team, their team (match episodes)"),
            *(extra if history else []),
        ]
    )


SUIT_PIECES = frozenset({"voids", "led_suit", "trump_suit"})  # one flag per suit (per seat)


def suit_relabelled_columns(rules: Rules, new_suit: tuple[int, ...]) -> np.ndarray:
    """(D,) for each column of the plain observation, the column it comes from when every
    card of suit ``s`` becomes the same rank of suit ``new_suit[s]``.

    No rule names a suit, so a deal and its relabelled twin play alike and their
    observations differ by exactly this reordering (the card pieces' columns and the
    per-suit flags): what lets a fit see one label under 24 relabellings
    (:mod:`agents.suit_symmetry`).
    """
    layout = observation_layout(rules)
    card_source = relabelled_card_sources(new_suit)
    suit_source = np.array([new_suit.index(s) for s in range(len(new_suit))])
    source = np.arange(layout.size)
    for piece in layout.pieces.values():
        width = piece.shape[-1]
        block = card_source if width == NUM_CARDS else suit_source if piece.name in SUIT_PIECES else None
        if block is not None:
            starts = np.arange(piece.start, piece.stop, width)
            source[piece.start : piece.stop] = (starts[:, None] + block).ravel()
    return source


def reads_history(agent: object) -> bool:
    """Whether an agent reads the history pieces: it declares ``reads_history = True``. The
    arena and the Gymnasium wrappers then encode its observations with ``history=True``,
    and give every other agent the plain observation, the prefix of those vectors."""
    return getattr(agent, "reads_history", False) is True


def read_history(rules: Rules, observation: np.ndarray) -> History:
    """Decode the play sequence and the reveal from one observation encoded with history.

    Args:
        rules: the rules the observation was encoded for.
        observation: (D,) observation of ``ObservationEncoder(rules, history=True)``.

    Returns:
        The :class:`History`, seats relative to the observer as in the observation.

    Example:
        >>> from mendikot_env import core
        >>> state = core.new_hands(Rules(), 1, rng=0)
        >>> core.step(state, core.random_legal_actions(core.legal_bits(state), 0))
        >>> obs = ObservationEncoder(Rules(), history=True).encode(state, np.array([0]))[0]
        >>> len(read_history(Rules(), obs).plays)
        1
    """
    layout = observation_layout(rules, history=True)
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape != (layout.size,):
        raise ValueError(
            f"read_history needs one ({layout.size},) observation of {rules} encoded with history=True, "
            f"got shape {obs.shape}"
        )
    return decode_info(rules, obs).history


def decode_info(rules: Rules, observations: np.ndarray) -> SeatInfo:
    """What the observing seat knows, decoded from its observation: the inverse of the encoder.

    Args:
        rules: the rules the observations were encoded for.
        observations: one (D,) observation, or a (B, D) batch, plain or with the history pieces
            (then the record holds the play order and the reveal).

    Returns:
        The :class:`~mendikot_env.infostate.SeatInfo`: of one game (Python ints) for one
        vector, of the batch (arrays) for a batch. Its ``match_score`` is the observation's.
    """
    obs = np.asarray(observations, dtype=np.float32)
    batch = obs.reshape(-1, obs.shape[-1])
    n, t = rules.n_players, rules.n_tricks
    history = batch.shape[1] != _layout(rules).size
    layout = _layout(rules, history)
    v = layout.split(batch)
    # Every card plane in one pack (hand, face_down, open_card, known, take_lead, unseen,
    # masters, then trick and played by relative seat); a one-card plane's card is its lowest.
    planes = pack_sets((batch[:, : layout.pieces["voids"].start] > 0.5).reshape(batch.shape[0], -1, NUM_CARDS))
    cards = _lowest(planes)
    phase = _index(v["phase"])
    over = phase < 0

    def count(piece: str, column: int, scale: int) -> np.ndarray:
        return np.rint(v[piece][:, column].astype(np.float64) * scale).astype(np.int64)

    info = SeatInfo(
        hand=planes[:, 0],
        my_face_down=cards[:, 1],
        open_card=cards[:, 2],
        known=cards[:, 3],
        trick=cards[:, 7 : 7 + n],
        played=planes[:, 7 + n :],
        voids=pack_sets(v["voids"] > 0.5),
        led=_index(v["led_suit"]),
        trump_state=_index(v["trump_state"]),
        trump=_index(v["trump_suit"]),
        asked=v["asked"][:, 0] > 0.5,
        hider=_index(v["hider"]),
        revealed_by=_index(v["revealed_by"]),
        leader=_index(v["leader"]),
        dealer=_index(v["dealer"]),
        run_holder=_index(v["run_holder"]),
        winning=_index(v["winning"]),
        take_lead=planes[:, 4],
        tens=_index(v["tens"]),
        tricks=np.stack([count("tricks", 0, t), count("tricks", 1, t)], axis=1),
        middle=np.stack([count("middle", 0, 4), count("middle", 1, n * t)], axis=1),
        trick_no=np.where(over, t, _index(v["trick_number"])),
        phase=np.where(over, OVER, np.where(phase == 0, HIDE, PLAY)),
        match_score=v["match_score"],
    )
    if history:
        plays = n * t
        info.play_order = np.rint(v["play_order"] * plays).astype(np.int64) - 1
        info.reveal_at = np.rint(v["reveal_at"][:, 0] * plays).astype(np.int64) - 1
        info.revealed_card = _index(v["revealed_card"])
    return info.game(0) if obs.ndim == 1 else info


@cache
def _layout(rules: Rules, history: bool = False) -> Layout:
    """:func:`observation_layout`, built once per rules (decoding reads it on every call)."""
    return observation_layout(rules, history)


def _lowest(sets: np.ndarray) -> np.ndarray:
    """The lowest card of each uint64 card set, -1 for an empty one."""
    below = (sets & (~sets + np.uint64(1))) - np.uint64(1)  # the bits under the lowest set bit
    return np.where(sets != 0, popcount(below).astype(np.int64), -1)


def _index(onehot: np.ndarray) -> np.ndarray:
    """Index of the first set entry along the last axis, -1 where none is set."""
    hits = onehot > 0.5
    return np.where(hits.any(axis=-1), hits.argmax(axis=-1), -1)


def same_but_match_score(rules: Rules, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two observations of one seat are equal but for the match score (a belief's
    worlds are single hands, which do not know it)."""
    layout = _layout(rules, history=np.shape(a)[-1] != _layout(rules).size)
    match = layout.pieces["match_score"]
    keep = np.ones(layout.size, bool)
    keep[match.start : match.stop] = False
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(np.array_equal(a[keep], b[keep]))


class ObservationEncoder:
    """Builds observations for a batch of games, each from a chosen seat's view.

    Example:
        >>> from mendikot_env import Rules, core
        >>> encoder = ObservationEncoder(Rules())
        >>> state = core.new_hands(Rules(), 4, rng=0)
        >>> encoder.encode(state, state.current).shape
        (4, 864)
    """

    def __init__(self, rules: Rules, history: bool = False) -> None:
        self.rules = rules
        self.history = history
        self.layout = observation_layout(rules, history)
        # The plain observation: a prefix of the vector with history (its pieces come last).
        self._plain_size = observation_layout(rules).size
        n = rules.n_players
        self._n_planes = 7 + 2 * n
        self._offsets = {name: (p.start, p.stop) for name, p in self.layout.pieces.items()}
        self._cards_end = self.layout.pieces["voids"].start
        self._voids = slice(*self._offsets["voids"])
        self._teams_from = np.arange(n)[:, None] % 2 ^ np.array([0, 1])  # [s]: my team, their team
        one_hot_starts = [
            ("led_suit", 0), ("trump_state", 0), ("trump_suit", 0), ("hider", 0), ("revealed_by", 0),
            ("leader", 0), ("dealer", 0), ("run_holder", 0), ("winning", 0), ("tens", 0), ("tens", 5),
            ("trick_number", 0), ("phase", 0),
        ]  # fmt: skip
        self._hot_starts = np.array([self._offsets[name][0] + extra for name, extra in one_hot_starts])
        self._hot: np.ndarray | None = None
        self._hot_base: np.ndarray | None = None
        self._pack = sum(1 << int(c) for c in pack_cards(rules))  # a Python int: mixes with ints and arrays
        # The lookups the pieces' rules make, for a batch's arrays and for one game's Python
        # ints (the same data: a list read at -1 gives its last entry too): (the card set of
        # card ids, popcount), each the type's own (take() gathers faster than indexing).
        self._array_tables = (CARD_SETS.take, np.bitwise_count)
        self._seat_tables = tables_of(rules)
        self._list_tables = (CARD_SETS.tolist().__getitem__, int.bit_count)
        self._tens = int(TENS_MASK)
        # The one-game vector's one-hot bits, counted from the end of the voids: per piece, the
        # bit of each value, and 0 at index -1 (an empty piece).
        widths = [5 if name == "tens" else self.layout.pieces[name].size for name, _ in one_hot_starts]
        self._small_hot_bits = [
            [1 << first + value for value in range(width)] + [0]
            for first, width in zip((self._hot_starts - self._voids.stop).tolist(), widths, strict=True)
        ]
        self._small_shifts = list(range(0, self._plain_size - self._voids.stop, 64))
        # Where each entry of a one-game vector sits in the unpacked bits of its words (the
        # card planes' first 52 bits, the voids' first 4n, then the small features' words):
        # one gather writes the whole vector, where the batched path's three writes cost more.
        small_first = (self._n_planes + 1) * 64
        self._one_game_bits = np.concatenate(
            [
                (np.arange(self._n_planes)[:, None] * 64 + np.arange(NUM_CARDS)).reshape(-1),
                self._n_planes * 64 + np.arange(4 * n),
                small_first + np.arange(self._plain_size - self._voids.stop),
            ]
        )
        o = self._offsets
        self._scalar_index = np.array(
            [o["trick_tens"][0], o["asked"][0], *range(*o["tricks"]), o["middle"][0], o["middle"][0] + 1]
        )
        self._scalar_list: list[int] = self._scalar_index.tolist()

    @property
    def size(self) -> int:
        """Length D of an observation vector."""
        return self.layout.size

    @property
    def plain_size(self) -> int:
        """Length of the plain observation, the prefix of a vector with history."""
        return self._plain_size

    def for_agent(self, observations: np.ndarray, agent: object) -> np.ndarray:
        """``observations`` as ``agent`` reads them: whole for an agent that reads the
        history (:func:`reads_history`), else their plain prefix (a view, no copy)."""
        return observations if reads_history(agent) else observations[..., : self._plain_size]

    def encode(
        self,
        state: State,
        seats: np.ndarray,
        match_score: np.ndarray | None = None,
        out: np.ndarray | None = None,
        legal: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, D) float32 observations of ``state``, game b seen by seat ``seats[b]``.

        Args:
            state: the batch of games.
            seats: (B,) observing seat per game (absolute seat numbers). NO_SEAT (-1), which
                ``state.current`` holds for a finished game, reads as seat 0, so
                ``encode(state, state.current)`` works on a batch with finished games.
            match_score: optional (B, 2) match points per absolute team (team 0, team 1).
            out: optional (B, D) float32 array to write into (saves an allocation).
            legal: optional ``core.legal_bits(state)`` if the caller has it already.
        """
        B = state.batch_size
        if problem := self._arguments_problem(state, seats, out):
            raise ValueError(problem)
        seats = np.asarray(seats).astype(np.int64, copy=False).reshape(B)
        if out is None:
            out = np.empty((B, self.size), dtype=np.float32)
        if B == 0:
            return out
        if B == 1:
            seat = max(int(seats[0]), 0)
            info = seat_info(state, seat, None if legal is None else legal.item(0), self.history, self._seat_tables)
            out[0, : self._plain_size] = self._write_one(info, seat, match_score)
        else:
            if seats.min() < 0:
                seats = np.maximum(seats, 0)
            info = seat_infos(state, seats, legal, self.history)
            self._write_batch(info, seats, match_score, out)
        if self.history:
            self._write_history(info, out)
        return out

    def _arguments_problem(self, state: State, seats: Any, out: np.ndarray | None) -> str:
        """What is wrong with :meth:`encode`'s arguments (the first thing found), or ""."""
        rules = self.rules
        n, B = rules.n_players, state.batch_size
        differences = [] if state.rules is rules else rules.hand_differences(state.rules)  # `is`: the hot path
        if differences:
            return (
                f"this encoder is for {rules}, not for the state's {state.rules} "
                f"({'; '.join(differences)}): make ObservationEncoder(state.rules)"
            )
        given, seats = seats, np.asarray(seats)
        if seats.dtype.kind not in "iu" and (seats.size or seats.dtype.kind not in "f"):  # [] reads as float64
            # Refused, not cast: astype would truncate 1.9 to seat 1, and True or "0" are no seats.
            shown = given.tolist() if isinstance(given, np.ndarray) else given
            return f"seats must be integers 0..{n - 1} (or {NO_SEAT} for a finished game), got {shown!r}"
        if seats.size != B:
            return f"seats needs one observing seat per game: {B}, got shape {seats.shape}"
        if out is not None and (out.shape != (B, self.size) or out.dtype != np.float32):
            return f"out must be a ({B}, {self.size}) float32 array, got {out.shape} {out.dtype}"
        if B == 1 and not NO_SEAT <= int(seats.reshape(-1)[0]) < n:
            return f"seats must be 0..{n - 1} (or {NO_SEAT} for a finished game), got [{int(seats.reshape(-1)[0])}]"
        seats = seats.astype(np.int64, copy=False).reshape(-1)
        if B > 1 and (seats.min() < NO_SEAT or seats.max() >= n):
            bad = sorted(set(seats[(seats < NO_SEAT) | (seats >= n)].tolist()))
            return f"seats must be 0..{n - 1} (or {NO_SEAT} for a finished game), got {bad}"
        return ""

    def encode_one(
        self, state: State, seat: int, match_score: np.ndarray | None = None, legal: int | None = None
    ) -> np.ndarray:
        """(D,) float32: the observation of a batch of one (the AEC env's), seen by ``seat``.

        :meth:`encode` at B = 1 without its checks of the arguments: for callers that pass a
        State of these rules, a seat 0..n-1, match scores (1, 2) or None, and ``legal`` as
        the Python int of ``core.legal_bits(state)`` if they have it.
        """
        info = seat_info(state, seat, legal, self.history, self._seat_tables)
        plain = self._write_one(info, seat, match_score)
        if not self.history:
            return plain
        out = np.empty((1, self.size), dtype=np.float32)
        out[0, : self._plain_size] = plain
        self._write_history(info, out)
        return out[0]

    # The rules of the pieces are written once (_card_sets, _small_features) over a
    # SeatInfo: one game's Python numbers (B = 1, the AEC env's path: numpy's per-call cost
    # would dominate) or a batch's arrays. Only gathering the inputs and writing the vector
    # differ by batch size, and those move data.

    def _card_sets(self, info: SeatInfo, card_set: Any, trick: Any, played: Any, voids: Any) -> list[Any]:
        """The card planes and the voids word, in layout order (``card_set``: the set of card
        ids; ``trick``, ``played``, ``voids``: the record's, by relative seat)."""
        hand, known, face_down = info.hand, card_set(info.known), card_set(info.my_face_down)
        gone = played[0]
        for cards in played[1:]:
            gone = gone | cards
        outside = self._pack & ~(hand | face_down) & ~gone  # in other hands, or face down elsewhere
        void_word = voids[0]
        for k in range(1, len(voids)):
            void_word = void_word | voids[k] << 4 * k
        return [
            hand,
            face_down,
            card_set(info.open_card),
            known,
            info.take_lead,
            outside & ~known,  # unseen
            hand & ~up_to_highest(outside),  # masters: above every outside card
            *[card_set(card) for card in trick],
            *played,
            void_word,
        ]

    def _small_features(
        self, info: SeatInfo, count: Any, trick_sets: list[Any], teams: list[Any]
    ) -> tuple[list[Any], list[Any]]:
        """The one-hot values in ``one_hot_starts`` order (-1: the piece is empty), and the
        other small features in ``_scalar_index`` order (``count``: popcount; ``teams``: the
        record's tens, tricks and middle)."""
        n, n_tricks = self.rules.n_players, self.rules.n_tricks
        over = info.phase == OVER
        (my_tens, their_tens), (my_tricks, their_tricks), (middle_tens, middle_cards) = teams
        hot = [
            info.led,
            info.trump_state,
            info.trump,
            info.hider,
            info.revealed_by,
            info.leader,
            info.dealer,
            info.run_holder,
            info.winning,
            my_tens,
            their_tens,
            info.trick_no - (info.trick_no + 1) * over,
            info.phase - (info.phase + 1) * over,
        ]
        trick = trick_sets[0]
        for cards in trick_sets[1:]:
            trick = trick | cards
        scalars = [
            count(trick & self._tens) * 0.25,
            info.asked,
            my_tricks * (1.0 / n_tricks),
            their_tricks * (1.0 / n_tricks),
            middle_tens * 0.25,
            middle_cards * (1.0 / (n * n_tricks)),
        ]
        return hot, scalars

    def _write_one(self, info: SeatInfo, seat: int, match_score: np.ndarray | None) -> np.ndarray:
        """Game 0's plain vector (float32, without the history pieces) seen by ``seat``: one
        unpack of the card planes, the voids and the one-hots, then the scalars."""
        card_set, count = self._list_tables
        planes = self._card_sets(info, card_set, info.trick, info.played, info.voids)  # one game's: lists
        # The one-hot pieces ride in the same unpack as the card planes: a set bit for each
        # entry, counted from the end of the voids, split into 64-bit words.
        teams = [info.tens, info.tricks, info.middle]
        hot, scalars = self._small_features(info, count, planes[7 : 7 + self.rules.n_players], teams)
        small = 0
        for bits, value in zip(self._small_hot_bits, hot, strict=True):
            small |= bits[value]
        planes += [small >> shift & _WORD for shift in self._small_shifts]
        words = np.array(planes, dtype=np.uint64).view(np.uint8)
        out = np.unpackbits(words, bitorder="little").take(self._one_game_bits).astype(np.float32)
        out.put(self._scalar_index, scalars)  # put: half the cost of out[index] =
        if match_score is not None:
            self._write_match_score(match_score, self._teams_from[seat : seat + 1], out[None])
        return out

    def _write_batch(
        self, info: SeatInfo, seats: np.ndarray, match_score: np.ndarray | None, out: np.ndarray
    ) -> np.ndarray:
        """Write a batch's vectors, seen by ``seats``: unpack the card sets, scatter the
        one-hots, the scalars."""
        B, n = out.shape[0], self.rules.n_players
        card_set, count = self._array_tables
        sets = self._card_sets(info, card_set, *(by_column(x) for x in (info.trick, info.played, info.voids)))
        self._write_planes(np.stack(sets, axis=1), out)
        # One-hot pieces: one row of ``hot`` per piece (rows are contiguous: fast to fill) holds
        # the index to set to 1, or the piece's first index with value 0 when it is empty.
        teams = [by_column(x) for x in (info.tens, info.tricks, info.middle)]
        hot_values, scalars = self._small_features(info, count, sets[7 : 7 + n], teams)
        hot = np.stack(hot_values, out=self._hot_buffer(B))
        valid = hot >= 0
        if out.flags.c_contiguous:  # a flat scatter is about twice as fast as a 2-D one
            out.reshape(-1)[self._hot_index(B) + hot * valid] = valid
        else:
            out[batch_rows(B), self._hot_starts[:, None] + hot * valid] = valid
        for index, value in zip(self._scalar_list, scalars, strict=True):
            out[:, index] = value
        if match_score is not None:  # (B, 2) flat index of my team's and their team's points
            mine_first = batch_rows(B)[:, None] * 2 + self._teams_from.take(seats, axis=0)
            self._write_match_score(match_score, mine_first, out)
        return out

    def _write_history(self, info: SeatInfo, out: np.ndarray) -> None:
        """The history pieces: each card's place in the play order, and where the reveal came."""
        plays = self.rules.n_players * self.rules.n_tricks
        start = self.layout.pieces["play_order"].start
        out[:, start : start + NUM_CARDS] = (info.play_order + 1) * (1.0 / plays)
        out[:, start + NUM_CARDS] = (info.reveal_at + 1) * (1.0 / plays)  # 0 for no reveal (-1)
        out[:, start + NUM_CARDS + 1 : start + 2 * NUM_CARDS + 1] = _CARD_PLANES[info.revealed_card]

    def _write_planes(self, planes: np.ndarray, out: np.ndarray) -> None:
        """Unpack the (B, planes + 1) sets into ``out``: the card planes, the voids word, and
        zeros for the small features (filled in afterwards)."""
        B, n_planes = out.shape[0], self._n_planes
        bits = unpack_sets(planes, 64)  # (B, columns, 64), one flat unpack
        out[:, : self._cards_end].reshape(B, n_planes, NUM_CARDS)[...] = bits[:, :n_planes, :NUM_CARDS]
        out[:, self._voids] = bits[:, n_planes, : 4 * self.rules.n_players]
        out[:, self._voids.stop :] = 0.0

    def _write_match_score(self, match_score: np.ndarray | None, mine_first: np.ndarray, out: np.ndarray) -> None:
        """Match points / target (mine, theirs); ``mine_first`` is (B, 2) flat into (B * 2)."""
        if match_score is None:
            return
        target = self.rules.target
        score = np.asarray(match_score, dtype=np.float32)
        if score.shape != (out.shape[0], 2):  # a (2, B) one would read fine but wrongly
            raise ValueError(
                f"match_score must be ({out.shape[0]}, 2): the points of team 0 and 1 per game, got shape {score.shape}"
            )
        score = score.reshape(-1)
        # Capped at the target: a tiered last hand can overshoot it, the space is [0, 1].
        out[:, slice(*self._offsets["match_score"])] = np.minimum(score[mine_first], target) * (1.0 / target)

    def _hot_buffer(self, batch_size: int) -> np.ndarray:
        if self._hot is None or self._hot.shape[1] != batch_size:
            self._hot = np.empty((self._hot_starts.size, batch_size), dtype=np.int64)
        return self._hot

    def _hot_index(self, batch_size: int) -> np.ndarray:
        """(pieces, B) flat index of each one-hot piece's first entry in a (B, D) array."""
        if self._hot_base is None or self._hot_base.shape[1] != batch_size:
            self._hot_base = self._hot_starts[:, None] + np.arange(batch_size) * self.size
        return self._hot_base


def hidden_planes(state: State, seats: np.ndarray) -> np.ndarray:
    """(B, (n + 1) * 52) float32: every hand by relative seat (0 = ``seats[b]``), then the
    face-down band card. What a seat cannot see: for centralised critics during training
    (a value that knows the cards), never for play."""
    n, B = state.rules.n_players, state.batch_size
    seats = np.asarray(seats, dtype=np.int64).reshape(B)
    rel_seats = (seats[:, None] + np.arange(n)) % n
    planes = np.empty((B, n + 1), dtype=np.uint64)
    planes[:, :n] = np.take_along_axis(state.hands, rel_seats, axis=1)
    planes[:, n] = CARD_SETS[state.face_down]
    return unpack_sets(planes).reshape(B, -1).astype(np.float32)


def state_layout(rules: Rules) -> Layout:
    """The perfect-information state tensor: every hand, the face-down card, the acting
    seat, then the public observation from seat 0's view (absolute seats)."""
    n = rules.n_players
    return Layout(
        [
            ("hands", (n, NUM_CARDS), "cards in each seat's hand (absolute seats)"),
            ("face_down", (NUM_CARDS,), "the band card while face down"),
            ("current", (n,), "seat to act"),
            ("public", (observation_layout(rules).size,), "observation of seat 0 (absolute seat order)"),
        ]
    )


def encode_state(state: State, encoder: ObservationEncoder, match_score: np.ndarray | None = None) -> np.ndarray:
    """(B, S) float32 perfect-information tensors for centralised critics and oracles."""
    n, B = state.rules.n_players, state.batch_size
    planes = np.concatenate([state.hands, CARD_SETS[state.face_down][:, None]], axis=1)
    seat_onehot = np.vstack([np.eye(n, dtype=np.float32), np.zeros((1, n), np.float32)])
    public = encoder.encode(state, np.zeros(B, dtype=np.int64), match_score)
    return np.concatenate(
        [unpack_sets(planes).reshape(B, -1).astype(np.float32), seat_onehot[state.current], public], axis=1
    )
