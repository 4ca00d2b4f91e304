"""The examples in the docs run as written: the package's docstring examples (doctest) and
the README's Python blocks for the env, the rules and the core."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import agents
import mendikot_env

README = Path(__file__).resolve().parents[1] / "README.md"

# Docstring examples that are not run here, and why.
NOT_RUN = {"mendikot_env.integrations.rllib": "its example trains on Ray (tests/test_rllib.py trains it)"}


def modules_with_examples() -> list[str]:
    """Every module of the two packages (the packages themselves too) with a docstring example."""
    names = []
    for package in (mendikot_env, agents):
        candidates = [package.__name__]
        candidates += [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")]
        for name in candidates:
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


def readme_python_block(section: str) -> str:
    """The first ```python block under the README heading ``## section``."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, start)
    assert match is not None and match.start() < text.find("\n## ", start + 1), f"no python block in {section}"
    return match.group(1)


def test_readme_environment_example(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict = {}
    exec(readme_python_block("The environment (PettingZoo)"), namespace)
    printed = capsys.readouterr().out
    result = namespace["env"].unwrapped.result
    assert set(result) == {"tens", "tricks", "winner", "mendikot", "whitewash", "next_dealer", "trump", "trick_winners"}
    assert repr(result) in printed and sum(result["tens"]) == 4


def test_readme_rules_example() -> None:
    """Each line runs; a line whose comment shows a ValueError raises exactly that (a
    trailing "..." stands for the rest of the message)."""
    namespace: dict = {}
    raising = 0
    for line in readme_python_block("Rules configuration").splitlines():
        code, _, comment = line.partition("#")
        if "ValueError: " in comment:
            message = comment.split("ValueError: ", 1)[1].strip().removesuffix("...")
            with pytest.raises(ValueError, match=re.escape(message)):
                exec(code, namespace)
            raising += 1
        else:
            exec(code, namespace)
    assert raising == 2


def test_readme_core_example() -> None:
    namespace: dict = {}
    exec(readme_python_block("The vectorised core"), namespace)
    state, results = namespace["state"], namespace["results"]
    assert state.batch_size == 1024 and state.done.all()
    assert results.as_dict(0)["tens"][0] + results.as_dict(0)["tens"][1] == 4
