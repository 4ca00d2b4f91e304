"""Expert iteration for Mendikot in one file (CleanRL style): the network learns the search.

The search (:class:`agents.search.SearchAgent`: sampled deals, every legal move played out)
plays better than any policy it rolls out with; the network learns to play like it at the
cost of one forward pass; a search that rolls out with that network improves again (Anthony
et al. 2017, "Thinking fast and slow"; AlphaZero). Three pieces, kept apart: the search, the
data it writes (:mod:`mendikot_env.training.search_targets`: every decision's observation,
mask, the search's value of every legal move and the hand's outcome), and the fit. The loop
in :func:`train` alternates them, one generation per iteration:

1. generate: ``exit_hands`` hands of search self-play, every decision labelled, written as
   shards under ``targets/gen-NNNNNN`` (from the second generation on, with
   ``exit_network_rollout`` the search rolls out with the current network, with
   ``exit_network_leaf`` its rollouts end at the network's value; with ``exit_mover
   "network"`` the network plays the hands and the search only labels them, so the fit sees
   the decisions the network meets, as DAgger gathers them; with ``exit_hands`` 0 there is
   no search, and the network fits the saved targets of ``exit_targets`` alone);
2. fit the network to the last ``exit_window`` generations' targets, and those of
   ``exit_targets`` (other runs' labels, read once at the start): the policy head by
   cross-entropy to the softmax of the search's move values at ``exit_temperature``, or with
   ``exit_target "gated"`` to the move the search plays (legal moves only; forced decisions
   have no policy target), the value head by squared error to
   the hand's outcome for the mover's team (points, as the search counts them);
3. log (the PPO trainer's ``charts/`` and ``losses/`` keys that apply, plus
   ``charts/labelled_per_s``), evaluate in the duplicate arena against ``eval_opponents``
   and the previous generation (``eval/win_rate_vs_previous``), checkpoint atomically.

A checkpoint is written after every generation; a resume continues from the last one, and
the targets of a generation cut short are kept shard by shard and reused (each shard is a
pure function of the seed, the generation and the network), so a resumed run ends with the
same weights as one never stopped. The settings are the trainer's ``Args`` (the ``exit_``
fields, and ``epochs``, ``minibatch``, ``learning_rate``, ``value_coef``,
``max_grad_norm``, ``eval_deals``, ``eval_opponents``, ``max_iterations`` as the number of
generations, ``minutes``).

Run it with ``mendikot train --algorithm exit --minutes 60 --out runs/exit``.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.advice import make_advisor, with_advice
from agents.base import Agent
from agents.neural import NeuralAgent
from agents.registry import make
from agents.search import parse_search_spec
from agents.suit_symmetry import SuitSymmetry

from .. import core
from ..observation import ObservationEncoder, hidden_planes, observation_layout
from ..rules import Rules
from ..run_folder import TRAINING_RUN_FILES, prepare_run_folder
from ..seeding import SEED_MAX
from .args import Args
from .checkpoint import TrainingState, export_agent, resume_state, save_atomic
from .evaluate import evaluate_against
from .loop import (
    check_finite_weights,
    initial_state,
    learning_rate,
    optimizer_step,
    set_threads,
    start_checks,
    start_network,
)
from .metrics import MetricsLog
from .search_targets import (
    TargetsError,
    TargetStats,
    check_manifest,
    generate_targets,
    read_shard,
    shard_files,
    target_folders,
)

EXIT_RUN_FILES = (*TRAINING_RUN_FILES, "targets")  # what --overwrite deletes
LOSSES = ("policy", "value", "critic", "kl")  # logged as losses/NAME (critic: critic="state"; kl: exit_kl)


# ------------------------------------------------------------------------ the loop


def train(args: Args, resume: bool = False, overwrite: bool = False, checkpoint: dict[str, Any] | None = None) -> Path:
    """Run (or resume) an expert-iteration run (``args.algorithm == "exit"``).

    Args:
        args: the run's settings (on a resume, the run keeps its own network).
        resume: continue the run in ``args.out`` exactly, from its checkpoint.
        overwrite: a new run in a folder that already holds one deletes that run's files first.
        checkpoint: on a resume, the run's checkpoint as ``load_checkpoint`` returned it.

    Returns:
        The run folder (``checkpoint.pt``, ``agent.pt``, ``targets/``, metrics, learning curve).
    """
    out = Path(args.out)
    rules, device = start_checks(args, resume, overwrite, algorithms=("exit",))
    parse_search_spec(args.exit_search)  # a bad spec fails before any work, naming the value
    saved = None
    if resume:
        saved, args = resume_state(out / "checkpoint.pt", rules, args, checkpoint)
    args, weights, level = start_network(args, rules, saved)  # a bad --init fails before --overwrite deletes
    advisor = make_advisor(args.advisor, rules, level)  # its move is part of the network's input
    kept, identity = saved_targets(args, rules, advisor)  # so do bad --exit-targets
    if saved is not None and saved.get("saved_targets", []) != identity:
        raise TargetsError(
            f"--exit-targets hold {identity} (run id, shards, decisions of each folder), the run was fitted to "
            f"{saved.get('saved_targets', [])}: a resume fits the same targets; give those, or start a new run"
        )
    if saved is None:
        hint = f"`mendikot train --resume {out}`" if (out / "checkpoint.pt").is_file() else None
        prepare_run_folder(out, EXIT_RUN_FILES, overwrite, resume_hint=hint)
    set_threads(args, device)
    run = initial_state(rules, args, device, [], level, weights)
    if saved is not None:
        run.restore(saved, out / "checkpoint.pt", args)
    network, counters = run.network, run.counters
    reference = None
    if args.exit_kl:  # the policy the penalty keeps near: the run's first, kept as its pool in every checkpoint
        first = saved["pool"][0] if saved is not None and saved["pool"] else network.playing_state_dict()
        run.snapshots = [{k: v.detach().cpu().clone() for k, v in first.items()}]
        reference = frozen_network(run.snapshots[0], network, device)
    relabelled = args.exit_suit_symmetry or args.exit_kl_views
    relabellings = SuitSymmetry(rules, network.advisor != "none", device) if relabelled else None
    symmetry = relabellings if args.exit_suit_symmetry else None
    views = relabellings if args.exit_kl_views else None
    log = MetricsLog(out, resume=resume, counters=counters)
    budget = args.minutes * 60.0
    batch = None
    session_start = time.perf_counter() - counters["seconds"]
    while True:
        counters["seconds"] = time.perf_counter() - session_start
        if counters["seconds"] >= budget or (args.max_iterations and counters["iteration"] >= args.max_iterations):
            break
        generation = counters["iteration"] + 1
        previous = frozen_agent(network, rules, device)  # the network before this generation's fit

        # 1. Targets: search self-play, every decision labelled, in resumable shards.
        network.eval()
        stats = generate(out, rules, args, network, device, generation) if args.exit_hands else TargetStats()

        # 2. Fit the network to the window's targets and the saved ones.
        if batch is None or args.exit_hands:  # saved targets alone do not change: one batch for the run
            batch = TargetBatch.of(out, rules, args, generation, device, advisor, kept).with_reference(reference, views)
            kept = kept if args.exit_hands else None  # the batch holds them now
        for group in run.optimizer.param_groups:
            group["lr"] = learning_rate(args, counters)
        update_start = time.perf_counter()
        losses = fit(network, run.optimizer, batch, args, run.generator, reference, symmetry)
        update_seconds = time.perf_counter() - update_start
        check_finite_weights(network, generation, out)

        # 3. Log, evaluate against the opponents and the previous generation, checkpoint.
        count(counters, stats, args.exit_hands, time.perf_counter() - session_start, None if args.exit_hands else batch)
        network.eval()
        row = metrics_row(stats, losses, update_seconds, run.optimizer.param_groups[0]["lr"], batch, network)
        others = {"previous": previous}
        row |= evaluate_against(network, rules, args.eval_opponents, args.eval_deals, device, others)
        log.write(counters, row)
        save_atomic(run.payload(rules, args) | {"saved_targets": identity}, out / "checkpoint.pt")
    finish(run, log, rules, args, out, identity)
    return out


# ------------------------------------------------------------------------ the loop's steps


def generate(
    out: Path, rules: Rules, args: Args, network: nn.Module, device: torch.device, generation: int
) -> TargetStats:
    """This generation's targets under ``out/targets`` (the shards already there are kept)."""
    seeds = np.random.SeedSequence([args.seed, generation]).generate_state(2, dtype=np.uint64) % SEED_MAX
    search = make(args.exit_search, rules, seed=int(seeds[0]))
    if uses_network(args, generation):
        learner = NeuralAgent(network, rules, greedy=True, device=device, name="network")
        rollout = learner if args.exit_network_rollout else search.rollout
        leaf = search.leaf
        if args.exit_network_leaf:  # the critic on the sampled deal's hands, else the value head
            leaf = critic_leaf(network, rules) if args.critic == "state" else learner.state_values
        named = f"{args.exit_search} (network of generation {generation - 1})"
        search = search.with_rollout(rollout, leaf, named, seed=int(seeds[0]))
    shards = -(-args.exit_hands // args.exit_shard_hands)
    mover = None  # the search plays the move it chooses
    if args.exit_mover == "network":
        mover = NeuralAgent(network, rules, greedy=True, device=device, name="network")
    return generate_targets(
        target_folder(out, generation),
        rules,
        search,
        run_id=run_id(args, network, generation),
        shards=shards,
        hands_per_shard=args.exit_shard_hands,
        seed=int(seeds[1]),
        mover=mover,
    )


def critic_leaf(network: nn.Module, rules: Rules) -> Callable[[core.State], np.ndarray]:
    """A search's leaf value from the centralised critic: the outcome for team 0 of each game of
    a state, read from the seat to move's observation plus every hand of the (sampled) deal."""
    encoder = ObservationEncoder(rules)
    advisor = make_advisor(network.advisor, rules, network.advisor_level)

    @torch.no_grad()
    def leaf(state: core.State) -> np.ndarray:
        device = next(network.parameters()).device
        observations = encoder.encode(state, state.current)
        if advisor is not None:
            observations = with_advice(advisor, observations, core.legal_action_mask(state))
        obs = torch.from_numpy(observations).to(device)
        hidden = torch.from_numpy(hidden_planes(state, state.current)).to(device)
        return np.where(state.current % 2 == 0, 1.0, -1.0) * network.critic_value(obs, hidden).cpu().numpy()

    return leaf


def target_folder(out: Path, generation: int) -> Path:
    return out / "targets" / f"gen-{generation:06d}"


def run_id(args: Args, network: nn.Module, generation: int) -> str:
    """Names what a generation's shards depend on: the seed, the generation, the search and
    the network that rolls out (a digest of its weights), so a folder made otherwise is refused."""
    digest = hashlib.sha256()
    for tensor in network.state_dict().values():
        digest.update(tensor.detach().cpu().numpy().tobytes())
    uses = f"rollout {args.exit_network_rollout} leaf {args.exit_network_leaf}"
    rollout = f"network {digest.hexdigest()[:16]} ({uses})" if uses_network(args, generation) else "spec"
    named = f"exit seed {args.seed} generation {generation} {args.exit_search} rollout {rollout}"
    return named if args.exit_mover == "search" else f"{named} mover network {digest.hexdigest()[:16]}"


def uses_network(args: Args, generation: int) -> bool:
    """Whether this generation's search plays out with the network (the first one has learnt nothing yet)."""
    return (args.exit_network_rollout or args.exit_network_leaf) and generation > 1


@dataclass
class TargetBatch:
    """The window's targets as tensors on the device (or one minibatch of them, :func:`minibatch`)."""

    observations: torch.Tensor  # (N, D) float16: the network's input (the plain observation, then any advice)
    masks: torch.Tensor  # (N, 53) bool
    policy: torch.Tensor  # (N, 53) float32: the policy target (Args.exit_target), 0 where illegal
    searched: torch.Tensor  # (N,) bool: a decision the search valued (two or more legal moves)
    outcomes: torch.Tensor  # (N,) float32: the hand's outcome for the mover's team
    hidden: torch.Tensor | None  # (N, (n + 1) * 52) bool: every hand, for a centralised critic only
    reference: torch.Tensor | None = None  # (N, 53) float32: the KL penalty's suit-averaged policy (with_reference)

    @classmethod
    def of(
        cls,
        out: Path,
        rules: Rules,
        args: Args,
        generation: int,
        device: torch.device,
        advisor: Agent | None = None,
        kept: dict[str, np.ndarray] | None = None,
    ) -> TargetBatch:
        """The targets of the window ending at ``generation`` (none with ``exit_hands`` 0) and
        the ``kept`` ones (:func:`saved_targets`, read with the same ``advisor``)."""
        first = max(1, generation - args.exit_window + 1)
        own = range(first, generation + 1) if args.exit_hands else range(0)
        parts: list[dict[str, np.ndarray]] = []
        for g in own:
            folder = target_folder(out, g)
            parts += fit_parts(folder, check_manifest(folder, rules)["version"], rules, args, advisor)
        data = joined(parts + ([kept] if kept is not None else []))
        observations = data.pop("observations")
        values = torch.from_numpy(data["values"])
        searched = torch.isfinite(values).any(dim=1)
        if args.exit_target == "gated":
            if "chosen" not in data:
                raise TargetsError(
                    f"--exit-target gated needs the moves the search chose, which the targets of generations "
                    f"{first} to {generation} under {out / 'targets'} (format version 1) do not hold"
                )
            policy = gated_policy(data, searched.numpy())
        else:
            logits = torch.nan_to_num(values / args.exit_temperature, nan=-torch.inf)
            policy = torch.where(searched[:, None], torch.softmax(logits, dim=1), 0.0).nan_to_num(0.0)
        return cls(
            observations=torch.from_numpy(observations.astype(np.float16, copy=False)).to(device),
            masks=torch.from_numpy(data["masks"]).to(device),
            policy=policy.to(device),
            searched=searched.to(device),
            outcomes=torch.from_numpy(data["outcomes"]).to(device),
            hidden=torch.from_numpy(data["hidden"]).to(device) if args.critic == "state" else None,
        )

    def __len__(self) -> int:
        return int(self.outcomes.shape[0])

    def with_reference(self, reference: nn.Module | None, views: SuitSymmetry | None, rows: int = 4096) -> TargetBatch:
        """The batch holding ``reference``'s policy averaged over the 24 suit relabellings of
        every decision (``--exit-kl-views``; the batch as it is without ``views``), worked out
        once for the run's fits: the average is over all relabellings, so a decision
        relabelled has it relabelled (:func:`minibatch`) and no pass has to ask the frozen
        network 24 times a decision again."""
        if reference is None or views is None:
            return self
        policies = []
        with torch.no_grad():
            for i in range(0, len(self), rows):
                masks = self.masks[i : i + rows]
                logits, _ = views.averaged(reference, self.observations[i : i + rows].float(), masks)
                policies.append(torch.softmax(logits, dim=-1))
        self.reference = torch.cat(policies)
        return self


def saved_targets(
    args: Args, rules: Rules, advisor: Agent | None
) -> tuple[dict[str, np.ndarray] | None, list[list[Any]]]:
    """The targets of ``args.exit_targets`` joined (None: none given), read shard by shard
    and trimmed as read, so that millions of decisions fit in memory; and what identifies
    them, each folder's run id, shards and decisions, which a resume must find again.

    Raises:
        TargetsError: a folder of other rules or format, a corrupt shard, a folder inside the
            run's own, two folders of one run (a copy, or the same ``mendikot targets --seed``:
            the same deals twice), no shard at all, or version 1 shards for a gated target.
    """
    if not args.exit_targets:
        return None, []
    out = Path(args.out).resolve()
    folders = dict.fromkeys(folder.resolve() for path in args.exit_targets for folder in target_folders(path))
    parts: list[dict[str, np.ndarray]] = []
    identity: list[list[Any]] = []
    owners: dict[str, Path] = {}
    old: list[str] = []  # version 1 folders: no moves chosen
    for folder in folders:
        if folder == out or out in folder.parents:
            raise TargetsError(
                f"--exit-targets {folder} is inside the run folder {args.out}: "
                "a run fits its own targets by --exit-window"
            )
        manifest = check_manifest(folder, rules)
        run_id = manifest["run_id"]
        if run_id in owners:
            raise TargetsError(
                f"target folders {owners[run_id]} and {folder} belong to one run {run_id!r} "
                "(a copy, or the same --seed): give one of them"
            )
        owners[run_id] = folder
        if manifest["version"] == 1:
            old.append(str(folder))
        read = fit_parts(folder, manifest["version"], rules, args, advisor)
        parts += read
        identity.append([run_id, len(read), sum(len(part["outcomes"]) for part in read)])
    if not parts:
        raise TargetsError(f"--exit-targets {' '.join(args.exit_targets)} hold no shards yet")
    kept = joined(parts)
    if args.exit_target == "gated" and "chosen" not in kept:
        raise TargetsError(
            f"--exit-target gated needs the moves the search chose, which format version 1 folders do not hold: {old}"
        )
    return kept, identity


def fit_parts(
    folder: Path, version: int, rules: Rules, args: Args, advisor: Agent | None
) -> list[dict[str, np.ndarray]]:
    """A target folder's shards (of format ``version``, its manifest's), each checked and
    :func:`trimmed` as it is read: the run's own window and saved targets alike."""
    return [trimmed(read_shard(path, rules, version), rules, args, advisor) for path in shard_files(folder)]


def joined(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays of several target parts end to end (those all of them hold: version 1 has
    fewer); one part as it is, not copied."""
    common = [name for name in parts[-1] if all(name in part for part in parts)]
    return {
        name: parts[0][name] if len(parts) == 1 else np.concatenate([part[name] for part in parts]) for name in common
    }


def trimmed(data: dict[str, np.ndarray], rules: Rules, args: Args, advisor: Agent | None) -> dict[str, np.ndarray]:
    """What a fit reads of a target folder's arrays: the network's input in float16, as the
    fit holds it (the plain observation without the history pieces, then the ``advisor``'s
    move, as the agent that plays the network appends it: :func:`agents.advice.with_advice`),
    the hidden hands only for a centralised critic, the spreads and moves only for a gated target."""
    observations = data["observations"][:, : observation_layout(rules).size]
    if advisor is not None:
        observations = advised(advisor, observations, data["masks"])
    data["observations"] = observations.astype(np.float16)
    skipped = {"hands"} | ({"hidden"} if args.critic != "state" else set())
    if args.exit_target != "gated":
        skipped |= {"spreads", "base", "chosen"}
    return {name: array for name, array in data.items() if name not in skipped}


def gated_policy(data: dict[str, np.ndarray], searched: np.ndarray) -> torch.Tensor:
    """(N, 53) the policy target of ``--exit-target gated``: all on the move the search plays,
    shared with the cards of its run where that is not the base move (equal cards have the
    same value and spread: the search played one, any would do); 0 on forced decisions
    (``searched`` False)."""
    values, spreads, chosen = data["values"], data["spreads"], data["chosen"]
    rows = np.arange(len(chosen))
    same = (values == values[rows, chosen, None]) & (spreads == spreads[rows, chosen, None])
    same[chosen == data["base"]] = False  # staying on the base move: that card alone
    same[rows, chosen] = True
    same &= searched[:, None]
    return torch.from_numpy((same / np.maximum(same.sum(axis=1, keepdims=True), 1)).astype(np.float32))


def advised(advisor: Agent, observations: np.ndarray, masks: np.ndarray, rows: int = 8192) -> np.ndarray:
    """The observations with the advisor's move appended, ``rows`` at a time (the bot's
    batch arrays stay small however many decisions the window holds)."""
    return np.concatenate(
        [with_advice(advisor, observations[i : i + rows], masks[i : i + rows]) for i in range(0, len(masks), rows)]
    )


def fit(
    network: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: TargetBatch,
    args: Args,
    generator: torch.Generator,
    reference: nn.Module | None = None,
    symmetry: SuitSymmetry | None = None,
) -> dict[str, float]:
    """``args.epochs`` passes over the targets in shuffled minibatches of ``args.minibatch``;
    returns the mean of each loss over the minibatches. With ``reference`` (the run's first
    network, frozen) the loss adds ``args.exit_kl`` times the KL divergence of the policy from it
    (from its mean over the 24 suit relabellings where the batch holds it, ``args.exit_kl_views``);
    with ``symmetry`` (``args.exit_suit_symmetry``) each decision is seen with its suits
    relabelled at random, afresh on every pass."""
    network.train()
    totals, steps = dict.fromkeys(LOSSES, 0.0), 0
    for _ in range(args.epochs):
        order = torch.randperm(len(batch), generator=generator).to(batch.masks.device)
        for start in range(0, len(batch), args.minibatch):
            part = minibatch(batch, order[start : start + args.minibatch], symmetry, generator)
            logits, values = network(part.observations, part.masks)
            log_probs = torch.log_softmax(logits, dim=-1).masked_fill(~part.masks, 0.0)
            searched = part.searched.float()
            cross_entropy = -(part.policy * log_probs).sum(dim=-1)
            policy_loss = (cross_entropy * searched).sum() / searched.sum().clamp(min=1.0)
            value_loss = 0.5 * ((values - part.outcomes) ** 2).mean()
            critic_loss = torch.zeros(())
            if part.hidden is not None:  # the centralised critic learns the same outcomes, seeing every hand
                critic = network.critic_value(part.observations, part.hidden)
                critic_loss = 0.5 * ((critic - part.outcomes) ** 2).mean()
            kl = torch.zeros(()) if reference is None else kl_from(reference, part, log_probs)
            loss = policy_loss + args.value_coef * (value_loss + critic_loss) + args.exit_kl * kl
            optimizer_step(network, optimizer, loss, args.max_grad_norm)
            for name, term in zip(LOSSES, (policy_loss, value_loss, critic_loss, kl), strict=True):
                totals[name] += term.item()
            steps += 1
    return {name: total / max(steps, 1) for name, total in totals.items()}


def minibatch(
    batch: TargetBatch, idx: torch.Tensor, symmetry: SuitSymmetry | None, generator: torch.Generator
) -> TargetBatch:
    """The decisions ``idx`` of ``batch``, observations in float32, each with its suits
    relabelled at random when a ``symmetry`` is given (a draw from ``generator``)."""
    part = TargetBatch(
        observations=batch.observations[idx].float(),
        masks=batch.masks[idx],
        policy=batch.policy[idx],
        searched=batch.searched[idx],
        outcomes=batch.outcomes[idx],
        hidden=None if batch.hidden is None else batch.hidden[idx].float(),
        reference=None if batch.reference is None else batch.reference[idx],
    )
    if symmetry is None:
        return part
    which = symmetry.draw(len(idx), generator)
    part.observations = symmetry.observations(part.observations, which)
    part.masks = symmetry.actions(part.masks, which)
    part.policy = symmetry.actions(part.policy, which)
    if part.hidden is not None:
        part.hidden = symmetry.hands(part.hidden, which)
    if part.reference is not None:
        part.reference = symmetry.actions(part.reference, which)
    return part


def kl_from(reference: nn.Module, part: TargetBatch, log_probs: torch.Tensor) -> torch.Tensor:
    """The mean KL divergence KL(reference || policy) over the decisions of ``part`` (legal
    moves); where ``part`` holds the reference's suit-averaged policy
    (:meth:`TargetBatch.with_reference`, ``--exit-kl-views``) that is the reference."""
    masks = part.masks
    if part.reference is not None:
        kept = part.reference
    else:
        with torch.no_grad():
            kept = torch.softmax(reference(part.observations, masks)[0], dim=-1)  # the reference policy
    gap = torch.log(kept.clamp(min=1e-12)) - log_probs
    return (kept * gap).masked_fill(~masks, 0.0).sum(dim=-1).mean()


def frozen_network(weights: dict[str, torch.Tensor], like: nn.Module, device: torch.device) -> nn.Module:
    """A frozen copy of ``like`` holding ``weights`` (its playing weights): the KL penalty's reference."""
    network = copy.deepcopy(like)
    network.load_state_dict(weights, strict=False)
    return network.eval().requires_grad_(False).to(device)


def frozen_agent(network: nn.Module, rules: Rules, device: torch.device) -> NeuralAgent:
    """A greedy agent playing a frozen copy of ``network`` as it is now."""
    return NeuralAgent(copy.deepcopy(network).eval(), rules, greedy=True, device=device, name="previous")


def count(
    counters: dict[str, Any], stats: TargetStats, hands: int, seconds: float, distilled: TargetBatch | None
) -> None:
    """Add a generation to the run's counters: samples are the decisions the search valued,
    or with no search (``distilled``, the saved targets) those fitted, so curves still advance."""
    counters["iteration"] += 1
    counters["samples"] += stats.labelled + stats.kept_labelled  # a resumed generation's kept shards count too
    counters["hands"] += hands
    counters["decisions"] += stats.decisions + stats.kept_decisions
    if distilled is not None:
        counters["samples"] += int(distilled.searched.sum())
        counters["decisions"] += len(distilled)
    counters["seconds"] = seconds


@torch.no_grad()
def metrics_row(
    stats: TargetStats, losses: dict[str, float], update_seconds: float, lr: float, batch: TargetBatch, network: Any
) -> dict[str, float]:
    """One generation's log row: the PPO trainer's keys that apply, the labelling speed, and
    how often the network's move is one of the search's best (``charts/agreement``, ties
    included: equal cards have equal values)."""
    agreed = 0.0
    for start in range(0, len(batch), 8192):  # in slices: the window may hold millions of decisions
        rows = slice(start, start + 8192)
        logits, _ = network(batch.observations[rows].float(), batch.masks[rows])
        searched = batch.searched[rows]
        target = batch.policy[rows][searched]  # a move of the best value has the largest share (ties too)
        chosen = target.gather(1, logits[searched].argmax(-1, keepdim=True)).squeeze(1)
        agreed += (chosen >= target.max(dim=1).values - 1e-6).sum().item()
    agree = agreed / max(int(batch.searched.sum()), 1)
    seconds = max(stats.seconds, 1e-9)
    return {
        "charts/samples_per_s": stats.labelled / seconds,
        "charts/decisions_per_s": stats.decisions / seconds,
        "charts/labelled_per_s": stats.labelled_per_cpu_s,
        "charts/update_seconds": update_seconds,
        "charts/learning_rate": lr,
        "charts/agreement": agree,
        **{f"losses/{name}": value for name, value in losses.items()},
    }


def finish(run: TrainingState, log: MetricsLog, rules: Rules, args: Args, out: Path, identity: list[list[Any]]) -> None:
    """The end of a run: the last checkpoint, the agent file, the CSV and the plot."""
    save_atomic(run.payload(rules, args) | {"saved_targets": identity}, out / "checkpoint.pt")
    export_agent(run.network, rules, args, out / "agent.pt")
    log.close()
    log.plot(out / "learning_curve.png")
