"""Training metrics: one CSV row per iteration, TensorBoard events, a progress bar, a plot."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

from agents.checkpoint_format import COUNTERS

from ..run_folder import parse_metrics_lines, read_rows
from .atomic import write_atomic

__all__ = ["MetricsLog", "keep_rows_until", "read_rows"]


class MetricsLog:
    """Writes ``metrics.jsonl`` (every key, any row) and ``metrics.csv`` (fixed columns), plus
    TensorBoard events under ``tb/`` when tensorboard is installed.

    A resumed run (``counters``: the checkpoint's) first checks the log against the checkpoint
    and drops the rows a crash left beyond it, and a torn last line, so the log is the resumed
    run's and nothing twice (:func:`keep_rows_until`)."""

    def __init__(self, out: Path, resume: bool = False, counters: dict[str, Any] | None = None) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.jsonl = self.out / "metrics.jsonl"
        if not resume:
            self.jsonl.write_text("")
        elif counters is not None:
            keep_rows_until(self.jsonl, counters)
        # TensorBoard steps are samples: events past the checkpoint's are hidden as orphans.
        purge_step = int(counters["samples"]) + 1 if resume and counters is not None else None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.out / "tb"), purge_step=purge_step)
        except ImportError:  # tensorboard is optional
            self.writer = None

    def write(self, counters: dict[str, Any], row: dict[str, float]) -> None:
        """Record a row of metrics at the current counters."""
        record = {**counters, **{k: float(v) for k, v in row.items()}}
        with self.jsonl.open("a") as file:
            file.write(json.dumps(record) + "\n")
        if self.writer is not None:
            for key, value in row.items():
                self.writer.add_scalar(key, float(value), int(counters["samples"]))
            self.writer.flush()

    def rows(self) -> list[dict[str, Any]]:
        """Every recorded row."""
        return read_rows(self.jsonl)

    def close(self) -> None:
        """Write metrics.csv from all rows and close TensorBoard."""
        rows = self.rows()
        columns = sorted({key for row in rows for key in row})
        with (self.out / "metrics.csv").open("w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        if self.writer is not None:
            self.writer.close()

    def plot(self, path: Path) -> Path | None:
        """Learning curve: evaluation win rates (with 95% intervals) against samples."""
        try:  # a Figure with its own Agg canvas: no pyplot, so a notebook's backend is left alone
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError:
            return None
        rows = [r for r in self.rows() if any(k.startswith("eval/win_rate_vs_") for k in r)]
        fig = Figure(figsize=(7, 4))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        names = sorted({k.removeprefix("eval/win_rate_vs_") for r in rows for k in r if k.startswith("eval/win_rate")})
        for name in names:
            xs = [r["samples"] for r in rows if f"eval/win_rate_vs_{name}" in r]
            ys = [r[f"eval/win_rate_vs_{name}"] for r in rows if f"eval/win_rate_vs_{name}" in r]
            lo = [r[f"eval/ci_low_vs_{name}"] for r in rows if f"eval/win_rate_vs_{name}" in r]
            hi = [r[f"eval/ci_high_vs_{name}"] for r in rows if f"eval/win_rate_vs_{name}" in r]
            ax.plot(xs, ys, marker="o", label=f"vs {name}")
            ax.fill_between(xs, lo, hi, alpha=0.2)
        ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xlabel("learner decisions trained on")
        ax.set_ylabel("duplicate win rate (95% CI)")
        ax.set_ylim(0, 1)
        ax.legend()
        ax.set_title("Self-play training: evaluation in the duplicate arena")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        return path

    def progress_bar(self, total_seconds: float, done_seconds: float, enabled: bool) -> _Bar:
        """A time-based progress bar with samples/s (tqdm, on stderr)."""
        return _Bar(total_seconds, done_seconds, enabled)


def keep_rows_until(path: Path, counters: dict[str, Any]) -> None:
    """Check ``path`` against the checkpoint whose ``counters`` a run resumes, then rewrite it
    atomically with only its rows up to that iteration: what a resume redoes would otherwise
    be logged twice. A torn last line (a kill mid-write) goes too, said on stderr.

    Raises:
        ValueError: naming the file, where its rows up to the checkpoint are not the run's log
            (an iteration without a row, a row without a counter or an evaluation's interval,
            a value that is not a number): checked before any training, not at the final plot.
    """
    path, iteration = Path(path), int(counters["iteration"])
    if not path.exists():  # moved aside (see below): a new log, from the next iteration on
        print(f"resuming {path.parent}: no {path.name}; its rows start at iteration {iteration + 1}", file=sys.stderr)
        return
    lines = parse_metrics_lines(path, torn_end_ok=True)
    problems = [f"line {number}: {why}" for number, _, row in lines if (why := _row_problem(row))]
    kept = [(line, row) for _, line, row in lines if not problems and row["iteration"] <= iteration]
    logged = {row["iteration"] for _, row in kept}
    if not problems and (missing := [i for i in range(1, iteration + 1) if i not in logged]):
        problems.append(f"{len(missing)} of its {iteration} iterations have no row (the first: {missing[0]})")
    if problems:
        raise ValueError(
            f"{path} does not match the checkpoint it resumes from (iteration {iteration}): "
            f"{'; '.join(problems[:3])}; repair it, or move it aside to resume with a new log"
        )
    text, before = "".join(line + "\n" for line, _ in kept), path.read_text()
    torn = sum(1 for line in before.splitlines() if line.strip()) > len(lines)
    dropped = [f"{len(lines) - len(kept)} row(s) logged after the checkpoint"] if len(kept) < len(lines) else []
    dropped += ["a torn last line (a write cut short)"] if torn else []
    if dropped:
        print(f"resuming {path.parent}: dropped {' and '.join(dropped)} from {path.name}", file=sys.stderr)
    if text != before:
        write_atomic(path, lambda file: file.write(text.encode()))


def _row_problem(row: dict[str, Any]) -> str:
    """What keeps ``row`` from being one of the run's rows (the counters, numbers, and each
    evaluation's interval that the plot and the command read), or ``""``."""
    names = [key.removeprefix("eval/win_rate_vs_") for key in row if key.startswith("eval/win_rate_vs_")]
    wanted = [*COUNTERS, *(f"eval/{end}_vs_{name}" for name in names for end in ("ci_low", "ci_high"))]
    if missing := next((key for key in wanted if key not in row), None):
        return f"no {missing!r}"
    odd = next((key for key, value in row.items() if type(value) not in (int, float)), None)  # bool is no number
    return "" if odd is None else f"{odd!r} is not a number"


class _Bar:
    def __init__(self, total: float, done: float, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            # The bar counts seconds of the time budget; tqdm's rate (budget seconds per second,
            # "1.01s/s") says nothing, so the format leaves it out for samples/s in the postfix.
            self.bar = tqdm(
                total=round(total),
                initial=round(done),
                file=sys.stderr,
                desc="training",
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} s [{elapsed}<{remaining}{postfix}]",
            )

    def update_to(self, seconds: float, samples_per_s: float, iteration: int) -> None:
        if self.bar is not None:
            self.bar.n = min(round(seconds), self.bar.total)
            self.bar.set_postfix(it=iteration, samples_per_s=f"{samples_per_s:,.0f}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
