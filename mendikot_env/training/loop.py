"""Self-play training for Mendikot in one file (CleanRL style): masked PPO or Deep Monte-Carlo.

Read it top to bottom: the settings (``Args``, in ``args.py`` so that the ``mendikot``
command lists the options without importing torch; every field says why), the network
(:mod:`agents.network`, shared with the agents that play it) and how it acts, then one
linear loop in :func:`train`:

1. collect full hands on the batched core (every learner decision is a sample, one network
   shared by every seat, illegal actions masked out, a share of the games against the
   opponent pool; during the warm start the teacher plays every seat);
2. advantages along each seat's own decisions (computed as the hands end, ``seat_gae``),
   normalised over the batch;
3. update: one loss per minibatch (the clipped PPO objective; for DMC a regression of the
   chosen action's value on the hand's result; during the warm start imitation of the
   teacher) and one optimizer step;
4. log (``charts/``, ``losses/`` and ``eval/`` keys), grow the opponent pool;
5. evaluate in the duplicate arena and checkpoint, atomically, every few minutes.

A resume loads the checkpoint into the same state a new run starts from, then runs the same
loop. Plumbing lives beside this file: ``selfplay.py`` (experience), ``pool.py`` (the
opponents), ``checkpoint.py`` (files and resume), ``metrics.py`` (CSV, TensorBoard, plot),
``evaluate.py`` (arena runs).

Run it with ``mendikot train --rules standard --minutes 60 --out runs/NAME``.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.advice import make_advisor, with_advice
from agents.network import Network, build_network, playing_weights
from agents.network_options import precision_context

from ..observation import ObservationEncoder
from ..rules import Rules
from ..run_folder import TRAINING_RUN_FILES, prepare_run_folder
from .args import (
    NATIVE_BFLOAT16_FLAGS,
    Args,
    busy_cores_warning,
    check_device,
    cpu_has_native_bfloat16,
    network_spec,
    playing_spec,
)
from .checkpoint import TrainingState, export_agent, init_network, resume_state, save_atomic
from .evaluate import evaluate_against
from .metrics import MetricsLog
from .pool import (
    check_eval_opponents,
    duplicated_opponents,
    grow_pool,
    make_pool_bots_and_teacher,
    option_agent,
    pool_weights,
    snapshot_agent,
)
from .selfplay import CollectConfig, CollectStats, Policy, Samples, collect_hands

__all__ = [  # what the command, the bench and notebooks take from here
    "Args",
    "Network",
    "TrainingDivergedError",
    "arithmetic",
    "build_network",
    "export_agent",
    "learning_rate",
    "make_policy",
    "option_agent",
    "network_spec",
    "playing_spec",
    "playing_weights",
    "pool_weights",
    "snapshot_agent",
    "train",
]

LOSSES = ("policy", "value", "entropy", "approx_kl", "clip_fraction")  # logged as losses/NAME


# ------------------------------------------------------------------------ the network acting


def arithmetic(args: Args, device: torch.device) -> contextlib.AbstractContextManager:
    """The context the network runs in while training: plain float32, or with
    ``precision="bfloat16"`` autocast (float32 weights, bfloat16 matrix products)."""
    return precision_context(args.precision, device.type)


def make_policy(network: Network, device: torch.device, generator: torch.Generator, args: Args) -> Policy:
    """The acting function for collection: PPO samples its policy; DMC is epsilon-greedy on Q."""

    @torch.no_grad()
    def policy(
        observations: np.ndarray, masks: np.ndarray, hidden_cards: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        obs = torch.from_numpy(observations).to(device)
        mask = torch.from_numpy(masks).to(device)
        with arithmetic(args, device):
            logits, values = network(obs, mask)
            if hidden_cards is not None:
                values = network.critic_value(obs, torch.from_numpy(hidden_cards).to(device))
        if args.algorithm == "dmc":
            explore = torch.rand(len(obs), generator=generator) < args.epsilon
            uniform = mask.cpu().float()
            greedy = logits.argmax(-1).cpu()
            random = torch.multinomial(uniform, 1, generator=generator).squeeze(-1)
            actions = torch.where(explore, random, greedy)
            return actions.numpy(), np.zeros(len(obs), np.float32), np.zeros(len(obs), np.float32)
        probs = torch.softmax(logits, dim=-1)
        actions = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(-1)
        log_probs = torch.log_softmax(logits, dim=-1).cpu().gather(1, actions[:, None]).squeeze(-1)
        return actions.numpy(), log_probs.numpy(), values.cpu().numpy()

    return policy


def teacher_policy(teacher: Any, obs_size: int) -> Policy:
    """The warm start's acting function: the teacher's moves (on the observation without the
    advice, if any), with no log-probabilities or values."""

    def policy(
        observations: np.ndarray, masks: np.ndarray, hidden_cards: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)
        return np.asarray(teacher.act(observations[:, :obs_size], masks), dtype=np.int64), zeros, zeros

    return policy


# ------------------------------------------------------------------------ the loop


def train(args: Args, resume: bool = False, overwrite: bool = False, checkpoint: dict[str, Any] | None = None) -> Path:
    """Run (or resume) a training run.

    Args:
        args: the run's settings (on a resume, the run keeps its own network).
        resume: continue the run in ``args.out`` exactly, from its checkpoint.
        overwrite: a new run in a folder that already holds one deletes that run's files
            first (otherwise ``RunFolderInUseError``, a ValueError).
        checkpoint: on a resume, the run's checkpoint as ``load_checkpoint`` returned it, where
            the caller has read it already (the command reads the run's settings from it).

    Returns:
        The run folder (``checkpoint.pt``, ``agent.pt``, metrics, learning curve).
    """
    out = Path(args.out)
    rules, device = start_checks(args, resume, overwrite)
    saved = None
    if resume:  # the run's own checkpoint and network; the bots below are made as its settings say
        saved, args = resume_state(out / "checkpoint.pt", rules, args, checkpoint)
    args, weights, level = start_network(args, rules, saved)  # --init's network, before the bots: no warm start
    bots, teacher = make_pool_bots_and_teacher(args, rules)  # a bad name fails before --overwrite deletes
    if saved is None:
        prepare_new_run_folder(out, overwrite)
    set_threads(args, device)
    encoder = ObservationEncoder(rules)
    run = initial_state(rules, args, device, [*bots, teacher], level, weights)
    if saved is not None:  # the one resume path: the checkpoint's state, then the same loop
        run.restore(saved, out / "checkpoint.pt", args)
    network, counters = run.network, run.counters
    log = MetricsLog(out, resume=resume, counters=counters)
    policy = make_policy(network, device, run.generator, args)
    imitate = teacher_policy(teacher, encoder.size)
    advisor = make_advisor(network.advisor, rules, network.advisor_level)
    advise = None if advisor is None else lambda obs, masks: with_advice(advisor, obs, masks)
    budget = args.minutes * 60.0
    session_start = time.perf_counter() - counters["seconds"]
    last_checkpoint = last_eval = time.perf_counter()
    bar = log.progress_bar(budget, counters["seconds"], enabled=args.progress)
    while True:
        counters["seconds"] = time.perf_counter() - session_start
        if counters["seconds"] >= budget or (args.max_iterations and counters["iteration"] >= args.max_iterations):
            break

        # 1. Experience: full hands on the batched core (the teacher plays them in the warm start).
        imitating = counters["iteration"] < args.imitate_iterations
        for group in run.optimizer.param_groups:
            group["lr"] = learning_rate(args, counters)
        opponents = [] if imitating else opponent_pool(bots, run.snapshots, rules, args, device, network)
        pool_size = len(bots) + len(run.snapshots)  # the pool as this iteration drew from it
        config = collect_config(args, len(bots), len(opponents), advise)
        network.eval()
        samples, stats = collect_hands(rules, imitate if imitating else policy, opponents, run.rng, encoder, config)

        # 2. Advantages, normalised over the batch; 3. the update.
        batch = Batch.of(samples, device)
        update_start = time.perf_counter()
        losses = update(network, run.optimizer, batch, args, run.generator, imitating)
        update_seconds = time.perf_counter() - update_start
        check_finite_weights(network, counters["iteration"] + 1, out)  # before a checkpoint could keep them

        # 4. Bookkeeping, logging, the opponent pool.
        count(counters, len(samples), stats, time.perf_counter() - session_start)
        if counters["iteration"] % args.snapshot_every == 0:
            run.snapshots = grow_pool(run.snapshots, network, args.pool_snapshots)
        row = metrics_row(stats, losses, update_seconds, imitating, run.optimizer.param_groups[0]["lr"], pool_size)
        log.write(counters, row)
        bar.update_to(counters["seconds"], row["charts/samples_per_s"], counters["iteration"])

        # 5. Evaluation in the duplicate arena, then an atomic checkpoint.
        now = time.perf_counter()
        if now - last_eval >= args.eval_every_minutes * 60.0:
            last_eval = now
            network.eval()
            log.write(counters, evaluate_against(network, rules, args.eval_opponents, args.eval_deals, device))
        if now - last_checkpoint >= args.checkpoint_every_minutes * 60.0:
            last_checkpoint = now
            save_atomic(run.payload(rules, args), out / "checkpoint.pt")
    bar.close()
    finish(run, log, rules, args, device, out)
    return out


# ------------------------------------------------------------------------ the loop's steps


def start_checks(
    args: Args, resume: bool, overwrite: bool, algorithms: tuple[str, ...] = ("ppo", "dmc")
) -> tuple[Rules, torch.device]:
    """The run's rules and device, once the settings that only a run can check are good
    (``algorithms``: those the calling trainer runs)."""
    if args.algorithm not in algorithms:
        raise ValueError(
            f"Args.algorithm {args.algorithm!r} is not trained here: ppo and dmc train with "
            "mendikot_env.training.loop.train, exit with mendikot_env.training.exit.train (mendikot train picks)"
        )
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other: a resume continues the run in its folder")
    rules = args.resolved_rules()
    check_device(args.device)
    check_eval_opponents(args, rules)
    return rules, torch.device(args.device)


def start_network(
    args: Args, rules: Rules, saved: dict[str, Any] | None
) -> tuple[Args, dict[str, torch.Tensor] | None, dict[str, Any] | None]:
    """``args``, the starting weights and the advisor's level of a run: on a resume the
    checkpoint's (its advisor kept; :meth:`TrainingState.restore` sets the weights), else
    ``--init``'s network (:func:`init_network`)."""
    if saved is not None:
        return args, None, saved["network"].get("advisor_level")
    return init_network(args, rules)


def prepare_new_run_folder(out: Path, overwrite: bool) -> None:
    """The folder of a new run, refused when it holds another run unless ``overwrite``."""
    resumable = (out / "checkpoint.pt").is_file()  # a run stopped before its first checkpoint is not
    hint = f"`mendikot train --resume {out}`" if resumable else None
    prepare_run_folder(out, TRAINING_RUN_FILES, overwrite, resume_hint=hint)


def finish(run: TrainingState, log: MetricsLog, rules: Rules, args: Args, device: torch.device, out: Path) -> None:
    """The end of a run: a last evaluation and checkpoint, the agent file, the CSV and the plot."""
    run.network.eval()
    log.write(run.counters, evaluate_against(run.network, rules, args.eval_opponents, args.eval_deals, device))
    save_atomic(run.payload(rules, args), out / "checkpoint.pt")
    export_agent(run.network, rules, args, out / "agent.pt")
    log.close()
    log.plot(out / "learning_curve.png")


def set_threads(args: Args, device: torch.device) -> None:
    """Torch's CPU threads as asked, with a warning where they or bfloat16 would run slowly."""
    if args.threads:
        torch.set_num_threads(args.threads)
    elif device.type == "cpu" and (busy := busy_cores_warning(torch.get_num_threads())):
        warnings.warn(busy, stacklevel=3)
    if args.precision == "bfloat16" and device.type == "cpu" and cpu_has_native_bfloat16() is False:
        warnings.warn(
            f"--precision bfloat16 on a CPU without any of {', '.join(NATIVE_BFLOAT16_FLAGS)}: bfloat16 is "
            "emulated and the update runs several times slower than in float32; use --precision float32 here",
            stacklevel=3,
        )


def initial_state(
    rules: Rules,
    args: Args,
    device: torch.device,
    bots: list[Any],
    advisor_level: dict[str, Any] | None,
    weights: dict[str, torch.Tensor] | None = None,
) -> TrainingState:
    """A run's state before its first iteration, seeded by ``args.seed``: the network's initial
    weights (``weights`` where given, as ``init_network`` read them; with the advisor's saved
    ``Level`` on a resume or an init), Adam, and the generators."""
    torch.manual_seed(args.seed)  # the network's initial weights
    network = build_network(rules, network_spec(rules, args, advisor_level)).to(device)
    if weights is not None:  # Args.init's network (a critic="state" run's critic stays fresh)
        network.load_state_dict(weights, strict=False)
    return TrainingState(
        network=network,
        optimizer=torch.optim.Adam(network.parameters(), lr=args.learning_rate, eps=1e-5),
        rng=np.random.default_rng(args.seed),
        generator=torch.Generator().manual_seed(args.seed),
        seeded_agents=[agent for agent in bots if getattr(agent, "rng", None) is not None],
    )


def count(counters: dict[str, Any], samples: int, stats: CollectStats, seconds: float) -> None:
    """Add an iteration to the run's counters (what the log's rows and the checkpoints carry)."""
    counters["iteration"] += 1
    counters["samples"] += samples
    counters["hands"] += stats.hands
    counters["decisions"] += stats.all_decisions
    counters["seconds"] = seconds


def learning_rate(args: Args, counters: dict[str, Any]) -> float:
    """The step size for the next iteration: constant, or with ``anneal_lr`` the share of the
    run still to come (iterations when ``max_iterations`` is set, so a schedule is
    reproducible; else seconds of the ``minutes`` budget) times the initial one."""
    if not args.anneal_lr:
        return args.learning_rate
    if args.max_iterations:
        done = counters["iteration"] / args.max_iterations
    else:
        done = counters["seconds"] / (args.minutes * 60.0)
    return args.learning_rate * max(0.0, 1.0 - done)


def opponent_pool(
    bots: list[Any],
    snapshots: list[dict[str, torch.Tensor]],
    rules: Rules,
    args: Args,
    device: torch.device,
    network: Network,
) -> list[Any]:
    """The pool's opponents for this iteration: the bots, then an agent for each snapshot."""
    return bots + [snapshot_agent(weights, rules, args, device, network.advisor_level) for weights in snapshots]


def collect_config(args: Args, n_bots: int, n_opponents: int, advise: Any) -> CollectConfig:
    """How this iteration's hands are played: against the pool (bots first, then snapshots), or
    with no opponent during the warm start (``n_opponents`` 0: the teacher plays every seat)."""
    return CollectConfig(
        games=args.games,
        pool_share=args.pool_share,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        tens_reward=args.tens_reward,
        opponent_weights=pool_weights(n_bots, n_opponents - n_bots, args.pool_bot_share) if n_opponents else None,
        duplicate=duplicated_opponents(args, n_bots, n_opponents) if n_opponents else 0,
        centralised=args.critic == "state",  # the value sees every hand (training only)
        advise=advise,
        skip_forced=args.skip_forced,
    )


@dataclass
class Batch:
    """One collection's samples as tensors on the device, advantages normalised over the batch."""

    observations: torch.Tensor  # (N, D) float32 network input
    masks: torch.Tensor  # (N, 53) bool
    actions: torch.Tensor  # (N,) int64
    old_log_probs: torch.Tensor  # (N,) float32: under the policy that collected
    advantages: torch.Tensor  # (N,) float32: GAE, mean 0 and standard deviation 1
    returns: torch.Tensor  # (N,) float32: the value target
    outcomes: torch.Tensor  # (N,) float32: Monte-Carlo return (imitation's value, DMC's Q target)
    hidden_cards: torch.Tensor | None  # (N, (n + 1) * 52) float32, for a centralised critic only

    @classmethod
    def of(cls, samples: Samples, device: torch.device) -> Batch:
        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array).to(device)

        advantages = tensor(samples.advantages)
        return cls(
            observations=tensor(samples.observations),
            masks=tensor(samples.masks),
            actions=tensor(samples.actions),
            old_log_probs=tensor(samples.log_probs),
            advantages=(advantages - advantages.mean()) / (advantages.std() + 1e-8),
            returns=tensor(samples.returns),
            outcomes=tensor(samples.outcomes),
            hidden_cards=None if samples.hidden_cards is None else tensor(samples.hidden_cards),
        )

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def update(
    network: Network,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    args: Args,
    generator: torch.Generator,
    imitating: bool,
) -> dict[str, float]:
    """``args.epochs`` passes over the batch in shuffled minibatches, one optimizer step each;
    returns the mean of each loss term over the minibatches (0 for terms a phase has not)."""
    network.train()
    totals = dict.fromkeys(LOSSES, 0.0)
    n_minibatches = 0
    for _ in range(args.epochs):
        order = torch.randperm(len(batch), generator=generator).to(batch.actions.device)
        for start in range(0, len(batch), args.minibatch):
            loss, terms = minibatch_loss(network, batch, order[start : start + args.minibatch], args, imitating)
            optimizer_step(network, optimizer, loss, args.max_grad_norm)
            for name, value in terms.items():
                totals[name] += value
            n_minibatches += 1
    return {name: total / max(n_minibatches, 1) for name, total in totals.items()}


def optimizer_step(network: Network, optimizer: torch.optim.Optimizer, loss: torch.Tensor, max_norm: float) -> None:
    """The one gradient step: backward, clip the gradient's norm, Adam."""
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(network.parameters(), max_norm)
    optimizer.step()


def minibatch_loss(
    network: Network, batch: Batch, idx: torch.Tensor, args: Args, imitating: bool
) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of one minibatch and its logged terms: imitation of the teacher in the warm
    start, else DMC's regression of Q(s, a) or the clipped PPO objective."""
    with arithmetic(args, batch.actions.device):
        logits, values = network(batch.observations[idx], batch.masks[idx])
        if batch.hidden_cards is not None:
            values = network.critic_value(batch.observations[idx], batch.hidden_cards[idx])
    actions = batch.actions[idx]
    if imitating:  # warm start: copy the teacher's choices; the value head learns the results
        policy_loss = nn.functional.cross_entropy(logits, actions)
        value_loss = 0.5 * ((values - batch.outcomes[idx]) ** 2).mean()
        return policy_loss + args.value_coef * value_loss, {"policy": policy_loss.item(), "value": value_loss.item()}
    if args.algorithm == "dmc":  # Deep Monte-Carlo: Q of the chosen action regresses on the hand's result
        chosen_q = logits.gather(1, actions[:, None]).squeeze(-1)
        value_loss = ((chosen_q - batch.outcomes[idx]) ** 2).mean()
        return value_loss, {"value": value_loss.item()}
    log_probs_all = torch.log_softmax(logits, dim=-1)
    ratio = torch.exp(log_probs_all.gather(1, actions[:, None]).squeeze(-1) - batch.old_log_probs[idx])
    adv = batch.advantages[idx]
    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
    value_loss = 0.5 * ((values - batch.returns[idx]) ** 2).mean()
    entropy = -(log_probs_all.exp() * log_probs_all.masked_fill(~batch.masks[idx], 0.0)).sum(-1).mean()
    loss = policy_loss + args.value_coef * value_loss - args.entropy_coef * entropy
    with torch.no_grad():
        terms = {
            "policy": policy_loss.item(),
            "value": value_loss.item(),
            "entropy": entropy.item(),
            "approx_kl": ((ratio - 1) - torch.log(ratio)).mean().item(),
            "clip_fraction": ((ratio - 1).abs() > args.clip).float().mean().item(),
        }
    return loss, terms


def metrics_row(
    stats: CollectStats, losses: dict[str, float], update_seconds: float, imitating: bool, lr: float, pool_size: int
) -> dict[str, float]:
    """One iteration's log row: ``charts/`` (speed, pool, schedule) and ``losses/``."""
    return {
        "charts/samples_per_s": stats.decisions / stats.seconds_total,
        "charts/forced_share": stats.forced / max(stats.forced + stats.decisions, 1),
        "charts/decisions_per_s": stats.all_decisions / stats.seconds_total,
        "charts/share_core": stats.seconds_core / stats.seconds_total,
        "charts/share_encoder": stats.seconds_encoder / stats.seconds_total,
        "charts/share_network": stats.seconds_network / stats.seconds_total,
        "charts/share_opponents": stats.seconds_opponents / stats.seconds_total,
        "charts/update_seconds": update_seconds,
        "charts/win_rate_vs_pool": stats.learner_wins,
        "charts/imitating": float(imitating),
        "charts/learning_rate": lr,
        "charts/pool_size": pool_size,
        **{f"losses/{name}": value for name, value in losses.items()},
    }


class TrainingDivergedError(ValueError):
    """An update left NaN or infinite weights. A ValueError: settings cause it (a step size
    or loss weight too large), and the command prints it as one line, not a traceback."""


def check_finite_weights(network: Network, iteration: int, out: Path) -> None:
    """Stop the run when the weights stopped being numbers, before the next collection fails
    on them inside torch or a checkpoint replaces the last good one with them."""
    if all(bool(torch.isfinite(p).all()) for p in network.parameters()):
        return
    raise TrainingDivergedError(
        f"training diverged in iteration {iteration}: the update left NaN or infinite weights; lower "
        f"--learning-rate (or --value-coef, --entropy-coef, --tens-reward). {out / 'checkpoint.pt'} is "
        "left as it was (if the run wrote one), without these weights"
    )
