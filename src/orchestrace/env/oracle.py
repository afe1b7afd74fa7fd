"""The look-ahead oracle: clone the world, roll out each candidate action, keep the best.

For every row at a decision in ``heads`` with more than one legal action, the oracle copies
the world once per legal action (the copy shares the episode's *realised* randomness — it is
clairvoyant), applies the action, then rolls the base heuristic forward to the end, and
values the candidate by the best return over the stopping points met on the way:

    V(a) = max_k  G(stop at the k-th O5 after a)        (stop-now: G of stopping here)

It picks ``argmax_a V(a)`` (ties → the lower index, so stop beats continue). With
``heads="stop"`` (default: the upper reference for learned *stopping*) only O5 looks ahead
and O1–O4 follow the shared base heuristic; ``heads="all"`` also chooses spawn, delegation,
sharing and aggregation by look-ahead (a stronger, costlier reference).

>>> from orchestrace.env.config import EnvConfig
>>> from orchestrace.env.baselines import evaluate, make_baseline
>>> cfg = EnvConfig.small()
>>> o = evaluate(cfg, make_baseline("oracle", cfg), range(16))["return"].mean()
>>> b = evaluate(cfg, make_baseline("fixed-budget", cfg, rounds=2), range(16))["return"].mean()
>>> bool(o >= b)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConfigError
from ._policy import BudgetPolicy, Policy
from .config import EnvConfig
from .layout import DONE, O5
from .world import World

__all__ = ["OraclePolicy", "stop_values"]


def _stop_value(w: World) -> np.ndarray:
    """Return each row would get by stopping now (valid where the phase is O5)."""
    c = w.cfg
    valid = np.arange(w.N)[None, :] < w.n[:, None]
    ok = ((w.agg == 0) | ~valid).all(1)
    return w.ret - c.token_cost * w.price * c.decision_tokens - c.time_cost * c.decision_time_s + c.success_reward * ok


def continuing_actions(policy: Any, w: World) -> np.ndarray:
    """``policy``'s O1–O4 actions in every row of ``w``, with CONTINUE at O5 wherever it is legal.

    A hand-written :class:`~orchestrace.env.baselines.Policy` contributes its base heuristic
    (``policy.base``); anything else with ``act_batch(obs, mask, world)`` (a learned policy)
    its own heads.
    """
    mask = w.mask()
    if isinstance(policy, Policy):
        return policy.base(w.summary_obs(), mask)
    a = np.asarray(policy.act_batch(w.obs(), mask, w), dtype=np.int64)
    h = w.heads
    cont = mask[:, h.cont]
    at5 = w.phase == O5
    return np.where(at5, np.where(cont, h.cont, h.stop), a)


def stop_values(w: World, policy: Any) -> tuple[np.ndarray, np.ndarray]:
    """Roll ``policy``'s heads (stops ignored: it always continues) to the end of every row of
    ``w`` (mutated) and return ``(best, per_k)``: the best return over all stopping points and
    a (B, K) array of the return of stopping at the k-th O5 met (NaN where not reached)."""
    best = np.full(w.B, -np.inf)
    per_k: list[np.ndarray] = []
    while True:
        live = w.phase < DONE
        at5 = live & (w.phase == O5)
        if at5.any():
            v = np.where(at5, _stop_value(w), np.nan)
            per_k.append(v)
            best = np.where(at5, np.maximum(best, v), best)
        if not live.any():
            break
        a = continuing_actions(policy, w)
        w.step(np.where(live, a, 0))
    best = np.maximum(best, np.where(np.isfinite(best), best, w.ret))
    # per-row compaction: k-th O5 of each row
    if per_k:
        arr = np.stack(per_k, 1)
        order = np.argsort(np.isnan(arr), axis=1, kind="stable")
        arr = np.take_along_axis(arr, order, 1)
    else:
        arr = np.zeros((w.B, 0))
    return best, arr


class OraclePolicy(Policy):
    """Clairvoyant look-ahead oracle (see the module docstring). Needs the world:
    ``act_batch(obs, mask, world)`` or ``bind(env)`` before ``act``."""

    name = "oracle"

    def __init__(self, config: EnvConfig, heads: str = "stop", head_policy: Any = None) -> None:
        super().__init__(config)
        if heads not in ("all", "stop"):
            raise ConfigError(f"heads={heads!r} is invalid; use 'all' or 'stop'")
        if heads == "all" and head_policy is not None:
            raise ConfigError("heads='all' chooses every head by look-ahead; head_policy applies to heads='stop' only")
        self.heads = heads
        self.rollout: Any = head_policy if head_policy is not None else BudgetPolicy(config, name="rollout")
        if head_policy is not None:
            self.name = "clairvoyant-stop"

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        if world is None:
            raise ConfigError("the oracle looks ahead in the world: call policy.bind(env) first, "
                              "or pass world= to act_batch (orchestrace.env.baselines.evaluate does)")
        a = continuing_actions(self.rollout, world)
        ph = world.phase
        look = (ph < DONE) & (mask.sum(1) > 1)
        if self.heads == "stop":
            look &= ph == O5
        rows = np.flatnonzero(look)
        if rows.size == 0:
            return a
        rr, aa = np.nonzero(mask[rows])
        rr = rows[rr]
        w = world.take(rr)
        w.step(aa)
        best, _ = stop_values(w, self.rollout)
        # argmax per row, first (lowest action) on ties
        order = np.lexsort((aa, -best, rr))
        rr_s, aa_s = rr[order], aa[order]
        first = np.ones(rr_s.size, bool)
        first[1:] = rr_s[1:] != rr_s[:-1]
        a = a.copy()
        a[rr_s[first]] = aa_s[first]
        return a
