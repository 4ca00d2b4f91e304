"""The policy network that trained agents play, and how a checkpoint's spec rebuilds it.

It lives in the agents layer because both the agents that play a checkpoint
(:mod:`agents.neural`) and the trainer (:mod:`mendikot_env.training.loop`) build it; the
trainer imports it from here, never the other way round.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from mendikot_env.cards import NUM_ACTIONS, NUM_RANKS, NUM_SUITS, TEN_RANK
from mendikot_env.checks import check_choice
from mendikot_env.observation import observation_layout
from mendikot_env.rules import Rules

from .advice import advisor_level as saved_advisor_level
from .network_options import ADVISORS, CRITICS


class Network(nn.Module):
    """Scores each legal card with one small shared network, so what it learns about one
    card holds for all 52 (a ten is a ten in every suit).

    A context torso reads the whole observation; each card then gets its own features (its
    planes: in my hand, takes the lead, master, unseen, played by whom, ...; its rank, suit,
    whether it follows, is trump, which seats are void in its suit) and is scored from them
    plus the context. The ask action and the value come from the context. With
    ``hidden_trump_feature`` the suit features also mark the suit of my face-down band card:
    the trump that only the hider knows, which the card scorer would otherwise have to dig out
    of the context.

    With an ``advisor`` (a rule-based agent) the input ends with the advisor's chosen action
    as a one-hot (:func:`agents.advice.with_advice`): the torso reads it, and the card scorer
    gets it as one more card plane, so following the advice is easy to represent and the
    training learns where to depart from it. ``advisor_level`` is the bot's exact ``Level``,
    saved with the network so its advice stays what it was trained with.

    With ``critic="state"`` a separate value network (``critic``) reads the observation
    plus every hand and the face-down card (:func:`~mendikot_env.observation.hidden_planes`):
    a centralised critic, for training only. The luck of where the cards lie is then no
    longer noise in the advantages, which matters most when trump is hidden.
    """

    def __init__(
        self,
        rules: Rules,
        hidden: tuple[int, ...] = (256, 128),
        card_hidden: int = 32,
        hidden_trump_feature: bool = False,  # False: the network of files saved before it existed
        critic: str = "observation",
        advisor: str = "none",
        advisor_level: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        check_choice("Network critic", critic, CRITICS)
        check_choice("Network advisor", advisor, ADVISORS)
        self.hidden_trump_feature = hidden_trump_feature
        self.advisor = advisor
        advised = advisor != "none"
        if advised:  # the saved level, checked; a new network takes the bot as the code has it now
            advisor_level = saved_advisor_level(advisor, rules, advisor_level)
        self.advisor_level = advisor_level  # the advisor's exact Level, saved with the network
        layout = observation_layout(rules)
        self.n = rules.n_players
        self.obs_size = layout.size + NUM_ACTIONS * advised  # the network's input width
        self.card_planes_end = layout.pieces["voids"].start
        self.n_planes = self.card_planes_end // 52
        self.pieces = {name: (p.start, p.stop) for name, p in layout.pieces.items()}
        self.torso, width = _relu_layers(self.obs_size, hidden)
        cards = torch.arange(52)
        static = torch.cat(
            [
                nn.functional.one_hot(cards % NUM_RANKS, NUM_RANKS),
                nn.functional.one_hot(cards // NUM_RANKS, NUM_SUITS),
                (cards % NUM_RANKS == TEN_RANK)[:, None],
            ],
            dim=1,
        ).float()
        self.register_buffer("static", static)  # (52, 18): rank, suit, is a ten
        # The first layer of the card scorer, split by where its inputs come from, so no
        # (B, 52, features) tensor is ever built: card planes, suit features, static, context.
        self.from_planes = nn.Linear(self.n_planes + advised, card_hidden)
        self.from_suit = nn.Linear(2 + self.n + 1 + int(hidden_trump_feature), card_hidden, bias=False)
        self.from_static = nn.Linear(18, card_hidden, bias=False)
        self.from_context = nn.Linear(width, card_hidden, bias=False)
        self.card_out = nn.Sequential(
            nn.ReLU(), nn.Linear(card_hidden, card_hidden), nn.ReLU(), nn.Linear(card_hidden, 1)
        )
        self.ask = nn.Linear(width, 1)
        self.value = nn.Linear(width, 1)
        if critic == "state":
            critic_torso, critic_width = _relu_layers(self.obs_size + (self.n + 1) * 52, hidden)
            self.critic = nn.Sequential(*critic_torso, nn.Linear(critic_width, 1))

    def _piece(self, observations: torch.Tensor, name: str) -> torch.Tensor:
        start, stop = self.pieces[name]
        return observations[:, start:stop]

    def suit_features(self, observations: torch.Tensor) -> torch.Tensor:
        """(B, 4, F) features of each suit, shared by its 13 cards: led, public trump, which
        seats are void in it, my length in it, and (with the feature) my hidden trump."""
        batch = observations.shape[0]
        per_suit = [
            self._piece(observations, "led_suit")[:, :, None],
            self._piece(observations, "trump_suit")[:, :, None],
            self._piece(observations, "voids").reshape(batch, self.n, 4).transpose(1, 2),
            self._piece(observations, "hand").reshape(batch, NUM_SUITS, NUM_RANKS).sum(-1, keepdim=True) / NUM_RANKS,
        ]
        if self.hidden_trump_feature:
            face_down = self._piece(observations, "face_down").reshape(batch, NUM_SUITS, NUM_RANKS)
            per_suit.append(face_down.sum(-1, keepdim=True))
        return torch.cat(per_suit, dim=2)

    def forward(self, observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (illegal actions at -1e9) and values."""
        batch = observations.shape[0]
        context = self.torso(observations)
        planes = observations[:, : self.card_planes_end].reshape(batch, self.n_planes, 52)
        if self.advisor != "none":  # the advised card: the one-hot after the observation
            planes = torch.cat([planes, observations[:, None, -NUM_ACTIONS:-1]], dim=1)
        # Only legal cards are scored (about 5 of the 52 per decision): an illegal card's logit
        # is masked anyway and gets no gradient, and scoring all 52 made the update 2 to 3 times slower.
        rows, cards = masks[:, :52].nonzero(as_tuple=True)
        hidden = (
            self.from_planes(planes[rows, :, cards])
            + self.from_suit(self.suit_features(observations))[rows, cards // NUM_RANKS]
            + self.from_static(self.static)[cards]
            + self.from_context(context)[rows]
        )
        scores = self.card_out(hidden).squeeze(-1)
        card_logits = scores.new_full((batch, 52), -1e9).index_put((rows, cards), scores)
        # float32 out whatever the arithmetic inside (bfloat16 under autocast): the softmax,
        # the PPO ratio and the losses need its precision.
        logits = torch.cat([card_logits, self.ask(context)], dim=1).float().masked_fill(~masks, -1e9)
        return logits, self.value(context).squeeze(-1).float()

    def critic_value(self, observations: torch.Tensor, hidden_cards: torch.Tensor) -> torch.Tensor:
        """(B,) the centralised critic's value (``critic="state"`` only): it also sees the
        hidden cards, so it is for training, never for choosing a move."""
        return self.critic(torch.cat([observations, hidden_cards], dim=1)).squeeze(-1).float()

    def playing_state_dict(self) -> dict[str, torch.Tensor]:
        """The weights that play (the centralised critic left out): what agent files hold."""
        return playing_weights(self.state_dict())


def _relu_layers(width: int, hidden: tuple[int, ...]) -> tuple[nn.Sequential, int]:
    """Linear + ReLU layers of the given sizes from ``width`` inputs, and their output width."""
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    return nn.Sequential(*layers), width


def playing_weights(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``weights`` without the centralised critic's: what plays, and what agent files hold."""
    return {k: v for k, v in weights.items() if not k.startswith("critic.")}


def network_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """The Network (and Args) fields of a checkpoint's spec."""
    return {
        "hidden": tuple(int(h) for h in spec["hidden"]),
        "card_hidden": int(spec["card_hidden"]),
        "hidden_trump_feature": bool(spec.get("hidden_trump_feature", False)),  # absent in older files
        "critic": str(spec.get("critic", "observation")),  # absent in older files
        "advisor": str(spec.get("advisor", "none")),  # absent in older files
        "advisor_level": spec.get("advisor_level"),
    }


def build_network(rules: Rules, spec: dict[str, Any]) -> Network:
    """The network described by a checkpoint's spec."""
    return Network(rules, **network_fields(spec))
