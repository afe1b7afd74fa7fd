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

import importlib as _importlib
import typing as _typing

# Every public name is loaded on first use (PEP 562), so ``import orchestrace`` costs almost
# nothing and ``orchestrace --help`` stays fast; ``from orchestrace import X`` works as usual.
# Heavy optional stacks are separate imports anyway: ``orchestrace.env`` (gymnasium),
# ``orchestrace.learn`` (torch), ``orchestrace.llm`` (httpx), ``orchestrace.report``,
# ``orchestrace.exporters`` (pyarrow / OpenTelemetry for some formats).

#: Public name → (module it lives in, attribute there; None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    **{m: (f".{m}", None) for m in ("advantages", "credit", "errors", "measures", "rewards", "vocab")},
    **{n: ("._problems", n) for n in ("Problem", "ValidationReport")},
    "synth": ("._synth", "synth"),
    "validate": ("._validate", "validate"),
    "TraceBuilder": (".builder", "TraceBuilder"),
    **{n: (".dataset", n) for n in ("read_dataset", "write_dataset")},
    "OrchestraceError": (".errors", "OrchestraceError"),
    "TraceGraph": (".graph", "TraceGraph"),
    "import_traces": (".importers", "import_traces"),
    **{n: (".io", n) for n in ("TraceWriter", "dump", "dumps", "iter_traces", "load", "loads", "to_reference")},
    "MetricsResult": (".measures", "MetricsResult"),
    "compute_metrics": (".measures", "compute"),
    **{n: (".recorder", n) for n in ("Recorder", "record")},
    **{n: (".trace", n) for n in ("CONTINUE", "SCHEMA_VERSION", "DecisionPayload", "Edge", "Event", "Outcome",
                                  "Signal", "Trace")},
    **{n: (".vocab", n) for n in ("CreditUnit", "Decision", "EdgeType", "EventType", "Measure", "RewardFamily",
                                  "Severity", "Topology")},
}


def __getattr__(name: str) -> _typing.Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'orchestrace' has no attribute {name!r}") from None
    mod = _importlib.import_module(module, __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if _typing.TYPE_CHECKING:  # what the lazy table resolves to, for type checkers and IDEs
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
    from .trace import (
        CONTINUE,
        SCHEMA_VERSION,
        DecisionPayload,
        Edge,
        Event,
        Outcome,
        Signal,
        Trace,
    )
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
