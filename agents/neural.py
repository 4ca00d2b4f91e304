"""Agents backed by a trained network (a training checkpoint or an exported agent file).

The network itself is :mod:`agents.network`, its file format :mod:`agents.checkpoint_format`:
the trainer imports both from the agents layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mendikot_env import core
from mendikot_env.checks import check_choice
from mendikot_env.observation import ObservationEncoder, observation_layout
from mendikot_env.rules import Rules
from mendikot_env.seeding import check_seed

from .advice import advisor_level, make_advisor, with_advice
from .base import check_batch
from .network_options import PRECISIONS, SUIT_VIEWS, VIEWS, precision_context

__all__ = ["NeuralAgent", "advisor_level", "load_neural_agent", "make_advisor", "with_advice"]


class NeuralAgent:
    """Plays the masked policy of a network: greedy (strongest) or sampled.

    Args:
        network: an :class:`agents.network.Network`.
        rules: the rules it was trained for (its observation size must match, plus 53 with
            an advisor, which the agent appends itself).
        greedy: take the most likely legal action; otherwise sample.
        seed: seed of the sampling.
        device: torch device of the network.
        precision: "float32", or "bfloat16" to run the network under autocast (the training
            loop's snapshots do, when it trains so).
        views: 1 plays the network's policy; 24 (``SUIT_VIEWS``) the mean of its log-policies
            over every relabelling of the four suits (:mod:`agents.suit_symmetry`), one batched
            pass of 24 rows a decision: stronger, and still about a millisecond at batch one.
    """

    def __init__(
        self,
        network: Any,
        rules: Rules,
        greedy: bool = True,
        seed: int | None = None,
        device: Any = "cpu",
        name: str = "trained",
        precision: str = "float32",
        views: int = 1,
    ) -> None:
        import torch

        check_choice("NeuralAgent precision", precision, PRECISIONS)
        self.network = network
        self.rules = rules
        self.greedy = greedy
        self.device = torch.device(device)
        self.name = name
        self.precision = precision
        self.generator = torch.Generator().manual_seed(0 if seed is None else check_seed(seed))
        self.advisor = make_advisor(getattr(network, "advisor", "none"), rules, getattr(network, "advisor_level", None))
        self.obs_size = observation_layout(rules).size  # before the advisor's one-hot
        self.encoder = ObservationEncoder(rules)  # for state_values
        self.set_views(views)

    def set_views(self, views: int) -> None:
        """Play the network's own policy (1) or the mean over the 24 suit relabellings (24)."""
        from .suit_symmetry import SuitSymmetry

        check_choice("NeuralAgent views", views, VIEWS)
        self.views = views
        self.symmetry = SuitSymmetry(self.rules, self.advisor is not None, self.device) if views == SUIT_VIEWS else None

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        logits = self._logits(observations, masks)
        if self.greedy:
            return logits.argmax(dim=-1).cpu().numpy().astype(np.int64)
        probs = torch.softmax(logits, dim=-1).cpu()
        return torch.multinomial(probs, 1, generator=self.generator).squeeze(-1).numpy().astype(np.int64)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) float32: the masked policy, zero on illegal actions (what an ensemble averages)."""
        import torch

        return torch.softmax(self._logits(observations, masks), dim=-1).cpu().numpy()

    def _logits(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        """(B, 53) float32 masked logits of the network (illegal actions at the network's floor);
        with ``views=24``, the mean log-policy of its suit views.

        Raises:
            ValueError: a batch :func:`agents.base.check_batch` refuses (before torch sees it).
        """
        return self._outputs(observations, masks)[0]

    def state_values(self, state: core.State) -> np.ndarray:
        """(B,) the value head's outcome for team 0 (seats 0, 2, ...) of every game of ``state``,
        read from the observation of the seat to move: a search's leaf value (``search:leaf=``)."""
        observations = self.encoder.encode(state, state.current)
        values = self._outputs(observations, core.legal_action_mask(state))[1].cpu().numpy()
        return np.where(state.current % 2 == 0, 1.0, -1.0) * values

    def _outputs(self, observations: np.ndarray, masks: np.ndarray) -> tuple[Any, Any]:
        """The network's masked logits and values of a checked batch (see :meth:`_logits`)."""
        import torch

        observations, legal = check_batch(observations, masks, self.obs_size, self.rules.n_players)
        if self.advisor is not None:
            observations = with_advice(self.advisor, observations, legal)
        with torch.no_grad(), precision_context(self.precision, self.device.type):
            obs = torch.from_numpy(np.ascontiguousarray(observations)).to(self.device)
            mask = torch.from_numpy(legal).to(self.device)
            if self.symmetry is None:
                return self.network(obs, mask)
            return self.symmetry.averaged(self.network, obs, mask)

    def seed(self, seed: int | None) -> None:
        self.generator.manual_seed(0 if seed is None else check_seed(seed))


def load_neural_agent(
    path: str | Path, greedy: bool = True, seed: int | None = None, device: Any = "cpu"
) -> NeuralAgent:
    """Load an agent from a run folder (its ``agent.pt``, else ``checkpoint.pt``) or a file.

    Raises:
        agents.checkpoint_format.CheckpointError: a missing, corrupt or foreign file.
    """
    import torch

    from .checkpoint_format import CheckpointError, load_checkpoint
    from .network import build_network

    path = Path(path)
    if path.is_dir():
        candidates = [path / "agent.pt", path / "checkpoint.pt"]
        path = next((p for p in candidates if p.is_file()), candidates[0])
    payload = load_checkpoint(path, kind="agent")
    spec = payload["network"]
    try:
        rules = Rules.from_dict(payload["rules"])
        network = build_network(rules, spec)
        network.load_state_dict({k: v.float() for k, v in payload["model"].items()})
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path} does not hold a usable network: {error}") from None
    network.to(torch.device(device)).eval()
    # A run's own files are named after the run; any other file after itself.
    name = path.parent.name if path.name in ("agent.pt", "checkpoint.pt") else path.stem
    return NeuralAgent(network, rules, greedy=greedy, seed=seed, device=device, name=name or "trained")
