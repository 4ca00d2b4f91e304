"""Match scoring: hands to a target, per the rules' tariff and rotation (batched)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import HandResults, score_hands
from .rules import Rules


def hand_points(rules: Rules, results: HandResults) -> np.ndarray:
    """(B,) points the winning team scores for each hand; 0 for a drawn hand.

    ``tiered`` pays 1 for a hand, 2 for a mendikot and 3 for a whitewash; the other
    tariffs pay 1 for every hand won.
    """
    return score_hands(rules, results.tens, results.tricks)[1]


def team_rewards(rules: Rules, results: HandResults, reward: str) -> np.ndarray:
    """(B, 2) zero-sum reward per team for a finished hand.

    ``reward="win"``: +1 to the winners, -1 to the losers, 0 for a drawn hand.
    ``reward="points"``: the scoring tariff instead of 1 (e.g. +3 / -3 for a tiered whitewash).
    """
    size = np.ones_like(results.winner) if reward == "win" else hand_points(rules, results)
    sign = np.where(results.winner == 0, 1, np.where(results.winner == 1, -1, 0))
    return np.stack([sign * size, -sign * size], axis=1).astype(np.float64)


@dataclass
class MatchState:
    """B matches in progress."""

    scores: np.ndarray  # (B, 2) int64: points (or hands won, fixed_deals) per team
    deals: np.ndarray  # (B,) int64: hands played so far, drawn hands included
    dealer: np.ndarray  # (B,) int64: dealer of the next hand
    over: np.ndarray  # (B,) bool: the match is decided

    @classmethod
    def start(cls, dealers: np.ndarray) -> MatchState:
        """New matches whose first hands are dealt by ``dealers``."""
        dealers = np.asarray(dealers, dtype=np.int64)
        batch = dealers.shape[0]
        return cls(np.zeros((batch, 2), np.int64), np.zeros(batch, np.int64), dealers.copy(), np.zeros(batch, bool))

    def record(self, rules: Rules, results: HandResults, games: np.ndarray | None = None) -> np.ndarray:
        """Add finished hands (all games, or the chosen ones) and return the (B, 2) points.

        Raises:
            ValueError: a result per chosen game is missing, or a chosen match is already
                over (its score would grow past the end that was reported).
        """
        games = np.arange(self.scores.shape[0]) if games is None else np.asarray(games)
        if results.winner.shape != (games.size,):
            raise ValueError(f"record needs one hand result per game: {games.size}, got {results.winner.shape[0]}")
        if np.count_nonzero(self.over[games]):
            ended = games[self.over[games]].tolist()
            raise ValueError(f"the match of game(s) {ended} is already over; start a new MatchState for another")
        points = hand_points(rules, results)
        awarded = np.zeros((games.size, 2), dtype=np.int64)
        winner = results.winner
        won = winner >= 0
        awarded[np.flatnonzero(won), winner[won]] = points[won]
        self.scores[games] += awarded
        self.deals[games] += 1
        self.dealer[games] = results.next_dealer
        if rules.scoring == "fixed_deals":
            self.over[games] = self.deals[games] >= rules.target
        else:
            self.over[games] = self.scores[games].max(axis=1) >= rules.target
        return awarded

    def winner(self) -> np.ndarray:
        """(B,) team ahead on points (the match winner once over), -1 when level."""
        s = self.scores
        return np.where(s[:, 0] > s[:, 1], 0, np.where(s[:, 1] > s[:, 0], 1, -1))
