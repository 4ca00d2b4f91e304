"""The notebooks run top to bottom in QUICK mode (small sizes) without an error output.

CI executes them here so they keep working as the package changes; the committed outputs
come from the full settings (the README section "Notebooks" has the command).
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NEEDS_TORCH = {
    "02_benchmark_bots.ipynb",
    "03_train_selfplay.ipynb",
    "06_expert_iteration.ipynb",
}  # trained agents, training


def notebook_names() -> list[str]:
    return sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def test_the_six_notebooks_are_there() -> None:
    assert notebook_names() == [
        "01_quickstart.ipynb",
        "02_benchmark_bots.ipynb",
        "03_train_selfplay.ipynb",
        "04_hidden_trump.ipynb",
        "05_belief_and_search.ipynb",
        "06_expert_iteration.ipynb",
    ]


def test_committed_notebooks_have_outputs_and_no_errors() -> None:
    """The committed notebooks read well without running: every code cell ran, none failed."""
    for name in notebook_names():
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            assert cell.get("execution_count") is not None, f"{name}: a code cell was not executed"
            for out in cell.get("outputs", []):
                assert out.get("output_type") != "error", f"{name}: committed output holds an error"


@pytest.mark.parametrize("name", notebook_names())
def test_notebook_runs_in_quick_mode(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name in NEEDS_TORCH:
        pytest.importorskip("torch")
    monkeypatch.setenv("MENDIKOT_QUICK", "1")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{name}, cell {i}: {out.get('ename')}: {out.get('evalue')}"
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                assert "Traceback" not in out.get("text", ""), f"{name}, cell {i}: {out['text'][:500]}"
