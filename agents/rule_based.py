"""Rule-based Mendikot players at three levels, batched with numpy.

The agent reads only what its seat may know, its information state
(:class:`mendikot_env.infostate.SeatInfo`) and legal mask: decoded from its observation vector,
or, in a search's rollouts (``act_state``), built straight from the core state of the seat to
act (no observation encoded and parsed back each step), so both play the same moves. It
scores every legal action of every game at once: no Python loop runs over games. Each card
gets a utility: with ``p`` the chance that our team takes the trick if we play it, the
utility is ``p * (value if we take it) + (1 - p) * (value if they do)`` minus what the card
is worth in later tricks. The trick's value counts the tens in it
(and our ten if we play one). That one formula gives the club player's habits: throw a
ten onto a trick the partner is safely winning, keep your own tens out of tricks you will
lose, win a trick holding a ten with the cheapest safe card, and otherwise play low.
Leads, the cut suit, the face-down card and the band reveal add their own terms.

Levels (each beats the one below in the duplicate arena; numbers in the README):
  * ``easy``: sees only its hand and the current trick (no card memory), so a card is
    "safe" only when nothing higher is unseen in that narrow view; picks trump by length;
    asks for the band card whenever an opponent is winning.
  * ``medium``: remembers every card played, so it knows the boss cards; threats are
    all-or-nothing; picks trump (cut and band) by length and high cards; asks for the band
    card only to take a trick holding a ten.
  * ``hard``: also remembers who has shown out of a suit, and a card-location model (the
    unseen cards of a suit lie in the other hands in proportion to the cards each has
    left, none in a hand known void) turns every threat into a probability; values tens
    and tricks by how they change the chance to win the hand (tricks decide at two tens
    each, nothing matters once a side has three), weighing each card against what it
    would win later (in band hukum it keeps medium's fixed values, which measured better
    there); leads safe high cards to pull out tens still out; asks for the band card
    whenever an opponent is winning; hides its top trump.

Each switch is a field of :class:`Level`; the arena measured each one (asking whenever an
opponent wins and pulling tens help most; remembering voids alone does not).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from math import comb

import numpy as np

from mendikot_env import core
from mendikot_env.cards import (
    ASK_ACTION,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_RANKS,
    RANK_OF,
    SUIT_OF,
    TEN_RANK,
    TENS,
    cards_to_set,
    unpack_sets,
)
from mendikot_env.infostate import SeatInfo, seat_infos
from mendikot_env.observation import decode_info, observation_layout
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

from .base import check_batch
from .seat_table import SeatTable

LEVELS = ("easy", "medium", "hard")

# Per card id: its suit, its rank (the cards module's tables), whether it is a ten.
SUIT = SUIT_OF[:NUM_CARDS]
RANK = RANK_OF[:NUM_CARDS]
IS_TEN = RANK == TEN_RANK
TEN_IDS = np.array(TENS)
NEG = -1e9


@dataclass(frozen=True)
class Level:
    """What a level knows and does (one switch per skill, then the numbers it plays by)."""

    memory: bool  # remembers the cards played (otherwise sees only the trick and its hand)
    voids: bool  # remembers who has shown out of a suit
    location: bool  # estimates where the unseen cards are (otherwise all-or-nothing threats)
    outcome: bool  # values tens and tricks by the chance to win the hand (otherwise fixed values)
    pull_tens: bool  # leads safe high cards in suits whose ten is still out
    ask: str  # band reveal: "opponent" (whenever an opponent is winning) or "tens" (only for tens)
    hide: str  # band card: "low" or "high" card of the chosen trump suit
    trick_value: float = 0.12  # worth of a trick without tens, in tens (fixed-value levels)
    pull: float = 0.3  # tens a safe high lead is expected to pull out of a suit whose ten is out
    decay: float = 1.3  # weight of a card's chance to win later against winning now
    ten_base: float = 0.6  # chance that a ten in hand ends up with my team even if not safe now
    cut_weight: float = 0.08  # worth of one point of suit strength when a cut chooses the trump
    p_hidden: float = 0.8  # chance that a void opponent asks for the face-down card and trumps


LEVEL_SPECS: dict[str, Level] = {
    "easy": Level(
        memory=False,
        voids=False,
        location=False,
        outcome=False,
        pull_tens=False,
        ask="opponent",
        hide="low",
        trick_value=0.05,
    ),
    "medium": Level(memory=True, voids=False, location=False, outcome=False, pull_tens=False, ask="tens", hide="low"),
    "hard": Level(
        memory=True,
        voids=True,
        location=True,
        outcome=True,
        pull_tens=True,
        ask="opponent",
        hide="high",
        cut_weight=0.15,
    ),
}

# Per trump method, what a level changes (measured in the arena): with the band card face
# down the hard level's outcome model costs about a point against medium, so it plays
# band hukum with the fixed values.
VARIANT_CHANGES: dict[tuple[str, str], dict[str, object]] = {("hard", "band"): {"outcome": False}}


def outcome_table(rules: Rules) -> np.ndarray:
    """V[a, b, x, y]: expected score of my team minus the other's from a position where we
    hold ``a`` tens and ``x`` tricks and they hold ``b`` and ``y``, if every remaining ten and
    trick were a coin toss, each end of the hand scored by :func:`core.score_hands` (the
    rules' tariff, whitewash and mendikot included). Differences of V are what one more ten
    or trick is worth now: nothing once a side has three tens, everything for the tricks at
    two tens each. Built once per rule set (read-only): agents are built often.
    """
    return _outcome_table(rules)


@cache
def _outcome_table(rules: Rules) -> np.ndarray:
    """:func:`outcome_table`, summed over every end of the hand at once.

    The sums run in a fixed order on exact integers (then one division per power of two),
    so a table is the same to the last bit however it is laid out.
    """
    t = rules.n_tricks
    a, b, x, y, i, j = np.ix_(*(np.arange(k) for k in (5, 5, t + 1, t + 1, 5, t + 1)))
    r, m = 4 - a - b, t - x - y  # tens and tricks still to play for
    mine_tens, mine_tricks = a + i, x + j  # my team takes i of the r tens and j of the m tricks
    tens = np.stack(np.broadcast_arrays(mine_tens, 4 - mine_tens), axis=-1)
    tricks = np.stack(np.broadcast_arrays(mine_tricks, t - mine_tricks), axis=-1)
    winner, points = core.score_hands(rules, tens, tricks)
    score = np.where(winner == 0, points, np.where(winner == 1, -points, 0))
    ways = np.where((j <= m) & (m >= 0), _COMB[np.clip(m, 0, t), j], 0)  # C(m, j)
    by_tens = (ways * score).sum(axis=-1) / 2.0 ** np.clip(m[..., 0], 0, None)  # (5, 5, t+1, t+1, 5)
    table = np.zeros((5, 5, t + 1, t + 1))
    for k in range(5):  # in order of k, as a running sum
        ways_k = _COMB[np.clip(r[..., 0, 0], 0, 4), k]
        table = table + np.where(k <= r[..., 0, 0], ways_k * by_tens[..., k] / 2.0 ** np.clip(r[..., 0, 0], 0, 4), 0.0)
    table = np.where((r[..., 0, 0] >= 0) & (m[..., 0, 0] >= 0), table, 0.0)
    table.flags.writeable = False
    return table


# _COMB[n, k] = C(n, k) as exact integers (0 when k > n), for the outcome table's sums.
_COMB = np.array([[comb(n, k) for k in range(NUM_CARDS + 1)] for n in range(NUM_CARDS + 1)], dtype=np.int64)


class RuleBasedAgent:
    """A heuristic club player (``easy``, ``medium`` or ``hard``) that acts on whole batches.

    Args:
        rules: the rule set (fixes the observation layout); :func:`agents.make` takes a
            preset name or a dict of fields too.
        level: ``"easy"``, ``"medium"`` or ``"hard"``.
        seed: seeds a tiny random jitter that breaks ties between equally good cards; with
            ``seed=None`` ties go to the lowest card id, so play is a pure function of the
            observation.
        name: display name (defaults to the level).
        spec: override the level's switches (for experiments); by default the level's
            :data:`LEVEL_SPECS` entry with its :data:`VARIANT_CHANGES` for these rules.

    Example:
        >>> from mendikot_env import Rules, core, ObservationEncoder
        >>> rules = Rules()
        >>> state = core.new_hands(rules, 16, rng=0)
        >>> obs = ObservationEncoder(rules).encode(state, state.current)
        >>> RuleBasedAgent(rules, "hard").act(obs, core.legal_action_mask(state)).shape
        (16,)
    """

    def __init__(
        self,
        rules: Rules,
        level: str = "hard",
        seed: int | None = None,
        name: str | None = None,
        spec: Level | None = None,
    ) -> None:
        if level not in LEVEL_SPECS:
            raise ValueError(f"unknown level {level!r}; choose one of {list(LEVELS)}")
        self.rules = rules
        self.level = level
        if spec is None:
            spec = replace(LEVEL_SPECS[level], **VARIANT_CHANGES.get((level, rules.trump), {}))
        self.spec = spec
        self.name = name or level
        self.layout = observation_layout(rules)
        self.rng = None if seed is None else make_rng(seed)
        self.n = rules.n_players
        # The pack: all 52, or no 2s with six or eight players.
        self.in_pack = np.isin(np.arange(NUM_CARDS), core.pack_cards(rules))
        self.pack_bits = np.uint64(cards_to_set(core.pack_cards(rules)))  # the same, as a card set
        self.outcome = outcome_table(rules) if self.spec.outcome else None
        self._outcome_flat = None if self.outcome is None else self.outcome.reshape(-1)

    def seed(self, seed: int | None) -> None:
        """Restart the tie-breaking generator (wrappers call this on ``reset(seed=...)``)."""
        self.rng = None if seed is None else make_rng(seed)

    # --------------------------------------------------------------------------- acting

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B,) legal actions for the seats whose observations and masks are given."""
        obs, legal = check_batch(observations, masks, self.layout.size, self.n)
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        return self._choose(self._utilities(obs, legal), legal)

    def act_state(self, state: core.State, legal: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """(D,) what :meth:`act` plays for the seat to act in games of ``state``, read from the
        core state without encoding an observation (searches roll hands out with it).

        It reads exactly what the seat's observation holds (tests check it move for move
        against :meth:`act` on every variant) and draws the same tie-breaking jitter.

        Args:
            state: games in play (none over), each read from its ``current`` seat.
            legal: (D,) uint64 the :func:`core.legal_bits` of the decisions.
            games: (D,) optional, the game of ``state`` each decision is read from (default:
                every game once, in order). Decisions read from one game are one decision
                drawn again: its utilities are computed once, its tie-breaking draws per
                decision. A belief's replays, which differ only in cards the seat to act
                cannot see, pass one world for all the worlds its seat sees alike.
        """
        flags = unpack_sets(legal, NUM_ACTIONS).view(bool)
        if games is None:
            utility = self._state_utilities(state, legal, flags)
        else:
            read, first, inverse = np.unique(games, return_index=True, return_inverse=True)
            utility = self._state_utilities(state.select(read), legal[first], flags[first])[inverse]
        return self._choose(utility, flags)

    def _state_utilities(self, state: core.State, legal: np.ndarray, flags: np.ndarray) -> np.ndarray:
        """(B, 53) the utilities :meth:`_utilities` gives the seats to act in ``state``."""
        return self._info_utilities(seat_infos(state, state.current, legal), flags)

    def _choose(self, utility: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """(B,) the legal action of highest utility per row, ties broken by the jitter."""
        if self.rng is not None:
            utility += self.rng.random(utility.shape) * 1e-6
        else:
            utility -= np.arange(NUM_ACTIONS) * 1e-9
        return np.where(legal, utility, -np.inf).argmax(axis=1).astype(np.int64)

    def utilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) the utility of every action (what :meth:`act` maximises; -inf where
        illegal): a graded model of the bot's play, for policy-weighted inference."""
        obs, legal = check_batch(observations, masks, self.layout.size, self.n)
        return np.where(legal, self._utilities(obs, legal), -np.inf)

    def _utilities(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """(B, 53) utilities of a checked batch (NEG where illegal or never played)."""
        return self._info_utilities(decode_info(self.rules, obs), legal)

    def _info_utilities(self, info: SeatInfo, legal: np.ndarray) -> np.ndarray:
        """(B, 53) utilities of the seats whose information states are ``info`` and legal
        actions ``legal`` (B, 53) bool: what the bot reads on both paths."""
        hide = info.phase == core.HIDE
        utility = np.full(legal.shape, NEG)
        if hide.any():
            utility[hide, :NUM_CARDS] = self._hide_utility(unpack_sets(info.hand[hide]).view(bool))
        if not hide.all():
            play = info if not hide.any() else info.select(~hide)
            utility[~hide] = self._play_utility(SeatTable.from_info(self, play), legal[~hide])
        return utility

    # ------------------------------------------------------------------------ band hide

    def _suit_strength(self, hand: np.ndarray) -> np.ndarray:
        """(B, 4) how good each suit is as trump for this hand: length, and high cards."""
        s = hand.reshape(-1, 4, NUM_RANKS).astype(np.float64)
        length = s.sum(axis=2)
        if not self.spec.memory:
            return length
        return length + 1.5 * s[:, :, 12] + 1.0 * s[:, :, 11] + 0.5 * s[:, :, 10] + 0.5 * s[:, :, TEN_RANK]

    def _hide_utility(self, hand: np.ndarray) -> np.ndarray:
        """Lay face down a card of the best trump suit (length and high cards)."""
        # Low: the card costs least while out of play. High: the top trump cannot be caught
        # while face down and comes back as a sure winner (measured slightly stronger).
        rank_term = RANK if self.spec.hide == "high" else -RANK - 20.0 * IS_TEN
        u = self._suit_strength(hand)[:, SUIT] * 100.0 + rank_term
        return np.where(hand, u, NEG)

    # ----------------------------------------------------------------------- card play

    def _play_utility(self, t: SeatTable, legal: np.ndarray) -> np.ndarray:
        """(B, 53) utility of every action while playing (NEG where illegal).

        The candidates are the legal cards only, as (row, card) pairs, so every per-card
        array is (P,) with P the number of legal cards in the batch rather than (B, 52).
        """
        spec, rules = self.spec, self.rules
        B = t.B
        rows, cards = np.nonzero(legal[:, :NUM_CARDS])  # (P,) the legal cards, row by row
        c_suit, c_rank, c_ten = SUIT[cards], RANK[cards], IS_TEN[cards]

        # ---- the trick so far (the core's outlook, read from the observation): who is
        # winning, and will it hold?
        tc = np.where(t.trick_card >= 0, t.trick_card, 0)
        trick_tens = (IS_TEN[tc] & (t.trick_card >= 0)).sum(axis=1)
        partner_win = ~t.leading & (t.winning % 2 == 0)
        # The what-if of the winning card gives its strength in the trick: a card that wins
        # without following counts as a trump, so it is of the trump suit, and a card that
        # follows counts as one only when trump was led. (Leading: a placeholder, unused.)
        # ---- each candidate card: does it take the lead of the trick (the core's outlook),
        # and will it hold? (One call for the candidates and the winning card.)
        # With the outcome model, the same call also gives each card's chance to hold if led
        # now (its worth in later tricks), with every opponent still to play.
        every, P = np.arange(B), rows.size
        winning_card = tc[every, np.maximum(t.winning, 0)]
        hold_rows, hold_cards = np.concatenate([rows, every]), np.concatenate([cards, winning_card])
        led, lead = t.led[hold_rows], np.zeros(P + B, bool)
        if self.outcome is not None:
            hold_rows, hold_cards = np.concatenate([hold_rows, rows]), np.concatenate([hold_cards, cards])
            led, lead = np.concatenate([led, np.full(P, core.NO_SUIT)]), np.concatenate([lead, np.ones(P, bool)])
        holds = self._hold_chance(t, hold_rows, hold_cards, led, lead)
        p_keep, p_partner, as_lead = holds[:P], holds[P : P + B], holds[P + B :]
        follows = c_suit == np.where(t.leading, -1, t.led)[rows]
        wins_now = t.take_lead[rows, cards]
        partner_later = np.where(t.partner_after.any(axis=1), 0.15 if spec.memory else 0.0, 0.0)
        p_other = np.where(partner_win, p_partner, partner_later)
        p = np.where(wins_now, np.maximum(p_keep, np.where(partner_win, p_partner, 0.0)[rows]), p_other[rows])

        # ---- what the trick is worth: its tens, my ten, and (leading) tens it may pull out.
        stake = trick_tens[rows] + c_ten.astype(np.float64)
        if spec.pull_tens:
            ten_out = t.unseen[:, TEN_IDS]  # (B, 4): the ten of each suit is in another hand
            pulls = ten_out[rows, c_suit] & (c_rank > TEN_RANK)
            stake = stake + t.leading[rows] * spec.pull * pulls
        if self.outcome is None:
            value = p * (spec.trick_value + stake) - (1 - p) * stake
        else:
            win_v, lose_v = self._outcomes(t, rows, stake)
            value = p * win_v + (1 - p) * lose_v

        # ---- what the card is worth later (in tens).
        cost, c_holding = self._later_cost(t, rows, cards, follows, as_lead)
        utility = value - cost

        # ---- cut hukum: the first card off suit chooses trump for the hand.
        if rules.trump_by_first_cut:
            _, trump_after = core.if_played(cards, t.led[rows], t.trump[rows], cut=True)
            cut_now = trump_after != t.trump[rows]
            strength = self._suit_strength(t.hand)
            strength = strength - strength.mean(axis=1, keepdims=True)
            utility = utility + spec.cut_weight * cut_now * strength[rows, c_suit]

        # ---- leads: from length (the others run out of the suit first).
        utility = utility + t.leading[rows] * 0.01 * c_holding

        out = np.full((B, NUM_ACTIONS), NEG)
        out[rows, cards] = utility
        if rules.can_ask:
            out[:, ASK_ACTION] = self._ask_utility(t, trick_tens, partner_win)
        return out

    def _later_cost(
        self, t: SeatTable, rows: np.ndarray, cards: np.ndarray, follows: np.ndarray, as_lead: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(P,) what each candidate card (of game ``rows``) is worth in later tricks (in tens),
        and (P,) how many cards of its suit I hold (``as_lead``: each card's chance to hold if
        led now, with the outcome model)."""
        spec, B = self.spec, t.B
        c_suit, c_rank, c_ten = SUIT[cards], RANK[cards], IS_TEN[cards]
        holding = t.holding  # (B, 4)
        c_holding = holding[rows, c_suit]
        trump_known = np.where(t.trump >= 0, t.trump, t.private)
        in_trumps = c_suit == trump_known[rows]
        if self.outcome is None:
            boss = t.hi_unseen[rows, cards] == 0
            cost = 0.004 * c_rank + 0.03 * boss * (c_rank >= 9)
            cost = cost + in_trumps * (0.06 + 0.004 * c_rank)
        else:
            # A card is worth the tricks it would win later (about its chance to hold if led
            # now), a trump also its ruffs; a ten in hand is worth the chance that it ends
            # up with my team anyway. Playing a card pays only when now beats later.
            later = np.minimum(spec.decay * as_lead, 1.0)
            later = np.where(in_trumps, 0.5 + 0.5 * later, later)
            every = np.arange(B)
            win0, lose0 = (2.0 * x[rows] for x in self._outcomes_at(t, every, 0))
            win1, lose1 = (2.0 * x[rows] for x in self._outcomes_at(t, every, 1))
            q = spec.ten_base + (1 - spec.ten_base) * as_lead
            ten_later = (lose1 - lose0) + q * (win1 - lose1)
            cost = np.where(c_ten, ten_later, (win0 - lose0) * later) + 0.002 * c_rank
        if spec.memory:
            # Keep the guards of my own ten; shed short suits to make voids.
            ten_held = t.hand[:, TEN_IDS]
            guards = (holding - ten_held)[rows, c_suit]
            guarding = ten_held[rows, c_suit] & ~c_ten & (guards <= 2)
            cost = cost + 0.05 * guarding - 0.006 * (c_holding <= 2) * ~follows
        return cost, c_holding

    def _outcomes(self, t: SeatTable, rows: np.ndarray, stake: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P,) value, in tens, of my team taking the trick of game ``rows`` with ``stake`` tens
        (fractions interpolated), and of the other team taking it, from the outcome table."""
        low = np.floor(stake).astype(np.int64)
        frac = stake - low
        w0, l0 = self._outcomes_at(t, rows, low)
        w1, l1 = self._outcomes_at(t, rows, low + 1)
        # Scale: a ten early in the hand is worth about one unit, as in the fixed values.
        return 2.0 * (w0 + frac * (w1 - w0)), 2.0 * (l0 + frac * (l1 - l0))

    def _outcomes_at(self, t: SeatTable, rows: np.ndarray, k: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """The outcome table's value of my team taking the trick of game ``rows`` with ``k``
        tens (an integer count), and of the other team taking it (unscaled)."""
        if t.outcomes is None:  # per game, both values for k = 0 .. 4 (more is as 4: no side passes 4 tens)
            n_tricks = self.rules.n_tricks
            side = n_tricks + 1  # the table is (5, 5, side, side), read flat: one take per value
            k_all = np.arange(5)
            a, b = t.tens[:, 0, None], t.tens[:, 1, None]
            x, y = t.tricks[:, 0, None], t.tricks[:, 1, None]
            win = ((np.minimum(a + k_all, 4 - b) * 5 + b) * side + np.minimum(x + 1, n_tricks - y)) * side + y
            lose = ((a * 5 + np.minimum(b + k_all, 4 - a)) * side + x) * side + np.minimum(y + 1, n_tricks - x)
            t.outcomes = (self._outcome_flat.take(win).reshape(-1), self._outcome_flat.take(lose).reshape(-1))
        at = rows * 5 + np.minimum(k, 4)
        return t.outcomes[0].take(at), t.outcomes[1].take(at)

    def _hold_chance(
        self, t: SeatTable, rows: np.ndarray, card: np.ndarray, led: np.ndarray, lead: np.ndarray
    ) -> np.ndarray:
        """(P,) chance that no opponent still to play beats ``card`` of game ``rows`` (were it
        winning).

        ``card`` is played to a trick led in ``led`` (NO_SUIT: it leads); where ``lead`` is
        True, as if it were led now, with every opponent still to play. Two threats: an opponent
        follows with a card that beats it, or an opponent void in the suit ruffs with one
        (with any card while a cut is open; by asking and trumping while the band card is
        face down). Which cards would beat it is the core's what-if (:func:`core.if_played`,
        :func:`core.beating_ranks`); where they lie is the card-location model.
        """
        spec = self.spec
        cut = self.rules.trump_by_first_cut
        strength, trump = core.if_played(card, led, t.trump[rows], cut)  # trump: once it is played
        sp = np.where(led < 0, SUIT[card], led)  # the suit led
        opps = [k for k in range(1, self.n, 2)]
        after = lead[:, None] | t.opp_after[rows]  # (P, n): the seats still to play after the card
        safe = np.ones(card.shape)
        # The lowest rank of the suit led that beats it, and the unseen cards from that rank up.
        follow_beaters = t.beaters(rows, sp, core.beating_ranks(strength, sp, trump, cut, suit=sp))
        for k in opps:
            follow = t.p_holds(k, rows, sp, follow_beaters)
            safe = safe * np.where(after[:, k], 1 - follow, 1.0)
        if not self.spec.memory:
            return safe

        # Ruffs: the chance a void opponent holds a trump that beats the card.
        tsuit = np.maximum(trump, 0)
        ruff_beaters = t.beaters(rows, tsuit, core.beating_ranks(strength, sp, trump, cut, suit=tsuit))
        can_ruff = (trump >= 0) & (sp != trump)
        cut_open = cut & (trump < 0)  # any card of a void opponent would set trump and beat it
        # Only the hider knows the face-down card's suit; the others assume a void opponent
        # asks and trumps with chance p_hidden.
        face_down = t.hidden[rows]
        known_suit = (t.private >= 0)[rows] & face_down
        priv = np.maximum(t.private, 0)[rows]
        for k in opps:
            void = t.p_void(k).reshape(-1).take(rows * 4 + sp)
            has = np.where(can_ruff, t.p_holds(k, rows, tsuit, ruff_beaters), 0.0) if can_ruff.any() else 0.0
            has = np.where(cut_open, 1.0, has)
            if not self.spec.location:
                has = np.where(face_down, 0.5, has)
            elif face_down.any():
                hidden = spec.p_hidden
                if known_suit.any():
                    in_private = t.p_holds(k, rows, priv, t.unseen_in_suit[rows, priv])
                    hidden = np.where(known_suit, np.where(sp == priv, 0.0, in_private), hidden)
                has = np.where(face_down, hidden, has)
            safe = safe * np.where(after[:, k], 1 - void * has, 1.0)
        return safe

    def _ask_utility(self, t: SeatTable, trick_tens: np.ndarray, partner_win: np.ndarray) -> np.ndarray:
        """(B,) utility of asking for the face-down card (legal only when I cannot follow).

        Asking forces me to trump if I can, so it pays when the opponents are winning the
        trick; the arena shows that asking whenever they are ("opponent") beats asking only
        for tricks holding a ten ("tens"), and that never asking loses badly.
        """
        want = ~partner_win
        if self.spec.ask == "tens":
            want &= trick_tens > 0
        return np.where(want, 10.0, NEG)
