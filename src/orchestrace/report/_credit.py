"""Credit for the report: parse ``unit:method`` and run :func:`orchestrace.credit.assign`.

>>> from orchestrace import synth
>>> c = credit_payload(synth(events=60, agents=3, seed=0), "agent:broadcast")
>>> c["unit"], c["method"], c["ids"], c["values"]
('agent', 'broadcast', ['orchestrator', 'w1', 'w2', 'w3'], [1.0, 1.0, 1.0, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

from ..core.trace import Trace
from ..errors import ConfigError

__all__ = ["credit_payload", "parse_credit_spec"]


def parse_credit_spec(spec: str) -> tuple[str, str]:
    """``"agent:shapley"`` → ``("agent", "shapley")``; the method defaults to ``broadcast``.

    >>> parse_credit_spec("turn"), parse_credit_spec("agent:loo")
    (('turn', 'broadcast'), ('agent', 'loo'))
    """
    unit, _, method = spec.partition(":")
    unit, method = unit.strip(), (method.strip() or "broadcast")
    if not unit:
        raise ConfigError(f"--credit takes UNIT[:METHOD] (e.g. agent:shapley), got {spec!r}")
    return unit, method


def credit_payload(trace: Trace, spec: str, **kwargs: Any) -> dict[str, Any]:
    """The report's credit block for ``spec`` = ``UNIT[:METHOD]``: ids, values, notes.

    Unknown units or methods raise :class:`~orchestrace.errors.ConfigError` naming the
    valid ones (from :mod:`orchestrace.credit`).
    """
    from ..credit import assign, parse_method
    from ..credit import parse_unit as _parse_unit

    unit, method = parse_credit_spec(spec)
    u, m = _parse_unit(unit), parse_method(method)
    res = assign(trace, unit=u, method=m, **kwargs)
    values = [v if math.isfinite(v) else 0.0 for v in res.values.tolist()]
    out: dict[str, Any] = {
        "unit": u.value,
        "method": m.value,
        "ids": list(res.ids),
        "values": values,
        "notes": list(res.notes),
    }
    if res.stderr is not None:
        out["stderr"] = res.stderr.tolist()
    return out
