"""The credit methods and the keyword options each accepts (shared by credit and reward specs).

:class:`CreditMethod` and :func:`parse_method` are public as ``orchestrace.credit.CreditMethod``
and ``orchestrace.credit.parse_method``; :data:`METHOD_OPTIONS` is what a reward spec's
``[credit] params`` table is checked against, so it lives below both ``credit`` and ``rewards``.
"""

from __future__ import annotations

from ..errors import parse_named
from ..vocab import _StrEnum

__all__ = ["METHOD_OPTIONS", "PLACEMENTS", "CreditMethod", "parse_method"]


class CreditMethod(_StrEnum):
    """Credit-assignment methods (see :func:`orchestrace.credit.assign`)."""

    BROADCAST = "broadcast"
    DISCOUNTED = "discounted"
    CAUSAL = "causal"
    LEAVE_ONE_OUT = "leave-one-out"
    SHAPLEY = "shapley"
    OWEN = "owen"
    C3 = "c3"
    COMA = "coma"
    BLAME = "blame"


#: Other names accepted by :func:`parse_method`.
ALIASES = {"loo": "leave-one-out", "difference": "leave-one-out", "leave_one_out": "leave-one-out",
           "gae": "discounted"}
_CF_OPTIONS = {"weight", "batched", "max_players"}
#: The keyword options of :func:`orchestrace.credit.assign` each method accepts.
METHOD_OPTIONS: dict[CreditMethod, set[str]] = {
    CreditMethod.BROADCAST: set(),
    CreditMethod.CAUSAL: {"weight"},
    CreditMethod.DISCOUNTED: {"gamma", "gamma_s", "lam", "values", "reduce"},  # reduce: auto, max, min, sum, mean
    CreditMethod.LEAVE_ONE_OUT: _CF_OPTIONS,
    CreditMethod.SHAPLEY: _CF_OPTIONS | {"epsilon", "rel_tol", "delta", "value_range", "exact_max", "antithetic",
                                         "time_limit"},
    CreditMethod.OWEN: _CF_OPTIONS | {"epsilon", "rel_tol", "delta", "value_range", "exact_max", "antithetic",
                                      "time_limit"},
    CreditMethod.C3: _CF_OPTIONS | {"alternatives"},
    CreditMethod.COMA: _CF_OPTIONS | {"q", "pi", "taken"},
    CreditMethod.BLAME: set(),  # orchestrace.blame: the decisive error from the events' evidence
}
#: Where token-unit credit is placed within a span.
PLACEMENTS = ("uniform", "last")


def parse_method(method: CreditMethod | str) -> CreditMethod:
    """The :class:`CreditMethod` named ``method`` (``loo``/``difference`` → leave-one-out).

    >>> parse_method("LOO"), parse_method("shapley")
    (<CreditMethod.LEAVE_ONE_OUT: 'leave-one-out'>, <CreditMethod.SHAPLEY: 'shapley'>)
    """
    return parse_named(method, CreditMethod, aliases=ALIASES, what="credit method")
