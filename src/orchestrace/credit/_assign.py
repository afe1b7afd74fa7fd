"""``assign``: one call from (trace, reward signals) to a credit value per unit.

What each method does with a baseline (``A = R − b``; ``A < 0`` is a failure's blame):

===================  ============================================================
``broadcast``        every unit in scope gets ``A`` (no cause is singled out)
``causal``           ``A ≥ 0`` shared by the output's ancestral work; ``A < 0`` by
                     the origins of the errors that reached the output (events
                     flagged ``error``), else by work; Σ credit = ``A``
``discounted``       ``A`` flows back along the graph, ``γ`` per hop; a unit takes
                     its event of largest ``|G|`` (``reduce="auto"``: max for
                     ``A ≥ 0``, min for ``A < 0``) — nearness, not causes
``shapley``/``owen`` the trace-only game with ``A < 0`` spread over the error
                     origins: the erring unit and what it depended on share the
                     blame; Σ credit = ``A`` (efficiency)
``leave-one-out``,   ``v(N) − v(N∖{i})`` of the same game: blame on the units
``c3``, ``coma``     without which the failure would not have happened
===================  ============================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.units import UnitIndex, parse_unit, unit_index
from ..errors import ConfigError
from ..rewards.credit_methods import METHOD_OPTIONS, PLACEMENTS, CreditMethod, parse_method
from ..vocab import CreditUnit
from . import _flow
from ._baselines import c3_advantages, coma_advantage
from ._games import EXACT_MAX, leave_one_out, owen, shapley
from ._trace_value import DESCRIPTION, TraceValue
from ._value import Evaluator

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..core.trace import Signal, Trace

__all__ = ["CreditResult", "assign", "group_baselines"]


@dataclass(frozen=True)
class CreditResult:
    """Credit per unit: ``ids[k]`` (with ``roles[k]``) gets ``values[k]``.

    ``stderr`` ``(k,)`` standard errors where the method sampled (else None); ``epsilon``
    the bound on the largest error at confidence ``1 − delta`` (Hoeffding's with
    ``value_range``, else a CLT bound; ``notes`` define it and give it relative to the mean
    |credit|); ``samples`` the
    permutations drawn; ``evaluations`` the coalitions valued; ``total_reward`` the sum
    credited — the signals' sum minus ``baseline`` when one was given (the advantage);
    ``notes`` say which assumptions were made (e.g. that the trace-only value function was
    used). Token units hold **per-token** credit of a span.
    """

    unit: CreditUnit
    method: CreditMethod
    ids: tuple[str, ...]
    roles: tuple[str | None, ...]
    values: np.ndarray
    stderr: np.ndarray | None = None
    epsilon: float | None = None
    delta: float | None = None
    samples: int | None = None
    evaluations: int = 0
    total_reward: float = 0.0
    notes: tuple[str, ...] = field(default=())
    baseline: float | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, unit_id: str) -> float:
        try:
            return float(self.values[self.ids.index(unit_id)])
        except ValueError:
            raise KeyError(unit_id) from None

    def as_dict(self) -> dict[str, float]:
        """``{unit id: credit}``."""
        return dict(zip(self.ids, self.values.tolist(), strict=False))

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready record per unit: ``unit``, ``credit`` and ``stderr`` (if sampled)."""
        vals = self.values.tolist()
        if self.stderr is None:
            return [{"unit": u, "credit": v} for u, v in zip(self.ids, vals, strict=False)]
        return [{"unit": u, "credit": v, "stderr": s} for u, v, s in zip(self.ids, vals, self.stderr.tolist(), strict=False)]


def assign(trace: Trace, signals: Sequence[Signal] | None = None, *, unit: CreditUnit | str,
           method: CreditMethod | str = CreditMethod.BROADCAST, value_fn: Callable[..., Any] | None = None,
           samples: int | None = None, seed: int = 0, graph: TraceGraph | None = None,
           placement: str = "uniform", baseline: float | None = None, **kw: Any) -> CreditResult:
    """Credit each unit of kind ``unit`` for the reward ``signals`` by ``method``.

    ``signals`` default to the trace's own (``Trace.signals``), else the shared outcome
    (R1). With a ``baseline`` ``b`` (e.g. the mean reward of runs of the same task:
    :func:`group_baselines`) the credited quantity is the **advantage** ``R − b``, added as
    a team signal of value ``−b``: a run above its baseline earns positive credit, a failed
    run negative credit — *blame* — which the methods that find causes concentrate on the
    origins of the errors that reached the output (see below). Methods and their keyword
    arguments:

    ===================  ============================================================
    ``broadcast``        every unit in a signal's scope gets its full value
    ``causal``           ``weight`` — shares among the rewarded event's ancestors
    ``discounted``       ``gamma`` (per hop, 0.95), ``gamma_s`` (per second, 1),
                         ``reduce`` (max) — graph return; ``lam``, ``values`` → GAE
    ``leave-one-out``    ``D_i = v(N) − v(N∖{i})``
    ``shapley``          exact (trace-only game: from its Harsanyi dividends at any
                         size; else for ``n ≤ exact_max`` = 20 non-null units), else
                         permutation sampling to ``rel_tol`` (0.1) × mean |credit|
                         (``samples``, ``epsilon``, ``rel_tol``, ``delta``,
                         ``value_range``, ``time_limit``)
    ``owen``             Owen values: agents grouped by role; events grouped by agent
    ``c3``               ``alternatives={unit: [(R̄_k, w_k), …]}`` (index 0 = taken)
    ``coma``             ``q={unit: [Q(u')…]}``, ``pi={unit: [π(u')…]}``, ``taken``
    ``blame``            the decisive error from the events' evidence
                         (:mod:`orchestrace.blame`): signed, the culprit lowest
    ===================  ============================================================

    Counterfactual methods value coalitions of units with ``value_fn`` (``(B, n)`` masks
    over :func:`unit_index` ids when :func:`~orchestrace.credit.batched`, else a frozenset
    of unit ids); without one they use the trace-only value function
    (:class:`~orchestrace.credit._trace_value.TraceValue`) and say so in ``notes``.

    What each method does with a baseline: the table of :mod:`orchestrace.credit._assign`.

    ``token`` units are credited as turns, then placed on tokens (``placement``:
    ``uniform`` over the turn's tokens or all on the ``last`` token).

    >>> from orchestrace import synth
    >>> tr = synth(events=80, agents=3, seed=0)
    >>> r = assign(tr, unit="agent", method="shapley")
    >>> round(float(r.values.sum()), 6) == tr.rewards["team"], r.notes[0][:32]
    (True, 'trace-only value function used (')
    """
    from ..analysis.graph import TraceGraph

    u, m = _parse_call(unit, method, placement, samples, kw)
    g = graph if graph is not None else TraceGraph.from_trace(trace)
    signals, reward = _signals_to_credit(trace, signals, baseline)
    ui = unit_index(g, CreditUnit.TURN if u is CreditUnit.TOKEN else u)
    an = _flow.anchor_signals(g, ui, signals)
    notes = _baseline_notes(g, m, reward, baseline, an.total)
    values, stderr, extra = _run(g, ui, an, m, value_fn=value_fn, samples=samples, seed=seed, notes=notes, **kw)
    if u is CreditUnit.TEAM:
        values = np.array([an.total])  # the whole team earns the whole reward, whatever the method
        stderr = None if stderr is None else np.zeros(1)
    if baseline is not None:
        extra["baseline"] = float(baseline)
    if u is CreditUnit.TOKEN:
        return _to_tokens(g, ui, values, stderr, placement, m, an, extra, notes)
    return CreditResult(unit=u, method=m, ids=ui.ids, roles=ui.roles, values=values, stderr=stderr,
                        total_reward=an.total, notes=tuple(notes), **extra)


def _parse_call(unit: CreditUnit | str, method: CreditMethod | str, placement: str, samples: int | None,
                kw: Mapping[str, Any]) -> tuple[CreditUnit, CreditMethod]:
    """The unit and method of an :func:`assign` call, its options checked against the method's."""
    u = parse_unit(unit)
    m = parse_method(method)
    allowed = METHOD_OPTIONS[m]
    unknown = sorted(set(kw) - allowed)
    if unknown:
        raise ConfigError(
            f"{m.value} credit does not take {', '.join(unknown)}; it takes "
            f"{', '.join(sorted(allowed | {'samples', 'seed', 'value_fn', 'placement'})) or 'no options'}"
        )
    if placement not in PLACEMENTS:
        raise ConfigError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if samples is not None and samples < 2:
        raise ConfigError(f"samples must be ≥ 2 permutations, got {samples}")
    return u, m


def _signals_to_credit(trace: Trace, signals: Sequence[Signal] | None,
                       baseline: float | None) -> tuple[list[Signal], float]:
    """The signals credited (the trace's own by default; ``−baseline`` as a team signal) and their reward."""
    if signals is None:
        from ..rewards import default_signals

        signals = default_signals(trace)
    if not signals:
        raise ConfigError(
            "no reward signals to credit: the trace has no outcome, rewards or signals; "
            "pass signals (e.g. from a reward spec: --spec spec.toml) or record an outcome"
        )
    out = list(signals)
    reward = float(sum(sig.value for sig in out))
    if baseline is not None:
        if not isinstance(baseline, (int, float, np.integer, np.floating)) or not math.isfinite(float(baseline)):
            raise ConfigError(f"baseline must be a finite number, got {baseline!r}")
        from ..core.trace import Signal

        out.append(Signal(unit=CreditUnit.TEAM, id="team", value=-float(baseline), name="baseline"))
    return out, reward


def _baseline_notes(g: TraceGraph, m: CreditMethod, reward: float, baseline: float | None,
                    total: float) -> list[str]:
    """The graph's assumptions, then what was credited relative to what (or why every credit is 0)."""
    notes: list[str] = list(g.assumptions)
    if baseline is not None:
        notes.append(f"credit relative to the baseline {float(baseline):.6g}: the advantage R − b = {reward:.6g} − "
                     f"{float(baseline):.6g} = {total:.6g} is credited")
    elif reward == 0.0 and m is not CreditMethod.BLAME:
        notes.append("the reward is 0 (a failed run?) and no baseline was given, so every credit is 0; give a "
                     "baseline (CLI --baseline VALUE|group) to credit the run relative to it and find who to blame")
    return notes


def _to_tokens(g: TraceGraph, ui: UnitIndex, values: np.ndarray, stderr: np.ndarray | None, placement: str,
               m: CreditMethod, an: _flow.Anchors, extra: dict[str, Any], notes: list[str]) -> CreditResult:
    tok = unit_index(g, CreditUnit.TOKEN)
    turn_of_span = ui.event_unit[tok.span_event]  # type: ignore[index]
    lens = tok.span_len.astype(float)  # type: ignore[union-attr]
    credit = values[turn_of_span]
    se = None if stderr is None else stderr[turn_of_span]
    dropped = len(ui) - len(tok)
    if dropped:
        notes.append(f"{dropped} turns without tokens_out carry no token units; their credit is not placed")
    if placement == "uniform":
        notes.append("token credit = turn credit spread uniformly: value is per token of the span")
        return CreditResult(unit=CreditUnit.TOKEN, method=m, ids=tok.ids, roles=tok.roles, values=credit / lens,
                            stderr=None if se is None else se / lens, total_reward=an.total,
                            notes=tuple(notes), **extra)
    ids = tuple(f"{g.ids[e]}[{k - 1}:{k}]" for e, k in zip(tok.span_event.tolist(), tok.span_len.tolist(), strict=False))  # type: ignore[union-attr]
    notes.append("token credit = turn credit on the turn's last token (other tokens get 0)")
    return CreditResult(unit=CreditUnit.TOKEN, method=m, ids=ids, roles=tok.roles, values=credit, stderr=se,
                        total_reward=an.total, notes=tuple(notes), **extra)


def _run(
    g: TraceGraph,
    ui: UnitIndex,
    an: _flow.Anchors,
    m: CreditMethod,
    *,
    value_fn: Callable[..., Any] | None,
    samples: int | None,
    seed: int,
    notes: list[str],
    **kw: Any,
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    if m is CreditMethod.BROADCAST:
        vals, missed = _flow.broadcast(g, ui, an)
        if missed:
            notes.append(f"{missed} signals had no {ui.unit.value} unit in scope and were not broadcast")
        return vals, None, {}
    if m is CreditMethod.CAUSAL:
        w, wname = _flow.event_weights(g, kw.get("weight", "auto"))
        vals, missed, caused, uncaused = _flow.causal(g, ui, an, w)
        notes.append(f"causal shares weighted by {wname}; work that is no ancestor of a rewarded event gets 0")
        if caused:
            notes.append("negative value shared among the origins of the errors that reached the output "
                         "(events flagged error), not among all the work")
        if missed:
            notes.append(f"{missed} rewarded events have no {ui.unit.value} unit among their ancestors")
        if uncaused:
            notes.append(_UNCAUSED)
        return vals, None, {}
    if m is CreditMethod.BLAME:
        from ..blame import blame, unit_values

        below = bool(an.total < 0)  # a reward below its baseline: a failure, whatever the outcome field says
        res = g.derived(("credit", "blame", below), lambda: blame(g.trace, graph=g, assume_failed=below))
        notes.extend(res.notes)
        return unit_values(g, ui, an.total, res, notes), None, {}
    if m is CreditMethod.DISCOUNTED:
        r = np.bincount(an.event, weights=an.value, minlength=g.n)
        V = _flow.values_array(g, kw.get("values"))
        lam = kw.get("lam")
        gamma, gamma_s = float(kw.get("gamma", 0.95)), float(kw.get("gamma_s", 1.0))
        lam_f = None if lam is None else float(lam)

        def returns() -> tuple[np.ndarray, np.ndarray | None]:
            return _flow.graph_returns(g, r, gamma=gamma, gamma_s=gamma_s, lam=lam_f, values=V)

        if V is None:  # the same signals on the same graph: reuse the returns across units
            key = ("returns", an.event.tobytes(), an.value.tobytes(), gamma, gamma_s, lam_f)
            G, A = g.derived(("credit", key), returns)
        else:
            G, A = returns()
        if A is not None and V is None:
            notes.append("no critic values: GAE with V ≡ 0 (λ = 1 gives the discounted return)")
        how = kw.get("reduce", "auto")
        if how == "auto":  # the event of largest |G|: nearest the rewarded (or blamed) outcome
            how = "min" if an.total < 0 else "max"
        return _flow.reduce_units(G if A is None else A, ui, how), None, {}
    return _counterfactual(g, ui, an, m, value_fn=value_fn, samples=samples, seed=seed, notes=notes, **kw)


def _counterfactual(
    g: TraceGraph,
    ui: UnitIndex,
    an: _flow.Anchors,
    m: CreditMethod,
    *,
    value_fn: Callable[..., Any] | None,
    samples: int | None,
    seed: int,
    notes: list[str],
    **kw: Any,
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    n = len(ui)
    v = value_fn if value_fn is not None else _trace_value(g, ui, an, m, kw, notes)
    ev = Evaluator(v, n=n, labels=ui.ids, batched=kw.get("batched"))
    if m is CreditMethod.LEAVE_ONE_OUT:
        res = leave_one_out(ev, n)
        return res.values, None, {"evaluations": ev.evaluations}
    if m in (CreditMethod.SHAPLEY, CreditMethod.OWEN):
        return _game_values(g, ui, m, ev, closed=value_fn is None, samples=samples, seed=seed, notes=notes, kw=kw)
    loo = leave_one_out(ev, n).values
    if m is CreditMethod.C3:
        return _c3(ui, loo, kw, notes), None, {"evaluations": ev.evaluations}
    return _coma(g, ui, loo, kw, notes), None, {"evaluations": ev.evaluations}


def _trace_value(g: TraceGraph, ui: UnitIndex, an: _flow.Anchors, m: CreditMethod, kw: dict[str, Any],
                 notes: list[str]) -> TraceValue:
    """The trace-only value function (no ``value_fn`` given), with the notes that say so."""
    n = len(ui)
    limit = int(kw.get("max_players", 4096))
    if n > limit:
        raise ConfigError(
            f"{m.value} credit over {n} {ui.unit.value} units with the trace-only value function would "
            f"value too many coalitions (limit max_players={limit}); use a coarser unit (agent, role), "
            f"method causal or discounted, or pass a value function"
        )
    w, wname = _flow.event_weights(g, kw.get("weight", "auto"))
    tv = TraceValue(g, ui, an, w)
    notes.insert(0, DESCRIPTION.format(weight=wname))
    if tv.caused:
        notes.append("negative value (below the baseline) spread over the origins of the errors that reached "
                     "the output (events flagged error), so the blame falls on their units")
    if tv.uncaused:
        notes.append(_UNCAUSED)
    return tv


def _game_values(g: TraceGraph, ui: UnitIndex, m: CreditMethod, ev: Evaluator, *, closed: bool, samples: int | None,
                 seed: int, notes: list[str], kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """Shapley or Owen values: exact, or sampled when asked for or too large (``closed``: the trace-only game,
    exact at any size from its dividends)."""
    n = len(ui)
    exact_max = int(kw.get("exact_max", EXACT_MAX))
    eps = kw.get("epsilon")
    rel_tol = kw.get("rel_tol")
    opts: dict[str, Any] = dict(samples=samples, epsilon=eps, delta=float(kw.get("delta", 0.05)),
                                value_range=kw.get("value_range"), seed=seed, exact_max=exact_max,
                                antithetic=bool(kw.get("antithetic", True)), rel_tol=rel_tol,
                                time_limit=kw.get("time_limit"))
    asked = samples is not None or eps is not None or rel_tol is not None
    if m is CreditMethod.SHAPLEY:
        if not asked and not closed and n > exact_max:
            opts["rel_tol"] = _DEFAULT_REL_TOL
            notes.append(f"n={n} > exact_max={exact_max}: Shapley sampled until the error bound is "
                         f"{_DEFAULT_REL_TOL:g} × the mean |credit| (at most 60 s; set rel_tol, epsilon, "
                         f"samples or time_limit)")
        res = shapley(ev, n, **opts)
    else:
        groups, gnote = _owen_groups(g, ui)
        notes.append(gnote)
        if not asked and not closed and max(len(groups) - 1 + len(x) for x in groups) > exact_max:
            opts["rel_tol"] = _DEFAULT_REL_TOL
            notes.append(f"Owen values sampled until the error bound is {_DEFAULT_REL_TOL:g} × the mean "
                         f"|credit| (at most 60 s; set rel_tol, epsilon, samples or time_limit)")
        res = owen(ev, groups, n=n, **opts)
    notes.extend(res.notes)
    extra: dict[str, Any] = {"evaluations": ev.evaluations}
    if not res.exact:
        extra.update(epsilon=res.epsilon, delta=res.delta, samples=res.permutations)
    return res.values, res.stderr, extra


def _c3(ui: UnitIndex, loo: np.ndarray, kw: dict[str, Any], notes: list[str]) -> np.ndarray:
    """C3 advantages from the sampled alternatives given; leave-one-out for the units without."""
    n = len(ui)
    alts: Mapping[str, Sequence[Any]] = kw.get("alternatives") or {}
    out = loo.copy()
    for uid, alt in alts.items():
        k = ui.position(uid)
        rows = [(a, 1.0) if isinstance(a, (int, float)) else (float(a[0]), float(a[1])) for a in alt]
        out[k] = c3_advantages([r for r, _ in rows], [w for _, w in rows])[0]
    if len(alts) < n:
        notes.append(f"C3 without sampled alternatives for {n - len(alts)} units: the only alternative is "
                     f"dropping the unit (weight 1 each), so A = v(N) − v(N∖{{j}}) (leave-one-out)")
    return out


def _coma(g: TraceGraph, ui: UnitIndex, loo: np.ndarray, kw: dict[str, Any], notes: list[str]) -> np.ndarray:
    """COMA advantages from the Q values and policies given; for the units without, the removal of the unit
    weighted by the probability of the action not taken."""
    n = len(ui)
    qmap: Mapping[str, Sequence[float]] = kw.get("q") or {}
    pimap: Mapping[str, Any] = kw.get("pi") or {}
    taken: Mapping[str, int] = kw.get("taken") or {}
    out = np.empty(n)
    fallback = 0
    for k, uid in enumerate(ui.ids):
        if uid in qmap:
            pi = pimap.get(uid)
            if pi is None:
                raise ConfigError(f"COMA: q is given for {uid!r} but pi (its action probabilities) is not")
            out[k] = coma_advantage(qmap[uid], pi, int(taken.get(uid, 0)))
            continue
        p = pimap.get(uid)
        p_taken = float(p) if isinstance(p, (int, float)) else _behaviour_prob(g, ui, k)
        out[k] = (1.0 - p_taken) * loo[k]
        fallback += 1
    if fallback:
        notes.append(f"COMA without Q for {fallback} units: the alternative to a unit's action is valued as its "
                     f"removal, so A = (1 − π(taken))·(v(N) − v(N∖{{a}})); π from the decision's logprob, "
                     f"else uniform over its alternatives, else ½")
    return out


#: default relative error target of sampled Shapley / Owen values (bound ≤ 10 % of the mean |credit|)
_DEFAULT_REL_TOL = 0.1

_UNCAUSED = ("a negative value found no flagged cause (no event with error: true leads to the output), so it is "
             "shared by work like a positive one")


def group_baselines(rewards: Sequence[float], groups: Sequence[Hashable]) -> np.ndarray:
    """The baseline of each run: the mean reward of the runs in its group (GRPO's group mean).

    A run alone in its group gets its own reward as baseline (advantage 0).

    >>> group_baselines([1.0, 0.0, 1.0, 0.5], ["a", "a", "a", "b"]).tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 0.5]
    """
    r = np.asarray(rewards, dtype=float)
    if r.shape != (len(groups),):
        raise ConfigError(f"one group key per reward: {len(groups)} keys for {r.size} rewards")
    keys: dict[Hashable, int] = {}
    code = np.fromiter((keys.setdefault(k, len(keys)) for k in groups), dtype=np.int64, count=len(groups))
    sums = np.bincount(code, weights=r, minlength=len(keys))
    counts = np.bincount(code, minlength=len(keys))
    return (sums / np.maximum(counts, 1))[code]


def _behaviour_prob(g: TraceGraph, ui: UnitIndex, k: int) -> float:
    if ui.unit in (CreditUnit.ORCHESTRATOR, CreditUnit.TURN, CreditUnit.MESSAGE, CreditUnit.TOOL_CALL):
        e = g.index[ui.ids[k]]
        d = g.trace.events[e].decision
        if d is not None:
            if d.logprob is not None and math.isfinite(d.logprob):
                return min(1.0, math.exp(d.logprob))
            if d.alternatives:
                return 1.0 / len(d.alternatives)
    return 0.5


def _owen_groups(g: TraceGraph, ui: UnitIndex) -> tuple[list[list[int]], str]:
    """Coalition structure for Owen values: agents by role; event units by agent."""
    if ui.unit is CreditUnit.AGENT:
        keys = [r if r is not None else f"\0{a}" for a, r in zip(ui.ids, ui.roles, strict=False)]
        why = "Owen groups: agents grouped by role (agents without a role stand alone)"
    elif ui.unit in (CreditUnit.ROLE, CreditUnit.TEAM):
        keys = list(ui.ids)
        why = f"Owen values over {ui.unit.value} units have no lower level: equal to Shapley values"
    else:
        members = np.full(len(ui), -1, dtype=np.int64)
        has = ui.event_unit >= 0
        members[ui.event_unit[has]] = g.agent[has]
        keys = [g.agents[a] for a in members.tolist()]
        why = f"Owen groups: {ui.unit.value} units grouped by agent"
    index: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    return list(index.values()), why
