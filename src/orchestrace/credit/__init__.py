"""Credit assignment: from reward signals to a value per unit, for all eight units.

``assign(trace, signals, unit=…, method=…)`` is the one entry point; the cooperative-game
tools it uses (:func:`shapley`, :func:`owen`, :func:`leave_one_out`) and the counterfactual
baselines (:func:`c3_advantages`, :func:`coma_advantage`) are public too, for games that do
not come from a trace. Value functions are pure callables, vectorised ones marked with
:func:`batched`; errors they make surface as :class:`~orchestrace.errors.ValueFunctionError`.

=================  ===============================================================
module             contents
=================  ===============================================================
``_flow``          broadcast, causal shares, graph discounting and GAE
``_games``         Shapley (exact / antithetic permutation sampling), Owen, LOO
``_permutations``  the permutation sampler: orders, marginals, block sums, stopping
``_trace_value``   the documented trace-only value function for bare traces
``_baselines``     C3 and COMA advantages
``_value``         batching, caching and checking of user value functions
``_assign``        :func:`assign` and :class:`CreditResult`
``.._units``       the 8 units (which events are turns, tokens, …) — :func:`unit_index`
``.._methods``     :class:`CreditMethod` and the options of each method
=================  ===============================================================

>>> from orchestrace import synth
>>> r = assign(synth(events=60, agents=3, seed=4), unit="agent", method="broadcast")
>>> r.as_dict()
{'orchestrator': 1.0, 'w1': 1.0, 'w2': 1.0, 'w3': 1.0}
"""

from __future__ import annotations

from ..analysis.units import TURN_TYPES, UnitIndex, parse_unit, unit_index
from ..rewards.credit_methods import CreditMethod, parse_method
from ._assign import CreditResult, assign, group_baselines
from ._baselines import c3_advantages, coma_advantage
from ._bounds import hoeffding_epsilon, hoeffding_samples, t_quantile
from ._flow import graph_returns
from ._games import GameResult, leave_one_out, owen, shapley
from ._trace_value import TraceValue
from ._value import Batched, batched

__all__ = [
    "TURN_TYPES",
    "Batched",
    "CreditMethod",
    "CreditResult",
    "GameResult",
    "TraceValue",
    "UnitIndex",
    "assign",
    "batched",
    "c3_advantages",
    "coma_advantage",
    "graph_returns",
    "group_baselines",
    "hoeffding_epsilon",
    "hoeffding_samples",
    "leave_one_out",
    "owen",
    "parse_method",
    "parse_unit",
    "shapley",
    "t_quantile",
    "unit_index",
]
