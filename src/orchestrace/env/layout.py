"""The environment ↔ learner contract: named phases, heads, actions and observation layouts.

Everything that crosses from :mod:`orchestrace.env` to a policy (baselines, the oracle, the
learner in :mod:`orchestrace.learn`) is addressed through this module — never through
indices written twice.

* :class:`Phase` — the decision due (``O1`` … ``O5``, then ``DONE``); it is also the index of
  the action head that decides it.
* :class:`Comm`, :class:`Agg` — O3 modes and O4 methods (action offsets inside their heads).
* ``STOP``/``CONTINUE`` — the two actions of the O5 head, in that order (the one definition:
  :data:`orchestrace.core.trace.CONTINUE` is the trace's *label* of that action, a string).
* :class:`Heads` — the head sizes and each head's first flat action (``heads.action(Phase.O5,
  CONTINUE)``), the one place offsets are computed.
* :class:`Layout` — everything above for one configuration: its observation, the summary
  features the hand-written rules read in any mode, and its heads. :func:`layout_of` derives it
  once per :class:`~orchestrace.env.EnvConfig` (``EnvConfig.layout`` caches it); the learner's
  policy receives this typed object (never a dict).
* :func:`due_phase` — the decision due in each row, read from an observation's decision one-hot.
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
>>> full = layout_of(EnvConfig.default_v1())
>>> full.heads.action(Phase.O5, CONTINUE), full.heads.n_actions, full.obs.global_col(G.TOKENS)
(18, 19, 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from ..vocab import Decision

__all__ = [
    "ATTEMPT_FEATURES",
    "CONTINUE",
    "DECISION",
    "DECISIONS",
    "DONE",
    "GLOBAL_FEATURES",
    "O1",
    "O2",
    "O3",
    "O4",
    "O5",
    "STOP",
    "SUBTASK_FEATURES",
    "Agg",
    "Att",
    "Comm",
    "G",
    "Heads",
    "Layout",
    "ObsLayout",
    "Phase",
    "S",
    "Sub",
    "due_phase",
    "layout_of",
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


#: The phases as plain ints (what the vectorised world compares its ``phase`` array with).
O1, O2, O3, O4, O5, DONE = (int(p) for p in Phase)
#: The head order: the trace's decision kind of each phase O1..O5 (``DECISIONS[Phase.O5]`` is STOP).
DECISIONS: tuple[Decision, ...] = (Decision.O1, Decision.O2, Decision.O3, Decision.O4, Decision.O5)


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


class G(IntEnum):
    """The ``evidence`` header's episode globals, in :data:`GLOBAL_FEATURES` order (use
    :meth:`ObsLayout.global_col` for the column)."""

    ROUND = 0
    TOKENS = 1
    CLOCK = 2
    N_SUBTASKS = 3
    PROGRESS = 4
    DECISIONS = 5
    SAFETY = 6
    LAST_ROUND = 7
    LOG_PRICE = 8
    BUDGET_LEFT = 9


class Sub(IntEnum):
    """Columns of one subtask row of the ``evidence`` observation (:data:`SUBTASK_FEATURES`)."""

    VALID = 0
    FOCUS = 1
    TYPE = 2  # 3 entries: retrieve, reason, code
    HAS_PARENTS = 5
    UNTRUSTED = 6
    ATTEMPTS = 7
    THIS_ROUND = 8


class Att(IntEnum):
    """Columns of one attempt row of the ``evidence`` observation (:data:`ATTEMPT_FEATURES`),
    followed by the profile one-hot at ``PROFILE``."""

    PRESENT = 0
    SOLVER = 1
    AGREES = 2
    CONFIDENCE = 3
    VOTE = 4
    THIS_ROUND = 5
    PROFILE = 6  # P entries


# the enums and the name tuples are one list, written twice only so that both read well
assert [g.name.lower() for g in G] == list(GLOBAL_FEATURES)
assert [a.name.lower() for a in Att][:-1] == list(ATTEMPT_FEATURES) and len(ATTEMPT_FEATURES) == Att.PROFILE
assert (Sub.TYPE, Sub.HAS_PARENTS, len(SUBTASK_FEATURES)) == (SUBTASK_FEATURES.index("type_retrieve"),
                                                              SUBTASK_FEATURES.index("has_parents"), Sub.THIS_ROUND + 1)


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

    def span(self, f: S, width: int) -> slice:
        """The ``width`` columns of a summary feature that has several (``S.FOCUS_TYPE``: 3)."""
        i = self.index(f)
        return slice(i, i + width)

    # evidence header positions
    @property
    def globals(self) -> slice:
        return slice(5, 5 + len(GLOBAL_FEATURES))

    def global_col(self, g: G) -> int:
        """Evidence header: the column of an episode global."""
        return 5 + int(g)

    @property
    def pending(self) -> int:
        """Evidence header: index of the pending fan-out (then P profile entries, then 4 methods)."""
        return self.globals.stop

    @property
    def pending_profiles(self) -> slice:
        """Evidence header: the pending profile's one-hot (P columns)."""
        return slice(self.pending + 1, self.pending + 1 + self.n_profiles)

    @property
    def methods(self) -> slice:
        """Evidence header: the aggregation method's one-hot (4 columns, :class:`Agg` order)."""
        return slice(self.pending_profiles.stop, self.pending_profiles.stop + len(Agg))

    def subtask_rows(self, obs: np.ndarray) -> np.ndarray:
        """(B, N, len(SUBTASK_FEATURES)) view of the subtask rows of ``obs`` (B, D); index it with :class:`Sub`."""
        return obs[:, self.subtask].reshape(obs.shape[0], *self.subtask_shape)

    def attempt_rows(self, obs: np.ndarray) -> np.ndarray:
        """(B, N, A, len(ATTEMPT_FEATURES) + P) view of the attempt rows; index it with :class:`Att`."""
        return obs[:, self.attempt].reshape(obs.shape[0], *self.attempt_shape)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready description (saved with a policy, checked on load)."""
        return {"mode": self.mode, "dim": self.dim, "subtask_shape": list(self.subtask_shape),
                "attempt_shape": list(self.attempt_shape), "header": [self.header.start, self.header.stop]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ObsLayout:
        """Inverse of :meth:`to_dict` (an ``evidence`` layout saved with a policy).

        >>> from orchestrace.env.config import EnvConfig
        >>> lay = obs_layout(EnvConfig.default_v1()); ObsLayout.from_dict(lay.to_dict()) == lay
        True
        """
        if d.get("mode", "evidence") != "evidence":
            raise ValueError(f"only an evidence layout is saved as a dict, got mode {d.get('mode')!r}")
        h0 = int(d["header"][1])
        n, fs = (int(x) for x in d["subtask_shape"])
        a_n, a, fa = (int(x) for x in d["attempt_shape"])
        sub = slice(h0, h0 + n * fs)
        att = slice(sub.stop, sub.stop + a_n * a * fa)
        return cls("evidence", int(d["dim"]), fa - len(ATTEMPT_FEATURES), slice(0, h0), sub, att, (n, fs),
                   (a_n, a, fa), True)


@dataclass(frozen=True)
class Heads:
    """The action heads O1…O5 of the flat action space: their sizes and first actions.

    >>> h = Heads.of((4, 6, 3, 4, 2))
    >>> h.starts, h.range(Phase.O2), h.action(Phase.O5, CONTINUE), h.n_actions
    ((0, 4, 10, 13, 17), (4, 10), 18, 19)
    """

    sizes: tuple[int, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, sizes: tuple[int, ...] | list[int]) -> Heads:
        """The heads of these sizes, laid out in :class:`Phase` order."""
        sizes = tuple(int(x) for x in sizes)
        if len(sizes) != 5 or sizes[Phase.O5] != 2:
            raise ValueError(f"heads need 5 sizes (O1..O5) and an O5 head of 2 (STOP, CONTINUE), got {sizes}")
        starts = tuple(int(x) for x in np.cumsum((0,) + sizes)[:-1])
        return cls(sizes, starts)

    @property
    def n_actions(self) -> int:
        return self.starts[-1] + self.sizes[-1]

    def range(self, phase: int) -> tuple[int, int]:
        """``[start, stop)`` of a head in the flat action space."""
        return self.starts[phase], self.starts[phase] + self.sizes[phase]

    def action(self, phase: int, k: Any = 0) -> Any:
        """The flat index of action ``k`` of a head (``action(Phase.O5, STOP)``); ``k`` may be an
        integer array (then so is the result)."""
        return self.starts[phase] + k

    @property
    def stop(self) -> int:
        """Flat index of STOP (CONTINUE is ``stop + 1``)."""
        return self.starts[Phase.O5] + STOP

    @property
    def cont(self) -> int:
        """Flat index of CONTINUE."""
        return self.starts[Phase.O5] + CONTINUE

    def by_decision(self) -> dict[Any, tuple[int, int]]:
        """``{Decision.O1: (start, stop), …}`` — the policy's and the gymnasium env's ``heads``."""
        return {d: self.range(h) for h, d in enumerate(DECISIONS)}

    @classmethod
    def from_ranges(cls, ranges: Any) -> Heads:
        """From ``[(start, stop), …]`` in O1..O5 order (contiguous, from 0)."""
        ranges = [(int(a), int(b)) for a, b in ranges]
        heads = cls.of([b - a for a, b in ranges])
        if [heads.range(h) for h in range(5)] != ranges:
            raise ValueError(f"head ranges {ranges} are not contiguous from 0 in O1..O5 order")
        return heads


@dataclass(frozen=True)
class Layout:
    """The whole env ↔ learner contract of one configuration (see the module docstring).

    ``obs`` is the observation the learner sees, ``summary`` the hand-summarised features the
    rules read (``obs`` itself in ``summary`` mode), ``heads`` the action heads.
    """

    obs: ObsLayout
    summary: ObsLayout
    heads: Heads

    @property
    def evidence(self) -> bool:
        """True for the ``evidence`` observation (the set encoder), False for the flat summary."""
        return self.obs.mode == "evidence"

    @classmethod
    def from_spec(cls, obs_dim: int, ranges: Any, saved: dict[str, Any] | None) -> Layout:
        """The layout of a saved policy: its head ranges (O1..O5 order), and its evidence layout
        dict or ``None`` for the flat summary observation of ``obs_dim`` columns."""
        heads = Heads.from_ranges(ranges)
        if saved is not None:
            obs = ObsLayout.from_dict(saved)
            if obs.dim != int(obs_dim):
                raise ValueError(f"layout dim {obs.dim} != obs_dim {obs_dim}")
            return cls(obs, _summary(obs.n_profiles, True), heads)
        p = heads.sizes[Phase.O2]
        flat = _summary(p, int(obs_dim) == _summary(p, True).dim)
        if flat.dim != int(obs_dim):  # a policy built by hand: a flat observation of any width
            flat = ObsLayout("summary", int(obs_dim), p, slice(0, int(obs_dim)), slice(0, 0), slice(0, 0), (0, 0),
                             (0, 0, 0), False)
        return cls(flat, flat, heads)


def _summary(n_profiles: int, price: bool) -> ObsLayout:
    dim = 34 + n_profiles + 4 + 2 + (3 if price else 0)
    return ObsLayout("summary", dim, n_profiles, slice(0, dim), slice(dim, dim), slice(dim, dim), (0, 0), (0, 0, 0),
                     price)


def due_phase(obs: np.ndarray) -> np.ndarray:
    """(B,) the decision due in each row of observations (B, D), from their decision one-hot
    (:data:`DECISION`); ``DONE`` where it is all zero (a finished row).

    >>> o = np.zeros((2, 8), np.float32); o[0, Phase.O5] = 1.0
    >>> due_phase(o).tolist()
    [4, 5]
    """
    d = np.asarray(obs)[:, DECISION]
    return np.where(d.max(1) > 0, d.argmax(1), DONE)


def layout_of(cfg: Any) -> Layout:
    """The :class:`Layout` of an :class:`~orchestrace.env.EnvConfig`, derived once per config
    (``EnvConfig.layout`` caches this; call that in hot paths)."""
    obs = obs_layout(cfg)
    summary = obs if obs.mode == "summary" else _summary(cfg.n_profiles, cfg.show_price)
    return Layout(obs, summary, Heads.of(cfg.head_sizes))


def obs_layout(cfg: Any) -> ObsLayout:
    """The observation layout of an :class:`~orchestrace.env.EnvConfig` (cheap; call it where needed).

    The layout sits below the config (the config asks it for ``obs_dim``), so it reads the
    config's fields without importing its class. ``layout_of(cfg).obs`` is the same, cached."""
    P, N, A = cfg.n_profiles, cfg.n_subtasks_max, cfg.max_attempts
    if cfg.obs_mode == "summary":
        return _summary(P, cfg.show_price)
    head = 5 + len(GLOBAL_FEATURES) + 1 + P + 4  # independent of N: a policy reads any number of subtasks
    fs, fa = len(SUBTASK_FEATURES), len(ATTEMPT_FEATURES) + P
    sub = slice(head, head + N * fs)
    att = slice(sub.stop, sub.stop + N * A * fa)
    return ObsLayout("evidence", att.stop, P, slice(0, head), sub, att, (N, fs), (N, A, fa), True)
