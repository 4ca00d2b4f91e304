"""Self-play training for Mendikot in one file (CleanRL style): masked PPO or Deep Monte-Carlo.

Read it top to bottom: the network, then one linear loop (every knob is a field of
``Args`` in ``args.py``, with why; it lives apart so the ``mendikot`` command can list the
options without importing torch): collect full hands on the batched core (every learner decision is a sample, one
network shared by every seat, illegal actions masked out), compute advantages along each
seat's own decisions, update (the clipped PPO objective, or for DMC a regression of the
chosen action's value on the hand's result), log, grow the opponent pool, evaluate in the
duplicate arena, checkpoint. Plumbing lives beside this file:
``selfplay.py`` (experience), ``checkpoint.py`` (atomic files), ``metrics.py`` (CSV,
TensorBoard, plot), ``evaluate.py`` (arena runs).

Run it with ``mendikot train --rules standard --minutes 60 --out runs/NAME``.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from ..cards import NUM_ACTIONS
from ..observation import ObservationEncoder
from ..rules import Rules
from ..run_folder import TRAINING_RUN_FILES, prepare_run_folder
from ..seeding import derived_seed
from .args import (
    ADVISORS,
    CRITICS,
    NATIVE_BFLOAT16_FLAGS,
    Args,
    busy_cores_warning,
    check_device,
    cpu_has_native_bfloat16,
    precision_context,
)
from .checkpoint import CheckpointError, load_checkpoint, save_atomic
from .evaluate import evaluate_against
from .metrics import MetricsLog
from .selfplay import collect_hands

if TYPE_CHECKING:
    from agents.base import Agent


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
    as a one-hot (:func:`agents.neural.with_advice`): the torso reads it, and the card scorer
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
        if critic not in CRITICS:
            raise ValueError(f"Network critic {critic!r} is not allowed; choose one of {CRITICS}")
        if advisor not in ADVISORS:
            raise ValueError(f"Network advisor {advisor!r} is not allowed; choose one of {ADVISORS}")
        self.hidden_trump_feature = hidden_trump_feature
        self.advisor = advisor
        advised = advisor != "none"
        if advised:  # the saved level, checked; a new network takes the bot as the code has it now
            from agents.neural import advisor_level as level_of

            advisor_level = level_of(advisor, rules, advisor_level)
        self.advisor_level = advisor_level  # the advisor's exact Level, saved with the network
        layout = ObservationEncoder(rules).layout
        self.n = rules.n_players
        self.obs_size = layout.size + NUM_ACTIONS * advised  # the network's input width
        self.card_planes_end = layout.pieces["voids"].start
        self.n_planes = self.card_planes_end // 52
        self.pieces = {name: (p.start, p.stop) for name, p in layout.pieces.items()}
        self.torso, width = _relu_layers(self.obs_size, hidden)
        cards = torch.arange(52)
        static = torch.cat(
            [
                nn.functional.one_hot(cards % 13, 13),
                nn.functional.one_hot(cards // 13, 4),
                (cards % 13 == 8)[:, None],
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
            self._piece(observations, "hand").reshape(batch, 4, 13).sum(-1, keepdim=True) / 13.0,
        ]
        if self.hidden_trump_feature:
            per_suit.append(self._piece(observations, "face_down").reshape(batch, 4, 13).sum(-1, keepdim=True))
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
            + self.from_suit(self.suit_features(observations))[rows, cards // 13]
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


def _run_network_args(args: Args, saved: dict[str, Any], out: Path) -> Args:
    """``args`` with the network of the run being resumed (a run keeps its network; runs saved
    before the hidden-trump feature existed have none); warns when ``args`` asked otherwise."""
    network = {k: v for k, v in _network_fields(saved).items() if k != "advisor_level"}  # Args fields only
    kept = replace(args, **network)
    asked = {k: getattr(args, k) for k in network if getattr(args, k) != getattr(kept, k)}
    if asked:
        warnings.warn(f"resuming {out}: the run keeps its network {saved}; ignoring {asked}", stacklevel=4)
    return kept


def network_spec(rules: Rules, args: Args, advisor_level: dict[str, Any] | None = None) -> dict[str, Any]:
    """What rebuilds the network from a checkpoint (stored beside its weights); pass the
    network's ``advisor_level`` when saving one."""
    return {
        "hidden": list(args.hidden),
        "card_hidden": args.card_hidden,
        "algorithm": args.algorithm,
        "hidden_trump_feature": args.hidden_trump_feature,
        "critic": args.critic,
        "advisor": args.advisor,
        "advisor_level": advisor_level,
    }


def playing_spec(rules: Rules, args: Args, advisor_level: dict[str, Any] | None = None) -> dict[str, Any]:
    """The spec of the network that plays (snapshots, agent files): the critic stays behind."""
    return {**network_spec(rules, args, advisor_level), "critic": "observation"}


def _network_fields(spec: dict[str, Any]) -> dict[str, Any]:
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
    return Network(rules, **_network_fields(spec))


def arithmetic(args: Args, device: torch.device) -> contextlib.AbstractContextManager:
    """The context the network runs in while training: plain float32, or with
    ``precision="bfloat16"`` autocast (float32 weights, bfloat16 matrix products)."""
    return precision_context(args.precision, device.type)


def make_policy(network: Network, device: torch.device, generator: torch.Generator, args: Args):
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


def train(args: Args, resume: bool = False, overwrite: bool = False) -> Path:
    """Run (or resume) a training run; returns the run folder.

    A new run refuses a folder that already holds one (``RunFolderInUseError``, a
    ValueError) unless ``overwrite`` is True, which deletes that run's files first.
    """
    out = Path(args.out)
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other: a resume continues the run in its folder")
    rules = args.resolved_rules()
    check_device(args.device)
    device = torch.device(args.device)
    check_eval_opponents(args, rules)
    if not resume:
        bots, teacher = make_pool_bots_and_teacher(args, rules)  # a bad name fails before --overwrite deletes
        resumable = (out / "checkpoint.pt").is_file()  # a run stopped before its first checkpoint is not
        hint = f"`mendikot train --resume {out}`" if resumable else None
        prepare_run_folder(out, TRAINING_RUN_FILES, overwrite, resume_hint=hint)
    if args.threads:
        torch.set_num_threads(args.threads)
    elif device.type == "cpu" and (busy := busy_cores_warning(torch.get_num_threads())):
        warnings.warn(busy, stacklevel=2)
    if args.precision == "bfloat16" and device.type == "cpu" and cpu_has_native_bfloat16() is False:
        warnings.warn(
            f"--precision bfloat16 on a CPU without any of {', '.join(NATIVE_BFLOAT16_FLAGS)}: bfloat16 is "
            "emulated and the update runs several times slower than in float32; use --precision float32 here",
            stacklevel=2,
        )
    encoder = ObservationEncoder(rules)
    if resume:
        state, args = resume_state(out / "checkpoint.pt", rules, args)
        bots, teacher = make_pool_bots_and_teacher(args, rules)  # seeded as the run's own settings say
    torch.manual_seed(args.seed)  # the network's initial weights
    saved_level = state["network"].get("advisor_level") if resume else None  # the run keeps its advisor
    network = build_network(rules, network_spec(rules, args, saved_level)).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.learning_rate, eps=1e-5)
    rng = np.random.default_rng(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    counters = {"iteration": 0, "samples": 0, "hands": 0, "decisions": 0, "seconds": 0.0}
    snapshots: list[dict[str, torch.Tensor]] = []
    if resume:
        restore(state, out / "checkpoint.pt", network, optimizer, rng, generator)
        counters = dict(state["counters"])
        snapshots = newest(list(state["pool"]), args.pool_snapshots)  # a resume may ask for fewer
    from agents.neural import make_advisor, with_advice

    seeded_agents = [agent for agent in (*bots, teacher) if getattr(agent, "rng", None) is not None]
    if resume:
        restore_agent_rngs(seeded_agents, state, args, out / "checkpoint.pt")
    log = MetricsLog(out, resume=resume, counters=counters)
    policy = make_policy(network, device, generator, args)
    advisor = make_advisor(network.advisor, rules, network.advisor_level)
    advise = None if advisor is None else lambda obs, masks: with_advice(advisor, obs, masks)

    def teacher_policy(
        observations: np.ndarray, masks: np.ndarray, hidden_cards: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zeros = np.zeros(len(observations), dtype=np.float32)
        plain = observations[:, : encoder.size]  # without the advice, if any
        return np.asarray(teacher.act(plain, masks), dtype=np.int64), zeros, zeros

    def checkpoint() -> None:
        payload = {
            "kind": "training",
            "rules": rules.to_dict(),
            "network": network_spec(rules, args, network.advisor_level),
            "model": {k: v.cpu() for k, v in network.state_dict().items()},
            "optimizer": optimizer.state_dict(),
            "numpy_rng": rng.bit_generator.state,
            "torch_rng": generator.get_state(),
            "torch_global_rng": torch.get_rng_state(),
            "agent_rngs": [agent.rng.bit_generator.state for agent in seeded_agents],
            "counters": counters,
            "pool": snapshots,
            "args": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(args).items()},
        }
        save_atomic(payload, out / "checkpoint.pt")

    centralised = args.critic == "state"  # the value sees every hand (training only)
    budget = args.minutes * 60.0
    session_start = time.perf_counter() - counters["seconds"]
    last_checkpoint = last_eval = time.perf_counter()
    bar = log.progress_bar(budget, counters["seconds"], enabled=args.progress)
    while True:
        counters["seconds"] = time.perf_counter() - session_start
        if counters["seconds"] >= budget or (args.max_iterations and counters["iteration"] >= args.max_iterations):
            break

        # 1. Experience: full hands on the batched core, a share of them against the pool
        #    (during the warm start the teacher plays every seat instead).
        imitating = counters["iteration"] < args.imitate_iterations
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(args, counters)
        opponents = bots + [snapshot_agent(s, rules, args, device, network.advisor_level) for s in snapshots]
        network.eval()
        samples, stats = collect_hands(
            rules,
            teacher_policy if imitating else policy,
            [] if imitating else opponents,
            args.games,
            rng,
            encoder,
            args.pool_share,
            args.gamma,
            args.gae_lambda,
            args.tens_reward,
            pool_weights(len(bots), len(opponents) - len(bots), args.pool_bot_share),
            duplicated_opponents(args, len(bots), len(opponents)) if not imitating else 0,
            centralised,
            advise,
            args.skip_forced,
        )

        # 2. Update: clipped PPO on every learner decision, advantages normalised per batch.
        network.train()
        obs = torch.from_numpy(samples.observations).to(device)
        masks = torch.from_numpy(samples.masks).to(device)
        actions = torch.from_numpy(samples.actions).to(device)
        old_log_probs = torch.from_numpy(samples.log_probs).to(device)
        advantages = torch.from_numpy(samples.advantages).to(device)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        returns = torch.from_numpy(samples.returns).to(device)
        outcomes = torch.from_numpy(samples.outcomes).to(device)
        hidden_cards = torch.from_numpy(samples.hidden_cards).to(device) if centralised else None
        update_start = time.perf_counter()
        losses = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0}
        n_minibatches = 0
        for _ in range(args.epochs):
            order = torch.randperm(len(samples), generator=generator).to(device)
            for start in range(0, len(samples), args.minibatch):
                idx = order[start : start + args.minibatch]
                with arithmetic(args, device):
                    logits, values = network(obs[idx], masks[idx])
                    if hidden_cards is not None:
                        values = network.critic_value(obs[idx], hidden_cards[idx])
                if imitating:
                    # Warm start: copy the teacher's choices; the value head learns the results.
                    policy_loss = nn.functional.cross_entropy(logits, actions[idx])
                    value_loss = 0.5 * ((values - outcomes[idx]) ** 2).mean()
                    optimizer.zero_grad()
                    (policy_loss + args.value_coef * value_loss).backward()
                    nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)
                    optimizer.step()
                    losses["policy"] += policy_loss.item()
                    losses["value"] += value_loss.item()
                    n_minibatches += 1
                    continue
                if args.algorithm == "dmc":
                    # Deep Monte-Carlo: Q(s, a) of the chosen action regresses on the hand's result.
                    chosen_q = logits.gather(1, actions[idx, None]).squeeze(-1)
                    value_loss = ((chosen_q - outcomes[idx]) ** 2).mean()
                    optimizer.zero_grad()
                    value_loss.backward()
                    nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)
                    optimizer.step()
                    losses["value"] += value_loss.item()
                    n_minibatches += 1
                    continue
                log_probs_all = torch.log_softmax(logits, dim=-1)
                log_probs = log_probs_all.gather(1, actions[idx, None]).squeeze(-1)
                ratio = torch.exp(log_probs - old_log_probs[idx])
                adv = advantages[idx]
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                value_loss = 0.5 * ((values - returns[idx]) ** 2).mean()
                probs = log_probs_all.exp()
                entropy = -(probs * log_probs_all.masked_fill(~masks[idx], 0.0)).sum(-1).mean()
                loss = policy_loss + args.value_coef * value_loss - args.entropy_coef * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    losses["policy"] += policy_loss.item()
                    losses["value"] += value_loss.item()
                    losses["entropy"] += entropy.item()
                    losses["approx_kl"] += ((ratio - 1) - torch.log(ratio)).mean().item()
                    losses["clip_fraction"] += ((ratio - 1).abs() > args.clip).float().mean().item()
                n_minibatches += 1
        update_seconds = time.perf_counter() - update_start
        check_finite_weights(network, counters["iteration"] + 1, out)  # before a checkpoint could keep them

        # 3. Bookkeeping, logging, the opponent pool.
        counters["iteration"] += 1
        counters["samples"] += len(samples)
        counters["hands"] += stats.hands
        counters["decisions"] += stats.all_decisions
        counters["seconds"] = time.perf_counter() - session_start
        if counters["iteration"] % args.snapshot_every == 0:
            snapshots = grow_pool(snapshots, network, args.pool_snapshots)
        row = {
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
            "charts/learning_rate": optimizer.param_groups[0]["lr"],
            "charts/pool_size": len(opponents),
            **{f"losses/{k}": v / max(n_minibatches, 1) for k, v in losses.items()},
        }
        log.write(counters, row)
        bar.update_to(counters["seconds"], row["charts/samples_per_s"], counters["iteration"])

        # 4. Evaluation in the duplicate arena, then an atomic checkpoint.
        now = time.perf_counter()
        if now - last_eval >= args.eval_every_minutes * 60.0:
            last_eval = now
            network.eval()
            log.write(counters, evaluate_against(network, rules, args.eval_opponents, args.eval_deals, device))
        if now - last_checkpoint >= args.checkpoint_every_minutes * 60.0:
            last_checkpoint = now
            checkpoint()
    bar.close()
    network.eval()
    log.write(counters, evaluate_against(network, rules, args.eval_opponents, args.eval_deals, device))
    checkpoint()
    export_agent(network, rules, args, out / "agent.pt")
    log.close()
    log.plot(out / "learning_curve.png")
    return out


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


def make_pool_bots_and_teacher(args: Args, rules: Rules) -> tuple[list[Agent], Agent | None]:
    """The rule-based (or trained) agents of the pool, seeded ``seed``, ``seed + 1``, ..., and
    the warm start's teacher (None without a warm start); an unknown name is a ValueError
    naming its option, raised before the run folder is touched."""
    *pool, teacher = bot_seeds(args.pool_bots, args.seed, args.teacher, args.advisor, args.imitate_iterations)
    bots = [named_agent("--pool-bots (Args.pool_bots)", name, rules, seed) for name, seed in pool]
    return bots, None if teacher is None else named_agent("--teacher (Args.teacher)", teacher[0], rules, teacher[1])


def named_agent(option: str, name: str, rules: Rules, seed: int | None = None) -> Agent:
    """``agents.make(name, rules, seed)`` for a training option, which takes agent names
    only (not the run folders and files that ``agents.load`` takes): an error names the
    option and the names it takes."""
    from agents import make
    from agents.registry import AGENT_NAMES

    if str(name).strip().lower() not in AGENT_NAMES:  # make takes "Hard" too
        raise ValueError(f"{option} takes agent names ({', '.join(AGENT_NAMES)}), got {name!r}")
    try:
        return make(name, rules, seed=seed)
    except ValueError as error:  # e.g. no shipped network for these rules
        raise ValueError(f"{option}: {error}") from None


def bot_seeds(
    pool_bots: Sequence[str], seed: int, teacher: str, advisor: str, imitate_iterations: int
) -> list[tuple[str, int | None] | None]:
    """The name and seed of each pool bot (``seed``, ``seed + 1``, ...), then the teacher's
    (None without a warm start): what a resume compares to keep the bots' generators."""
    pool = [(name, derived_seed(seed + i)) for i, name in enumerate(pool_bots)]
    # A teacher that is also the advisor breaks ties as the advice does (lowest card id).
    teacher_seed = None if teacher == advisor else seed
    return [*pool, (teacher, teacher_seed) if imitate_iterations else None]


def check_eval_opponents(args: Args, rules: Rules) -> None:
    """Make each evaluation opponent once: the first evaluation may come only after the whole
    budget, and an unknown name must fail before the training, not after it."""
    for name in args.eval_opponents:
        named_agent("--eval-opponents (Args.eval_opponents)", name, rules)


def resume_state(path: Path, rules: Rules, args: Args) -> tuple[dict[str, Any], Args]:
    """The checkpoint a resume continues, checked, and ``args`` with the run's own network."""
    state = load_checkpoint(path, kind="training")
    if state["rules"] != rules.to_dict():
        raise CheckpointError(f"{path} was trained on rules {state['rules']}, not {rules}")
    try:
        return state, _run_network_args(args, state["network"], path.parent)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{path} has an unusable network spec {state['network']}: {error}") from None


def restore(
    state: dict[str, Any],
    path: Path,
    network: Network,
    optimizer: torch.optim.Optimizer,
    rng: np.random.Generator,
    generator: torch.Generator,
) -> None:
    """Load a checkpoint's weights, pool, optimiser and generators into a fresh run. What does
    not fit (weights of another size, a damaged state) is a CheckpointError naming the file,
    not a RuntimeError half way through; the global generator is set last, as it always was."""
    try:
        network.load_state_dict(state["model"])
        check_pool(state["pool"], network)
        optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["numpy_rng"]
        generator.set_state(state["torch_rng"])
        torch.set_rng_state(state["torch_global_rng"])
    except (AttributeError, KeyError, TypeError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path} cannot resume this run: {one_line(error)}") from None


def check_pool(pool: list[dict[str, torch.Tensor]], network: Network) -> None:
    """Each snapshot must fit the network that plays (without building one: that would draw
    from torch's global generator)."""
    shapes = {k: v.shape for k, v in network.playing_state_dict().items()}
    for i, snapshot in enumerate(pool):
        if {k: v.shape for k, v in playing_weights(snapshot).items()} != shapes:
            raise ValueError(f"pool snapshot {i} does not fit the run's network {network_shape(network)}")


def network_shape(network: Network) -> str:
    """The torso's layer sizes, for messages."""
    return str([layer.out_features for layer in network.torso if isinstance(layer, nn.Linear)])


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
    try:
        before = bot_seeds(
            saved["pool_bots"],
            saved["seed"],
            saved["teacher"],
            saved.get("advisor", "none"),
            saved["imitate_iterations"],
        )  # runs saved before the advisor existed had none
    except (KeyError, TypeError, ValueError):  # settings this package could not use: not the same bots
        before = None
    if before != now:
        shown = [bot for bot in now if bot is not None]
        warnings.warn(
            f"resuming {path.parent} with other bots (now {shown}, as (name, seed)): they start afresh", stacklevel=3
        )
        return
    if not isinstance(states, list) or len(states) != len(seeded_agents):
        count = len(states) if isinstance(states, list) else type(states).__name__
        raise CheckpointError(
            f"{path} cannot resume this run: agent_rngs holds {count} generators for {len(seeded_agents)} bots"
        )
    try:
        for agent, bit_state in zip(seeded_agents, states, strict=True):
            agent.rng.bit_generator.state = bit_state
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{path} cannot resume this run: bad agent_rngs ({one_line(error)})") from None


def one_line(error: BaseException, limit: int = 400) -> str:
    """An error message on one line, cut to ``limit`` characters (torch's size mismatches
    list every layer on a line of its own)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def newest(snapshots: list[Any], keep: int) -> list[Any]:
    """The last ``keep`` snapshots; none for 0 (``snapshots[-0:]`` would keep them all)."""
    return snapshots[max(len(snapshots) - keep, 0) :]


def grow_pool(snapshots: list[dict[str, torch.Tensor]], network: Network, keep: int) -> list[dict[str, torch.Tensor]]:
    """The pool with a frozen copy of the learner added, the oldest dropped beyond ``keep``
    (with 0 no copy is made: the pool is the bots alone)."""
    if keep == 0:
        return []
    frozen = {k: v.detach().cpu().clone() for k, v in network.playing_state_dict().items()}
    return newest([*snapshots, frozen], keep)


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


def duplicated_opponents(args: Args, n_bots: int, n_opponents: int) -> int:
    """How many of the pool's opponents (bots first, then snapshots) get the duplicate
    baseline: none, the bots, or with ``duplicate_snapshots`` every one."""
    if not args.duplicate_baseline:
        return 0
    return n_opponents if args.duplicate_snapshots else n_bots


def pool_weights(n_bots: int, n_snapshots: int, bot_share: float) -> np.ndarray:
    """How often each opponent is drawn: ``bot_share`` split over the bots, the rest over the
    snapshots (all to the bots while there is no snapshot yet)."""
    if n_snapshots == 0 or n_bots == 0:
        return np.ones(n_bots + n_snapshots)
    return np.concatenate([np.full(n_bots, bot_share / n_bots), np.full(n_snapshots, (1 - bot_share) / n_snapshots)])


def snapshot_agent(
    weights: dict[str, torch.Tensor],
    rules: Rules,
    args: Args,
    device: torch.device,
    advisor_level: dict[str, Any] | None = None,
) -> Any:
    """A frozen past learner for the opponent pool (samples from its policy)."""
    from agents.neural import NeuralAgent

    network = build_network(rules, playing_spec(rules, args, advisor_level)).to(device)
    # Pools of runs saved before snapshots left the critic out still hold its weights.
    network.load_state_dict(playing_weights(weights))
    greedy = args.algorithm == "dmc"  # Q-values are not logits: a DMC snapshot plays its best action
    return NeuralAgent(
        network, rules, greedy=greedy, seed=args.seed, device=device, name="snapshot", precision=args.precision
    )


def export_agent(network: Network, rules: Rules, args: Args, path: Path) -> Path:
    """The small file users play with: weights, rules and shape only (no optimiser, no pool)."""
    payload = {
        "kind": "agent",
        "rules": rules.to_dict(),
        # After a centralised-critic run the file's own value head was never trained.
        "network": {**playing_spec(rules, args, network.advisor_level), "value_head_trained": args.critic != "state"},
        "model": {k: v.detach().cpu().half() for k, v in network.playing_state_dict().items()},
    }
    return save_atomic(payload, path)
