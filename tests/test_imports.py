"""The packages' imports form no circle and point one way down the layers (STYLE.md rule 10).

Every module of ``mendikot_env`` and ``agents`` is read with ``ast`` (nothing is imported):
imports at module level, inside functions and under ``TYPE_CHECKING`` all count, relative
imports are resolved, and a name taken from a package's ``__init__`` that the ``__init__``
only re-exports (``from agents import make``) counts as an import of the module that
defines it (``agents.registry``), so a package that imports its own submodules is no circle.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mendikot_env", "agents")

# The layers, lowest first: a module may import its own layer and those below, never above.
# Patterns are matched in order, the first that fits decides (fnmatch: ``*`` matches dots too).
LAYERS: list[tuple[str, list[str]]] = [
    (
        "cards/rules",
        [
            "mendikot_env.cards",
            "mendikot_env.checks",
            "mendikot_env.rules",
            "mendikot_env.seeding",
            "mendikot_env.run_folder",
        ],
    ),
    (
        "core",
        ["mendikot_env.deals", "mendikot_env.core", "mendikot_env.core_*", "mendikot_env.core.*", "mendikot_env.match"],
    ),
    ("observation", ["mendikot_env.infostate", "mendikot_env.observation*", "mendikot_env.encoder*"]),
    ("belief", ["mendikot_env.belief*"]),  # one seat's knowledge of the unseen cards, from its observation
    (
        "env/wrappers",
        [
            "mendikot_env",  # the package's front door re-exports the env
            "mendikot_env.env",
            "mendikot_env.env_*",
            "mendikot_env.mendikot_v0",
            "mendikot_env.aec_wrappers",
            "mendikot_env.reset_options",
            "mendikot_env.registration",  # names the Gymnasium views by string entry points, imports nothing
            "mendikot_env.render",  # the env's text rendering (render_text); other render* modules draw pictures
            # the table picture the env's render_mode="rgb_array" draws (the viewers sit higher up)
            "mendikot_env.picture.scene",
            "mendikot_env.picture.svg",
            "mendikot_env.picture.raster",
        ],
    ),
    ("agents", ["agents", "agents.*"]),
    (
        "arena/records/analysis",
        [
            "mendikot_env.wrappers",  # the Gymnasium single-agent views play the other seats with agents
            "mendikot_env.arena*",
            "mendikot_env.records*",
            "mendikot_env.analysis*",
            "mendikot_env.picture*",  # presentation: the package front door and the record viewers
            "mendikot_env.render*",
            "mendikot_env.plots*",
        ],
    ),
    ("training", ["mendikot_env.training", "mendikot_env.training.*"]),
    ("integrations", ["mendikot_env.integrations", "mendikot_env.integrations.*"]),
    # the web table: the server's tables and views use agents, records, pictures and the play command's seat names
    (
        "commands",
        [
            "mendikot_env.commands",
            "mendikot_env.commands.*",
            "mendikot_env.cli",
            "mendikot_env.web",
            "mendikot_env.web.*",
        ],
    ),
]


def module_files() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name, for its ``__init__``)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def resolve_relative(module: str, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` inside ``module``."""
    package = module if is_package(module) else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{target}" if target else package


def reexports(package: str) -> dict[str, str]:
    """What a package's ``__init__`` takes from its own modules: name -> defining module."""
    names: dict[str, str] = {}
    for node in ast.walk(ast.parse(MODULES[package].read_text())):
        if isinstance(node, ast.ImportFrom):
            source = resolve_relative(package, node.level, node.module) if node.level else node.module or ""
            if source in MODULES and source != package:
                for alias in node.names:
                    names[alias.asname or alias.name] = source
    return names


def imported_modules(module: str) -> set[str]:
    """The package modules that ``module`` imports anywhere in its text."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            source = resolve_relative(module, node.level, node.module) if node.level else node.module or ""
            if source not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    found.add(submodule)
                elif is_package(source) and alias.name in reexports(source):
                    found.add(reexports(source)[alias.name])
                else:
                    found.add(source)
    found.discard(module)
    return found


GRAPH = {module: imported_modules(module) for module in MODULES}


def layer_of(module: str) -> int:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(fnmatchcase(module, pattern) for pattern in patterns):
            return index
    raise AssertionError(
        f"module {module} has no layer: add a pattern for it to LAYERS in tests/test_imports.py "
        f"(layers, lowest first: {', '.join(name for name, _ in LAYERS)}; STYLE.md rule 10)"
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_the_imports_it_should() -> None:
    """The reader itself: relative, function-level and re-exported imports are all found."""
    assert len(MODULES) > 40 and "agents.registry" in MODULES and "mendikot_env.training.loop" in MODULES
    assert (
        "mendikot_env.core" in GRAPH["mendikot_env.observation"]
        or "mendikot_env.cards" in GRAPH["mendikot_env.observation"]
    )
    assert "agents.neural" in GRAPH["agents.registry"], "a function-level import (_network_file) counts"
    assert {"agents.base", "agents.registry"} <= GRAPH["agents"], "a package's own re-exports are its imports"
    assert "agents" not in GRAPH["mendikot_env.training.pool"], "from agents import make is agents.registry"
    assert "agents.registry" in GRAPH["mendikot_env.training.pool"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle() -> None:
    found = cycles(GRAPH)
    shown = "\n".join(
        " <-> ".join(component) + ": " + "; ".join(f"{m} -> {sorted(GRAPH[m] & set(component))}" for m in component)
        for component in found
    )
    assert not found, f"modules that import each other (directly or round a circle):\n{shown}"


def test_imports_point_down_the_layers() -> None:
    upward = {
        (module, target): f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    }
    assert not upward, "imports that go up a layer (move what both need into the lower layer):\n" + "\n".join(
        text for _, text in sorted(upward.items())
    )
