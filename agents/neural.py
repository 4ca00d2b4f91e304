"""Agents backed by a trained network (a training checkpoint or an exported agent file)."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.observation import observation_layout
from mendikot_env.rules import Rules
from mendikot_env.seeding import check_seed
from mendikot_env.training.args import PRECISIONS, precision_context

from .base import check_batch


def with_advice(advisor: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(B, D + 53) float32: the observations with the advisor's chosen action appended as a
    one-hot, the input of a network trained with an advisor (``Args.advisor``).

    The advisor acts on the same observation and mask, so the extra input holds nothing the
    seat could not work out itself.
    """
    advice = np.zeros((len(observations), NUM_ACTIONS), dtype=np.float32)
    advice[np.arange(len(observations)), advisor.act(observations, masks)] = 1.0
    return np.concatenate([np.asarray(observations, dtype=np.float32), advice], axis=1)


def make_advisor(name: str, rules: Rules, level: dict[str, Any] | None = None) -> Any:
    """The advisor a network was trained with (None for ``"none"``): a rule-based agent with
    no tie-breaking jitter, so its advice is a pure function of the observation.

    ``level``: the bot's switches and numbers (its ``Level``) as saved with the network, so an
    agent keeps the advice it was trained with even after the bots are retuned (default:
    the level as the code has it now).
    """
    if name == "none":
        return None
    from agents.rule_based import Level, RuleBasedAgent

    try:
        spec = None if level is None else Level(**level)
    except TypeError:
        raise ValueError(
            f"advisor level {level!r} is not a Level; its fields are {[f.name for f in fields(Level)]}"
        ) from None
    return RuleBasedAgent(rules, name, seed=None, spec=spec)


def advisor_level(name: str, rules: Rules, saved: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The ``Level`` of the advisor ``name`` as a plain dict (what networks save): ``saved``
    once checked, else the level as the code has it now; None without an advisor.

    Raises:
        ValueError: ``saved`` is not a ``Level``.
    """
    advisor = make_advisor(name, rules, saved)
    return None if advisor is None else asdict(advisor.spec)


class NeuralAgent:
    """Plays the masked policy of a network: greedy (strongest) or sampled.

    Args:
        network: a ``mendikot_env.training.loop.Network``.
        rules: the rules it was trained for (its observation size must match, plus 53 with
            an advisor, which the agent appends itself).
        greedy: take the most likely legal action; otherwise sample.
        seed: seed of the sampling.
        device: torch device of the network.
        precision: "float32", or "bfloat16" to run the network under autocast (the training
            loop's snapshots do, when it trains so).
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
    ) -> None:
        import torch

        if precision not in PRECISIONS:
            raise ValueError(f"NeuralAgent precision {precision!r} is not allowed; choose one of {PRECISIONS}")
        self.network = network
        self.rules = rules
        self.greedy = greedy
        self.device = torch.device(device)
        self.name = name
        self.precision = precision
        self.generator = torch.Generator().manual_seed(0 if seed is None else check_seed(seed))
        self.advisor = make_advisor(getattr(network, "advisor", "none"), rules, getattr(network, "advisor_level", None))
        self.obs_size = observation_layout(rules).size  # before the advisor's one-hot

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
        """(B, 53) float32 masked logits of the network (illegal actions at the network's floor).

        Raises:
            ValueError: a batch :func:`agents.base.check_batch` refuses (before torch sees it).
        """
        import torch

        observations, legal = check_batch(observations, masks, self.obs_size, self.rules.n_players)
        if self.advisor is not None:
            observations = with_advice(self.advisor, observations, legal)
        with torch.no_grad(), precision_context(self.precision, self.device.type):
            obs = torch.from_numpy(np.ascontiguousarray(observations)).to(self.device)
            mask = torch.from_numpy(legal).to(self.device)
            logits, _ = self.network(obs, mask)
        return logits

    def seed(self, seed: int | None) -> None:
        self.generator.manual_seed(0 if seed is None else check_seed(seed))


def load_neural_agent(
    path: str | Path, greedy: bool = True, seed: int | None = None, device: Any = "cpu"
) -> NeuralAgent:
    """Load an agent from a run folder (its ``agent.pt``, else ``checkpoint.pt``) or a file.

    Raises:
        mendikot_env.training.checkpoint.CheckpointError: a missing, corrupt or foreign file.
    """
    import torch

    from mendikot_env.training.checkpoint import CheckpointError, load_checkpoint
    from mendikot_env.training.loop import build_network

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
