"""The rules configuration: every variant of RULES.md as one frozen, validated dataclass.

Defaults are the standard game (4 players, cut trump, Mendikot collection, the losing
team deals, one point a hand, first to 5). ``Rules.preset(name)`` gives the named presets.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from .cards import NUM_CARDS
from .checks import is_integer

PLAYER_COUNTS = (4, 6, 8)
TRUMP_METHODS = ("cut", "band", "open")
REVEAL_MODES = ("ask", "auto")
COLLECTIONS = ("mendikot", "dehla")
ROTATIONS = ("loser_deals", "loser_deals_next_after_whitewash", "rotate")
SCORINGS = ("points_per_hand", "tiered", "fixed_deals")
DIRECTIONS = ("clockwise", "anticlockwise")

RULE_CHOICES: dict[str, tuple[Any, ...]] = {
    "n_players": PLAYER_COUNTS,
    "trump": TRUMP_METHODS,
    "reveal": REVEAL_MODES,
    "collection": COLLECTIONS,
    "rotation": ROTATIONS,
    "scoring": SCORINGS,
    "direction": DIRECTIONS,
}

# The fields that decide how a hand is dealt and played, and so the observation an agent
# sees: an agent built for one rule set plays any other with the same values. The others
# (rotation, scoring, target, direction) act only between hands or on screen.
HAND_FIELDS = ("n_players", "trump", "reveal", "collection")

PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "band": {"trump": "band", "reveal": "ask"},
    "band_auto": {"trump": "band", "reveal": "auto"},
    "open": {"trump": "open"},
    "app": {"rotation": "rotate", "scoring": "tiered"},
    "dehla_pakad": {"collection": "dehla"},
}


@dataclass(frozen=True)
class Rules:
    """One Mendikot rule set. Invalid values raise ``ValueError`` on construction."""

    n_players: int = 4  # 4, 6 or 8; with 6 or 8 the four 2s leave the pack
    trump: str = "cut"  # how trump is set: cut (first void), band (hidden card), open (drawn card)
    reveal: str = "ask"  # band hukum only: reveal on request (ask) or at the first void (auto)
    collection: str = "mendikot"  # mendikot: winner takes the trick; dehla: two tricks in a row
    rotation: str = "loser_deals"  # who deals the next hand of a match
    scoring: str = "points_per_hand"  # match tariff: points_per_hand, tiered (1/2/3), fixed_deals
    target: int = 5  # points to win the match, or the number of deals for fixed_deals
    direction: str = "clockwise"  # display only: how seats are drawn and named

    def __new__(cls, *args: Any, **fields_given: Any) -> Rules:
        """A misspelt keyword is a ValueError listing the fields, as a bad value is (the
        dataclass's own ``__init__`` would raise a bare TypeError)."""
        cls.check_field_names(fields_given)
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if problem := self._field_problem():
            raise ValueError(problem)
        # numpy integers (from a config array, say) are stored as Python ints, so rules
        # compare, hash and serialise to JSON like any other.
        object.__setattr__(self, "n_players", int(self.n_players))
        object.__setattr__(self, "target", int(self.target))
        for name in ("trump", "reveal", "collection", "rotation", "scoring", "direction"):
            object.__setattr__(self, name, str(getattr(self, name)))  # numpy strings too

    def _field_problem(self) -> str:
        """What is wrong with the first field that is not allowed ("" when none is)."""
        for name, allowed in RULE_CHOICES.items():
            value = getattr(self, name)
            # The numbers must be integers: 6.0 == 6 would pass the membership test and then
            # make n_tricks a float.
            wrong_type = not isinstance(value, type(allowed[0]) | np.integer) or isinstance(value, bool)
            if wrong_type or value not in allowed:
                return f"Rules.{name} = {value!r} is not allowed; choose one of {list(allowed)}"
        if not is_integer(self.target) or self.target < 1:
            return f"Rules.target = {self.target!r} is not allowed; it must be a positive integer"
        return ""

    @property
    def n_tricks(self) -> int:
        """Tricks in a hand: 13, 8 or 6."""
        return self.pack_size // self.n_players

    @property
    def pack_size(self) -> int:
        """52 cards, or 48 without the 2s for six and eight players."""
        return NUM_CARDS if self.n_players == 4 else NUM_CARDS - 4

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat."""
        return self.n_tricks

    # What a variant does, asked by the code in place of the variant's name (house style
    # 15): a fourth trump method sets these and touches only the places whose play differs.

    @property
    def has_face_down(self) -> bool:
        """The first player lays a card face down to set trump (band hukum): a HIDE phase,
        a hider, and a card that some seats cannot see."""
        return self.trump == "band"

    @property
    def trump_by_first_cut(self) -> bool:
        """Trump is set by the first card that fails to follow suit (it counts as a trump at once)."""
        return self.trump == "cut"

    @property
    def trump_known_from_start(self) -> bool:
        """A card drawn face up at the deal sets trump for the whole hand (open draw)."""
        return self.trump == "open"

    @property
    def can_ask(self) -> bool:
        """A player who cannot follow may ask for the face-down card (action 52)."""
        return self.has_face_down and self.reveal == "ask"

    @property
    def reveals_at_void(self) -> bool:
        """The face-down card turns up by itself when the player to act cannot follow."""
        return self.has_face_down and self.reveal == "auto"

    @property
    def collects_two_in_a_row(self) -> bool:
        """Won tricks wait in the middle until one team wins two in a row (Dehla Pakad)."""
        return self.collection == "dehla"

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """A named preset from RULES.md (``standard``, ``band``, ...), with optional overrides."""
        if name not in PRESETS:
            raise ValueError(f"unknown rules preset {name!r}; choose one of {list(PRESETS)}")
        return cls.from_dict({**PRESETS[name], **overrides})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Rules:
        """Rules from a dict of fields (an unknown field name is refused on construction)."""
        return cls(**values)

    @classmethod
    def check_field_names(cls, names: Iterable[str], other_options: Sequence[str] = ()) -> None:
        """Refuse names that are no Rules field, listing the fields (and ``other_options``,
        a caller's own keywords, where a misspelt one lands among the fields)."""
        known = [f.name for f in fields(cls)]
        unknown = [name for name in names if name not in known]
        if unknown:
            also = f", and the other options are {list(other_options)}" if other_options else ""
            raise ValueError(f"unknown Rules field(s) {unknown}; known fields are {known}{also}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for records and checkpoints)."""
        return asdict(self)

    def hand_differences(self, other: Rules) -> list[str]:
        """The :data:`HAND_FIELDS` where ``other`` plays a hand differently, as
        ``"field: mine vs other's"`` (``reveal`` counts only when both use band hukum).

        Example:
            >>> Rules().hand_differences(Rules(target=9, direction="anticlockwise"))
            []
            >>> Rules().hand_differences(Rules.preset("band"))
            ["trump: 'cut' vs 'band'"]
        """
        differ = [
            name
            for name in HAND_FIELDS
            if getattr(self, name) != getattr(other, name)
            and (name != "reveal" or self.has_face_down and other.has_face_down)
        ]
        return [f"{name}: {getattr(self, name)!r} vs {getattr(other, name)!r}" for name in differ]

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated again; an unknown name is a ValueError
        naming the fields, as in :meth:`from_dict`)."""
        return Rules.from_dict({**self.to_dict(), **changes})


def hand_variants() -> list[Rules]:
    """Every distinct way a hand is played: the product of the :data:`HAND_FIELDS`' choices,
    with ``reveal`` varied only where there is a face-down card to reveal (elsewhere it
    changes nothing). Tests and benchmarks that must cover every variant iterate this, so
    a new choice in :data:`RULE_CHOICES` is covered without touching them.

    Example:
        >>> len(hand_variants())
        24
    """
    variants = []
    for values in itertools.product(*(RULE_CHOICES[name] for name in HAND_FIELDS)):
        rules = Rules(**dict(zip(HAND_FIELDS, values, strict=True)))
        if rules.has_face_down or rules.reveal == Rules.reveal:
            variants.append(rules)
    return variants


def resolve_rules(
    rules: Rules | str | dict[str, Any] | None = None, *, other_options: Sequence[str] = (), **fields_: Any
) -> Rules:
    """Rules from a ``Rules``, a preset name, a dict of fields, or keyword fields.

    ``other_options`` are the caller's own keyword options (an env's ``render_mode`` ...),
    named in the error for an unknown keyword: a misspelt ``rendermode`` lands in
    ``fields_``, and a list of Rules fields alone would not show what was meant.
    """
    if fields_:
        Rules.check_field_names(fields_, other_options)
    if rules is None:
        return Rules.from_dict(fields_)
    if isinstance(rules, Rules):
        return rules.replace(**fields_) if fields_ else rules
    if isinstance(rules, str):
        return Rules.preset(rules, **fields_)
    if isinstance(rules, dict):
        return Rules.from_dict({**rules, **fields_})
    raise ValueError(f"rules must be a Rules, a preset name or a dict of fields, got {type(rules).__name__}")
