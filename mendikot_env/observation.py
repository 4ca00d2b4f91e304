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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import NUM_CARDS, TENS_MASK, popcount, union, unpack_sets, up_to_highest, up_to_highest_int
from .core import (
    CARD_SETS,
    NO_SEAT,
    OVER,
    PLAY,
    State,
    _rows,
    legal_bits,
    pack_cards,
    team_counts,
    trick_outlook,
    trick_outlook_one,
)
from .rules import Rules

_WORD = (1 << 64) - 1  # one uint64 word of a Python int


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

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """The piece ``name`` of a vector (D,) or batch (..., D), reshaped to its shape."""
        piece = self.pieces[name]
        return vector[..., piece.start : piece.stop].reshape(*vector.shape[:-1], *piece.shape)

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


def observation_layout(rules: Rules) -> Layout:
    """The observation pieces for a rule set (n seats, T tricks), in order.

    Size = 52 * (7 + 2n) + 10n + T + 31 (864 for four players).
    """
    n, t = rules.n_players, rules.n_tricks
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
        ]
    )


class ObservationEncoder:
    """Builds observations for a batch of games, each from a chosen seat's view.

    Example:
        >>> from mendikot_env import Rules, core
        >>> encoder = ObservationEncoder(Rules())
        >>> state = core.new_hands(Rules(), 4, rng=0)
        >>> encoder.encode(state, state.current).shape
        (4, 864)
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.layout = observation_layout(rules)
        n = rules.n_players
        self._n_planes = 7 + 2 * n
        self._offsets = {name: (p.start, p.stop) for name, p in self.layout.pieces.items()}
        self._cards_end = self.layout.pieces["voids"].start
        self._voids = slice(*self._offsets["voids"])
        self._seats_from = (np.arange(n)[:, None] + np.arange(n)) % n  # [s, k]: seat k places after s
        self._teams_from = np.arange(n)[:, None] % 2 ^ np.array([0, 1])  # [s]: my team, their team
        # Seat x seen from seat s is (x - s) % n, at [x * n + s]; NO_SEAT (-1) lands on the
        # last row (negative index), which holds -1. A lookup beats % on int64 arrays.
        self._relative = np.array([(x - s) % n if x >= 0 else -1 for x in [*range(n), -1] for s in range(n)])
        one_hot_starts = [
            ("led_suit", 0), ("trump_state", 0), ("trump_suit", 0), ("hider", 0), ("revealed_by", 0),
            ("leader", 0), ("dealer", 0), ("run_holder", 0), ("winning", 0), ("tens", 0), ("tens", 5),
            ("trick_number", 0), ("phase", 0),
        ]  # fmt: skip
        self._hot_starts = np.array([self._offsets[name][0] + extra for name, extra in one_hot_starts])
        self._hot: np.ndarray | None = None
        self._hot_base: np.ndarray | None = None
        self._pack = np.uint64(sum(1 << int(c) for c in pack_cards(rules)))
        # The one-game path (_encode_one) works on Python ints and lists. Keep its plane,
        # one-hot and scalar orders in step with the batched path's (a test compares them).
        self._pack_int, self._tens_int = int(self._pack), int(TENS_MASK)
        self._seats_from_lists: list[list[int]] = self._seats_from.tolist()
        self._teams_from_lists: list[list[int]] = self._teams_from.tolist()
        self._small_hot_starts = (self._hot_starts - self._voids.stop).tolist()
        self._small_shifts = list(range(0, self.size - self._voids.stop, 64))
        # Where each entry of a one-game vector sits in the unpacked bits of its words (the
        # card planes' first 52 bits, the voids' first 4n, then the small features' words):
        # one gather writes the whole vector, where the batched path's three writes cost more.
        small_first = (self._n_planes + 1) * 64
        self._one_game_bits = np.concatenate(
            [
                (np.arange(self._n_planes)[:, None] * 64 + np.arange(NUM_CARDS)).reshape(-1),
                self._n_planes * 64 + np.arange(4 * n),
                small_first + np.arange(self.size - self._voids.stop),
            ]
        )
        o = self._offsets
        self._scalar_index = np.array(
            [o["trick_tens"][0], o["asked"][0], *range(*o["tricks"]), o["middle"][0], o["middle"][0] + 1]
        )

    @property
    def size(self) -> int:
        """Length D of an observation vector."""
        return self.layout.size

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
        rules = self.rules
        n, B = rules.n_players, state.batch_size
        differences = [] if state.rules is rules else rules.hand_differences(state.rules)  # `is`: the hot path
        if differences:
            raise ValueError(
                f"this encoder is for {rules}, not for the state's {state.rules} "
                f"({'; '.join(differences)}): make ObservationEncoder(state.rules)"
            )
        given = seats
        seats = np.asarray(seats)
        if seats.dtype.kind not in "iu" and (seats.size or seats.dtype.kind not in "f"):  # [] reads as float64
            # Refused, not cast: astype would truncate 1.9 to seat 1, and True or "0" are no seats.
            shown = given.tolist() if isinstance(given, np.ndarray) else given
            raise ValueError(f"seats must be integers 0..{n - 1} (or {NO_SEAT} for a finished game), got {shown!r}")
        seats = seats.astype(np.int64, copy=False)
        if seats.size != B:
            raise ValueError(f"seats needs one observing seat per game: {B}, got shape {seats.shape}")
        seats = seats.reshape(B)
        if out is None:
            out = np.empty((B, self.size), dtype=np.float32)
        elif out.shape != (B, self.size) or out.dtype != np.float32:
            raise ValueError(f"out must be a ({B}, {self.size}) float32 array, got {out.shape} {out.dtype}")
        if B == 0:
            return out
        if B == 1:
            seat = int(seats[0])
            if not NO_SEAT <= seat < n:
                raise ValueError(f"seats must be 0..{n - 1} (or {NO_SEAT} for a finished game), got [{seat}]")
            return self._encode_one(state, max(seat, 0), match_score, out, legal)
        lowest = seats.min()
        if lowest < NO_SEAT or seats.max() >= n:
            bad = sorted(set(seats[(seats < NO_SEAT) | (seats >= n)].tolist()))
            raise ValueError(f"seats must be 0..{n - 1} (or {NO_SEAT} for a finished game), got {bad}")
        if lowest < 0:
            seats = np.maximum(seats, 0)
        rows = _rows(B)
        # take() gathers table rows several times faster than fancy indexing does.
        rel_seats = self._seats_from.take(seats, axis=0)  # (B, n): absolute seat of relative seat k
        flat = rows[:, None] * n + rel_seats  # (B, n): index into flattened (B * n) per-seat arrays
        winning = self._write_card_planes(state, seats, flat, legal, out)
        self._write_small_features(state, seats, rows, winning, match_score, out)
        return out

    def _write_card_planes(
        self, state: State, seats: np.ndarray, flat: np.ndarray, legal: np.ndarray | None, out: np.ndarray
    ) -> np.ndarray:
        """The card planes and the voids (zeros after them); returns the trick's winning seat.

        The card sets are gathered, then all of them unpacked in one call.
        """
        n, B = self.rules.n_players, state.batch_size
        n_planes = self._n_planes
        planes = np.empty((B, n_planes + 1), dtype=np.uint64)  # + the voids, 4 bits per seat
        planes[:, 0] = state.hands.reshape(-1)[flat[:, 0]]
        planes[:, 1] = CARD_SETS[state.face_down] * (state.hider == seats)
        planes[:, 2] = CARD_SETS[state.open_card]
        planes[:, 3] = CARD_SETS[state.known_card]
        winning, takers = trick_outlook(state, legal)
        planes[:, 4] = takers * ((seats == state.current) & (state.phase == PLAY))
        mine = planes[:, 0] | planes[:, 1]
        played = union(state.played)
        outside = self._pack & ~mine & ~played  # in other hands, or face down elsewhere
        planes[:, 5] = outside & ~planes[:, 3]
        planes[:, 6] = planes[:, 0] & ~up_to_highest(outside)  # masters: above every outside card
        planes[:, 7 : 7 + n] = CARD_SETS[state.trick_cards.reshape(-1)[flat]]
        planes[:, 7 + n : n_planes] = state.played.reshape(-1)[flat]
        seat_voids = state.voids.reshape(-1)[flat].astype(np.uint64)
        planes[:, n_planes] = seat_voids[:, 0]
        for k in range(1, n):
            planes[:, n_planes] |= seat_voids[:, k] << np.uint64(4 * k)
        self._write_planes(planes, out)
        trick_tens = popcount(union(CARD_SETS[state.trick_cards]) & TENS_MASK)
        out[:, self._offsets["trick_tens"][0]] = trick_tens * np.float32(0.25)
        return winning

    def _write_small_features(
        self,
        state: State,
        seats: np.ndarray,
        rows: np.ndarray,
        winning: np.ndarray,
        match_score: np.ndarray | None,
        out: np.ndarray,
    ) -> None:
        """The one-hot pieces and the scalars, after the voids (zeros there so far)."""
        rules, n, B = self.rules, self.rules.n_players, state.batch_size
        # One-hot pieces: one row of ``hot`` per piece (rows are contiguous: fast to fill) holds
        # the index to set to 1, or the piece's first index with value 0 when it is empty.
        hot = self._hot_buffer(B)
        over = state.phase == OVER
        hot[0] = state.led_suit
        hot[1] = 2 * (state.trump >= 0) + (state.face_down >= 0)
        hot[2] = state.trump
        hot[3] = state.hider
        hot[4] = state.revealed_by
        hot[5] = np.where(over, NO_SEAT, state.leader)
        hot[6] = state.dealer
        hot[7] = state.last_winner
        hot[8] = winning
        seat_rows = hot[3:9]
        seat_rows[...] = self._relative[seat_rows * n + seats]
        tens, tricks = team_counts(state)
        mine_first = rows[:, None] * 2 + self._teams_from.take(seats, axis=0)  # (B, 2) flat index: mine, theirs
        hot[9:11] = tens.reshape(-1)[mine_first.T]
        hot[11] = np.where(over, -1, state.trick_no)
        hot[12] = np.where(over, -1, state.phase)
        valid = hot >= 0
        if out.flags.c_contiguous:  # a flat scatter is about twice as fast as a 2-D one
            out.reshape(-1)[self._hot_index(B) + hot * valid] = valid
        else:
            out[rows, self._hot_starts[:, None] + hot * valid] = valid

        o = self._offsets
        out[:, o["asked"][0]] = state.asked
        out[:, slice(*o["tricks"])] = tricks.reshape(-1)[mine_first] * (1.0 / rules.n_tricks)
        out[:, o["middle"][0]] = popcount(state.middle & TENS_MASK) * 0.25
        out[:, o["middle"][0] + 1] = popcount(state.middle) * (1.0 / (n * rules.n_tricks))
        self._write_match_score(match_score, mine_first, out)

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

    def _encode_one(
        self, state: State, seat: int, match_score: np.ndarray | None, out: np.ndarray, legal: np.ndarray | None
    ) -> np.ndarray:
        """:meth:`encode` of one game from ``seat``'s view, computed on Python ints.

        The AEC env's path: at B = 1 each numpy call costs microseconds whatever its size, so
        the pieces are worked out from the state's numbers once read, and numpy only unpacks
        and writes the vector. Same pieces, same values: the batched path is the definition,
        and a test compares the two bit for bit on every variant.
        """
        legal_set = int(np.asarray(legal_bits(state) if legal is None else legal).reshape(-1)[0])
        winning, takers = trick_outlook_one(state, legal_set)
        planes = self._one_game_planes(state, seat, takers)
        # The one-hot pieces ride in the same unpack as the card planes: a set bit for each
        # entry, counted from the end of the voids, split into 64-bit words.
        small = 0
        for first, value in zip(self._small_hot_starts, self._one_game_hot(state, seat, winning), strict=True):
            if value >= 0:
                small |= 1 << first + value
        planes += [small >> shift & _WORD for shift in self._small_shifts]
        out[0] = unpack_sets(np.array(planes, dtype=np.uint64), 64).reshape(-1).take(self._one_game_bits)
        out[0].put(self._scalar_index, self._one_game_scalars(state, seat))  # put: half the cost of out[0, index] =
        if match_score is not None:
            self._write_match_score(match_score, self._teams_from[seat : seat + 1], out)
        return out

    def _one_game_planes(self, state: State, seat: int, takers: int) -> list[int]:
        """The card planes and the voids word of game 0, in the batched path's plane order."""
        seats = self._seats_from_lists[seat]  # absolute seat of each relative seat
        hands, played = state.hands.tolist()[0], state.played.tolist()[0]
        trick_cards, voids = state.trick_cards.tolist()[0], state.voids.tolist()[0]
        face_down, hider = state.face_down.item(0), state.hider.item(0)
        open_card, known_card = state.open_card.item(0), state.known_card.item(0)
        to_act = seat == state.current.item(0) and state.phase.item(0) == PLAY
        hand = hands[seat]
        face_down_set = 1 << face_down if face_down >= 0 and hider == seat else 0
        known_set = 1 << known_card if known_card >= 0 else 0
        played_all = seat_voids = 0
        for k, s in enumerate(seats):
            played_all |= played[s]
            seat_voids |= voids[s] << 4 * k
        outside = self._pack_int & ~(hand | face_down_set) & ~played_all  # in other hands, or face down
        return [
            hand,
            face_down_set,
            1 << open_card if open_card >= 0 else 0,
            known_set,
            takers if to_act else 0,
            outside & ~known_set,
            hand & ~up_to_highest_int(outside),  # masters: above every outside card
            *[1 << trick_cards[s] if trick_cards[s] >= 0 else 0 for s in seats],
            *[played[s] for s in seats],
            seat_voids,
        ]

    def _one_game_hot(self, state: State, seat: int, winning: int) -> list[int]:
        """The one-hot values of game 0 in ``one_hot_starts`` order (-1: the piece is empty)."""
        n = self.rules.n_players
        over = state.phase.item(0) == OVER
        trump, face_down = state.trump.item(0), state.face_down.item(0)
        mine, theirs = self._teams_from_lists[seat]
        taken = state.taken.tolist()[0]

        def relative(x: int) -> int:
            return (x - seat) % n if x >= 0 else NO_SEAT

        return [
            state.led_suit.item(0),
            2 * (trump >= 0) + (face_down >= 0),
            trump,
            relative(state.hider.item(0)),
            relative(state.revealed_by.item(0)),
            NO_SEAT if over else relative(state.leader.item(0)),
            relative(state.dealer.item(0)),
            relative(state.last_winner.item(0)),
            relative(winning),
            (taken[mine] & self._tens_int).bit_count(),
            (taken[theirs] & self._tens_int).bit_count(),
            NO_SEAT if over else state.trick_no.item(0),
            NO_SEAT if over else state.phase.item(0),
        ]

    def _one_game_scalars(self, state: State, seat: int) -> list[float]:
        """The non-one-hot small features of game 0, in ``_scalar_index`` order."""
        n, n_tricks = self.rules.n_players, self.rules.n_tricks
        mine, theirs = self._teams_from_lists[seat]
        trick_set, middle = 0, state.middle.item(0)
        for card in state.trick_cards.tolist()[0]:
            if card >= 0:
                trick_set |= 1 << card
        tricks = [cards.bit_count() // n for cards in state.taken.tolist()[0]]
        return [
            (trick_set & self._tens_int).bit_count() * 0.25,
            state.asked.item(0),
            tricks[mine] * (1.0 / n_tricks),
            tricks[theirs] * (1.0 / n_tricks),
            (middle & self._tens_int).bit_count() * 0.25,
            middle.bit_count() * (1.0 / (n * n_tricks)),
        ]

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
