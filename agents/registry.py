"""Agents by name (``"random"``, ``"easy"``, ``"medium"``, ``"hard"``, ``"trained"``, ``"apprentice"``) or by path.

``make(name, rules, seed)`` builds a named agent. ``load(spec, rules, seed)`` also accepts a
trained agent: a run folder of ``mendikot train`` (``agents.load("runs/NAME")``), a ``.pt``
file, ``"trained"`` or ``"apprentice"`` (the networks shipped with the package for the rules
played, ``standard`` or ``band``, under any rotation, scoring, target and direction: PPO
self-play, and expert iteration from it), or a file
whose suffix has a loader in ``CHECKPOINT_LOADERS`` (a plain table: ``.pt``, RLlib's
``.rllib`` exports, and what :func:`register_checkpoint_loader` adds; a ``train-rllib`` run
folder stands for its ``agent.rllib``), or several trained
networks joined by ``+`` (``"runs/a+runs/b"``: an ``EnsembleAgent`` that plays their
averaged policy), so the arena, the league and ``mendikot play`` take all of them without
changes. A trained network's spec may end in ``:views=24``: the network then plays its
policy averaged over the 24 relabellings of the suits (:mod:`agents.suit_symmetry`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mendikot_env.rules import Rules, resolve_rules

from .base import Agent, RandomAgent, check_trained_for
from .ensemble import MEMBER_SEPARATOR, EnsembleAgent
from .network_options import split_views
from .rule_based import LEVELS, RuleBasedAgent
from .search import AGENT_KEYS, NETWORK_KEYS, ROLLOUT_NAMES, SearchAgent, parse_search_spec

AGENT_NAMES = ("random", *LEVELS, "trained", "apprentice", "search")
# The networks shipped inside the package, by rules preset: "trained" (PPO self-play) and
# "apprentice" (expert iteration: it learned the search's move values); each name picks the
# file trained for the rules asked for.
_SHIPPED_FOLDER = Path(__file__).parent / "trained"
SHIPPED_AGENTS = {preset: _SHIPPED_FOLDER / f"{preset}.pt" for preset in ("standard", "band")}
SHIPPED_NETWORKS = {
    "trained": SHIPPED_AGENTS,
    "apprentice": {preset: _SHIPPED_FOLDER / f"apprentice-{preset}.pt" for preset in SHIPPED_AGENTS},
}

# A checkpoint loader: (path, rules or None, seed) -> Agent. With rules None the agent plays
# the rules it was trained for (a .pt checkpoint) or the standard game.
CheckpointLoader = Callable[[Path, Rules | None, int | None], Agent]


def _network_file(path: Path, rules: Rules | None, seed: int | None) -> Agent:
    """A ``mendikot train`` checkpoint or run folder (needs torch), checked against ``rules``."""
    try:
        import torch  # noqa: F401
    except ImportError as error:
        raise ValueError(f"loading {path} needs torch: pip install -e '.[train]' ({error})") from None
    from .neural import load_neural_agent

    agent = load_neural_agent(path, seed=seed)
    # The agent keeps its own rules (its advisor reads their scoring); rules that play hands
    # the same way differ only between hands, which it never sees.
    check_trained_for(path, agent.rules, rules)
    return agent


def _policy_file(path: Path, rules: Rules | None, seed: int | None) -> Agent:
    """An exported ``.rllib`` policy (numpy only), checked against ``rules`` (default: the standard game)."""
    from .policy_file import load_policy_file

    return load_policy_file(path, Rules() if rules is None else rules, seed)


# File suffix -> loader: a plain table (a run folder is read by the loader of its agent file).
CHECKPOINT_LOADERS: dict[str, CheckpointLoader] = {".pt": _network_file, ".rllib": _policy_file}


def register_checkpoint_loader(suffix: str, loader: CheckpointLoader) -> None:
    """Let :func:`load` open checkpoints whose file name ends in ``suffix`` (e.g. ``".onnx"``):
    an entry added to ``CHECKPOINT_LOADERS``. The loader is called with ``(path, rules, seed)``."""
    if not suffix.startswith("."):
        raise ValueError(f"checkpoint suffix must start with a dot, got {suffix!r}")
    CHECKPOINT_LOADERS[suffix] = loader


def make(name: str, rules: Rules | str | None = None, seed: int | None = None) -> Agent:
    """A named agent: ``random``, a rule-based level (``easy``, ``medium``, ``hard``),
    ``trained`` or ``apprentice`` (the shipped PPO and expert-iteration networks for ``rules``: the
    ``standard`` or ``band`` preset; need torch)
    or ``search`` (determinised search; ``search:k=64,rollout=hard,budget_ms=50``, see :mod:`agents.search`).
    A network's name may end in ``:views=24``: it then plays its policy averaged over every
    relabelling of the suits (:mod:`agents.suit_symmetry`).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key is not None and not _is_search(key) and (plain := split_views(name))[0] != name:
        return _with_views(make(plain[0], rules, seed), plain[1], name)
    if key not in AGENT_NAMES and not (key is not None and _is_search(key)):
        what = f"unknown agent {name!r}" if isinstance(name, str) else f"agent name must be text, got {name!r}"
        raise ValueError(
            f"{what}; known agents: {', '.join(AGENT_NAMES)}"
            " (agents.load and --a also take a run folder or checkpoint path)"
        )
    return _named_agent(key, resolve_rules(rules), seed, text=name.strip())


def _named_agent(key: str, rules: Rules, seed: int | None, text: str | None = None) -> Agent:
    """The agent of a known name (lower case, one of ``AGENT_NAMES``) for resolved ``rules``;
    ``text``: a search spec as written (its rollout may be a path, whose case counts)."""
    if key == "random":
        return RandomAgent(seed=seed)
    if key in SHIPPED_NETWORKS:
        agent = _network_file(_shipped_agent_for(key, rules), None, seed)  # the file was picked for these hands
        agent.name = key
        return agent
    if _is_search(key):
        return _search_agent(key, rules, seed, key if text is None else text)
    return RuleBasedAgent(rules, key, seed=seed)


def load(spec: str | Path, rules: Rules | str | None = None, seed: int | None = None) -> Agent:
    """An agent from a name (see :func:`make`), a training run folder, or a checkpoint file.

    Args:
        spec: agent name, run folder, ``.pt`` file, a file with a registered suffix, or
            trained networks joined by ``+`` (an ensemble); a trained network's spec may end in
            ``:views=24`` (its policy averaged over the 24 relabellings of the suits).
        rules: the rules it will play (a Rules or a preset name); a trained agent must have been trained for them
            (None: the agent's own rules, or the standard game for named agents).
        seed: seed of the agent's randomness.
    """
    if not isinstance(spec, str | Path) or not str(spec).strip():
        raise ValueError(f"agent spec {spec!r}: give an agent name ({', '.join(AGENT_NAMES)}), a run folder or a file")
    spec = str(spec)
    rules = None if rules is None else resolve_rules(rules)  # a Rules, a preset name or a dict of fields
    if (key := spec.strip().lower()) in AGENT_NAMES or _is_search(key):
        return _named_agent(key, Rules() if rules is None else rules, seed, text=spec.strip())
    path = Path(spec)
    if MEMBER_SEPARATOR in spec and not path.exists():
        return EnsembleAgent([load(part, rules, seed) for part in _ensemble_members(spec)])
    if not path.exists() and (plain := split_views(spec))[0] != spec:
        return _with_views(load(plain[0], rules, seed), plain[1], spec)
    looks_like_path = path.suffix != "" or "/" in spec or path.exists()
    if not looks_like_path:
        return make(spec, rules, seed)  # raises with the list of names
    if not path.exists():
        raise ValueError(f"checkpoint {spec!r} does not exist")
    if path.is_dir():
        path = _run_folder_agent(path)
    loader = CHECKPOINT_LOADERS.get(".pt" if path.is_dir() else path.suffix)
    if loader is None:
        known = ", ".join(["run folders", *sorted(CHECKPOINT_LOADERS)])
        raise ValueError(
            f"no checkpoint loader for {spec!r} (suffix {path.suffix or '(none)'!r}; loaders: {known}); "
            f"known agent names: {', '.join(AGENT_NAMES)}"
        )
    agent = loader(path, rules, seed)
    if not hasattr(agent, "name"):
        agent.name = path.stem  # type: ignore[attr-defined]
    return agent


def _with_views(agent: Agent, views: int, spec: str) -> Agent:
    """``agent`` playing ``views`` suit views (see :func:`load`), named by its ``spec``.

    Raises:
        ValueError: ``agent`` is no single trained network, naming the spec.
    """
    if not hasattr(agent, "set_views"):
        raise ValueError(
            f"agent spec {spec!r}: views= averages a trained network's policy over the suits, and "
            f"{getattr(agent, 'name', spec)!r} is not one (a shipped network, a run folder or a .pt file)"
        )
    agent.set_views(views)
    agent.name = f"{agent.name}:views={views}"
    return agent


def names_files(spec: str) -> bool:
    """Whether loading ``spec`` may read a file: a path, or an ensemble member or a search
    spec's agent that names one (a server lets only its own machine name files)."""
    for member in spec.split(MEMBER_SEPARATOR):
        if _is_search(member.strip().lower()):
            try:
                settings = parse_search_spec(member)  # its agents' views are checked here too
            except ValueError:
                continue  # a malformed search spec reads nothing: loading it says what is wrong
            chosen = [getattr(settings, key) for key in (*AGENT_KEYS, *NETWORK_KEYS)]
            named = [split_views(value)[0] for value in chosen if value is not None]
        else:
            try:
                named = [split_views(member)[0]]
            except ValueError:
                named = [member]  # an existing file may hold a bad views ending in its name
        if any(value.strip().lower() not in AGENT_NAMES for value in named):
            return True
    return False


def _is_search(key: str) -> bool:
    """Whether a lower-cased spec names the search agent (``search`` or ``search:k=64,...``)."""
    return key.partition(":")[0].strip() == "search"


def _search_agent(spec: str, rules: Rules, seed: int | None, text: str) -> Agent:
    """The search agent of a ``search:k=64,rollout=hard,budget_ms=50`` spec (see :mod:`agents.search`),
    lower case in ``spec`` (its name) and as written in ``text`` (a rollout path keeps its case)."""
    settings = parse_search_spec(text)
    rollout = _spec_agent(text, "rollout", settings.rollout, rules, seed)
    leaf = None if settings.leaf is None else _spec_network(text, "leaf", settings.leaf, rules, seed).state_values
    prior = None if settings.prior is None else _spec_network(text, "prior", settings.prior, rules, seed)
    named = {  # base, weigh, own: where the spec names none, the rollout policy's part
        key: _spec_agent(text, key, value, rules, seed)
        for key in AGENT_KEYS
        if key != "rollout" and (value := getattr(settings, key)) is not None
    }
    return SearchAgent(rules, rollout, settings, seed=seed, name=spec, leaf=leaf, prior=prior, **named)


def _spec_agent(text: str, key: str, value: str, rules: Rules, seed: int | None) -> Agent:
    """The agent a search spec's ``rollout``, ``base``, ``weigh`` or ``own`` names: one of
    ``ROLLOUT_NAMES``, else a trained network's run folder or file, checked to play ``rules``."""
    if value in ROLLOUT_NAMES:
        return _named_agent(value, rules, seed)
    return _spec_network(text, key, value, rules, seed)


def _spec_network(text: str, key: str, path: str, rules: Rules, seed: int | None) -> Any:
    """The trained network a search spec's ``key`` names, loaded and checked for ``rules``."""
    try:
        return load(path, rules, seed)
    except ValueError as error:
        raise ValueError(f"search spec {text!r}: {key}={path!r}: {error}") from None


def _run_folder_agent(folder: Path) -> Path:
    """The agent file of a run folder: ``mendikot train``'s (the folder itself, read by
    ``load_neural_agent``), else another trainer's ``agent<suffix>`` with a loader
    (``train-rllib`` writes ``agent.rllib``)."""
    if (folder / "agent.pt").is_file() or (folder / "checkpoint.pt").is_file():
        return folder
    for suffix in sorted(CHECKPOINT_LOADERS):
        if (folder / f"agent{suffix}").is_file():
            return folder / f"agent{suffix}"
    return folder  # load_neural_agent names the missing agent.pt


def _shipped_agent_for(name: str, rules: Rules) -> Path:
    """The file of the shipped network ``name`` (a key of ``SHIPPED_NETWORKS``) trained for exactly ``rules``.

    Raises:
        ValueError: no shipped agent plays these rules, naming the presets that have one.
    """
    for preset, path in SHIPPED_NETWORKS[name].items():
        if not Rules.preset(preset).hand_differences(rules):
            return path
    raise ValueError(
        f"no shipped {name} agent plays {rules}; the shipped ones play hands as the presets "
        f"{', '.join(SHIPPED_NETWORKS[name])} do (any rotation, scoring, target and direction), and "
        "`mendikot train --rules PRESET` trains one for a preset"
    )


def _ensemble_members(spec: str) -> list[str]:
    """The member specs of ``"runs/a+runs/b"``, each checked to be an agent name or an existing path.

    Raises:
        ValueError: an empty member or a missing path, naming the whole spec (a mistyped single
            path with a ``+`` in it lands here too).
    """
    parts = [part.strip() for part in spec.split(MEMBER_SEPARATOR)]
    rule = f"members are split at {MEMBER_SEPARATOR!r} unless the whole spec is an existing path"
    for part in parts:
        if part == "":
            raise ValueError(f"ensemble spec {spec!r} has an empty member; {rule}")
        plain = split_views(part)[0] if not Path(part).exists() else part
        if plain.lower() not in AGENT_NAMES and not Path(plain).exists():
            raise ValueError(f"{part!r} (a member of the ensemble spec {spec!r}) does not exist; {rule}")
    return parts
