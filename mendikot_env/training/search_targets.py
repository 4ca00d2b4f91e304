"""Search targets: batched search self-play that labels every decision with the search's move values.

What expert iteration learns from (:mod:`mendikot_env.training.exit`). Hands are played on the
batched core; at every decision of every live hand the search (:class:`agents.search.SearchAgent`)
values each legal move over K sampled deals, all decisions of the batch in one search call
(:meth:`~agents.search.SearchAgent.labels`). The moves are played by the search itself (the
move it chooses, as it plays in the arena) or by another agent, the ``mover``, while the search
only labels. For every decision a shard keeps:

- ``observations``: (N, D) float32, the mover's observation with the history pieces
  (``ObservationEncoder(rules, history=True)``; the plain observation is its prefix);
- ``masks``: (N, 53) bool, its legal actions;
- ``values``: (N, 53) float32, the search's mean outcome of every legal move for the mover's
  team (:func:`agents.search.team_value`'s points), NaN on illegal moves and on every move of a
  forced decision (one legal action: nothing to search);
- ``spreads``: (N, 53) float32, the standard error of each move's mean gain over the base
  move on the same deals (0 on the base move's run), NaN where ``values`` are: how sure the
  search is that a move beats the one it falls back on;
- ``base``: (N,) int64, the base agent's move (the search's rollout policy by default);
- ``chosen``: (N,) int64, the move the search plays: the base move unless another gains more
  than the spec's ``z`` standard errors over it (:func:`agents.search.gated`);
- ``outcomes``: (N,) float32, how the hand ended for the mover's team, in the same points;
- ``hidden``: (N, (n + 1) * 52) bool, what the mover cannot see: every hand by seat from the
  mover's (:func:`~mendikot_env.observation.hidden_planes`), then the face-down card, for a
  value that knows the cards (a centralised critic, a leaf value on sampled deals); never an
  input of a policy that plays;
- ``hands``: (N,) int64, the hand of the shard each decision belongs to.

The observation with the history pieces decodes into the mover's information state
(:func:`mendikot_env.observation.decode_info`).

A target folder holds ``manifest.json`` (format, version, run id, rules, settings) and shards
``shard-000000.npz``, ... (compressed npz). Each shard is a pure function of the seed, its index and the search,
and is written atomically (a temporary file, then a rename), so a killed run, started again
with the same run id, keeps every shard written and redoes only the one it was writing.

Example:
    >>> import agents, tempfile
    >>> from mendikot_env import Rules
    >>> search = agents.make("search:k=2,infer=0,exact=1", Rules(), seed=0)
    >>> folder = tempfile.mkdtemp()
    >>> stats = generate_targets(folder, Rules(), search, run_id="demo", shards=1, hands_per_shard=1)
    >>> read_targets(folder, Rules(), run_id="demo")["values"].shape[1]
    53
"""

from __future__ import annotations

import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, seed_agent
from agents.search import SearchAgent, team_value
from mendikot_env import core
from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.observation import ObservationEncoder, hidden_planes
from mendikot_env.rules import Rules

from .atomic import write_atomic

FORMAT = "mendikot-search-targets"
VERSION = 2  # the version written; 2 added spreads, base and chosen
READ_VERSIONS = (1, 2)  # the versions read: a version 1 folder lacks the arrays version 2 added
ADDED_IN_2 = ("spreads", "base", "chosen")
MANIFEST = "manifest.json"
# What a shard holds, and each array's dtype and width (None: one value per decision).
SHARD_ARRAYS = {"observations": (np.float32, -1), "masks": (np.bool_, NUM_ACTIONS), "values": (np.float32, NUM_ACTIONS)}
SHARD_ARRAYS |= {"spreads": (np.float32, NUM_ACTIONS), "base": (np.int64, None), "chosen": (np.int64, None)}
SHARD_ARRAYS |= {"hidden": (np.bool_, -2), "outcomes": (np.float32, None), "hands": (np.int64, None)}


class TargetsError(ValueError):
    """A target folder of another run or rules, or a shard that cannot be read."""


@dataclass
class TargetStats:
    """What one :func:`generate_targets` call did."""

    shards: int = 0  # shards written by this call (those already there are kept)
    decisions: int = 0  # decisions written by this call
    labelled: int = 0  # of them, the decisions the search valued (two or more legal moves)
    seconds: float = 0.0  # wall-clock time of this call
    cpu_seconds: float = 0.0  # this process's CPU time in the call (one core's work on a busy machine)
    kept_decisions: int = 0  # decisions of the shards already there, kept (a resumed generation's)
    kept_labelled: int = 0  # of them, the decisions the search valued

    @property
    def labelled_per_cpu_s(self) -> float:
        """Labelled decisions per second of one core."""
        return self.labelled / max(self.cpu_seconds, 1e-9)


def shard_path(folder: Path, index: int) -> Path:
    return Path(folder) / f"shard-{index:06d}.npz"


def generate_targets(
    folder: str | Path,
    rules: Rules,
    search: SearchAgent,
    run_id: str,
    shards: int,
    hands_per_shard: int = 32,
    seed: int = 0,
    mover: Agent | None = None,
) -> TargetStats:
    """Write shards ``0 .. shards - 1`` of a target folder, skipping those already written.

    Args:
        folder: the target folder (made if missing).
        rules: the rules played; a folder made for other rules is refused.
        search: the search that values the moves (its K, rollout and inference as built).
        run_id: names the run the folder belongs to; a folder of another run is refused.
        shards: how many shards the folder should hold when done.
        hands_per_shard: hands played at once, all of a shard's decisions searched together.
        seed: seeds each shard's deals and the search (shard i: ``(seed, i)``).
        mover: the agent that plays the moves (None: the move the search chooses).

    Raises:
        TargetsError: the folder belongs to another run id or rules, or a shard already there
            cannot be read (nothing in the folder is changed).
    """
    folder = Path(folder)
    settings = {"hands_per_shard": hands_per_shard, "seed": seed, "search": search.name}
    settings["mover"] = "search" if mover is None else str(getattr(mover, "name", type(mover).__name__))
    version = open_folder(folder, rules, run_id, settings)
    if version != VERSION and any(not shard_path(folder, index).exists() for index in range(shards)):
        raise TargetsError(
            f"target folder {folder} holds format version {version}; this package writes version {VERSION}: "
            "give another folder to add shards to"
        )
    stats = TargetStats()
    for index in range(shards):
        if shard_path(folder, index).exists():  # a corrupt shard is refused before any work
            kept = read_shard(shard_path(folder, index), rules, version)
            stats.kept_decisions += len(kept["outcomes"])
            stats.kept_labelled += labelled(kept)
    start, cpu_start = time.perf_counter(), time.process_time()
    encoder = ObservationEncoder(rules, history=True)
    for index in range(shards):
        path = shard_path(folder, index)
        if path.exists():
            continue
        shard_seed = np.random.SeedSequence([seed, index])
        search.seed(int(shard_seed.generate_state(1)[0]))
        if mover is not None:
            seed_agent(mover, int(shard_seed.generate_state(2)[1]))
        state = core.new_hands(rules, hands_per_shard, rng=np.random.default_rng(shard_seed))
        arrays = label_hands(state, search, encoder, mover)
        write_atomic(path, lambda file, arrays=arrays: np.savez_compressed(file, **arrays))
        stats.shards += 1
        stats.decisions += len(arrays["outcomes"])
        stats.labelled += labelled(arrays)
    stats.seconds, stats.cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    return stats


def labelled(arrays: dict[str, np.ndarray]) -> int:
    """How many of a shard's decisions the search valued (two or more legal moves)."""
    return int(np.isfinite(arrays["values"]).any(axis=1).sum())


def open_folder(folder: Path, rules: Rules, run_id: str, settings: dict[str, Any]) -> int:
    """Make the folder and its manifest, or check that the one there is this run's: same
    format, run id and rules (the settings are kept for the record, not compared); returns
    the folder's format version."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(".shard-*.tmp"):  # a shard a killed run was writing
        stale.unlink(missing_ok=True)
    path = folder / MANIFEST
    if not path.exists():
        manifest = {"format": FORMAT, "version": VERSION, "run_id": run_id, "rules": rules.to_dict(), **settings}
        write_atomic(path, lambda file: file.write(json.dumps(manifest, indent=1).encode()))
        return VERSION
    return int(check_manifest(folder, rules, run_id)["version"])


def check_manifest(folder: Path, rules: Rules | None = None, run_id: str | None = None) -> dict[str, Any]:
    """The folder's manifest, checked against the run id and rules asked for (None: any).

    Raises:
        TargetsError: naming the folder, the value found and the one asked for.
    """
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        found = (manifest["format"], manifest["version"], manifest["run_id"], manifest["rules"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise TargetsError(f"{path} is not a search-target manifest ({error})") from None
    problem = ""
    if found[0] != FORMAT or found[1] not in READ_VERSIONS:
        problem = (
            f"holds format {found[0]!r} version {found[1]!r}; this package reads {FORMAT!r} versions {READ_VERSIONS}"
        )
    elif run_id is not None and found[2] != run_id:
        problem = f"belongs to run {found[2]!r}, not {run_id!r}: give another folder"
    elif rules is not None and found[3] != rules.to_dict():
        problem = f"was made for rules {found[3]}, not {rules.to_dict()}"
    if problem:
        raise TargetsError(f"target folder {folder} {problem}")
    return manifest


def read_shard(path: Path, rules: Rules, version: int = VERSION) -> dict[str, np.ndarray]:
    """One shard's arrays, checked: every array of its format ``version`` there, of its dtype
    and width, one row per decision.

    Raises:
        TargetsError: naming the file and what is wrong with it.
    """
    widths = {-1: ObservationEncoder(rules, history=True).size, -2: (rules.n_players + 1) * 52}
    names = [name for name in SHARD_ARRAYS if version >= 2 or name not in ADDED_IN_2]
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in names}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise TargetsError(f"shard {path} cannot be read (corrupt or foreign file): {error}") from None
    rows = len(arrays["outcomes"])
    for name in names:
        dtype, columns = SHARD_ARRAYS[name]
        shape = (rows,) if columns is None else (rows, widths.get(columns, columns))
        if arrays[name].dtype != dtype or arrays[name].shape != shape:
            raise TargetsError(
                f"shard {path}: {name!r} is {arrays[name].dtype} {arrays[name].shape}, expected {np.dtype(dtype)} "
                f"{shape} (a shard of other rules or another format)"
            )
    return arrays


def read_targets(folder: str | Path, rules: Rules, run_id: str | None = None) -> dict[str, np.ndarray]:
    """Every shard of a target folder joined (``hands`` numbered across shards), checked; a
    version 1 folder has no ``spreads``, ``base`` or ``chosen``."""
    folder = Path(folder)
    version = check_manifest(folder, rules, run_id)["version"]
    parts = [read_shard(path, rules, version) for path in shard_files(folder)]
    offset = 0
    for part in parts:
        local = part["hands"]
        part["hands"] = local + offset
        offset += int(local.max(initial=-1)) + 1
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]} if parts else {}


def shard_files(folder: Path) -> list[Path]:
    """A target folder's shards, in order."""
    return sorted(folder.glob("shard-*.npz"))


def target_folders(path: str | Path) -> list[Path]:
    """The target folders ``path`` names: itself when it holds a manifest, else its
    ``gen-NNNNNN`` folders, or those of its ``targets/`` folder (a run folder), in order.

    Raises:
        TargetsError: naming the path, when it holds none.
    """
    path = Path(path)
    if not path.is_dir():
        raise TargetsError(f"{path} {'is not a folder' if path.exists() else 'does not exist'}: give a target folder")
    if (path / MANIFEST).is_file():
        return [path]
    for root in (path, path / "targets"):
        folders = sorted(folder for folder in root.glob("gen-*") if (folder / MANIFEST).is_file())
        if folders:
            return folders
    raise TargetsError(
        f"{path} holds no search targets: give a target folder (with {MANIFEST}), a folder of gen-NNNNNN "
        "target folders or an expert-iteration run folder"
    )


def label_hands(
    state: core.State, search: SearchAgent, encoder: ObservationEncoder, mover: Agent | None
) -> dict[str, np.ndarray]:
    """Play every hand of ``state`` to the end (in place), the search valuing each decision."""
    B = state.batch_size
    names = ("observations", "masks", "values", "spreads", "base", "chosen", "hidden", "hands")
    columns: dict[str, list[np.ndarray]] = {name: [] for name in names}
    seats: list[np.ndarray] = []
    actions = np.zeros(B, dtype=np.int64)
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        bits = core.legal_bits(state)
        obs = encoder.encode(state, state.current, legal=bits)[live]
        masks = core.legal_action_mask(state)[live]
        labels = search.labels(obs, masks)
        if mover is None:
            played = labels.chosen
        else:
            played = np.asarray(mover.act(encoder.for_agent(obs, mover), masks), dtype=np.int64)
        hidden = hidden_planes(state, state.current)[live].astype(bool)
        arrays = (obs, masks, labels.values, labels.spreads, labels.base, labels.chosen, hidden, live)
        for name, array in zip(columns, arrays, strict=True):
            columns[name].append(array)
        seats.append(state.current[live])
        actions[:] = 0
        actions[live] = played
        core.step(state, actions, check=False)
    arrays = {name: np.concatenate(parts) for name, parts in columns.items()}
    team0 = team_value(state).astype(np.float32)  # the hand's outcome for the team of seats 0, 2, ...
    sign = np.where(np.concatenate(seats) % 2 == 0, 1, -1).astype(np.float32)
    arrays["outcomes"] = sign * team0[arrays["hands"]]
    return arrays
