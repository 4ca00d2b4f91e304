"""The suits are interchangeable: a decision seen with its suits relabelled is another decision
of the same game, with the same move values on the relabelled cards.

No rule set names a suit (trump comes from a cut, a face-down card or a draw; six and eight
players drop the 2s of every suit), so relabelling the four suits of a deal relabels every
observation, legal move and search value of its play. A fit that shows each decision under a
random one of the 24 relabellings learns from 24 versions of every label it holds, as board
games' networks learn from the board's rotations (AlphaGo). The test suite checks the tables
below against the encoder itself: play a deal and its relabelled twin, and compare.
"""

from __future__ import annotations

import itertools

import torch

from mendikot_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from mendikot_env.observation import observation_layout
from mendikot_env.rules import Rules

SUIT_PIECES = ("voids", "led_suit", "trump_suit")  # observation pieces with one column per suit
RELABELLINGS = tuple(itertools.permutations(range(NUM_SUITS)))  # new suit of each old suit; the first keeps them


class SuitSymmetry:
    """Source-column tables of the 24 suit relabellings, for a network input of ``width``
    columns: the plain observation of ``rules``, then (with an advisor) its move as 53 columns.

    ``observations[:, tables.observation[k]]`` is the batch under relabelling ``k``; so are
    the 53 action columns (masks, policy targets, the advisor's move) with ``tables.action[k]``
    and each 52-card block of the hidden hands with ``tables.card[k]``.
    """

    def __init__(self, rules: Rules, width: int) -> None:
        layout = observation_layout(rules)
        cards = torch.arange(NUM_CARDS)
        rows_obs, rows_action = [], []
        for new_suit in RELABELLINGS:
            relabelled = torch.tensor(new_suit)[cards // NUM_RANKS] * NUM_RANKS + cards % NUM_RANKS
            card = torch.empty_like(cards).index_put_((relabelled,), cards)  # source card of each new card
            suit = torch.tensor([new_suit.index(s) for s in range(NUM_SUITS)])  # source suit of each new suit
            source = torch.arange(width)
            for piece in layout.pieces.values():
                block = card if piece.shape[-1] == NUM_CARDS else suit if piece.name in SUIT_PIECES else None
                if block is not None:
                    starts = torch.arange(piece.start, piece.stop, len(block))
                    source[piece.start : piece.stop] = (starts[:, None] + block).flatten()
            if width > layout.size:  # the advisor's move: one action column each
                source[layout.size :] = layout.size + torch.cat([card, torch.tensor([NUM_CARDS])])
            rows_obs.append(source)
            rows_action.append(torch.cat([card, torch.tensor([NUM_CARDS])]))
        self.observation = torch.stack(rows_obs)  # (24, width)
        self.action = torch.stack(rows_action)  # (24, 53): the ask keeps its column
        self.card = self.action[:, :NUM_CARDS]  # (24, 52)

    def draw(self, rows: int, generator: torch.Generator) -> torch.Tensor:
        """(rows,) a relabelling for each of ``rows`` decisions, drawn from ``generator``."""
        return torch.randint(len(RELABELLINGS), (rows,), generator=generator)

    def observations(self, observations: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, width) each row under its relabelling ``which``."""
        return torch.gather(observations, 1, self.observation[which].to(observations.device))

    def actions(self, columns: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, 53) action columns (a mask, a policy target) each under its relabelling."""
        return torch.gather(columns, 1, self.action[which].to(columns.device))

    def hands(self, hidden: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, k * 52) blocks of 52 cards (the hidden hands) each under its relabelling."""
        blocks = hidden.reshape(len(hidden), -1, NUM_CARDS)
        index = self.card[which].to(hidden.device)[:, None, :].expand_as(blocks)
        return torch.gather(blocks, 2, index).reshape(hidden.shape)
