"""orchestrace vs Microsoft's Agent Lightning on the same OpenTelemetry spans of a multi-agent run.

    pip install 'orchestrace[agentlightning]'
    python benchmarks/vs_agentlightning.py [--episodes 8] [--run run.jsonl] [--json out.json]

1. Record a multi-agent run: ``orchestrace env run orchestrace/Orchestrate-v0`` (an
   orchestrator that spawns and delegates to workers, who call tools and return; every
   episode has an outcome), or read ``--run``.
2. Turn every episode into OpenTelemetry spans with the OpenTelemetry SDK
   (:func:`orchestrace.exporters.emit_to_tracer`, in-memory exporter), and add the team
   reward the way an Agent Lightning agent reports it: one ``agentlightning.annotation``
   span whose attributes are built by ``agentlightning.emit_reward(value, propagate=False)``,
   a child of the root agent span at the end of the run. These spans are the only input of
   both sides.
3. Agent Lightning: ``TracerTraceToTriplet(llm_call_match=…)`` (its trace → triplet
   adapter, the one its verl trainer uses) with the regex set to the names of the spans that
   are model turns, so that it sees the same turns; then the per-triplet reward its trainer
   uses: ``agentlightning/verl/daemon.py`` (``_fillna_reward`` / the triplet loop) takes the
   rollout's final reward — the last non-None triplet reward — and gives it to every
   triplet of the rollout.
4. orchestrace: the spans as OpenTelemetry SDK JSON (``ReadableSpan.to_json``) →
   ``orchestrace.import_traces("otlp", …)`` → :func:`orchestrace.exporters.to_trl` with the
   credit methods ``broadcast``, ``causal``, ``discounted``, ``leave-one-out``, ``shapley``.

Prints: rows produced, what each keeps (agents, tool calls, timing, causal edges), how
credit differs between the turns of one run (distinct values, share of turns with zero
credit — wasted work — and the spread), and the median time per run of each path.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # agentlightning imports litellm: no network

import msgspec

import orchestrace as ot
from orchestrace.exporters import emit_to_tracer, to_trl
from orchestrace.rewards import default_signals

#: Names of the spans of model turns (orchestrace's turn unit: decisions, messages, tool
#: calls, returns, aggregation) as :mod:`orchestrace.exporters.otlp` writes them.
TURN_SPANS = r"^(orchestrator_decision|chat|message|execute_tool|return|aggregate)\b"
METHODS = ("broadcast", "causal", "discounted", "leave-one-out", "shapley")


def record(episodes: int, seed: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "orchestrace", "env", "run", "orchestrace/Orchestrate-v0", "--policy", "random",
           "-n", str(episodes), "--seed", str(seed), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def team_reward(trace: ot.Trace) -> float:
    """The scalar orchestrace credits by default (R1 shared outcome), reported to Agent Lightning too."""
    return float(sum(s.value for s in default_signals(trace)))


def spans_of(trace: ot.Trace) -> list[Any]:
    """The run as finished OpenTelemetry SDK spans, with Agent Lightning's reward span."""
    from agentlightning import emit_reward
    from opentelemetry import trace as otel_trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    header = msgspec.to_builtins(trace)
    header.pop("events", None)
    header.pop("edges", None)
    mem = InMemorySpanExporter()
    tp = TracerProvider(resource=Resource({"service.name": trace.system or "orchestrace",
                                           "orchestrace.trace": json.dumps(header)}))
    tp.add_span_processor(SimpleSpanProcessor(mem))
    emit_to_tracer(trace, tracer_provider=tp)
    spans = list(mem.get_finished_spans())
    root = min((s for s in spans if s.parent is None), key=lambda s: s.start_time or 0)
    end = max(s.end_time or 0 for s in spans)
    core = emit_reward(team_reward(trace), propagate=False)  # Agent Lightning's own reward attributes
    ctx = otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(root.context))
    span = tp.get_tracer("agentlightning").start_span(core.name, context=ctx, start_time=end,
                                                      attributes=dict(core.attributes))
    span.end(end_time=end)
    return list(mem.get_finished_spans())


# ----------------------------------------------------------------------------- the two paths
def agentlightning_rows(spans: list[Any], repair_hierarchy: bool = False) -> list[dict[str, Any]]:
    """Agent Lightning's triplets, with the reward its verl trainer gives each of them.

    ``repair_hierarchy=True`` is the adapter's default: it re-parents spans under the tightest
    span that envelopes them in time, which on concurrent agents nests some turns inside
    others, and the nested ones are then dropped as duplicate LLM calls.
    """
    from agentlightning.adapter import TracerTraceToTriplet

    triplets = TracerTraceToTriplet(llm_call_match=TURN_SPANS, repair_hierarchy=repair_hierarchy).adapt(spans)
    final = next((t.reward for t in reversed(triplets) if t.reward is not None), None)  # daemon.py
    return [{"prompt": t.prompt, "response": t.response, "reward": t.reward, "trained_reward": final,
             "metadata": t.metadata} for t in triplets]


def orchestrace_import(spans: list[Any], workdir: Path) -> ot.Trace:
    """Spans → OpenTelemetry SDK JSON file → ``orchestrace.import_traces``."""
    path = workdir / "spans.json"
    path.write_text(json.dumps([json.loads(s.to_json()) for s in spans]), encoding="utf-8")
    (tr,) = ot.import_traces("otlp", path).traces
    return tr


def orchestrace_rows(spans: list[Any], method: str, workdir: Path) -> tuple[ot.Trace, list[dict[str, Any]]]:
    """Spans → orchestrace import → TRL rows with per-turn credit by ``method``."""
    tr = orchestrace_import(spans, workdir)
    return tr, to_trl([tr], method=method)


# ----------------------------------------------------------------------------- measures
def spread(values: list[float]) -> dict[str, Any]:
    vals = [round(v, 9) for v in values]
    return {"rows": len(vals), "distinct": len(set(vals)), "zero_share": sum(v == 0 for v in vals) / max(len(vals), 1),
            "min": min(vals, default=0.0), "max": max(vals, default=0.0)}


def timed(fn, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def compare(traces: list[ot.Trace], repeat: int = 3) -> dict[str, Any]:
    """Run both paths on every trace; returns the per-run results and totals."""
    runs = []
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        for tr in traces:
            spans = spans_of(tr)
            t_agl, agl = timed(lambda spans=spans: agentlightning_rows(spans), repeat)
            agl_default = agentlightning_rows(spans, repair_hierarchy=True)
            per_method = {}
            times = {"import": timed(lambda spans=spans: orchestrace_import(spans, work), repeat)[0]}
            imported, rows = None, []
            for m in METHODS:
                times[m], (imported, rows) = timed(lambda m=m, spans=spans: orchestrace_rows(spans, m, work), repeat)
                per_method[m] = spread([r["reward"] for r in rows])
            assert imported is not None
            tools = {e.id for e in imported.events if e.type.value == "tool_call"}
            agents_agl = {str(r["metadata"].get("agent_name")) for r in agl}
            runs.append({
                "trace_id": tr.trace_id, "spans": len(spans), "team_reward": team_reward(tr),
                "agentlightning": {
                    "rows": len(agl), "rows_default_adapter": len(agl_default), "seconds": t_agl,
                    "credit": spread([float(r["trained_reward"] or 0.0) for r in agl]),
                    "rewarded_by_adapter": sum(r["reward"] is not None for r in agl),
                    "agents": sorted(agents_agl),
                    "tool_calls": sum("execute_tool" in json.dumps(r, default=str) for r in agl),
                    "has_time": sum(any(k in json.dumps(r, default=str) for k in ("start_time", "timestamp")) for r in agl),
                    "has_text": sum(bool(r["prompt"].get("raw_content") or r["response"].get("raw_content")) for r in agl),
                    "has_token_ids": sum(bool(r["prompt"].get("token_ids")) for r in agl),
                },
                "orchestrace": {
                    "rows": per_method["broadcast"]["rows"], "seconds": times,
                    "credit": per_method,
                    "agents": sorted({r["agent_id"] for r in rows}),
                    "tool_calls": sum(r["turn_id"] in tools for r in rows),
                    "has_text": sum(bool(r["completion"][0]["content"]) for r in rows),
                    "edges": len(imported.edges), "events": len(imported.events),
                    "agentlightning_reward_read": imported.rewards.get("agentlightning"),
                    "same_as_recorded": msgspec.structs.replace(
                        imported, rewards={k: v for k, v in imported.rewards.items() if k != "agentlightning"}) == tr,
                },
            })
    return {"runs": runs}


def table(res: dict[str, Any]) -> str:
    runs = res["runs"]
    ok = [r for r in runs if r["team_reward"] != 0]
    med = statistics.median
    lines = [f"{len(runs)} runs ({len(ok)} with a non-zero team reward); medians per run",
             "| | rows | distinct credit values | turns with zero credit | credit range | time per run |",
             "|---|---|---|---|---|---|"]

    def row(name: str, key: str, method: str | None) -> str:
        side = [r[key] for r in ok] or [r[key] for r in runs]
        cr = [s["credit"][method] if method else s["credit"] for s in side]
        secs = [s["seconds"][method] if method else s["seconds"] for s in side]
        return (f"| {name} | {med(c['rows'] for c in cr):g} | {med(c['distinct'] for c in cr):g} | "
                f"{med(c['zero_share'] for c in cr):.0%} | {med(c['min'] for c in cr):.3f} … {med(c['max'] for c in cr):.3f} | "
                f"{med(secs) * 1e3:.1f} ms |")

    lines.append(row("Agent Lightning (triplets; reward its verl trainer uses)", "agentlightning", None))
    for m in METHODS:
        lines.append(row(f"orchestrace `--method {m}`", "orchestrace", m))
    side = [r["orchestrace"]["seconds"]["import"] for r in (ok or runs)]
    lines.append(f"\norchestrace times include {med(side) * 1e3:.1f} ms per run to write the spans as SDK JSON and "
                 "import them; Agent Lightning's adapter reads the in-memory spans.")
    r0 = (ok or runs)[0]
    a, o = r0["agentlightning"], r0["orchestrace"]
    lines += ["", f"what each keeps (run {r0['trace_id']}, {r0['spans']} spans):",
              "| | Agent Lightning | orchestrace |", "|---|---|---|",
              f"| rows (adapter default `repair_hierarchy=True`) | {a['rows_default_adapter']} | {o['rows']} |",
              f"| rows (`repair_hierarchy=False`, used above) | {a['rows']} | {o['rows']} |",
              f"| rows with a reward from the adapter | {a['rewarded_by_adapter']} | {o['rows']} |",
              f"| agents named | {', '.join(a['agents'])} | {', '.join(o['agents'])} |",
              f"| tool calls recognisable as such | {a['tool_calls']} | {o['tool_calls']} (`tool(args)` rows) |",
              f"| completion text | {a['has_text']} of {a['rows']} (reads `gen_ai.prompt/completion.*`) | {o['has_text']} of {o['rows']} |",
              f"| token ids | {a['has_token_ids']} of {a['rows']} (none recorded in these spans) | not kept |",
              f"| time of the turn | {a['has_time']} of {a['rows']} | in the trace and rLLM `Step.info.t` |",
              f"| causal edges | 0 (span tree only) | {o['edges']} |",
              f"| Agent Lightning's reward span | read ({r0['team_reward']:g}) | read ({o['agentlightning_reward_read']}) |",
              f"| trace rebuilt exactly from the spans | — | {o['same_as_recorded']} |"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--run", type=Path, help="a recorded run (JSONL traces) instead of recording one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        path = a.run or record(a.episodes, a.seed, Path(d) / "run.jsonl")
        traces = list(ot.iter_traces(path))
    res = compare(traces, repeat=a.repeat)
    print(table(res))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
