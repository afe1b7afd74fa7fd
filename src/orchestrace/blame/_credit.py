"""Signed credit from blame: the ``blame`` credit method, for every unit.

Blame shares ``b`` (sum 1) sit on events (:attr:`BlameResult.shares`: 0.6 on the decisive
error's origin, the rest on the other errors' origins or on the events that carried the
error to the output); a unit's share ``B_u`` is the sum over its events. With ``A`` the
credited quantity (the reward, minus the baseline when one is given) and ``n`` units:

=======================  =========================================================
``A < 0``                ``credit_u = A · B_u`` — the blame itself
run failed, ``A ≥ 0``    ``credit_u = A / n + (1 / n − B_u)`` — the reward shared
                         equally plus a zero-sum blame of size 1 (a failure)
run did not fail         ``credit_u = A / n`` (nothing to blame; said in the notes)
outcome unknown          ``credit_u = A / n`` (nobody blamed; said in the notes)
=======================  =========================================================

So credit sums to ``A`` as every method's does, the culprit's is the lowest (negative on a
failed run), and a failed run with reward 0 still gets non-trivial credit.

>>> from orchestrace.core.builder import TraceBuilder
>>> from orchestrace.core.trace import Outcome
>>> import msgspec
>>> b = TraceBuilder("r")
>>> m1 = b.add("message", "coder", t=0, t_end=1)
>>> m2 = b.add("message", "runner", t=1, t_end=2, after=m1, error=True,
...            attrs={"evidence": [{"kind": "exec_failed", "blames": m1}]})
>>> tr = msgspec.structs.replace(b.build(), outcome=Outcome(success=False))
>>> from orchestrace.credit import assign
>>> {k: round(v, 6) for k, v in assign(tr, unit="agent", method="blame").as_dict().items()}
{'coder': -0.1, 'runner': 0.1}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..analysis.units import UnitIndex
    from ._core import BlameResult

__all__ = ["unit_values"]


def unit_values(g: TraceGraph, ui: UnitIndex, total: float, result: BlameResult,
                notes: list[str]) -> np.ndarray:
    """Credit per unit of ``ui`` from a blame result (the table in the module docstring)."""
    n = len(ui)
    if n == 0:
        return np.zeros(0)
    if result.status in ("nothing to blame", "outcome unknown"):
        notes.append(f"blame: {result.rule}; the credited quantity is shared equally")
        return np.full(n, total / n)
    share = np.zeros(n)
    lost = 0.0
    for eid, b in result.shares.items():
        k = int(ui.event_unit[g.index[eid]])
        if k >= 0:
            share[k] += b
        else:
            lost += b
    if share.sum() <= 0:
        notes.append(f"no {ui.unit.value} unit holds a blamed event: blame spread equally")
        share[:] = 1.0 / n
    elif lost > 0:
        notes.append(f"{lost:.0%} of the blame sat on events that are no {ui.unit.value} unit; "
                     "the rest renormalised to 1")
        share /= share.sum()
    d = result.decisive
    head = (f"blame: decisive error {d.event} by {d.agent!r} (step {d.step}, confidence {d.confidence:g}; "
            f"{result.rule})" if d is not None else f"blame: {result.rule}")
    notes.append(head)
    if total < 0:
        notes.append("credit = A · blame share (A < 0: the advantage below the baseline is the blame)")
        return total * share
    if result.failed is not False:
        notes.append("the run failed: credit = A / n + (1/n − blame share) — the reward shared equally plus a "
                     "zero-sum blame of size 1 (a failure)")
        return total / n + (1.0 / n - share)
    notes.append("the run did not fail: nothing to blame, the reward is shared equally")
    return np.full(n, total / n)
