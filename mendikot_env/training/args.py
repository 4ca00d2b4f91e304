"""Every setting of a self-play training run, with why (``mendikot train`` options).

Torch-free, so the command can list and check the options fast; the choices of the
network's options (``PRECISIONS``, ``CRITICS``, ``ADVISORS``) come from
:mod:`agents.network_options`, which the agents that play a network read too.
"""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from agents.network_options import ADVISORS, CRITICS, PRECISIONS

from ..checks import check_choice, is_integer
from ..rules import Rules, resolve_rules
from ..run_folder import check_output_name
from ..seeding import SEED_MAX

# /proc/cpuinfo flags of CPUs with bfloat16 products: x86 (AVX-512 BF16, AMX) and Arm (Features: bf16)
NATIVE_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def cpu_has_native_bfloat16(cpuinfo: str | Path = "/proc/cpuinfo") -> bool | None:
    """Whether this CPU multiplies bfloat16 in hardware (None where it cannot be told).

    Without it autocast emulates bfloat16 and the update runs several times slower than
    in float32 (six times on a 2-core AMD EPYC with AVX2 only), so ``train`` warns."""
    try:
        flags = Path(cpuinfo).read_text().split()
    except OSError:
        return None
    return any(flag in flags for flag in NATIVE_BFLOAT16_FLAGS)


EXIT_MOVERS = ("search", "network")  # who plays the labelled hands of expert iteration (see Args.exit_mover)
EXIT_TARGETS = ("softmax", "gated")  # what expert iteration's policy learns (see Args.exit_target)
ALGORITHMS = ("ppo", "dmc", "exit")  # masked PPO, Deep Monte-Carlo or expert iteration (see Args.algorithm)
# The allowed values of every option that names a choice, checked when Args is made.
CHOICES: dict[str, tuple[str, ...]] = {
    "algorithm": ALGORITHMS,
    "critic": CRITICS,
    "precision": PRECISIONS,
    "advisor": ADVISORS,
    "exit_mover": EXIT_MOVERS,
    "exit_target": EXIT_TARGETS,
}

# The allowed range of every numeric option: (low, high, low_included); high is included,
# and INF means no bound but a finite number. Checked when Args is made, so a bad value fails
# before any work, not as a traceback mid-run (or, for an infinite rate, as NaN weights).
INF = float("inf")
RANGES: dict[str, tuple[float, float, bool]] = {
    "epsilon": (0.0, 1.0, True),
    "minutes": (0.0, INF, False),
    "max_iterations": (0, INF, True),
    "seed": (0, SEED_MAX, True),  # numpy refuses negative seeds, torch and int64 stop at 2**63 - 1
    "games": (1, INF, True),
    "hidden": (1, INF, True),  # each layer's size
    "card_hidden": (1, INF, True),
    "learning_rate": (0.0, INF, False),
    "epochs": (1, INF, True),
    "minibatch": (1, INF, True),
    "gamma": (0.0, 1.0, True),
    "gae_lambda": (0.0, 1.0, True),
    "tens_reward": (0.0, INF, True),
    "clip": (0.0, INF, False),
    "entropy_coef": (0.0, INF, True),
    "value_coef": (0.0, INF, True),
    "max_grad_norm": (0.0, INF, False),
    "imitate_iterations": (0, INF, True),
    "pool_share": (0.0, 1.0, True),
    "pool_bot_share": (0.0, 1.0, True),
    "snapshot_every": (1, INF, True),
    "pool_snapshots": (0, INF, True),  # 0: no snapshots, the pool is the bots alone
    "eval_every_minutes": (0.0, INF, True),  # 0: after every iteration
    "eval_deals": (1, INF, True),
    "checkpoint_every_minutes": (0.0, INF, True),  # 0: after every iteration
    "threads": (0, INF, True),  # 0: torch's default
    "exit_hands": (0, INF, True),  # 0: no search, the network fits exit_targets alone
    "exit_shard_hands": (1, INF, True),
    "exit_temperature": (0.0, INF, False),
    "exit_window": (1, INF, True),
    "exit_kl": (0.0, INF, True),
}


def check_range(field: str, value: Any, shown: str | None = None, ranges: dict | None = None) -> None:
    """Raise a ValueError naming the option (``--flag`` and ``Args.field``, or ``shown``),
    the value and its allowed range (in ``ranges``, default ``RANGES``) when ``value`` is outside it.
    Integers stop at 2**63 - 1 (``SEED_MAX``), the most torch and int64 arrays take."""
    low, high, low_included = (RANGES if ranges is None else ranges)[field]
    count = isinstance(low, int) and high == INF
    if count:
        high = SEED_MAX
    above_low = value >= low if low_included else value > low
    if above_low and (value < high if high == INF else value <= high):  # False for NaN too
        return
    if high == SEED_MAX and not (count and value < low):
        allowed = f"an integer {low} to {SEED_MAX} (2**63 - 1)"  # SEED_RULE for the seed
    elif count:
        allowed = f"an integer {low} or more"
    elif high != INF:
        allowed = f"an integer {low} to {high}" if isinstance(high, int) else f"in [{low:g}, {high:g}]"
    else:
        allowed = f"a finite number {'at least' if low_included else 'above'} {low:g}"
    flag = "--" + field.replace("_", "-")
    raise ValueError(f"{flag} (Args.{shown or field}) must be {allowed}, got {value!r}")


def check_ranges(settings: Any, ranges: dict[str, tuple[float, float, bool]]) -> None:
    """Every field of ``settings`` named in ``ranges`` inside its range; ``hidden`` (a tuple
    of layer sizes) layer by layer. Shared by the trainer's and the RLlib settings."""
    for name in ranges:
        if name == "hidden":
            for i, size in enumerate(settings.hidden):
                check_range(name, size, f"hidden[{i}]", ranges)
        else:
            check_range(name, getattr(settings, name), ranges=ranges)


def check_types(settings: Any) -> None:
    """Every field of a settings dataclass as the type of its default, normalised in place
    (numpy numbers as Python ones, an int as a float where a float is wanted, a path as a
    string, a list as a tuple, one name alone as a one-name tuple), or a ValueError naming
    the option. Unchecked, ``hidden="16"`` would train layers of 1 and 6, and 2.5 epochs
    would fail mid-run. ``rules`` and ``rule_fields`` are checked together by
    :func:`check_rules`. Shared by the trainer's and the RLlib settings."""
    for f in fields(settings):
        if f.name not in ("rules", "rule_fields") and f.default is not MISSING:
            setattr(settings, f.name, _typed(f.name, getattr(settings, f.name), f.default))
    check_rules(settings)


def check_rules(settings: Any) -> None:
    """``settings.rules`` (a preset name, a ``Rules`` or a dict of its fields) with
    ``settings.rule_fields`` applied: an unknown preset or field fails here, before any
    work. A Rules or a dict is kept as a dict, and the fields as Rules stores them, with
    Python values: numpy's ints would make a checkpoint that ``weights_only`` loading
    refuses, and RLlib's ``args.json`` unwritable."""
    rules, rule_fields = settings.rules, settings.rule_fields
    if not isinstance(rules, str | Rules | dict):
        raise ValueError(f"--rules (Args.rules) must be a preset name, a Rules or a dict of its fields, got {rules!r}")
    if not isinstance(rule_fields, dict):
        raise ValueError(f"Args.rule_fields must be a dict of Rules fields, got {rule_fields!r}")
    try:
        base = rules if isinstance(rules, str) else resolve_rules(rules)
    except (TypeError, ValueError) as error:
        raise ValueError(f"--rules (Args.rules): {error}") from None
    resolved = resolve_rules(base, **rule_fields)  # its own error names the preset or field
    settings.rules = rules if isinstance(rules, str) else base.to_dict()
    settings.rule_fields = {name: getattr(resolved, name) for name in rule_fields}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)


# How a field whose default has this type takes a value: (accepts, converts, what the error asks for).
# Order matters: a bool is an int to Python, so bool comes first.
FIELD_TYPES: tuple[tuple[type, Any, Any, str], ...] = (
    (bool, lambda v: isinstance(v, bool | np.bool_), bool, "True or False"),
    (int, is_integer, int, "an integer"),
    (float, _is_number, float, "a number"),
    (str, lambda v: isinstance(v, str | os.PathLike), lambda v: str(os.fspath(v)), "a string"),
)


TUPLE_ITEMS = {"pool_bots": "agent names", "eval_opponents": "agent names", "exit_targets": "folders"}  # list items


def _typed(name: str, value: Any, default: Any) -> Any:
    """``value`` as the type of ``default`` (see :func:`check_types`), or one ValueError
    naming the option and what it must be."""
    kind = next(((accepts, convert, what) for t, accepts, convert, what in FIELD_TYPES if isinstance(default, t)), None)
    if kind is not None:
        accepts, convert, what = kind
        if accepts(value):
            return convert(value)
    elif isinstance(default, tuple):
        names = name in TUPLE_ITEMS  # agent names or paths; hidden holds layer sizes
        what = f"a list of {TUPLE_ITEMS[name]}" if names else "a list of integers (layer sizes)"
        if names and isinstance(value, str | os.PathLike):
            value = (value,)
        elif isinstance(value, np.ndarray) and value.ndim == 1:  # np.array([64, 64]) as sizes
            value = list(value)
        if isinstance(value, list | tuple) and all(
            isinstance(v, str | os.PathLike) if names else is_integer(v) for v in value
        ):
            return tuple(str(os.fspath(item)) if names else int(item) for item in value)
    else:
        return value
    raise ValueError(f"--{name.replace('_', '-')} (Args.{name}) must be {what}, got {value!r}")


def busy_cores_warning(threads: int, load: float | None = None, cores: int | None = None) -> str | None:
    """A warning when torch's ``threads`` outnumber the cores that the 1-minute load average
    leaves free (None when they do not, or where the load is unknown).

    torch's threads wait for each other by spinning; with one core taken by other work, the
    default (every core) made training 1.7 to 9 times slower than one thread on a 2-core
    machine. The thread count is left as asked (results depend on it), so
    the run stays reproducible; the warning names the count to ask for.
    """
    if load is None:
        if not hasattr(os, "getloadavg"):
            return None
        load = os.getloadavg()[0]
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    free = max(1, round(cores - load))
    if threads <= free:
        return None
    return (
        f"torch will use {threads} threads, but the 1-minute load average ({load:.1f} on {cores} cores) leaves "
        f"about {free} free; threads waiting for busy cores can make training several times slower: "
        f"pass --threads {free} (the results depend on the thread count, so keep it for reruns). The load "
        "average lags a minute and, in a container, may be the host's: if the cores are in fact idle, pass "
        "--threads to silence this"
    )


def check_device(device: str) -> None:
    """A ValueError naming ``device`` when torch cannot use it here: torch itself raises a
    RuntimeError or an AssertionError only once the network moves there. Imports torch, so
    it is called by the training, not when Args is made (``--help`` stays fast)."""
    import torch

    where = f"--device (Args.device) {device!r}"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"{where}: not a torch device ({_first_line(error)})") from None
    backends = {"cuda": ("CUDA", torch.cuda.is_available), "mps": ("MPS", torch.backends.mps.is_available)}
    name, available = backends.get(parsed.type, (parsed.type, lambda: True))
    if not available():
        raise ValueError(f"{where}: {name} is not available here; use --device cpu")
    try:
        torch.empty(1, device=parsed)  # e.g. cuda:3 on a machine with one GPU
    except (RuntimeError, AssertionError) as error:
        raise ValueError(f"{where}: not usable here ({_first_line(error)}); use --device cpu") from None


def _first_line(error: BaseException) -> str:
    """An error's first line: torch's messages go on for a page of backends."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


@dataclass
class Args:
    """Everything a run depends on; saved in its checkpoints."""

    rules: str | dict[str, Any] = "standard"
    """rules preset name (the agent learns this variant); in Python also a Rules or a dict
    of its fields"""
    rule_fields: dict[str, Any] = field(default_factory=dict)
    """rules fields that change the preset, e.g. {"n_players": 6} (the command line's --n-players 6)"""
    algorithm: str = "ppo"
    """ppo (masked PPO, policy + value heads), dmc (Deep Monte-Carlo: the policy head is Q(s, a)) or
    exit (expert iteration: the network learns the search's move values, generation by generation;
    an iteration is a generation)"""
    epsilon: float = 0.05
    """dmc only: share of random legal actions while collecting"""
    out: str = "runs/standard"
    """run folder: checkpoints, metrics.csv, TensorBoard events, learning_curve.png"""
    minutes: float = 60.0
    """wall-clock budget of the run, evaluations and checkpoints included"""
    max_iterations: int = 0
    """stop after this many iterations (0: only the time budget counts)"""
    seed: int = 0
    """seeds the deals, the seat assignment, the network init and the sampling"""
    games: int = 1024
    """hands played at once per collection (the batch of the core)"""
    init: str = ""
    """ppo and exit: a new run's network starts as this trained agent ("trained", a run folder
    or an agent file, for the same hands): its layer sizes, features, advisor and weights
    replace the run's own, and there is no warm start ("": fresh weights from the seed)"""
    hidden: tuple[int, ...] = (256, 128)
    """sizes of the context torso's hidden layers"""
    card_hidden: int = 32
    """width of the per-card scoring network"""
    hidden_trump_feature: bool = True
    """give the card scorer the suit of my face-down band card, the trump only the hider knows
    (False: the network of runs saved before this feature existed)"""
    critic: str = "observation"
    """ppo and exit: what the value (the baseline of the advantages) sees: "observation", the
    acting seat's own observation through the policy's torso, or "state", a separate network
    that also sees every hand and the face-down card (a centralised critic: it is used only
    in training, the policy still sees only its observation, and agent files leave it out;
    exit trains both values, and with exit_network_leaf the search's leaf is the critic, which
    sees the sampled deal's hands)"""
    advisor: str = "none"
    """a rule-based agent ("easy", "medium", "hard") whose chosen move the network sees beside
    the observation, as one more card plane and input ("none": the observation alone); the
    agent computes it again from the observation whenever it plays, so it is part of the
    agent, not a peek at hidden cards"""
    skip_forced: bool = False
    """play a decision with one legal action (about a fifth of them) without the network and
    keep no sample of it: it has no policy gradient, so this saves collection and update time"""
    learning_rate: float = 3e-4
    """Adam step size (at the start, when anneal_lr decays it)"""
    anneal_lr: bool = False
    """decay the step size linearly to zero over the run: over max_iterations when it is set,
    else over the minutes (a resume with more minutes recomputes it for the new budget, so
    the step size rises again to the share of the new budget still to come)"""
    epochs: int = 2
    """passes over each collection"""
    minibatch: int = 2048
    """samples per gradient step"""
    gamma: float = 1.0
    """discount between a seat's decisions (1: a hand is short and only its result counts)"""
    gae_lambda: float = 0.95
    """GAE lambda along a seat's decisions"""
    tens_reward: float = 0.2
    """shaping: reward to a team for each ten it takes, as it takes it (0: only the hand's result)"""
    clip: float = 0.2
    """PPO ratio clip"""
    entropy_coef: float = 0.005
    """entropy bonus, keeps exploring until the policy is sure"""
    value_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    imitate_iterations: int = 50
    """warm start: first iterations imitate the teacher (cross-entropy on its actions, value on results)"""
    teacher: str = "hard"
    """agent imitated during the warm start (a name, a search spec, a run folder or agent file)"""
    pool_share: float = 0.8
    """share of the games in which one team is an opponent from the pool"""
    pool_bots: tuple[str, ...] = ("hard",)
    """fixed agents always in the pool: names ("hard"), search specs, run folders or agent
    files (a search in the pool reads the moves seen, as in the arena)"""
    pool_bot_share: float = 0.75
    """share of the pool games played against the rule-based agents (the rest: snapshots)"""
    duplicate_baseline: bool = True
    """against a bot, reward the learner's result minus the bot's own result on the same deal
    (see duplicate_snapshots for the snapshots)"""
    duplicate_snapshots: bool = False
    """also replay the games against snapshots, snapshot against snapshot, for the duplicate
    baseline, at the cost of playing those hands twice; the snapshots sample their moves, so
    the replay adds that noise while it takes out the cards' (it cost band runs 1.5 to 2
    points)"""
    snapshot_every: int = 25
    """iterations between frozen snapshots of the learner added to the pool"""
    pool_snapshots: int = 4
    """snapshots kept in the pool (oldest dropped)"""
    eval_every_minutes: float = 10.0
    """minutes between duplicate-arena evaluations"""
    eval_deals: int = 400
    """deal pairs per evaluation (each deal played twice)"""
    eval_opponents: tuple[str, ...] = ("random", "hard")
    """agents the learner is evaluated against (names, search specs, run folders or agent files)"""
    checkpoint_every_minutes: float = 2.0
    """minutes between checkpoints (a crash loses at most this much work)"""
    precision: str = "float32"
    """the network's arithmetic in collection and update: "float32", or "bfloat16" (autocast:
    the weights and the optimiser stay float32, matrix products run in bfloat16): the update
    of a wide network twice as fast on CPUs with AMX or AVX-512 BF16 and on recent GPUs,
    collection not faster; emulated, several times slower and warned about on CPUs without
    it; evaluation and the saved agent play in float32"""
    device: str = "cpu"
    """torch device: cpu, cuda, cuda:1, mps ..."""
    threads: int = 0
    """torch CPU threads (0: all cores given to the process; warned about when the machine
    is busy, where --threads 1 can be several times faster)"""
    progress: bool = True
    """show a progress bar"""
    exit_search: str = "search:k=16,infer=0,exact=1"
    """exit only: the search that labels every decision with its move values (a search spec,
    see agents.search)"""
    exit_network_rollout: bool = False
    """exit only: from the second generation the search plays its rollouts with the current
    network instead of the spec's rollout agent"""
    exit_network_leaf: bool = False
    """exit only: from the second generation the search's rollouts end the spec's cut tricks
    after the move at the current network's value (the leaf of a spec without leaf=)"""
    exit_mover: str = "search"
    """exit only: who plays the moves of the labelled hands at every seat: "search" (the move
    it chooses, as in the arena) or "network" (the current network, greedy, while the search
    only labels: the decisions the network itself meets, as DAgger gathers them)"""
    exit_hands: int = 256
    """exit only: hands of search self-play labelled per generation (0: none; the network fits
    --exit-targets alone, a distillation of saved search labels)"""
    exit_targets: tuple[str, ...] = ()
    """exit only: saved search targets of the same rules (an expert-iteration run folder, its
    targets/ folder or one gen-NNNNNN folder, any run), read once and added to every fit; for
    an exact resume they must stay as they were"""
    exit_shard_hands: int = 64
    """exit only: hands played and searched at once, written as one shard (a crash loses at
    most one shard of work)"""
    exit_target: str = "softmax"
    """exit only: what the policy learns: "softmax", the softmax of the search's move values
    (points) over --exit-temperature; or "gated", the move the search plays (the base move
    unless another beats it by the spec's z standard errors), so moves the search cannot
    tell apart from the base move stop pulling the policy off it"""
    exit_temperature: float = 0.1
    """exit only: with --exit-target softmax, the policy target is the softmax of the
    search's move values (points) over this temperature"""
    exit_window: int = 2
    """exit only: the network fits the targets of this many generations, the newest last"""
    exit_kl: float = 0.0
    """exit only: weight of a penalty on the KL divergence of the policy from the one the run
    started with (its --init network), so that the first fits do not flatten a sharp policy
    before they teach it (0: none)"""
    exit_kl_views: bool = False
    """exit only: the KL penalty's reference plays the mean of its log-policies over the 24
    relabellings of the suits (as a ``:views=24`` spec plays), so the fit distils that
    averaged policy into one forward pass (needs --exit-kl; 24 reference passes a decision,
    once each time the fitted targets are read, not on every pass)"""
    exit_suit_symmetry: bool = False
    """exit only: the fit sees each decision with its four suits relabelled at random, afresh
    on every pass (no rule names a suit, so each label stands for up to 24 decisions)"""

    def __post_init__(self) -> None:
        check_types(self)
        check_output_name("--out (Args.out)", self.out, "run folder")
        for name, allowed in CHOICES.items():
            check_choice(f"Args.{name}", getattr(self, name), allowed)
        if self.critic == "state" and self.algorithm == "dmc":
            raise ValueError("Args.critic 'state' needs algorithm 'ppo' or 'exit' (DMC has no critic), got 'dmc'")
        self._check_ranges()
        if self.exit_targets and self.algorithm != "exit":
            raise ValueError(
                f"--exit-targets (Args.exit_targets) are fitted by --algorithm exit, not {self.algorithm!r}"
            )
        if self.exit_suit_symmetry and self.algorithm != "exit":
            raise ValueError(
                f"--exit-suit-symmetry (Args.exit_suit_symmetry) relabels the fits of --algorithm exit, "
                f"not {self.algorithm!r}"
            )
        if self.exit_kl_views and not self.exit_kl:
            raise ValueError(
                "--exit-kl-views (Args.exit_kl_views) averages the KL penalty's reference: give --exit-kl too"
            )
        if self.algorithm == "exit" and not self.exit_hands and not self.exit_targets:
            raise ValueError("--exit-hands 0 (Args.exit_hands) leaves nothing to learn from: give --exit-targets too")

    def resolved_rules(self) -> Rules:
        """The rules the run learns: the preset with ``rule_fields`` applied."""
        return resolve_rules(self.rules, **self.rule_fields)

    def _check_ranges(self) -> None:
        """Every numeric option inside its range (``RANGES``), each hidden layer's size too."""
        check_ranges(self, RANGES)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Args:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})  # lists become tuples in checking


def network_spec(rules: Rules, args: Args, advisor_level: dict[str, Any] | None = None) -> dict[str, Any]:
    """What rebuilds the network from a checkpoint (stored beside its weights, read by
    :func:`agents.network.build_network`); pass the network's ``advisor_level`` when saving one."""
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
