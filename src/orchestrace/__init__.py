"""orchestrace — reinforcement learning of LLM multi-agent systems through orchestration traces.

An orchestration trace is the temporal event graph of one multi-agent run. orchestrace
records or imports traces, validates them, measures them, computes rewards and credit,
and trains orchestrator policies with an explicit learned stop decision.

>>> import orchestrace as ot
>>> tr = ot.synth(events=100, agents=4, seed=0)
>>> ot.loads(ot.dumps(tr)) == tr
True
"""

from __future__ import annotations

from . import errors, vocab
from ._problems import Problem, ValidationReport
from .builder import TraceBuilder
from .errors import OrchestraceError
from .io import TraceWriter, dump, dumps, iter_traces, load, loads, to_reference
from .synth import synth
from .trace import SCHEMA_VERSION, DecisionPayload, Edge, Event, Outcome, Signal, Trace
from .validate import validate
from .vocab import CreditUnit, Decision, EdgeType, EventType, Measure, RewardFamily, Severity, Topology

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "CreditUnit",
    "Decision",
    "DecisionPayload",
    "Edge",
    "EdgeType",
    "Event",
    "EventType",
    "Measure",
    "OrchestraceError",
    "Outcome",
    "Problem",
    "RewardFamily",
    "Severity",
    "Signal",
    "Topology",
    "Trace",
    "TraceBuilder",
    "TraceWriter",
    "ValidationReport",
    "dump",
    "dumps",
    "errors",
    "iter_traces",
    "load",
    "loads",
    "synth",
    "to_reference",
    "validate",
    "vocab",
]
