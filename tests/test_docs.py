"""The examples in the docs run as written: the package's docstring examples (doctest), the
Python blocks of the README and of the docs pages (a line whose comment shows an error
raises exactly that), every `mendikot ...` command line they show, and the pages the docs
build writes from the code (docs/hooks/generate.py)."""

from __future__ import annotations

import builtins
import doctest
import importlib
import importlib.util
import pkgutil
import re
import shlex
from pathlib import Path
from types import ModuleType

import pytest

import agents
import mendikot_env
from mendikot_env import Rules, core
from mendikot_env.cli import build_parser
from mendikot_env.observation import observation_layout

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

# Docstring examples that are not run here, and why.
NOT_RUN = {"mendikot_env.integrations.rllib": "its example trains on Ray (tests/test_rllib.py trains it)"}

# A comment that shows an error: "# ValueError: message" (a trailing "..." stands for the rest).
ERROR_COMMENT = re.compile(r"#\s*(\w+Error): (.*)$")


def all_module_names() -> list[str]:
    """Every module of the two packages, the packages themselves too."""
    names = []
    for package in (mendikot_env, agents):
        names.append(package.__name__)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")]
    return names


def modules_with_examples() -> list[str]:
    """Every module of the two packages (the packages themselves too) with a docstring example."""
    names = []
    for name in all_module_names():
        if name in NOT_RUN:
            continue
        module = importlib.import_module(name)
        if any(test.examples for test in doctest.DocTestFinder().find(module)):
            names.append(name)
    return names


def test_the_examples_found_include_the_main_modules() -> None:
    main = {"mendikot_env", "mendikot_env.core", "mendikot_env.env", "mendikot_env.wrappers", "mendikot_env.arena"}
    assert main <= set(modules_with_examples())


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failures, attempted = doctest.testmod(module, optionflags=flags, verbose=False)
    assert attempted > 0
    assert failures == 0, f"{failures} docstring example(s) of {name} failed (doctest's report is above)"


def code_blocks(path: Path, language: str) -> list[tuple[str, str]]:
    """Every ```language block of a Markdown file, with the heading it stands under."""
    blocks, heading, fence, lines = [], "", None, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if fence is None and line.startswith("```"):
            fence, lines = line[3:].strip(), []
        elif fence is not None and line.startswith("```"):
            if fence == language:
                blocks.append((heading, "\n".join(lines) + "\n"))
            fence = None
        elif fence is not None:
            lines.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    return blocks


def python_block(path: Path, section: str) -> str:
    """The first ```python block under the heading ``section`` of a Markdown file."""
    for heading, code in code_blocks(path, "python"):
        if heading == section:
            return code
    raise AssertionError(f"no python block under {section!r} in {path.name}")


def run_block(code: str) -> dict:
    """Run a block line by line where a comment shows an error (that line must raise it),
    else as a whole; returns its namespace."""
    namespace: dict = {}
    if not any(ERROR_COMMENT.search(line) for line in code.splitlines()):
        exec(compile(code, "<docs>", "exec"), namespace)
        return namespace
    for line in code.splitlines():
        match = ERROR_COMMENT.search(line)
        if match is None:
            exec(line, namespace)
            continue
        error = namespace.get(match[1]) or getattr(core, match[1], None) or getattr(builtins, match[1])
        with pytest.raises(error, match=re.escape(match[2].strip().removesuffix("..."))):
            exec(line.partition("#")[0], namespace)
    return namespace


PYTHON_BLOCKS = [
    pytest.param(code, id=f"{path.name}:{heading}") for path in PAGES for heading, code in code_blocks(path, "python")
]


@pytest.mark.parametrize("code", PYTHON_BLOCKS)
def test_python_blocks_run(code: str) -> None:
    """Every Python block of the README and the docs pages runs (and raises what it shows)."""
    run_block(code)


def test_readme_environment_example(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run_block(python_block(README, "The environment"))
    printed = capsys.readouterr().out
    result = namespace["env"].unwrapped.result
    assert set(result) == {"tens", "tricks", "winner", "mendikot", "whitewash", "next_dealer", "trump", "trick_winners"}
    assert repr(result) in printed and sum(result["tens"]) == 4


def test_readme_core_example() -> None:
    namespace = run_block(python_block(README, "The vectorised core"))
    state, results = namespace["state"], namespace["results"]
    assert state.batch_size == 1024 and state.done.all()
    assert results.as_dict(0)["tens"][0] + results.as_dict(0)["tens"][1] == 4


def test_rules_example_shows_the_errors() -> None:
    code = python_block(DOCS / "rules.md", "The rules in code")
    assert sum(bool(ERROR_COMMENT.search(line)) for line in code.splitlines()) == 2
    run_block(code)


def test_observation_example() -> None:
    namespace = run_block(python_block(DOCS / "observations.md", "Observations"))
    assert namespace["obs"].shape == (8, 864) and namespace["hand"].shape == (8, 52)
    assert list(namespace["pieces"]) == list(observation_layout(Rules.preset("band")).pieces)


def test_gymnasium_example(capsys: pytest.CaptureFixture[str]) -> None:
    run_block(python_block(DOCS / "rl-libraries.md", "Gymnasium views"))
    assert capsys.readouterr().out.strip() == "mendikot_env/Mendikot-v0 64"


def command_lines() -> list[str]:
    """Every `mendikot ...` command of the README's and the docs' bash blocks (continued lines joined)."""
    commands = []
    for path in PAGES:
        for _, code in code_blocks(path, "bash"):
            for line in code.replace("\\\n", " ").splitlines():
                for part in line.partition("#")[0].split("&&"):
                    words = shlex.split(part)
                    if "mendikot" in words:
                        commands.append(shlex.join(words[words.index("mendikot") :]))
    return commands


def test_the_docs_show_commands() -> None:
    shown = {line.split()[1] for line in command_lines() if len(line.split()) > 1}
    assert {"train", "league", "arena", "play", "replay", "bench", "train-rllib"} <= shown


@pytest.mark.parametrize("line", command_lines())
def test_command_lines_parse(line: str) -> None:
    """The options shown exist and take the values shown (argparse exits on a bad one)."""
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.command == shlex.split(line)[1]


def load_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "hooks" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_has_a_page_for_every_module() -> None:
    public = {name for name in all_module_names() if not any(part.startswith("_") for part in name.split("."))}
    assert set(load_hooks().module_names()) == public


def test_generated_observation_tables() -> None:
    tables = load_hooks().observation_tables()
    for n, size in ((4, 864), (6, 1087), (8, 1313)):
        layout = observation_layout(Rules(n_players=n))
        assert layout.size == size and f"### {n} players: {size} floats" in tables
        assert all(f"| `{name}` |" in tables for name in layout.pieces)


def test_env_docstring_lists_the_observation_pieces_in_order() -> None:
    """The env page's piece tables (written by hand, PettingZoo style) follow the layout:
    the plain pieces, then the history pieces that ``history=True`` appends."""
    doc = importlib.import_module("mendikot_env.env").__doc__
    names = re.findall(r"^\| `(\w+)`\s*\|", doc.split("## Observation Space", 1)[1], re.M)
    assert names == list(observation_layout(Rules(), history=True).pieces)
    assert "## Legal Actions Mask" in doc and "## Version History" in doc


def test_readme_is_the_front_page_and_states_the_ci_test_command() -> None:
    """The README stays short, and the test command it states is the one CI runs."""
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    command = 'pip install torch==2.13.0 -e ".[dev,train,rl,web]" && pytest -n 2'
    assert command in readme and "&& pytest -n 2" in ci and "mkdocs build --strict" in ci


def test_every_notebook_is_described() -> None:
    page = (DOCS / "notebooks.md").read_text(encoding="utf-8")
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks and all(f"](notebooks/{notebook.name})" in page for notebook in notebooks)
