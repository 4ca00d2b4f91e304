"""Exported ``.rllib`` policy files: the format lives in :mod:`agents.policy_file` (so that
``agents.load`` reads it without importing upward); this name is kept for code that
imported it from the integrations."""

from agents.policy_file import (
    ACTIVATIONS,
    FORMAT,
    META_KEYS,
    SUFFIX,
    VERSION,
    MLPPolicyAgent,
    PolicyFileError,
    load_policy_file,
    read_policy_file,
    save_policy_file,
)

__all__ = [
    "ACTIVATIONS",
    "FORMAT",
    "META_KEYS",
    "SUFFIX",
    "VERSION",
    "MLPPolicyAgent",
    "PolicyFileError",
    "load_policy_file",
    "read_policy_file",
    "save_policy_file",
]
