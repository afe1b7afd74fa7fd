"""Orchestration decisions over logged always-continue runs, as a Gymnasium environment with exact values.

(It lives in ``offline`` rather than ``env``: it is built on the logged runs and their valuation,
which sit in a higher layer than the simulated environments; it needs the ``env`` extra.)

One episode replays one logged task (:class:`~orchestrace.offline.LoggedRuns`). Before each
round the policy decides: **stop** (with an aggregation) or **call** one of the corpus's
*options* — a set of attempt columns to run this round. The log holds every column's answer
in every round, so every policy over these decisions is valued exactly, without a model:

=================  =====================================================================================
corpus             options (the action words)
=================  =====================================================================================
vote (members=())  ``continue`` — every column (the logged width); with ``widths=(1, 2)``:
                   ``continue-1``, ``continue-2`` (the first w columns; the columns are i.i.d. samples)
team (members=…)   every non-empty set of member kinds, e.g. ``cold+calc``, that includes the columns
                   each member ``sees`` (a reviser is exact only with what it was shown, in every round)
=================  =====================================================================================

and the stop words ``stop`` (majority vote over every answer called so far; ties → the answer
that appeared first, round-major then column) and, with ``aggregations=("majority",
"logprob")``, ``stop-weighted`` (votes weighted by exp(mean token log-prob), as
:mod:`orchestrace.logged.value`). A decision with one valid action is taken automatically:
on the vote corpus at full width the first decision is after round 0, exactly the checks of
:func:`~orchestrace.offline.valuation`. After the last logged round only stopping is valid.

**Rewards** (the return definition of :mod:`orchestrace.logged.value`): calling an option
costs ``−price × tokens(its columns, this round) / token_scale``; stopping pays 1 if the
aggregate is right. ``price`` is :func:`~orchestrace.offline.task_prices` (per task, seed
``price_seed``), ``token_scale`` the mean tokens of one full-width round on the training
tasks. The episode return is the logged return of the policy's choices, to the last bit.

**Exact credit**: :meth:`LoggedDecisions.q_value` is Q(state, action) under a *stated*
continuation policy — :class:`StopNext` (stop at the next decision: one-step look-ahead),
:class:`GateContinuation` (the fitted stop gate, vote corpora, the gate's width), or any
callable ``(decisions, state) -> action``. It is the return-to-go, exact because replay is
deterministic. Hindsight-best continuation is deliberately not offered as credit.

>>> from orchestrace.offline import make_synthetic_logged
>>> runs = make_synthetic_logged(T=20, R=3, W=2, seed=0)
>>> dec = LoggedDecisions(runs)
>>> dec.actions
('stop', 'continue')
>>> env = LoggedRunsEnv(dec, split=None)
>>> obs, info = env.reset(seed=0)
>>> info["state"].t, obs["action_mask"].tolist(), info["text"].split(".")[0]
(1, [1, 1], '1 of 3 rounds done')
>>> _, r, done, _, _ = env.step(0)   # stop: the graded majority of round 0, minus round 0's cost
>>> done, round(r + dec.spent(info["state"]) * dec.price[info["state"].task], 9) in (0.0, 1.0)
(True, True)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError, require
from .runs import LoggedRuns
from .value import task_prices

require("gymnasium", extra="env")

import gymnasium as gym  # noqa: E402

__all__ = ["OBS_FEATURES", "STOP_WORDS", "DecisionState", "GateContinuation", "LoggedDecisions", "LoggedRunsEnv",
           "StopNext", "rollout"]

#: The stop action word of each aggregation.
STOP_WORDS: dict[str, str] = {"majority": "stop", "logprob": "stop-weighted"}

#: The structured observation's columns (``obs["obs"]``), in order; then one "called share" per column.
OBS_FEATURES: tuple[str, ...] = ("round", "rounds_left", "top_share", "second_share", "distinct_share",
                                 "unparsed_share", "votes", "weighted_top_share", "lp_top", "lp_gap",
                                 "spent", "price", "price_x_left")


@dataclass(frozen=True)
class DecisionState:
    """Where an episode is: task row ``task``, ``t`` rounds done, ``calls[r]`` the columns called in round r."""

    task: int
    t: int
    calls: tuple[tuple[int, ...], ...]


Continuation = Callable[["LoggedDecisions", DecisionState], int]


class LoggedDecisions:
    """The decision problem of a corpus: options, validity, rewards, features, text and exact Q.

    ``widths`` (vote corpora only): the widths a round may be called at (default: the logged
    width only); ``aggregations``: the stop actions offered; ``token_scale`` (default: the
    training tasks' mean tokens of one full-width round); ``max_options`` guards a team with
    many kinds (2^W subsets); ``show_task``: whether :meth:`text` names the task's kind
    (``suite:difficulty``) — default: on for team corpora (whom to call depends on the kind), off
    for vote corpora (the text the committed vote-corpus runs were trained on).
    """

    def __init__(self, runs: LoggedRuns, *, widths: Sequence[int] | None = None,
                 aggregations: Sequence[str] = ("majority",), price_seed: int = 0, token_scale: float | None = None,
                 max_options: int = 32, show_task: bool | None = None) -> None:
        T, R, W = runs.shape  # noqa: N806
        self.runs, self.R, self.W = runs, R, W
        self.show_task = bool(runs.members) if show_task is None else bool(show_task)
        bad = [a for a in aggregations if a not in STOP_WORDS]
        if bad or not aggregations:
            raise ConfigError(f"aggregations {list(aggregations)}: choose from {sorted(STOP_WORDS)}")
        self.aggregations = tuple(aggregations)
        if runs.members and len(runs.members) != W:
            raise ConfigError(f"corpus members {runs.members}: {len(runs.members)} kinds for {W} attempt columns")
        self.sees: tuple[tuple[int, ...], ...] = tuple(runs.sees) if runs.sees else ((),) * W
        if len(self.sees) != W or any(not 0 <= c < W or c == i for i, s in enumerate(self.sees) for c in s):
            raise ConfigError(f"corpus sees {runs.sees}: expected one tuple of other column indices per column "
                              f"({W} columns)")
        options: list[tuple[str, tuple[int, ...]]] = []
        if not runs.members:
            ws = tuple(widths) if widths is not None else (W,)
            if not ws or any(not (isinstance(w, (int, np.integer)) and 1 <= w <= W) for w in ws):
                raise ConfigError(f"widths {list(ws)}: each must be 1..{W}, the logged width of the corpus")
            for w in sorted(set(int(x) for x in ws)):
                options.append(("continue" if len(set(ws)) == 1 else f"continue-{w}", tuple(range(w))))
        else:
            if widths is not None:
                raise ConfigError("widths: a team corpus (members set) offers member subsets, not widths; leave "
                                  "widths unset")
            for k in range(1, W + 1):
                for cols in itertools.combinations(range(W), k):
                    if all(set(self.sees[c]) <= set(cols) for c in cols):
                        options.append(("+".join(runs.members[c] for c in cols), cols))
            if len({n for n, _ in options}) != len(options):
                raise ConfigError(f"corpus members {runs.members}: two columns share a kind; team columns need "
                                  "distinct member kinds")
        if len(options) > max_options:
            raise ConfigError(f"{len(options)} member subsets exceed max_options={max_options}; raise it")
        self.options = tuple(options)
        self.actions: tuple[str, ...] = tuple(STOP_WORDS[a] for a in self.aggregations) + tuple(n for n, _ in options)
        self.n_stop = len(self.aggregations)
        self.price = task_prices(runs.task_ids, price_seed)
        tok = runs.prompt_tokens.astype(np.float64) + runs.completion_tokens  # (T, R, W)
        if token_scale is None:
            train = runs.split == "train"
            token_scale = float(tok[train if train.any() else slice(None)].sum(2).mean())
        if not token_scale > 0:
            raise ConfigError(f"token_scale {token_scale}: must be > 0 (the corpus logs no tokens?)")
        self.token_scale, self.tokens = float(token_scale), tok
        lp = runs.logprob_mean.astype(np.float64)
        fill = float(np.nanmean(lp)) if np.isfinite(lp).any() else 0.0
        self.lp = np.where(np.isfinite(lp), lp, fill)

    # ----------------------------------------------------------------- the dynamics
    def start(self, task: int) -> DecisionState:
        """The first state of task row ``task`` where a decision is to be made (forced ones taken)."""
        return self._forward(DecisionState(int(task), 0, ()))[0]

    def start_reward(self, task: int) -> float:
        """The reward of the forced calls before the first decision (the vote corpus's round 0 at full width)."""
        return self._forward(DecisionState(int(task), 0, ()))[1]

    def valid(self, s: DecisionState) -> np.ndarray:
        """(n_actions,) bool: which actions are valid in ``s`` (stop needs ≥ 1 round; calls need a round left
        and, per column, every column it sees called in every round so far)."""
        m = np.zeros(len(self.actions), bool)
        m[: self.n_stop] = s.t >= 1
        if s.t < self.R:
            for k, (_, cols) in enumerate(self.options):
                m[self.n_stop + k] = all(set(self.sees[c]) <= set(done) for c in cols for done in s.calls)
        return m

    def step(self, s: DecisionState, action: int) -> tuple[DecisionState | None, float]:
        """(next state or None when the episode ended, reward) of a valid ``action``; forced decisions are taken."""
        if not (0 <= action < len(self.actions)) or not self.valid(s)[action]:
            raise ConfigError(f"action {action} ({self.actions[action] if 0 <= action < len(self.actions) else '?'}) "
                              f"is not valid at round {s.t} of task {self.runs.task_ids[s.task]}; valid: "
                              f"{[a for a, ok in zip(self.actions, self.valid(s), strict=True) if ok]}")
        if action < self.n_stop:
            return None, float(self.correct(s, self.aggregations[action]))
        cost = self._cost(s, action)
        nxt = DecisionState(s.task, s.t + 1, (*s.calls, self.options[action - self.n_stop][1]))
        nxt, forced = self._forward(nxt)
        if nxt.t == self.R and self.n_stop == 1:  # only stopping is left: taken now
            return None, float(self.correct(nxt, self.aggregations[0])) - cost + forced
        return nxt, forced - cost

    def _cost(self, s: DecisionState, action: int) -> float:
        cols = list(self.options[action - self.n_stop][1])
        return float(self.price[s.task] * self.tokens[s.task, s.t, cols].sum() / self.token_scale)

    def _forward(self, s: DecisionState) -> tuple[DecisionState, float]:
        """Take forced calls (a single valid call option); returns the state and their (negative) reward."""
        m, r = self.valid(s), 0.0
        while m.sum() == 1 and m[self.n_stop:].any():
            a = int(m.argmax())
            r -= self._cost(s, a)
            s = DecisionState(s.task, s.t + 1, (*s.calls, self.options[a - self.n_stop][1]))
            m = self.valid(s)
        return s, r

    def _votes(self, s: DecisionState, weighted: bool) -> tuple[np.ndarray, np.ndarray]:
        """(K,) votes per answer code over every called attempt, and (K,) first position (round, column order)."""
        a = self.runs.answers[s.task]
        K = max(int(a.max()) + 1, 1)
        votes, first = np.zeros(K), np.full(K, 10**9)
        pos = 0
        for r, cols in enumerate(s.calls):
            for c in cols:
                code = int(a[r, c])
                if code >= 0:
                    votes[code] += np.exp(self.lp[s.task, r, c]) if weighted else 1.0
                    first[code] = min(first[code], pos)
                pos += 1
        return votes, first

    def aggregate(self, s: DecisionState, aggregation: str = "majority") -> int:
        """The answer code of the aggregate after the calls of ``s`` (−1 if nothing parsed)."""
        votes, first = self._votes(s, aggregation == "logprob")
        if not (votes > 0).any():
            return -1
        tied = np.flatnonzero(np.isclose(votes, votes.max(), rtol=0, atol=1e-9) & (votes > 0))
        return int(tied[np.argmin(first[tied])])

    def correct(self, s: DecisionState, aggregation: str = "majority") -> bool:
        """Whether the aggregate after the calls of ``s`` is the right answer."""
        top = self.aggregate(s, aggregation)
        return top >= 0 and top == int(self.runs.correct_code[s.task])

    def spent(self, s: DecisionState) -> float:
        """Tokens spent so far, in units of ``token_scale`` (full-width rounds)."""
        return sum(float(self.tokens[s.task, r, list(c)].sum()) for r, c in enumerate(s.calls)) / self.token_scale

    # ----------------------------------------------------------------- exact values
    def q_value(self, s: DecisionState, action: int, continuation: Continuation | None = None) -> float:
        """Q(s, action): the exact return-to-go of taking ``action`` in ``s`` and then following
        ``continuation`` (default :class:`StopNext`); the rewards before ``s`` are not included."""
        cont = continuation if continuation is not None else StopNext()
        nxt, total = self.step(s, action)
        while nxt is not None:
            nxt, r = self.step(nxt, int(cont(self, nxt)))
            total += r
        return total

    def q_values(self, s: DecisionState, continuation: Continuation | None = None) -> np.ndarray:
        """(n_actions,) Q of every action in ``s`` (NaN where invalid)."""
        m = self.valid(s)
        return np.array([self.q_value(s, a, continuation) if m[a] else np.nan for a in range(len(self.actions))])

    # ----------------------------------------------------------------- what a policy sees
    def features(self, s: DecisionState) -> np.ndarray:
        """(len(OBS_FEATURES) + W,) float32: the structured observation (vote summary, cost, price, calls)."""
        votes, _ = self._votes(s, False)
        wv, _ = self._votes(s, True)
        n = float(votes.sum())
        drawn = sum(len(c) for c in s.calls)
        srt = np.sort(votes)[::-1]
        v1, v2 = (srt[0] if srt.size else 0.0), (srt[1] if srt.size > 1 else 0.0)
        top = self.aggregate(s)
        lps = [(self.lp[s.task, r, c], int(self.runs.answers[s.task, r, c]) == top)
               for r, cols in enumerate(s.calls) for c in cols if self.runs.answers[s.task, r, c] >= 0]
        lp_top = float(np.mean([x for x, t in lps if t])) if any(t for _, t in lps) else -2.0
        lp_rest = float(np.mean([x for x, t in lps if not t])) if any(not t for _, t in lps) else lp_top
        left = (self.R - s.t) / self.R
        called = np.array([sum(c in cols for cols in s.calls) / self.R for c in range(self.W)])
        x = [s.t / self.R, left, v1 / max(n, 1), v2 / max(n, 1), (votes > 0).sum() / max(n, 1),
             1 - n / max(drawn, 1), n / (self.R * self.W), (wv.max() / wv.sum()) if wv.sum() > 0 else 0.0,
             lp_top, lp_top - lp_rest, self.spent(s), self.price[s.task], self.price[s.task] * left]
        return np.clip(np.concatenate([np.asarray(x, np.float64), called]), -20, 20).astype(np.float32)

    def text(self, s: DecisionState) -> str:
        """The state as a short text for an LLM (~40–60 tokens): round, votes so far (answers as letters,
        most first), the last round's answer per member (team), confidence, cost and price, valid actions.

        >>> from orchestrace.offline import make_synthetic_logged
        >>> d = LoggedDecisions(make_synthetic_logged(T=3, R=3, W=2, seed=0))
        >>> print(d.text(d.start(0)))  # doctest: +NORMALIZE_WHITESPACE
        1 of 3 rounds done. Votes: A1 B1. Confidence -0.2. Spent 0.9 rounds, price 0.06 per round. Actions: stop, continue.
        >>> LoggedDecisions(d.runs, show_task=True).text(d.start(0)).split(".")[0]
        'Task: synth:1'
        """
        votes, _ = self._votes(s, False)
        order = [int(k) for k in np.argsort(-votes, kind="stable") if votes[k] > 0]
        letter = {k: chr(65 + i) if i < 26 else f"#{i}" for i, k in enumerate(order)}
        vote_txt = " ".join(f"{letter[k]}{int(votes[k])}" for k in order) or "none parsed"
        parts = [f"{s.t} of {self.R} rounds done.", f"Votes: {vote_txt}."]
        if self.show_task:
            parts.insert(0, f"Task: {self.runs.suite[s.task]}:{self.runs.difficulty[s.task]}.")
        if self.runs.members and s.calls:
            r = len(s.calls) - 1
            last = [f"{self.runs.members[c]}={letter.get(int(self.runs.answers[s.task, r, c]), '?')}"
                    for c in s.calls[-1]]
            parts.append(f"Last: {' '.join(last)}.")
        f = self.features(s)
        if order:
            parts.append(f"Confidence {f[OBS_FEATURES.index('lp_top')]:.1f}.")
        parts.append(f"Spent {self.spent(s):.1f} rounds, price {self.price[s.task]:.2f} per round.")
        ok = [a for a, v in zip(self.actions, self.valid(s), strict=True) if v]
        parts.append(f"Actions: {', '.join(ok)}.")
        return " ".join(parts)


# ----------------------------------------------------------------------------- continuation policies
@dataclass(frozen=True)
class StopNext:
    """Continuation: stop (first aggregation) at the next decision — Q is then the one-step look-ahead value."""

    def __call__(self, dec: LoggedDecisions, s: DecisionState) -> int:
        return 0


@dataclass(frozen=True)
class FixedRule:
    """Continuation: call ``option`` (an action word) until ``rounds`` rounds are done, then stop."""

    option: str
    rounds: int

    def __call__(self, dec: LoggedDecisions, s: DecisionState) -> int:
        m = dec.valid(s)
        a = dec.actions.index(self.option) if self.option in dec.actions else -1
        return a if s.t < self.rounds and a >= 0 and m[a] else 0


class GateContinuation:
    """Continuation: the fitted stop gate (:class:`~orchestrace.offline.StopGate`) decides stop/continue at
    every later check, continuing with the option of ``gate.width`` columns and stopping with the gate's
    aggregation. Vote corpora only; the decisions must offer that width and aggregation."""

    def __init__(self, gate: Any, dec: LoggedDecisions) -> None:
        if dec.runs.members:
            raise ConfigError("GateContinuation: the stop gate is fitted on vote corpora; a team corpus needs "
                              "StopNext or FixedRule as its continuation")
        names = {cols: k for k, (_, cols) in enumerate(dec.options)}
        cols = tuple(range(gate.width))
        if cols not in names or gate.aggregation not in dec.aggregations or gate.max_rounds != dec.R:
            raise ConfigError(f"GateContinuation: the gate needs width {gate.width}, aggregation "
                              f"{gate.aggregation!r} and {gate.max_rounds} rounds; the decisions offer options "
                              f"{[n for n, _ in dec.options]}, aggregations {list(dec.aggregations)} and {dec.R} "
                              "rounds (pass widths=/aggregations= to LoggedDecisions, or fit_gate(widths=[W]))")
        self.gate, self.call = gate, dec.n_stop + names[cols]
        self.stop = dec.aggregations.index(gate.aggregation)
        self._memo: dict[tuple[int, int], bool] = {}

    def __call__(self, dec: LoggedDecisions, s: DecisionState) -> int:
        m = dec.valid(s)
        if s.t >= dec.R or not m[self.call]:
            return self.stop
        if s.t == 0:
            return self.call
        if any(c != tuple(range(self.gate.width)) for c in s.calls):
            return self.stop  # a history the gate was not fitted for: stop
        key = (s.task, s.t)
        if key not in self._memo:
            i, w = s.task, self.gate.width
            r = dec.runs
            self._memo[key] = self.gate.should_stop(
                [[int(x) if x >= 0 else None for x in row] for row in r.answers[i, : s.t, :w]],
                price=float(dec.price[i]), logprobs=r.logprob_mean[i, : s.t, :w].tolist(),
                completion_tokens=r.completion_tokens[i, : s.t, :w].tolist(),
                prompt_tokens=r.prompt_tokens[i, : s.t, :w].tolist())
        return self.stop if self._memo[key] else self.call


def rollout(dec: LoggedDecisions, task: int, policy: Continuation) -> tuple[float, list[tuple[DecisionState, int]]]:
    """(return, [(state, action), …]) of ``policy`` on task row ``task``: the whole episode's return,
    the forced calls before the first decision included."""
    s: DecisionState | None = dec.start(task)
    total, path = dec.start_reward(task), []
    while s is not None:
        a = int(policy(dec, s))
        path.append((s, a))
        s, r = dec.step(s, a)
        total += r
    return total, path


# ----------------------------------------------------------------------------- the gymnasium environment
class LoggedRunsEnv(gym.Env):
    """Gymnasium view of :class:`LoggedDecisions`: one episode per logged task of ``split`` (None: all).

    Observation ``{"obs": Box(len(OBS_FEATURES) + W), "action_mask": MultiBinary(n_actions)}``;
    ``info["text"]`` is the LLM rendering, ``info["state"]`` the :class:`DecisionState`. Action
    ``Discrete(n_actions)`` in the order of :attr:`LoggedDecisions.actions`; an invalid action
    is replaced by the first valid stop (or call) and ``info["invalid_action"]`` is set. The cost of
    forced calls before the first decision (round 0 of a vote corpus at full width) is paid with
    the first step's reward, so an episode's rewards sum to its logged return.
    ``reset(options={"task": i})`` picks a task row; otherwise tasks are drawn from the seeded
    generator.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, decisions: LoggedDecisions, split: str | None = "train", render_mode: str | None = None) -> None:
        self.dec = decisions
        rows = np.arange(len(decisions.runs.task_ids)) if split is None else np.flatnonzero(
            decisions.runs.split == split)
        if not len(rows):
            raise ConfigError(f"split {split!r}: no tasks (the corpus has "
                              f"{sorted(set(decisions.runs.split.tolist()))})")
        self.rows = rows
        n = len(decisions.actions)
        F = len(OBS_FEATURES) + decisions.W  # noqa: N806
        self.observation_space = gym.spaces.Dict({
            "obs": gym.spaces.Box(-20.0, 20.0, (F,), np.float32),
            "action_mask": gym.spaces.MultiBinary(n),
        })
        self.action_space = gym.spaces.Discrete(n)
        self.render_mode = render_mode
        self._s: DecisionState | None = None
        self._pending = 0.0

    def _obs(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        assert self._s is not None
        s = self._s
        return ({"obs": self.dec.features(s), "action_mask": self.dec.valid(s).astype(np.int8)},
                {"state": s, "text": self.dec.text(s), "task_id": str(self.dec.runs.task_ids[s.task])})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        task = (options or {}).get("task")
        row = int(task) if task is not None else int(self.rows[self.np_random.integers(len(self.rows))])
        self._s = self.dec.start(row)
        self._pending = self.dec.start_reward(row)  # forced calls before the first decision: paid with step 1
        return self._obs()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._s is None:
            raise ConfigError("LoggedRunsEnv.step before reset()")
        a, m = int(action), self.dec.valid(self._s)
        invalid = not (0 <= a < len(m) and m[a])
        if invalid:
            a = int(np.flatnonzero(m)[0])
        nxt, r = self.dec.step(self._s, a)
        r, self._pending = r + self._pending, 0.0
        if nxt is None:
            obs, info = self._obs()
            return obs, r, True, False, {**info, "invalid_action": invalid}
        self._s = nxt
        obs, info = self._obs()
        return obs, r, False, False, {**info, "invalid_action": invalid}

    def render(self) -> str | None:
        return None if self._s is None else self.dec.text(self._s)
