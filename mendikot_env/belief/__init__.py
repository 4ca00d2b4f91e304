"""What one seat knows about the cards it cannot see, deals sampled from that knowledge, and the
core states (worlds) built from them, for a search to play its moves out in.

The belief reads the seat's information state (:class:`mendikot_env.infostate.SeatInfo`,
decoded once from its observation; never the vector's pieces) and works in steps, one module
each:

- :mod:`~mendikot_env.belief.sampler`: the constraints on the unseen cards (hand sizes, the
  suits each seat has shown out of, the face-down card as one more slot) and deals drawn
  uniformly among those that meet them: exactly, by counting over the suits, except for one
  constraint (with the auto reveal, a suit the seat to act must hold) met by drawing again the
  deals that break it;
- :mod:`~mendikot_env.belief.replay`: deals replayed through the moves seen, each weighed by
  the chance of the other seats' moves under a policy (:func:`replay_worlds`, :class:`Weighing`);
- :mod:`~mendikot_env.belief.weighing`: :class:`Belief` itself, with the deals weighed
  (:meth:`Belief.weigh`) or the likeliest kept (:meth:`Belief.likeliest`) on that replay;
- :mod:`~mendikot_env.belief.together`: the likeliest deals of many decisions at once, their
  histories replayed in one batch (what a search labelling many decisions calls);
- :mod:`~mendikot_env.belief.worlds`: core states built from a deal, replayed through the
  moves seen when the observation holds the history pieces (``ObservationEncoder(rules,
  history=True)``), which also tell two more facts: the seat whose turn turned the band card
  up could not follow the suit led, and an asker who then played no trump has none.

Example:
    >>> from mendikot_env import Rules, core, ObservationEncoder
    >>> state = core.new_hands(Rules(), 1, rng=0)
    >>> info = InfoState(Rules(), ObservationEncoder(Rules()).encode(state, state.current)[0])
    >>> sample_worlds(info, 8, rng=0).batch_size
    8
"""

from .replay import EPSILON, LIKELIEST_MARGIN, Weighing, replay_worlds
from .sampler import Constraints, DealSampler, InfoState, SeatView, constraints, history_voids, read_view
from .together import likeliest_together
from .weighing import Belief, WeightedDeals, _mixed_deals, sample_worlds
from .worlds import build_worlds, replay_start

__all__ = [
    "EPSILON",
    "LIKELIEST_MARGIN",
    "Belief",
    "Constraints",
    "DealSampler",
    "InfoState",
    "SeatView",
    "WeightedDeals",
    "Weighing",
    "_mixed_deals",
    "build_worlds",
    "constraints",
    "history_voids",
    "likeliest_together",
    "read_view",
    "replay_start",
    "replay_worlds",
    "sample_worlds",
]
