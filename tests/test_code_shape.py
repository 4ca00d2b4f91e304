"""The shape of the package's code: no function longer than the house limit.

Every function and method of ``mendikot_env`` and ``agents`` (nested ones too) is measured
from its ``def`` line to its last line, docstring included, decorators not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mendikot_env", "agents")
MAX_LINES = 80


def function_lengths() -> list[tuple[str, int]]:
    """``("path:line name", lines)`` for every function in the packages."""
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                    out.append((where, node.end_lineno - node.lineno + 1))
    return out


def test_the_walk_finds_the_packages_functions() -> None:
    names = {where.split()[-1] for where, _ in function_lengths()}
    assert {"step", "legal_bits", "reset", "observation_layout", "make"} <= names


def test_no_function_is_longer_than_80_lines() -> None:
    offenders = sorted((lines, where) for where, lines in function_lengths() if lines > MAX_LINES)
    listed = "\n".join(f"  {lines:4d} lines  {where}" for lines, where in reversed(offenders))
    if offenders:
        pytest.fail(
            f"{len(offenders)} function(s) longer than {MAX_LINES} lines (def to end):\n{listed}", pytrace=False
        )
