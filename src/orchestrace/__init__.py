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

from . import advantages, credit, errors, measures, rewards, vocab
from ._problems import Problem, ValidationReport
from ._synth import synth
from ._validate import validate
from .builder import TraceBuilder
from .dataset import read_dataset, write_dataset
from .errors import OrchestraceError
from .graph import TraceGraph
from .importers import import_traces
from .io import TraceWriter, dump, dumps, iter_traces, load, loads, to_reference
from .measures import MetricsResult
from .measures import compute as compute_metrics
from .recorder import Recorder, record
from .trace import CONTINUE, SCHEMA_VERSION, DecisionPayload, Edge, Event, Outcome, Signal, Trace
from .vocab import (
    CreditUnit,
    Decision,
    EdgeType,
    EventType,
    Measure,
    RewardFamily,
    Severity,
    Topology,
)

# Heavy optional stacks stay separate imports: ``orchestrace.env`` (gymnasium),
# ``orchestrace.learn`` (torch), ``orchestrace.llm`` (httpx), ``orchestrace.report``,
# ``orchestrace.exporters`` (pyarrow / OpenTelemetry for some formats).

__version__ = "0.1.0"

__all__ = [
    "CONTINUE",
    "SCHEMA_VERSION",
    "CreditUnit",
    "Decision",
    "DecisionPayload",
    "Edge",
    "EdgeType",
    "Event",
    "EventType",
    "Measure",
    "MetricsResult",
    "OrchestraceError",
    "Outcome",
    "Problem",
    "Recorder",
    "RewardFamily",
    "Severity",
    "Signal",
    "Topology",
    "Trace",
    "TraceBuilder",
    "TraceGraph",
    "TraceWriter",
    "ValidationReport",
    "advantages",
    "compute_metrics",
    "credit",
    "dump",
    "dumps",
    "errors",
    "import_traces",
    "iter_traces",
    "load",
    "loads",
    "measures",
    "read_dataset",
    "record",
    "rewards",
    "synth",
    "to_reference",
    "validate",
    "vocab",
    "write_dataset",
]
