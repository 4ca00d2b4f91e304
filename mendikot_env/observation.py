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

from .cards import NUM_CARDS, TENS_MASK, popcount, unpack_sets
from .core import CARD_SETS, HIDE, OVER, PLAY, State, team_counts
from .rules import Rules


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

    Size = 52 * (3 + 3n) + 9n + T + 30 (859 for four players).
    """
    n, t = rules.n_players, rules.n_tricks
    return Layout(
        [
            ("hand", (NUM_CARDS,), "cards in my hand"),
            ("face_down", (NUM_CARDS,), "my face-down band card (the hider only, while face down)"),
            ("open_card", (NUM_CARDS,), "the card shown by the open draw (trump='open')"),
            ("trick", (n, NUM_CARDS), "card each relative seat played to the current trick"),
            ("played", (n, NUM_CARDS), "cards each relative seat has played this hand (trick included)"),
            ("known", (n, NUM_CARDS), "cards publicly known to be in each relative seat's hand (revealed band card)"),
            ("voids", (n, 4), "suits each relative seat has failed to follow this hand"),
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
        (4, 859)
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.layout = observation_layout(rules)
        n = rules.n_players
        # (n + 1, n): row k is one-hot k, the last row (index -1 or n) is all zero.
        self._seat_onehot = np.vstack([np.eye(n, dtype=np.float32), np.zeros((1, n), np.float32)])
        self._count_onehot = np.eye(5, dtype=np.float32)
        self._trick_onehot = np.vstack([np.eye(rules.n_tricks, dtype=np.float32), np.zeros((1, rules.n_tricks))])
        self._suit_onehot = np.vstack([np.eye(4, dtype=np.float32), np.zeros((1, 4), np.float32)])
        # Rows indexed by phase: HIDE -> (1, 0), PLAY -> (0, 1), OVER -> (0, 0).
        self._phase_onehot = np.zeros((3, 2), dtype=np.float32)
        self._phase_onehot[HIDE, 0] = self._phase_onehot[PLAY, 1] = 1.0
        self._void_bits = np.unpackbits(np.arange(16, dtype=np.uint8)[:, None], axis=1, bitorder="little")[:, :4]
        self._n_planes = 3 + 3 * n
        self._offsets = {name: (p.start, p.stop) for name, p in self.layout.pieces.items()}

    @property
    def size(self) -> int:
        """Length D of an observation vector."""
        return self.layout.size

    def _relative(self, seats: np.ndarray, of: np.ndarray) -> np.ndarray:
        """Relative seat of ``of`` seen from ``seats``; n (the zero row) where of < 0."""
        n = self.rules.n_players
        return np.where(of < 0, n, (of - seats) % n)

    def encode(
        self,
        state: State,
        seats: np.ndarray,
        match_score: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, D) float32 observations of ``state``, game b seen by seat ``seats[b]``.

        Args:
            state: the batch of games.
            seats: (B,) observing seat per game (absolute seat numbers).
            match_score: optional (B, 2) match points per absolute team.
            out: optional (B, D) float32 array to write into (saves an allocation).
        """
        rules = self.rules
        n, B = rules.n_players, state.batch_size
        seats = np.asarray(seats, dtype=np.int64).reshape(B)
        games = np.arange(B)
        rel_seats = (seats[:, None] + np.arange(n)) % n  # (B, n): absolute seat of relative seat k
        rows = games[:, None]
        o = self._offsets
        if out is None:
            out = np.empty((B, self.size), dtype=np.float32)

        planes = np.empty((B, self._n_planes), dtype=np.uint64)
        planes[:, 0] = state.hands[games, seats]
        planes[:, 1] = np.where(state.hider == seats, CARD_SETS[state.face_down], np.uint64(0))
        planes[:, 2] = CARD_SETS[state.open_card]
        planes[:, 3 : 3 + n] = CARD_SETS[state.trick_cards[rows, rel_seats]]
        planes[:, 3 + n : 3 + 2 * n] = state.played[rows, rel_seats]
        planes[:, 3 + 2 * n :] = np.where(
            rel_seats == state.hider[:, None], CARD_SETS[state.known_card][:, None], np.uint64(0)
        )
        out[:, : o["voids"][0]] = unpack_sets(planes).reshape(B, -1)

        out[:, slice(*o["voids"])] = self._void_bits[state.voids[rows, rel_seats]].reshape(B, -1)
        out[:, slice(*o["led_suit"])] = self._suit_onehot[state.led_suit]
        trump_state = np.where(state.trump >= 0, 2, np.where(state.face_down >= 0, 1, 0))
        out[:, slice(*o["trump_state"])] = self._count_onehot[trump_state, :3]
        out[:, slice(*o["trump_suit"])] = self._suit_onehot[state.trump]
        out[:, o["asked"][0]] = state.asked
        seat_pieces = (
            ("hider", state.hider),
            ("revealed_by", state.revealed_by),
            ("leader", np.where(state.phase == OVER, -1, state.leader)),
            ("dealer", state.dealer),
            ("run_holder", state.last_winner),
        )
        for name, absolute in seat_pieces:
            out[:, slice(*o[name])] = self._seat_onehot[self._relative(seats, absolute)]

        my_team = seats % 2
        tens, tricks = team_counts(state)
        mine_first = np.stack([my_team, 1 - my_team], axis=1)
        out[:, slice(*o["tens"])] = self._count_onehot[tens[rows, mine_first]].reshape(B, -1)
        out[:, slice(*o["tricks"])] = tricks[rows, mine_first] / rules.n_tricks
        out[:, o["middle"][0]] = popcount(state.middle & TENS_MASK) / 4.0
        out[:, o["middle"][0] + 1] = popcount(state.middle) / (n * rules.n_tricks)
        out[:, slice(*o["trick_number"])] = self._trick_onehot[np.minimum(state.trick_no, rules.n_tricks)]
        out[:, slice(*o["phase"])] = self._phase_onehot[state.phase]
        if match_score is None:
            out[:, slice(*o["match_score"])] = 0.0
        else:
            out[:, slice(*o["match_score"])] = np.asarray(match_score)[rows, mine_first] / rules.target
        return out


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
