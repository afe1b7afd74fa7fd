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
import sys as _sys
import typing as _typing

# Every public name is loaded on first use (PEP 562), so ``import orchestrace`` costs almost
# nothing and ``orchestrace --help`` stays fast; ``from orchestrace import X`` works as usual.
# Heavy optional stacks are separate imports anyway: ``orchestrace.env`` (gymnasium),
# ``orchestrace.learn`` (torch), ``orchestrace.llm`` (httpx), ``orchestrace.report``,
# ``orchestrace.exporters`` (pyarrow / OpenTelemetry for some formats).

#: Public name → (module it lives in, attribute there; None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "advantages": ("orchestrace.credit.advantages", None),
    "credit": ("orchestrace.credit", None),
    "errors": ("orchestrace.errors", None),
    "measures": ("orchestrace.analysis.measures", None),
    "rewards": ("orchestrace.rewards", None),
    "vocab": ("orchestrace.vocab", None),
    **{n: ("orchestrace._problems", n) for n in ("Problem", "ValidationReport")},
    "synth": ("orchestrace.core._synth", "synth"),
    "validate": ("orchestrace.core._validate", "validate"),
    "TraceBuilder": ("orchestrace.core.builder", "TraceBuilder"),
    **{n: ("orchestrace.core.dataset", n) for n in ("read_dataset", "write_dataset")},
    "OrchestraceError": ("orchestrace.errors", "OrchestraceError"),
    "TraceGraph": ("orchestrace.analysis.graph", "TraceGraph"),
    "import_traces": ("orchestrace.importers", "import_traces"),
    **{n: ("orchestrace.core.io", n) for n in ("TraceWriter", "dump", "dumps", "iter_traces", "load", "loads",
                                          "to_reference")},
    "MetricsResult": ("orchestrace.analysis.measures", "MetricsResult"),
    "compute_metrics": ("orchestrace.analysis.measures", "compute"),
    **{n: ("orchestrace.frameworks.recorder", n) for n in ("Recorder", "record")},
    **{n: ("orchestrace.core.trace", n) for n in ("CONTINUE", "SCHEMA_VERSION", "DecisionPayload", "Edge", "Event",
                                             "Outcome", "Signal", "Trace")},
    **{n: ("orchestrace.vocab", n) for n in ("CreditUnit", "Decision", "EdgeType", "EventType", "Measure",
                                             "RewardFamily", "Severity", "Topology")},
}

#: Modules that moved to the folder of their layer → where they live now (``tools/relayout.py``
#: fills this table). ``import orchestrace.<old>`` / ``from orchestrace.<old> import X`` keep
#: working and give the very module object of the new home (no copy, no shim file), with a
#: ``DeprecationWarning`` that names the new path; the old paths go in :data:`_MOVED_REMOVAL`.
_MOVED: dict[str, str] = {
    "orchestrace.advantages": "orchestrace.credit.advantages",
    "orchestrace.builder": "orchestrace.core.builder",
    "orchestrace.corpus": "orchestrace.papers",
    "orchestrace.credit.methods": "orchestrace.rewards.credit_methods",
    "orchestrace.credit.units": "orchestrace.analysis.units",
    "orchestrace.dataset": "orchestrace.core.dataset",
    "orchestrace.graph": "orchestrace.analysis.graph",
    "orchestrace.io": "orchestrace.core.io",
    "orchestrace.learn.anchors": "orchestrace.policies.anchors",
    "orchestrace.learn.checkpoint": "orchestrace.policies.checkpoint",
    "orchestrace.learn.config": "orchestrace.trainers.config",
    "orchestrace.learn.demo": "orchestrace.evaluation.demo",
    "orchestrace.learn.envs": "orchestrace.trainers.envs",
    "orchestrace.learn.evaluate": "orchestrace.evaluation.simulated",
    "orchestrace.learn.exact": "orchestrace.evaluation.exact",
    "orchestrace.learn.fitted_stop": "orchestrace.trainers.fitted_stop",
    "orchestrace.learn.grpo": "orchestrace.trainers.grpo",
    "orchestrace.learn.llm_grpo": "orchestrace.llm.llm_grpo",
    "orchestrace.learn.llm_policy": "orchestrace.llm.llm_policy",
    "orchestrace.learn.losses": "orchestrace.trainers.losses",
    "orchestrace.learn.play": "orchestrace.evaluation.play",
    "orchestrace.learn.policy": "orchestrace.policies.neural",
    "orchestrace.learn.ppo": "orchestrace.trainers.ppo",
    "orchestrace.learn.progress": "orchestrace.trainers.progress",
    "orchestrace.learn.reinforce": "orchestrace.trainers.reinforce",
    "orchestrace.learn.rollout": "orchestrace.trainers.rollout",
    "orchestrace.learn.rundir": "orchestrace.trainers.rundir",
    "orchestrace.learn.warmstart": "orchestrace.trainers.warmstart",
    "orchestrace.llm.collect": "orchestrace.collection.collect",
    "orchestrace.llm.logimport": "orchestrace.collection.logimport",
    "orchestrace.llm.taskfile": "orchestrace.collection.taskfile",
    "orchestrace.llm.team": "orchestrace.collection.team",
    "orchestrace.measures": "orchestrace.analysis.measures",
    "orchestrace.offline.collect": "orchestrace.collection.collect",
    "orchestrace.offline.gate": "orchestrace.policies.gate",
    "orchestrace.offline.logged_env": "orchestrace.logged.logged_env",
    "orchestrace.offline.logimport": "orchestrace.collection.logimport",
    "orchestrace.offline.rules": "orchestrace.policies.rules",
    "orchestrace.offline.runfiles": "orchestrace.evaluation.runfiles",
    "orchestrace.offline.simfit": "orchestrace.logged.simfit",
    "orchestrace.offline.team": "orchestrace.collection.team",
    "orchestrace.offline.team_policy": "orchestrace.policies.team_policy",
    "orchestrace.recorder": "orchestrace.frameworks.recorder",
    "orchestrace.schema": "orchestrace.core.schema",
    "orchestrace.trace": "orchestrace.core.trace",
}


#: When the old paths of :data:`_MOVED` stop working: the release, and the date at the latest.
_MOVED_REMOVAL = ("0.3", "2027-03-01")


def _importer_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the module doing the import (past importlib and this file)."""
    frame: _typing.Any = _sys._getframe(1)
    level = 1
    while frame is not None:  # ``warnings`` itself skips importlib's frozen frames: count only the others
        name = frame.f_code.co_filename
        if not name.startswith("<frozen importlib"):
            if name != __file__ and not frame.f_globals.get("__name__", "").startswith("importlib"):
                return level
            level += 1
        frame = frame.f_back
    return level


class _MovedModules:
    """Finder and loader (``sys.meta_path``, consulted last) for the dotted paths in :data:`_MOVED`."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> _typing.Any:
        if name not in _MOVED:
            return None
        from importlib.util import spec_from_loader

        return spec_from_loader(name, _MovedModules)  # type: ignore[arg-type]  # a loader by protocol

    @staticmethod
    def create_module(spec: _typing.Any) -> _typing.Any:
        module = _importlib.import_module(_MOVED[spec.name])
        spec.loader_state = module.__spec__  # restored below: the import system overwrites __spec__
        return module

    @staticmethod
    def exec_module(module: _typing.Any) -> None:
        old, module.__spec__ = module.__spec__.name, module.__spec__.loader_state
        import warnings

        release, date = _MOVED_REMOVAL
        warnings.warn(f"{old} moved to {module.__name__}; import {module.__name__} instead (the old path is "
                      f"removed in orchestrace {release}, {date} at the latest)", DeprecationWarning,
                      stacklevel=_importer_stacklevel())


if not any(getattr(f, "__qualname__", None) == "_MovedModules" for f in _sys.meta_path):  # once, even on reload
    _sys.meta_path.append(_MovedModules)


def __getattr__(name: str) -> _typing.Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'orchestrace' has no attribute {name!r}") from None
    mod = _importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if _typing.TYPE_CHECKING:  # what the lazy table resolves to, for type checkers and IDEs
    import orchestrace.analysis.measures as measures
    import orchestrace.credit as credit
    import orchestrace.credit.advantages as advantages
    import orchestrace.errors as errors
    import orchestrace.rewards as rewards
    import orchestrace.vocab as vocab

    from ._problems import Problem, ValidationReport
    from .analysis.graph import TraceGraph
    from .analysis.measures import MetricsResult
    from .analysis.measures import compute as compute_metrics
    from .core._synth import synth
    from .core._validate import validate
    from .core.builder import TraceBuilder
    from .core.dataset import read_dataset, write_dataset
    from .core.io import TraceWriter, dump, dumps, iter_traces, load, loads, to_reference
    from .core.trace import (
        CONTINUE,
        SCHEMA_VERSION,
        DecisionPayload,
        Edge,
        Event,
        Outcome,
        Signal,
        Trace,
    )
    from .errors import OrchestraceError
    from .frameworks.recorder import Recorder, record
    from .importers import import_traces
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
