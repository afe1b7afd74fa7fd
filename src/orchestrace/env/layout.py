"""The environment ↔ learner contract: named phases, heads, actions and observation layouts.

Everything that crosses from :mod:`orchestrace.env` to a policy (baselines, the oracle, the
learner in :mod:`orchestrace.learn`) is addressed through this module — never through
indices written twice.

* :class:`Phase` — the decision due (``O1`` … ``O5``, then ``DONE``); it is also the index of
  the action head that decides it.
* :class:`Comm`, :class:`Agg` — O3 modes and O4 methods (action offsets inside their heads).
* ``STOP``/``CONTINUE`` — the two actions of the O5 head, in that order.
* :func:`obs_layout` — the observation of a configuration, as an :class:`ObsLayout` with
  named slices. Two modes (``EnvConfig.obs_mode``):

  - ``summary`` (v0): :class:`S` names each feature — the due decision, hand-summarised
    statistics over subtasks (settled share, minimum margin, minimum confidence …), the
    focus subtask and the noisy difficulty hint; with ``show_price`` three more features
    (log₂ of the episode's token price / 2, remaining token budget, remaining rounds).
  - ``evidence`` (v1's main mode): the due decision, episode globals, the pending fan-out and
    profile and the aggregation method in a *header* (its size does not depend on N), then
    one row per subtask (``subtask``: N × :data:`SUBTASK_FEATURES`) and one row per attempt
    slot (``attempt``: N × max_attempts × (:data:`ATTEMPT_FEATURES` + one-hot profile)),
    padded with zeros and masked by their ``valid`` / ``present`` flags. No summary statistic
    and no difficulty hint: a policy sees the votes and confidences themselves. An attempt's
    answer is given relative to the subtask's current aggregate (``agrees``), never as its
    label, so that the correct answer's identity cannot leak.

>>> from orchestrace.env.config import EnvConfig
>>> lay = obs_layout(EnvConfig.default())
>>> lay.mode, lay.dim, lay.index(S.MIN_CONF)
('summary', 46, 14)
>>> ev = obs_layout(EnvConfig.default_v1())
>>> ev.mode, ev.attempt_shape, ev.dim
('evidence', (4, 8, 12), 446)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

__all__ = [
    "ATTEMPT_FEATURES",
    "CONTINUE",
    "DECISION",
    "GLOBAL_FEATURES",
    "STOP",
    "SUBTASK_FEATURES",
    "Agg",
    "Comm",
    "ObsLayout",
    "Phase",
    "S",
    "obs_layout",
]


class Phase(IntEnum):
    """The decision due (= the index of its action head); ``DONE`` after the stop."""

    O1 = 0
    O2 = 1
    O3 = 2
    O4 = 3
    O5 = 4
    DONE = 5


class Comm(IntEnum):
    """O3 communication modes (offsets in the O3 head)."""

    NONE = 0
    SUMMARY = 1
    FULL = 2


class Agg(IntEnum):
    """O4 aggregation methods (offsets in the O4 head)."""

    MAJORITY = 0
    VERIFIER = 1
    BEST_OF = 2
    MERGE = 3


#: The two actions of the O5 head (offsets): STOP first, then CONTINUE.
STOP, CONTINUE = 0, 1
#: The one-hot of the due decision, first in every observation.
DECISION = slice(0, 5)


class S(IntEnum):
    """Feature indices of the ``summary`` observation (``P`` = number of profiles).

    Features after ``PENDING_PROFILE`` move with ``P``: use :meth:`ObsLayout.index`.
    """

    HINT = 5
    ROUND = 6
    TOKENS = 7
    CLOCK = 8
    N_SUBTASKS = 9
    PROGRESS = 10
    SETTLED = 11
    MIN_MARGIN = 12
    MEAN_CONF = 13
    MIN_CONF = 14
    REJECTS = 15
    ACCEPT_SHARE = 16
    SAFETY = 17
    DECISIONS = 18
    UNTRUSTED = 19
    FOCUS_TYPE = 20  # 3 entries
    FOCUS_HAS_PARENTS = 23
    PARENTS_MIN_MARGIN = 24
    PARENTS_UNTRUSTED = 25
    FOCUS_ATTEMPTS = 26
    FOCUS_TOP = 27
    FOCUS_SECOND = 28
    FOCUS_CONF = 29
    FOCUS_ACCEPTS = 30
    FOCUS_REJECTS = 31
    FOCUS_THIS_ROUND = 32
    PENDING_FANOUT = 33
    PENDING_PROFILE = 34  # P entries
    # the rest are offsets after the P profile entries (ObsLayout.index adds P)
    METHOD = 1000  # 4 entries
    LAST_ROUND = 1004
    ROOM = 1005
    LOG_PRICE = 1006  # with show_price
    BUDGET_LEFT = 1007
    ROUNDS_LEFT = 1008


#: Episode globals of the ``evidence`` header, after the 5 decision entries.
GLOBAL_FEATURES: tuple[str, ...] = ("round", "tokens", "clock", "n_subtasks", "progress", "decisions", "safety",
                                    "last_round", "log_price", "budget_left")
#: One row per subtask in the ``evidence`` observation.
SUBTASK_FEATURES: tuple[str, ...] = ("valid", "focus", "type_retrieve", "type_reason", "type_code", "has_parents",
                                     "untrusted", "attempts", "this_round")
#: One row per attempt slot (followed by the profile one-hot).
ATTEMPT_FEATURES: tuple[str, ...] = ("present", "solver", "agrees", "confidence", "vote", "this_round")


@dataclass(frozen=True)
class ObsLayout:
    """Named slices of one configuration's observation (see the module docstring)."""

    mode: str
    dim: int
    n_profiles: int
    header: slice  # evidence: decision + globals + focus + pending + method; summary: everything
    subtask: slice  # evidence only (empty in summary mode)
    attempt: slice  # evidence only
    subtask_shape: tuple[int, int]  # (N, len(SUBTASK_FEATURES))
    attempt_shape: tuple[int, int, int]  # (N, A, len(ATTEMPT_FEATURES) + P)
    price: bool

    def index(self, f: S) -> int:
        """Index of a summary feature (features after the profile one-hot shift by ``P``)."""
        v = int(f)
        return v if v < 1000 else 34 + self.n_profiles + (v - 1000)

    # evidence header positions
    @property
    def globals(self) -> slice:
        return slice(5, 5 + len(GLOBAL_FEATURES))

    @property
    def pending(self) -> int:
        """Evidence header: index of the pending fan-out (then P profile entries, then 4 methods)."""
        return self.globals.stop

    def to_dict(self) -> dict[str, object]:
        """JSON-ready description (saved with a policy, checked on load)."""
        return {"mode": self.mode, "dim": self.dim, "subtask_shape": list(self.subtask_shape),
                "attempt_shape": list(self.attempt_shape), "header": [self.header.start, self.header.stop]}


def obs_layout(cfg: Any) -> ObsLayout:
    """The observation layout of an :class:`~orchestrace.env.EnvConfig` (cheap; call it where needed).

    The layout sits below the config (the config asks it for ``obs_dim``), so it reads the
    config's fields without importing its class."""
    P, N, A = cfg.n_profiles, cfg.n_subtasks_max, cfg.max_attempts
    if cfg.obs_mode == "summary":
        dim = 34 + P + 4 + 2 + (3 if cfg.show_price else 0)
        return ObsLayout("summary", dim, P, slice(0, dim), slice(dim, dim), slice(dim, dim), (0, 0), (0, 0, 0),
                         cfg.show_price)
    head = 5 + len(GLOBAL_FEATURES) + 1 + P + 4  # independent of N: a policy reads any number of subtasks
    fs, fa = len(SUBTASK_FEATURES), len(ATTEMPT_FEATURES) + P
    sub = slice(head, head + N * fs)
    att = slice(sub.stop, sub.stop + N * A * fa)
    return ObsLayout("evidence", att.stop, P, slice(0, head), sub, att, (N, fs), (N, A, fa), True)
