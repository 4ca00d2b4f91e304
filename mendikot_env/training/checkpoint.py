"""Checkpoints that survive a crash, and the one way a run resumes from them.

The format and its reader are :mod:`agents.checkpoint_format`, shared with the agents that
play the files. :class:`TrainingState` is what a checkpoint saves and a resume restores; a
checkpoint is written to a temporary file in the same folder, flushed to disk, then
renamed over the old one: a process killed mid-write leaves the previous checkpoint intact.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.checkpoint_format import FORMAT, VERSION, CheckpointError, load_checkpoint
from agents.network import Network, network_fields, playing_weights

from ..rules import Rules
from ..run_folder import TRAINING_RUN_FILES
from .args import Args, network_spec, playing_spec
from .atomic import remove_stale_temporaries, write_atomic
from .pool import bot_seeds, newest


def save_atomic(payload: dict[str, Any], path: str | Path) -> Path:
    """Write ``payload`` to ``path`` atomically (temporary file, fsync, rename), tagged with the format."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": VERSION, **payload}
    write_atomic(path, lambda file: torch.save(payload, file))
    return path


def fresh_counters() -> dict[str, Any]:
    """The counters of a run that has not trained yet (``COUNTERS``: a resume needs them all)."""
    return {"iteration": 0, "samples": 0, "hands": 0, "decisions": 0, "seconds": 0.0}


@dataclass
class TrainingState:
    """Everything of a run that changes as it trains: what a checkpoint saves and a resume restores."""

    network: Network
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator  # the deals and the seat assignment
    generator: torch.Generator  # the policy's sampling and the minibatch order
    seeded_agents: list[Any]  # the pool's bots and the teacher that have generators of their own
    counters: dict[str, Any] = field(default_factory=fresh_counters)
    snapshots: list[dict[str, torch.Tensor]] = field(default_factory=list)  # the pool's frozen learners

    def payload(self, rules: Rules, args: Args) -> dict[str, Any]:
        """The training checkpoint (``kind="training"``) of this state."""
        return {
            "kind": "training",
            "rules": rules.to_dict(),
            "network": network_spec(rules, args, self.network.advisor_level),
            "model": {k: v.cpu() for k, v in self.network.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "numpy_rng": self.rng.bit_generator.state,
            "torch_rng": self.generator.get_state(),
            "torch_global_rng": torch.get_rng_state(),
            "agent_rngs": [agent.rng.bit_generator.state for agent in self.seeded_agents],
            "counters": self.counters,
            "pool": self.snapshots,
            "args": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(args).items()},
        }

    def restore(self, saved: dict[str, Any], path: Path, args: Args) -> None:
        """Take over a checkpoint's weights, pool, optimiser, counters and generators. What does
        not fit (weights of another size, a damaged state) is a CheckpointError naming the file,
        not a RuntimeError half way through; the global generator is set last, as it always was."""
        try:
            self.network.load_state_dict(saved["model"])
            check_pool(saved["pool"], self.network)
            self.optimizer.load_state_dict(saved["optimizer"])
            self.rng.bit_generator.state = saved["numpy_rng"]
            self.generator.set_state(saved["torch_rng"])
            torch.set_rng_state(saved["torch_global_rng"])
        except (AttributeError, KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(f"{path} cannot resume this run: {one_line(error)}") from None
        self.counters = dict(saved["counters"])
        self.snapshots = newest(list(saved["pool"]), args.pool_snapshots)  # a resume may ask for fewer
        restore_agent_rngs(self.seeded_agents, saved, args, path)


def resume_state(
    path: Path, rules: Rules, args: Args, state: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Args]:
    """The checkpoint a resume continues, checked, and ``args`` with the run's own network.
    ``state`` is the checkpoint at ``path`` where the caller has loaded it already. The
    temporary files a kill inside an atomic write left in the run's folder are deleted."""
    state = load_checkpoint(path, kind="training") if state is None else state
    if state["rules"] != rules.to_dict():
        raise CheckpointError(f"{path} was trained on rules {state['rules']}, not {rules}")
    remove_stale_temporaries(path.parent, TRAINING_RUN_FILES)
    try:
        return state, _run_network_args(args, state["network"], path.parent)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{path} has an unusable network spec {state['network']}: {error}") from None


def _run_network_args(args: Args, saved: dict[str, Any], out: Path) -> Args:
    """``args`` with the network of the run being resumed (a run keeps its network; runs saved
    before the hidden-trump feature existed have none); warns when ``args`` asked otherwise."""
    network = {k: v for k, v in network_fields(saved).items() if k != "advisor_level"}  # Args fields only
    asked = {k: getattr(args, k) for k, v in network.items() if getattr(args, k) != v}
    if not asked:  # as the command line resumes: the run's own settings, no Args to build again
        return args
    warnings.warn(f"resuming {out}: the run keeps its network {saved}; ignoring {asked}", stacklevel=4)
    return replace(args, **network)


def init_network(args: Args, rules: Rules) -> tuple[Args, dict[str, torch.Tensor] | None, dict[str, Any] | None]:
    """A new run's start from ``args.init`` (a trained agent: ``trained``, a run folder or an
    agent file, checked to play ``rules``' hands): ``args`` with that network's layers,
    features and advisor and no warm start (the network is trained already: imitating the
    teacher would overwrite it), its weights (without a critic: a ``critic="state"`` run
    starts its critic fresh) and its advisor's level. Without ``init``: ``args`` as given and
    no weights."""
    if not args.init:
        return args, None, None
    from agents.neural import NeuralAgent
    from agents.registry import load

    try:
        agent = load(args.init, rules)
    except ValueError as error:
        raise ValueError(f"--init (Args.init) {args.init!r}: {error}") from None
    if not isinstance(agent, NeuralAgent):
        raise ValueError(f"--init (Args.init) {args.init!r} is not a trained network of mendikot train")
    if agent.views != 1:  # a run trains one network, not the mean of its suit views
        raise ValueError(f"--init (Args.init) {args.init!r}: views= is how a network plays; give the network alone")
    network = agent.network
    fields = {
        "hidden": torso_sizes(network),
        "card_hidden": network.from_planes.out_features,
        "hidden_trump_feature": network.hidden_trump_feature,
        "advisor": network.advisor,
        "imitate_iterations": 0,
    }
    return replace(args, **fields), playing_weights(network.state_dict()), network.advisor_level


def check_pool(pool: list[dict[str, torch.Tensor]], network: Network) -> None:
    """Each snapshot must fit the network that plays (without building one: that would draw
    from torch's global generator)."""
    shapes = {k: v.shape for k, v in network.playing_state_dict().items()}
    for i, snapshot in enumerate(pool):
        if {k: v.shape for k, v in playing_weights(snapshot).items()} != shapes:
            raise ValueError(f"pool snapshot {i} does not fit the run's network {network_shape(network)}")


def torso_sizes(network: Network) -> tuple[int, ...]:
    """The torso's layer sizes (``Args.hidden``)."""
    return tuple(layer.out_features for layer in network.torso if isinstance(layer, nn.Linear))


def network_shape(network: Network) -> str:
    """The torso's layer sizes, for messages."""
    return str(list(torso_sizes(network)))


def restore_agent_rngs(seeded_agents: list[Any], state: dict[str, Any], args: Args, path: Path) -> None:
    """The generators of the pool's and the teacher's bots, as the checkpoint left them.

    Runs saved before they were kept have none; a resume that changes the bots (another
    --pool-bots or --seed, a teacher added or another one) starts them afresh, with a
    warning; otherwise the checkpoint must hold one generator per bot (a CheckpointError
    names the file if not).
    """
    states = state.get("agent_rngs")
    if states is None:
        return
    saved = state["args"]
    now = bot_seeds(args.pool_bots, args.seed, args.teacher, args.advisor, args.imitate_iterations)
    try:  # runs saved before the advisor existed had none
        keys = (saved["pool_bots"], saved["seed"], saved["teacher"], saved.get("advisor", "none"))
        before = bot_seeds(*keys, saved["imitate_iterations"])
    except (KeyError, TypeError, ValueError):  # settings this package could not use: not the same bots
        before = None
    if before != now:
        shown = [bot for bot in now if bot is not None]
        warnings.warn(
            f"resuming {path.parent} with other bots (now {shown}, as (name, seed)): they start afresh", stacklevel=4
        )
        return
    problem = ""
    if not isinstance(states, list) or len(states) != len(seeded_agents):
        count = len(states) if isinstance(states, list) else type(states).__name__
        problem = f"agent_rngs holds {count} generators for {len(seeded_agents)} bots"
    else:
        try:
            for agent, bit_state in zip(seeded_agents, states, strict=True):
                agent.rng.bit_generator.state = bit_state
        except (KeyError, TypeError, ValueError) as error:
            problem = f"bad agent_rngs ({one_line(error)})"
    if problem:
        raise CheckpointError(f"{path} cannot resume this run: {problem}")


def one_line(error: BaseException, limit: int = 400) -> str:
    """An error message on one line, cut to ``limit`` characters (torch's size mismatches
    list every layer on a line of its own)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def export_agent(network: Network, rules: Rules, args: Args, path: Path) -> Path:
    """The small file users play with: weights, rules and shape only (no optimiser, no pool)."""
    payload = {
        "kind": "agent",
        "rules": rules.to_dict(),
        # After a centralised-critic run the file's own value head was never trained.
        "network": {
            **playing_spec(rules, args, network.advisor_level),
            "value_head_trained": args.critic != "state" or args.algorithm == "exit",
        },
        "model": {k: v.detach().cpu().half() for k, v in network.playing_state_dict().items()},
    }
    return save_atomic(payload, path)
