"""``mendikot train-rllib``: masked-PPO league self-play on Ray RLlib (needs the ``rllib`` extra).

Runs on this machine by default (``ray.init()`` starts a local Ray) and on a cluster when
``RAY_ADDRESS`` is set; only ``--env-runners`` and ``--learners`` change between the two.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from dataclasses import fields
from typing import Any

from .common import add_rules_arguments, field_docs, rule_overrides

# Args fields set by their own options (the rules come from --rules and the rule-field flags).
_OWN_OPTIONS = ("rules", "rule_fields")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train-rllib",
        help="masked-PPO league self-play on Ray RLlib (needs the 'rllib' extra)",
        description="Train on Ray RLlib: local by default, on the Ray cluster at RAY_ADDRESS when it is set. "
        "Writes RLlib checkpoints, metrics.jsonl and agent.rllib (playable by every agent-taking command).",
    )
    add_rules_arguments(parser)
    parser.add_argument("--overwrite", action="store_true", help="delete the run already in --out and start over")
    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("torch") is None:
        parser.set_defaults(func=_missing_ray)  # the command explains itself when run
        return
    from ..integrations.rllib_args import Args  # no ray import: --help stays fast

    docs = field_docs(Args)
    for f in fields(Args):
        if f.name in _OWN_OPTIONS:
            continue
        flag = "--" + f.name.replace("_", "-")
        default: Any = f.default
        doc = f"{docs.get(f.name, '')} (default {default})"
        if isinstance(default, tuple):
            parser.add_argument(flag, dest=f.name, nargs="+", type=int, default=None, help=doc)
        else:
            parser.add_argument(flag, dest=f.name, type=type(default), default=None, help=doc)
    parser.set_defaults(func=run)


def _missing_ray(args: argparse.Namespace) -> int:
    raise ValueError("train-rllib needs Ray RLlib and torch: pip install -e '.[rllib]'")


def run(args: argparse.Namespace) -> int:
    from ..integrations.rllib_args import Args
    from ..training.metrics import read_rows

    given = {f.name: getattr(args, f.name) for f in fields(Args) if getattr(args, f.name, None) is not None}
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if k not in _OWN_OPTIONS}
    options = Args(rules=args.rules, rule_fields=rule_overrides(args), **given)  # checks the options and rules
    options.check_eval_opponent()
    from ..integrations.rllib import train  # imports ray: only once the options are known good

    out = train(options, overwrite=args.overwrite)
    final = read_rows(out / "metrics.jsonl")[-1]
    print(f"run folder: {out}")
    print(f"  agent: {out / 'agent.rllib'}  (e.g. mendikot arena --a {out / 'agent.rllib'} --b medium)")
    print(f"  RLlib checkpoint: {out / 'checkpoint'}")
    print(f"  last iteration: {json.dumps(final)}")
    return 0
