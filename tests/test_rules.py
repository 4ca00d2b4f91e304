"""The rules configuration: defaults, presets (the table in RULES.md) and validation errors."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import mendikot_env
from mendikot_env.rules import PRESETS, Rules, resolve_rules

# The presets table of RULES.md, column by column (reveal "-" means the default, unused).
PRESET_TABLE = {
    "standard": ("cut", "ask", "mendikot", "loser_deals", "points_per_hand", 5),
    "band": ("band", "ask", "mendikot", "loser_deals", "points_per_hand", 5),
    "band_auto": ("band", "auto", "mendikot", "loser_deals", "points_per_hand", 5),
    "open": ("open", "ask", "mendikot", "loser_deals", "points_per_hand", 5),
    "app": ("cut", "ask", "mendikot", "rotate", "tiered", 5),
    "dehla_pakad": ("cut", "ask", "dehla", "loser_deals", "points_per_hand", 5),
}

ALLOWED = {
    "n_players": [4, 6, 8],
    "trump": ["cut", "band", "open"],
    "reveal": ["ask", "auto"],
    "collection": ["mendikot", "dehla"],
    "rotation": ["loser_deals", "loser_deals_next_after_whitewash", "rotate"],
    "scoring": ["points_per_hand", "tiered", "fixed_deals"],
    "direction": ["clockwise", "anticlockwise"],
}


def test_defaults_are_the_standard_game() -> None:
    r = Rules()
    assert (r.n_players, r.trump, r.collection, r.rotation, r.scoring, r.target, r.direction) == (
        4,
        "cut",
        "mendikot",
        "loser_deals",
        "points_per_hand",
        5,
        "clockwise",
    )
    assert Rules.preset("standard") == r
    assert mendikot_env.Rules is Rules


def test_presets_are_exactly_the_rules_md_table() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_matches_rules_md(name: str) -> None:
    r = Rules.preset(name)
    trump, reveal, collection, rotation, scoring, target = PRESET_TABLE[name]
    assert (r.trump, r.collection, r.rotation, r.scoring, r.target) == (trump, collection, rotation, scoring, target)
    if trump == "band":
        assert r.reveal == reveal
    assert r.n_players == 4 and r.direction == "clockwise"


def test_preset_overrides_are_applied_and_validated() -> None:
    r = Rules.preset("band_auto", n_players=6, target=3)
    assert (r.trump, r.reveal, r.n_players, r.target) == ("band", "auto", 6, 3)
    with pytest.raises(ValueError, match="n_players"):
        Rules.preset("band", n_players=5)
    with pytest.raises(ValueError, match="unknown Rules field"):
        Rules.preset("band", colour="red")
    with pytest.raises(ValueError, match=r"unknown Rules field\(s\) \['players'\]; known fields are \['n_players'"):
        Rules(players=6)


def test_unknown_preset_names_the_presets() -> None:
    with pytest.raises(ValueError) as info:
        Rules.preset("bridge")
    message = str(info.value)
    assert "'bridge'" in message
    for name in PRESET_TABLE:
        assert name in message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_players", 5),
        ("n_players", 2),
        ("n_players", "4"),
        ("n_players", True),
        ("n_players", 6.0),
        ("trump", "hidden"),
        ("trump", None),
        ("reveal", "never"),
        ("collection", "all"),
        ("rotation", "winner_deals"),
        ("scoring", "tiers"),
        ("direction", "left"),
    ],
)
def test_bad_choice_names_field_value_and_allowed(field: str, value: object) -> None:
    with pytest.raises(ValueError) as info:
        Rules(**{field: value})
    message = str(info.value)
    assert field in message
    assert repr(value) in message
    for allowed in ALLOWED[field]:
        assert re.search(rf"\b{re.escape(str(allowed))}\b", message), (allowed, message)


@pytest.mark.parametrize("value", [0, -3, 1.5, "5", True, None])
def test_bad_target_names_field_and_value(value: object) -> None:
    with pytest.raises(ValueError) as info:
        Rules(target=value)
    message = str(info.value)
    assert "target" in message and repr(value) in message
    assert "positive integer" in message


def test_good_values_all_construct() -> None:
    for field, values in ALLOWED.items():
        for value in values:
            assert getattr(Rules(**{field: value}), field) == value
    assert Rules(target=1).target == 1 and Rules(scoring="fixed_deals", target=12).target == 12


def test_numpy_integers_are_stored_as_python_ints() -> None:
    r = Rules(n_players=np.int64(6), target=np.int32(3))
    assert type(r.n_players) is int and type(r.target) is int
    assert r == Rules(n_players=6, target=3) and hash(r) == hash(Rules(n_players=6, target=3))
    assert json.loads(json.dumps(r.to_dict()))["n_players"] == 6
    # numpy strings (from a config array) are stored as str, so checkpoints load weights_only
    band = Rules(trump=np.str_("band"), reveal=np.array(["auto"])[0])
    assert type(band.trump) is str and type(band.reveal) is str and band == Rules.preset("band_auto")


def test_rules_are_frozen_and_hashable() -> None:
    r = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_players = 6  # type: ignore[misc]
    assert hash(r) == hash(Rules()) and {r: 1}[Rules()] == 1


@pytest.mark.parametrize(("n", "tricks", "pack"), [(4, 13, 52), (6, 8, 48), (8, 6, 48)])
def test_sizes(n: int, tricks: int, pack: int) -> None:
    r = Rules(n_players=n)
    assert (r.n_tricks, r.pack_size, r.hand_size) == (tricks, pack, tricks)


def test_from_dict_round_trip_and_unknown_fields() -> None:
    r = Rules(n_players=8, trump="band", reveal="auto", collection="dehla", scoring="tiered", target=9)
    assert Rules.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError) as info:
        Rules.from_dict({"players": 4})
    message = str(info.value)
    assert "players" in message and "n_players" in message and "trump" in message


def test_replace_validates_again() -> None:
    assert Rules().replace(trump="open").trump == "open"
    with pytest.raises(ValueError, match="trump"):
        Rules().replace(trump="cutt")


def test_resolve_rules_accepts_every_form() -> None:
    assert resolve_rules() == Rules()
    assert resolve_rules("band", n_players=6) == Rules(trump="band", n_players=6)
    assert resolve_rules({"trump": "open"}, target=3) == Rules(trump="open", target=3)
    assert resolve_rules(Rules(trump="open"), n_players=8) == Rules(trump="open", n_players=8)
    assert resolve_rules(None, collection="dehla") == Rules(collection="dehla")
    with pytest.raises(ValueError, match="Rules"):
        resolve_rules(42)  # type: ignore[arg-type]
