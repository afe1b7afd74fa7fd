"""Exact valuation of team policies on logged always-continue team runs (O1–O5), numpy.

A team corpus (:class:`~orchestrace.offline.LoggedRuns` with ``members``) calls every member
column every round. A **team policy** decides before each round d = 0..R−1 either to *call* a
subset S of the member columns this round (O1 how many, O2 whom; a column c is callable only
when every column in ``sees[c]`` is called this round and was called in every earlier round —
O3, communication, exact only under the configuration the reviser was logged with), or (from
d = 1 on) to *stop* with an aggregation (O4) of everything called so far; after round R−1 it
must stop (O5). Aggregations (:func:`aggregations`): ``majority`` (ties → the answer first
called), ``logprob`` (votes weighted by exp(mean token log-prob)), ``confidence`` (weighted by
the DeepConf-style confidence, where logged) and ``latest:<member>`` (that member's latest
answer; ``latest:reviser`` is the reviser's answer). The return is

    correct − price × tokens(called attempts) / token_scale

with the per-task price of :func:`~orchestrace.offline.task_prices` and ``token_scale`` one
full round of every member (mean over the training tasks). Every policy is valued exactly by
walking the log (:func:`rollout`): the state after each round is what the trace holds, the
answers of a called column are the logged ones.

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> runs = make_synthetic_team(40, 3, seed=0)
>>> arr = TeamArrays.build(runs, price=np.full(40, 0.1), token_scale=300.0)
>>> st = arr.start(np.arange(40))
>>> st = arr.step(st, np.ones((40, 4), bool))             # round 0, every member
>>> bool((arr.correct(st, "majority") == runs.round_correct[:, 0]).all())
True
>>> [len(subsets(runs)), aggregations(runs)[-1]]
[8, 'latest:reviser']
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._vote import top_answer  # the one majority vote (ties: the answer seen first)
from ..errors import ConfigError
from ..logged.runs import LoggedRuns
from .rules import beta_criterion

__all__ = ["TeamArrays", "TeamState", "aggregations", "available_actions", "column_names", "column_subset", "rollout", "subset_masks", "subsets", "team_features",
           "FEATURES_VOTE", "FEATURES_MEMBER"]

#: The vote block of the team policy's features (then one :data:`FEATURES_MEMBER` block per column,
#: then one indicator per task cell).
FEATURES_VOTE: tuple[str, ...] = (
    "top_share", "second_share", "margin", "distinct_share", "entropy", "unparsed_share", "log_votes",
    "beta_criterion", "lp_top_share", "conf_top_share", "member_agreement", "tokens_spent", "price", "round",
    "rounds_left", "price_x_left")
FEATURES_MEMBER: tuple[str, ...] = ("called", "latest_is_top", "latest_parsed", "latest_lp", "latest_conf")
MAX_COLUMNS = 6


def column_names(runs: LoggedRuns) -> tuple[str, ...]:
    """The member kind of each column (``w0``, ``w1`` … for a homogeneous vote)."""
    W = runs.answers.shape[2]
    return tuple(runs.members) if runs.members else tuple(f"w{c}" for c in range(W))


def subsets(runs: LoggedRuns) -> list[tuple[int, ...]]:
    """The member-column subsets a policy may call in a round, smallest first.

    A team: every non-empty subset that holds ``sees[c]`` for each of its columns c. A
    homogeneous vote (``members`` empty): the first k columns, k = 1..W (columns are exchangeable).
    """
    W = runs.answers.shape[2]
    if not runs.members:
        return [tuple(range(k)) for k in range(1, W + 1)]
    if W > MAX_COLUMNS:
        raise ConfigError(f"{W} member columns: the joint policy enumerates subsets, at most {MAX_COLUMNS} columns")
    sees = _sees(runs)
    out = []
    for k in range(1, W + 1):
        for s in itertools.combinations(range(W), k):
            if all(set(sees[c]) <= set(s) for c in s):
                out.append(s)
    return out


def column_subset(runs: LoggedRuns, cols: tuple[int, ...]) -> LoggedRuns:
    """The corpus restricted to the member columns ``cols`` (in that order; ``sees`` re-indexed; answer codes kept).

    A fixed team configuration as a corpus of its own, for rule code written against width-W corpora.
    A column whose ``sees`` are not all in ``cols`` is refused; ``round_correct`` stays the full team's, as logged.

    >>> from orchestrace.logged.team_synth import make_synthetic_team
    >>> sub = column_subset(make_synthetic_team(5, 2, seed=0), (2, 0))
    >>> sub.members, sub.answers.shape
    (('calc', 'cold'), (5, 2, 2))
    """
    import dataclasses

    cols = tuple(int(c) for c in cols)
    sees = _sees(runs)
    for c in cols:
        if not set(sees[c]) <= set(cols):
            raise ConfigError(f"column {c} sees columns {sees[c]}, not all among {cols}")
    pos = {c: i for i, c in enumerate(cols)}
    sl = (slice(None), slice(None), list(cols))
    return dataclasses.replace(
        runs, answers=runs.answers[sl], correct=runs.correct[sl], prompt_tokens=runs.prompt_tokens[sl],
        completion_tokens=runs.completion_tokens[sl], logprob_mean=runs.logprob_mean[sl],
        members=tuple(runs.members[c] for c in cols) if runs.members else (),
        sees=tuple(tuple(pos[x] for x in sees[c]) for c in cols) if runs.sees else (),
        confidence=None if runs.confidence is None else runs.confidence[sl])


def _sees(runs: LoggedRuns) -> tuple[tuple[int, ...], ...]:
    W = runs.answers.shape[2]
    return tuple(runs.sees) if runs.sees else tuple(() for _ in range(W))


def aggregations(runs: LoggedRuns) -> tuple[str, ...]:
    """The aggregations of a corpus: majority, logprob, confidence (when logged), latest:<member> (teams)."""
    out = ["majority", "logprob"]
    if runs.confidence is not None and np.isfinite(runs.confidence).any():
        out.append("confidence")
    if runs.members:
        out += [f"latest:{m}" for m in runs.members]
    return tuple(out)


@dataclass
class TeamState:
    """What the trace holds after some rounds, for N rows (row i is task ``idx[i]``); K answer codes."""

    idx: np.ndarray  # (N,) task index
    votes: np.ndarray  # (N, K) votes per answer code so far
    wlp: np.ndarray  # (N, K) log-prob-weighted votes
    wcf: np.ndarray  # (N, K) confidence-weighted votes
    first: np.ndarray  # (N, K) int position round·W + column of the first called vote (big: never)
    latest: np.ndarray  # (N, W) int latest answer code of each column (−1: none / unparsed)
    latest_lp: np.ndarray  # (N, W) its mean token log-prob (filled)
    latest_cf: np.ndarray  # (N, W) its confidence (filled)
    ncalled: np.ndarray  # (N, W) rounds each column was called
    allcalled: np.ndarray  # (N, W) bool called in every round so far (vacuous before round 0)
    drawn: np.ndarray  # (N,) attempts called
    tokens: np.ndarray  # (N,) tokens of the called attempts
    rounds: int  # rounds done

    def take(self, rows: np.ndarray) -> TeamState:
        """The state of the rows ``rows`` (an index or a mask)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        # np.take along the rows: the same rows as fancy indexing, several times faster on (N, K) blocks
        parts: dict[str, Any] = {k: (np.take(v, rows, axis=0) if isinstance(v, np.ndarray) else v)
                                 for k, v in vars(self).items()}
        return TeamState(**parts)


@dataclass(frozen=True)
class TeamArrays:
    """A corpus's per-attempt arrays prepared for valuation (missing log-probs / confidences filled)."""

    codes: np.ndarray  # (T, R, W) int64
    wlp: np.ndarray  # (T, R, W) exp(log-prob)
    wcf: np.ndarray  # (T, R, W) confidence ≥ 0
    lp: np.ndarray  # (T, R, W) filled log-prob
    cf: np.ndarray  # (T, R, W) filled confidence
    tok: np.ndarray  # (T, R, W) prompt + completion tokens
    correct_code: np.ndarray  # (T,)
    price: np.ndarray  # (T,)
    cell: np.ndarray  # (T,) int index into ``cells`` (−1: a cell the policy does not know)
    cells: tuple[str, ...]
    aggs: tuple[str, ...]
    members: tuple[str, ...]
    sees: tuple[tuple[int, ...], ...]
    token_scale: float
    lp_fill: float
    cf_fill: float
    K: int

    @classmethod
    def build(cls, runs: LoggedRuns, price: np.ndarray, token_scale: float, *, lp_fill: float | None = None,
              cf_fill: float | None = None, cells: tuple[str, ...] | None = None) -> TeamArrays:
        """Prepare ``runs``; the fills and cells default to this corpus's own (pass the training ones)."""
        if not token_scale > 0:
            raise ConfigError(f"token_scale {token_scale}: must be > 0")
        lp = runs.logprob_mean.astype(np.float64)
        if lp_fill is None:
            lp_fill = float(np.nanmean(lp)) if np.isfinite(lp).any() else 0.0
        lpf = np.where(np.isfinite(lp), lp, lp_fill)
        cf = (np.full(lp.shape, np.nan) if runs.confidence is None else runs.confidence.astype(np.float64))
        if cf_fill is None:
            cf_fill = float(np.nanmean(cf)) if np.isfinite(cf).any() else 1.0
        cff = np.where(np.isfinite(cf), cf, cf_fill)
        cell_names = np.array([f"{s}:{d}" for s, d in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)])
        if cells is None:
            cells = tuple(sorted(set(cell_names.tolist())))
        lookup = {c: i for i, c in enumerate(cells)}
        return cls(codes=runs.answers.astype(np.int64), wlp=np.exp(lpf), wcf=np.maximum(cff, 0.0), lp=lpf, cf=cff,
                   tok=runs.prompt_tokens.astype(np.float64) + runs.completion_tokens,
                   correct_code=runs.correct_code.astype(np.int64), price=np.asarray(price, np.float64),
                   cell=np.array([lookup.get(c, -1) for c in cell_names.tolist()], np.int64), cells=tuple(cells),
                   aggs=aggregations(runs), members=column_names(runs), sees=_sees(runs), token_scale=float(token_scale),
                   lp_fill=float(lp_fill), cf_fill=float(cf_fill), K=max(int(runs.answers.max(initial=-1)) + 1, 1))

    @property
    def shape(self) -> tuple[int, int, int]:
        t, r, w = self.codes.shape
        return int(t), int(r), int(w)

    def start(self, idx: np.ndarray) -> TeamState:
        """The empty state (no round yet) of the tasks ``idx``."""
        idx = np.asarray(idx, np.int64)
        N, W, K = len(idx), self.codes.shape[2], self.K
        big = np.iinfo(np.int64).max
        return TeamState(idx=idx, votes=np.zeros((N, K)), wlp=np.zeros((N, K)), wcf=np.zeros((N, K)),
                         first=np.full((N, K), big, np.int64), latest=np.full((N, W), -1, np.int64),
                         latest_lp=np.full((N, W), self.lp_fill), latest_cf=np.full((N, W), self.cf_fill),
                         ncalled=np.zeros((N, W)), allcalled=np.ones((N, W), bool), drawn=np.zeros(N),
                         tokens=np.zeros(N), rounds=0)

    def step(self, st: TeamState, mask: np.ndarray) -> TeamState:
        """The state after the next round, calling the columns ``mask`` (N, W) bool (a new state)."""
        r = st.rounds
        if r >= self.codes.shape[1]:
            raise ConfigError(f"round {r}: the corpus logged only {self.codes.shape[1]} rounds")
        W, K = self.codes.shape[2], self.K
        mask = np.broadcast_to(np.asarray(mask, bool), (len(st.idx), W))
        a = self.at_round(self.codes, st.idx, r)  # (N, W)
        ok = (a >= 0) & mask
        wl, wc = self.at_round(self.wlp, st.idx, r), self.at_round(self.wcf, st.idx, r)
        # this round's votes per code, column by column (a column adds at most one vote to a row: no duplicates);
        # the same additions in the same column order as a one-hot sum over the columns, without the (N, W, K) block
        dv, dl, dc = np.zeros((len(a), K)), np.zeros((len(a), K)), np.zeros((len(a), K))
        first = st.first.copy()
        for c in range(W):
            rows = np.flatnonzero(ok[:, c])
            code = a[rows, c]
            dv[rows, code] += 1.0
            dl[rows, code] += wl[rows, c]
            dc[rows, code] += wc[rows, c]
            first[rows, code] = np.minimum(first[rows, code], r * W + c)
        return TeamState(
            idx=st.idx, votes=st.votes + dv, wlp=st.wlp + dl, wcf=st.wcf + dc, first=first,
            latest=np.where(mask, a, st.latest), latest_lp=np.where(mask, self.at_round(self.lp, st.idx, r), st.latest_lp),
            latest_cf=np.where(mask, self.at_round(self.cf, st.idx, r), st.latest_cf), ncalled=st.ncalled + mask,
            allcalled=st.allcalled & mask, drawn=st.drawn + mask.sum(1),
            tokens=st.tokens + (self.at_round(self.tok, st.idx, r) * mask).sum(1), rounds=r + 1)

    @staticmethod
    def at_round(x: np.ndarray, idx: np.ndarray, r: int) -> np.ndarray:
        """``x[idx, r]`` for a (T, R, W) array: whole rows gathered by ``np.take`` (faster), then round r's columns."""
        T, R, W = x.shape
        return np.take(x.reshape(T, R * W), idx, axis=0)[:, r * W:(r + 1) * W]

    def answer(self, st: TeamState, agg: str) -> np.ndarray:
        """(N,) the aggregate answer code (−1: nothing to aggregate) under ``agg``."""
        if agg.startswith("latest:"):
            name = agg.split(":", 1)[1]
            if name not in self.members:
                raise ConfigError(f"aggregation {agg!r}: no member {name!r} (members: {', '.join(self.members)})")
            return st.latest[:, self.members.index(name)]
        score = {"majority": st.votes, "logprob": st.wlp, "confidence": st.wcf}.get(agg)
        if score is None:
            raise ConfigError(f"aggregation {agg!r}: use one of {', '.join(self.aggs)}")
        return top_answer(score, st.first, present=st.votes > 0)

    def correct(self, st: TeamState, agg: str) -> np.ndarray:
        """(N,) bool: the aggregate under ``agg`` is the right answer."""
        a = self.answer(st, agg)
        return (a >= 0) & (a == self.correct_code[st.idx])

    def cost(self, st: TeamState) -> np.ndarray:
        """(N,) price × tokens so far / token_scale."""
        return self.price[st.idx] * st.tokens / self.token_scale


def valid_subsets(st: TeamState, subs: list[tuple[int, ...]], sees: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """(N, S) bool: subset s may be called next (its columns' ``sees`` are in s and were called in every earlier
    round)."""
    out = np.ones((len(st.idx), len(subs)), bool)
    for j, s in enumerate(subs):
        need = sorted({x for c in s for x in (sees[c] if c < len(sees) else ())})
        if not set(need) <= set(s):  # a column's sees are called in the same round
            out[:, j] = False
        elif need:
            out[:, j] = st.allcalled[:, need].all(1)
    return out


def available_actions(arr: TeamArrays, st: TeamState, subs: list[tuple[int, ...]], n_agg: int) -> np.ndarray:
    """(N, len(subs) + n_agg) bool: the actions open after ``st.rounds`` rounds — a valid subset (before the
    round limit), or a stop with any aggregation (after the first round)."""
    out = np.zeros((len(st.idx), len(subs) + n_agg), bool)
    if st.rounds < arr.shape[1]:
        out[:, : len(subs)] = valid_subsets(st, subs, arr.sees)
    if st.rounds >= 1:
        out[:, len(subs):] = True
    return out


@functools.lru_cache(maxsize=8)
def _beta_table(m: int) -> np.ndarray:
    """The (m, m) table of beta_criterion on integer counts 0..m-1 (read-only).

    Cached, at most 8 tables: sizes are powers of two and counts are at most R·W ≤ 32·16,
    so a process meets a handful (at most 8 · 512² floats = 16 MiB)."""
    a, b = np.meshgrid(np.arange(m, dtype=np.float64), np.arange(m, dtype=np.float64), indexing="ij")
    table = beta_criterion(a.reshape(-1), b.reshape(-1)).reshape(m, m)
    table.flags.writeable = False
    return table


def _beta_lookup(v1: np.ndarray, v2: np.ndarray) -> np.ndarray:
    """beta_criterion on integer vote counts through a cached table (counts are at most R·W)."""
    if not len(v1):
        return np.zeros(0)
    m = int(max(v1.max(), v2.max())) + 1
    m = 1 << max(m - 1, 1).bit_length()  # round up to a power of two: few tables
    return _beta_table(m)[v1.astype(np.int64), v2.astype(np.int64)]


def team_features(arr: TeamArrays, st: TeamState, max_rounds: int) -> np.ndarray:
    """(N, F) what the trace holds at the decision after ``st.rounds`` rounds (module docstring, features)."""
    N, W = st.latest.shape
    v = st.votes
    tot = v.sum(1)
    n = np.maximum(tot, 1e-12)
    srt = np.sort(v, 1)
    v1 = srt[:, -1]
    v2 = srt[:, -2] if v.shape[1] > 1 else np.zeros(N)
    p = v / n[:, None]
    ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(1)
    top = top_answer(v, st.first)
    has = top >= 0
    rows = np.arange(N)
    topc = np.maximum(top, 0)
    lp_share = np.where(has, st.wlp[rows, topc] / np.maximum(st.wlp.sum(1), 1e-12), 0.0)
    cf_share = np.where(has, st.wcf[rows, topc] / np.maximum(st.wcf.sum(1), 1e-12), 0.0)
    lat = st.latest
    okl = lat >= 0
    iu, ju = np.triu_indices(W, 1)
    pairs = okl[:, iu] & okl[:, ju]
    agree = np.where(pairs.sum(1) > 0, ((lat[:, iu] == lat[:, ju]) & pairs).sum(1) / np.maximum(pairs.sum(1), 1), 0.0)
    d = st.rounds
    span = max(max_rounds - 1, 1)
    price = arr.price[st.idx]
    left = max_rounds - d
    bc = _beta_lookup(v1, v2)
    vote = [v1 / n, v2 / n, (v1 - v2) / n, (v > 0).sum(1) / n, ent, 1.0 - tot / np.maximum(st.drawn, 1),
            np.log1p(tot), np.where(tot > 0, bc, 0.0), lp_share, cf_share, agree, st.tokens / arr.token_scale, price,
            np.full(N, d / span), np.full(N, left / span), price * left / span]
    member = []
    for c in range(W):
        member += [st.ncalled[:, c] / max(d, 1), (okl[:, c] & (lat[:, c] == top)).astype(np.float64),
                   okl[:, c].astype(np.float64), (st.latest_lp[:, c] - arr.lp_fill), (st.latest_cf[:, c] - arr.cf_fill)]
    cell = arr.cell[st.idx]
    onehot = [(cell == i).astype(np.float64) for i in range(len(arr.cells))]
    return np.stack(vote + member + onehot, 1) if N else np.zeros((0, len(vote) + len(member) + len(onehot)))


def feature_names(arr: TeamArrays) -> list[str]:
    """Column names of :func:`team_features`."""
    return [*FEATURES_VOTE, *(f"{m}.{f}" for m in arr.members for f in FEATURES_MEMBER),
            *(f"cell={c}" for c in arr.cells)]


#: A policy for :func:`rollout`: (decision d, state, features) → (N,) action index into
#: ``subs`` (call) or len(subs) + g (stop with ``aggs[g]``).
Policy = Callable[[int, TeamState], np.ndarray]


def subset_masks(subs: list[tuple[int, ...]], W: int) -> np.ndarray:  # noqa: N803
    """(len(subs), W) which member columns each subset calls.

    >>> subset_masks([(0,), (0, 2)], 3).astype(int).tolist()
    [[1, 0, 0], [1, 0, 1]]
    """
    masks = np.zeros((len(subs), W), bool)
    for j, s in enumerate(subs):
        masks[j, list(s)] = True
    return masks


def rollout(arr: TeamArrays, policy: Policy, subs: list[tuple[int, ...]], aggs: Sequence[str],
            idx: np.ndarray | None = None, *, start: TeamState | None = None) -> dict[str, np.ndarray]:
    """Exact outcome per task of following ``policy`` on the log: ``return``, ``correct``, ``tokens``,
    ``calls``, ``rounds``, ``agg`` (the stop's aggregation index) — all (N,).

    ``start``: follow it from this state on (decision ``start.rounds``; ``idx`` is then its tasks) — the return
    is then the return-to-go, correct − price × the tokens called from ``start`` on / token_scale (the fitted
    team policy's targets, :func:`~orchestrace.trainers.team_fitted_q.backward`).
    An action that calls an invalid subset (its ``sees`` not satisfied) is a ConfigError.
    """
    T, R, W = arr.shape
    if start is None:
        idx = np.arange(T) if idx is None else np.asarray(idx, np.int64)
        st, spent = arr.start(idx), np.zeros(len(idx))
    else:
        st, spent = start, start.tokens.copy()
    N = len(st.idx)
    sees = arr.sees
    masks = subset_masks(subs, W)
    out = {k: np.zeros(N) for k in ("return", "correct", "tokens", "calls", "rounds", "agg")}
    active = np.arange(N)
    for d in range(st.rounds, R + 1):
        if not len(active):
            break
        act = np.asarray(policy(d, st), np.int64)
        if d == R:
            act = np.where(act < len(subs), len(subs), act)  # the last decision stops (majority if the policy calls)
        if d == 0 and (act >= len(subs)).any():
            raise ConfigError("a policy must call at least one round before it stops (decision 0 chose stop)")
        stop = act >= len(subs)
        if stop.any():
            srows = np.flatnonzero(stop)
            sub = st.take(srows)
            g = act[srows] - len(subs)
            corr = np.zeros(len(srows), bool)
            for gi in np.unique(g):
                m = g == gi
                corr[m] = arr.correct(sub.take(np.flatnonzero(m)), aggs[int(gi)])
            tgt = active[srows]
            out["correct"][tgt] = corr
            out["tokens"][tgt] = sub.tokens
            out["calls"][tgt] = sub.drawn
            out["rounds"][tgt] = d
            out["agg"][tgt] = g
            out["return"][tgt] = corr - arr.price[sub.idx] * (sub.tokens - spent[tgt]) / arr.token_scale
        keep = np.flatnonzero(~stop)
        if not len(keep):
            break
        st = st.take(keep)
        active = active[keep]
        a = act[keep]
        ok = valid_subsets(st, subs, sees)[np.arange(len(keep)), a]
        if not ok.all():
            raise ConfigError(f"decision {d}: the policy called {[subs[int(i)] for i in a[~ok][:3]]} whose revisers "
                              "did not see the columns they were logged with (sees)")
        st = arr.step(st, masks[a])
    return out
