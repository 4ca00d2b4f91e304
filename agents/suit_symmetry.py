"""The suits are interchangeable: a decision seen with its suits relabelled is another decision
of the same game, with the same move values on the relabelled cards.

No rule set names a suit (trump comes from a cut, a face-down card or a draw; six and eight
players drop the 2s of every suit), so relabelling the four suits of a deal relabels every
observation, legal move and search value of its play
(:func:`mendikot_env.observation.suit_relabelled_columns`). Two uses, as board games'
networks use the board's rotations (AlphaGo):

- in the fit (``--exit-suit-symmetry``), each decision is shown under a random one of the 24
  relabellings (:meth:`SuitSymmetry.draw`): up to 24 versions of every label;
- in play (a network agent's ``views=24``), the policy is averaged over all 24 relabellings
  of the decision, one batched forward pass of 24 rows (:meth:`SuitSymmetry.averaged`): no
  network learns the symmetry exactly, and the average cancels what one view gets wrong.

One exception: a rule-based advisor breaks ties by the lowest card id, so its appended move
is not relabelled exactly in the rare ties (under 1% of decisions). The test suite plays
deals and their relabelled twins in every variant and compares.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from mendikot_env.cards import NUM_ACTIONS, NUM_CARDS, NUM_SUITS, relabelled_card_sources
from mendikot_env.observation import observation_layout, suit_relabelled_columns
from mendikot_env.rules import Rules

RELABELLINGS = tuple(itertools.permutations(range(NUM_SUITS)))  # new suit of each old suit; the first keeps them


class SuitSymmetry:
    """Source-column tables of the 24 suit relabellings, on ``device``, for the network's
    input: the plain observation of ``rules``, then with ``advised`` the advisor's move as 53
    action columns.

    ``observations[:, self.observation[k]]`` is the batch under relabelling ``k``; so are
    the 53 action columns (masks, policy targets) with ``self.action[k]`` and each 52-card
    block of the hidden hands with ``self.card[k]``.
    """

    def __init__(self, rules: Rules, advised: bool, device: torch.device) -> None:
        size = observation_layout(rules).size
        observation, action = [], []
        for new_suit in RELABELLINGS:
            columns = suit_relabelled_columns(rules, new_suit)
            moves = np.append(relabelled_card_sources(new_suit), NUM_CARDS)  # the ask keeps its column
            observation.append(np.concatenate([columns, size + moves]) if advised else columns)
            action.append(moves)
        self.observation = torch.from_numpy(np.stack(observation)).to(device)  # (24, width)
        self.action = torch.from_numpy(np.stack(action)).to(device)  # (24, 53)
        self.card = self.action[:, :NUM_CARDS]  # (24, 52)

    def draw(self, rows: int, generator: torch.Generator) -> torch.Tensor:
        """(rows,) a relabelling for each of ``rows`` decisions, drawn from ``generator``."""
        return torch.randint(len(RELABELLINGS), (rows,), generator=generator).to(self.action.device)

    def observations(self, observations: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, width) each row under its relabelling ``which``."""
        return torch.gather(observations, 1, self.observation[which])

    def actions(self, columns: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, 53) action columns (a mask, a policy target) each under its relabelling."""
        return torch.gather(columns, 1, self.action[which])

    def averaged(
        self, network: torch.nn.Module, observations: torch.Tensor, masks: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``network``'s masked log-policy (B, 53) and value (B,) averaged over the 24
        relabellings of each decision, each view's policy mapped back to the decision's own
        cards: a geometric mean of the views' policies (illegal actions stay at -1e9)."""
        batch, views = len(observations), len(RELABELLINGS)
        which = torch.arange(views, device=observations.device).repeat_interleave(batch)
        logits, values = network(
            self.observations(observations.repeat(views, 1), which), self.actions(masks.repeat(views, 1), which)
        )
        # Column j of view k is the decision's action self.action[k, j]: scatter puts it back.
        log_policy = torch.zeros_like(logits).scatter_(1, self.action[which], torch.log_softmax(logits, dim=-1))
        mean = log_policy.reshape(views, batch, NUM_ACTIONS).mean(dim=0).masked_fill(~masks, -1e9)
        return mean, values.reshape(views, batch).mean(dim=0)

    def hands(self, hidden: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        """(B, k * 52) blocks of 52 cards (the hidden hands) each under its relabelling."""
        blocks = hidden.reshape(len(hidden), -1, NUM_CARDS)
        return torch.gather(blocks, 2, self.card[which][:, None, :].expand_as(blocks)).reshape(hidden.shape)
