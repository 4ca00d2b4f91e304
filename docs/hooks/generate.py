"""MkDocs hook: the pages written from the code at build time, so they never go stale.

- ``environment.md``: the module docstring of ``mendikot_env/env.py`` (PettingZoo's
  classic envs keep their documentation page there too).
- ``observations.md``: ``docs/observations.md`` with the piece tables of
  ``mendikot_env.observation.observation_layout`` for every preset and player count.
- ``notebooks/*.ipynb``: the research notebooks, copied so that their page links to them.
- ``reference/<module>.md``: one page per module of the packages ``mendikot_env`` and
  ``agents``, found by walking their folders, so a new module needs no edit here.

MkDocs' own hooks do this without a plugin; ``mkdocs.yml`` names this file under ``hooks:``.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mendikot_env", "agents")
PLAYER_COUNTS = (4, 6, 8)
REFERENCE_TITLE = "API reference"
if str(ROOT) not in sys.path:  # the observation tables import the package, installed or not
    sys.path.insert(0, str(ROOT))
# Sphinx roles some docstrings use (":func:`name`"): Markdown shows them as text, so the
# role is dropped from the page and the name stays as code.
SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):(?=<code>)")


def module_names() -> list[str]:
    """Every public module and package of PACKAGES, from the files on disk (nothing is imported)."""
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not any(part.startswith("_") for part in parts):  # private modules stay out
                names.append(".".join(parts))
    return sorted(names)


def reference_page(name: str) -> str:
    """The Markdown of one module's reference page: mkdocstrings renders the rest."""
    return f"# `{name}`\n\n::: {name}\n"


def environment_page() -> str:
    """The env module's docstring, as the environment page."""
    tree = ast.parse((ROOT / "mendikot_env" / "env.py").read_text(encoding="utf-8"))
    return ast.get_docstring(tree, clean=True) or "# The environment\n"


def piece_table(layout: Any) -> str:
    """A Markdown table of a layout's pieces: name, offset, shape, size, meaning."""
    rows = ["| piece | offset | shape | size | meaning |", "|---|---:|---|---:|---|"]
    for piece in layout.pieces.values():
        shape = "(" + ", ".join(map(str, piece.shape)) + ("," if len(piece.shape) == 1 else "") + ")"
        rows.append(f"| `{piece.name}` | {piece.start} | {shape} | {piece.size} | {piece.doc} |")
    rows.append(f"| **total** | | | **{layout.size}** | |")
    return "\n".join(rows)


def observation_tables() -> str:
    """One table per distinct layout, each saying which presets and player counts use it."""
    from mendikot_env.observation import observation_layout
    from mendikot_env.rules import PRESETS, Rules

    groups: dict[tuple, tuple[Any, list[str]]] = {}
    for n in PLAYER_COUNTS:
        for preset in PRESETS:
            layout = observation_layout(Rules.preset(preset, n_players=n))
            key = tuple((p.name, p.start, p.shape) for p in layout.pieces.values())
            groups.setdefault(key, (layout, []))[1].append(f"`{preset}`")
    parts = []
    for layout, users in groups.values():
        players = layout.pieces["trick"].shape[0]
        parts.append(f"### {players} players: {layout.size} floats\n\nUsed by the presets {', '.join(users)}.\n")
        parts.append(piece_table(layout) + "\n")
    return "\n".join(parts)


def on_config(config: Any) -> Any:
    """Append one nav entry per module under the API reference."""
    reference = [{name: f"reference/{name}.md"} for name in module_names()]
    for entry in config["nav"]:
        if isinstance(entry, dict) and REFERENCE_TITLE in entry:
            entry[REFERENCE_TITLE] = ["reference/index.md", *reference]
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add the generated pages to the site's files."""
    for name in module_names():
        files.append(File.generated(config, f"reference/{name}.md", content=reference_page(name)))
    files.append(File.generated(config, "environment.md", content=environment_page()))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):  # linked from notebooks.md
        files.append(File.generated(config, f"notebooks/{notebook.name}", abs_src_path=str(notebook)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Fill the observation page's placeholder with the generated tables."""
    if page.file.src_uri == "observations.md":
        return markdown.replace("<!-- observation tables -->", observation_tables())
    return markdown


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Drop Sphinx roles left in rendered docstrings."""
    return SPHINX_ROLE.sub("", html)
