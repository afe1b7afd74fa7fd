"""Write ``debate.json``: a small real multi-agent debate run of SmolLM2, in the llm_multiagent_debate shape.

The shape (a JSON object mapping each question to ``[agent_contexts, answer]``; each agent's
context is its chat over the rounds; each later round's user turn carries the other agents'
previous answers; the reference answer GSM8K-style after ``####``) is the one the widely
forked ``llm_multiagent_debate`` code writes; the prompts below are our own wording.

Run from the repository root (it starts the local SmolLM2 server, ``serve-local``)::

    PYTHONPATH=src nice -n 5 python tests/data/debate-smollm2/make_debate.py

Questions: two-number additions/subtractions (``make_vote_task("add", size=2)``), seeds 0..N-1.
Agents: 3, rounds: 2, temperature 0.7, seed per call, at most 40 tokens per reply; each finished
debate is written at once (a killed run keeps the debates it finished).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from orchestrace.llm.client import ChatClient
from orchestrace.llm.local import LocalServer
from orchestrace.llm.tasks import make_vote_task

AGENTS, ROUNDS, N_TASKS, MAX_TOKENS = 3, 2, int(sys.argv[1]) if len(sys.argv) > 1 else 4, 40
FIRST = "{q} Explain in one short sentence, then give your final answer as \\boxed{{answer}}."
LATER = ("Here are the answers of the other agents:\n\n{others}\n\nTaking their answers into account, give your "
         "updated answer to the question. End with your final answer as \\boxed{{answer}}.")


async def debate(client: ChatClient, index: int, question: str) -> list[list[dict[str, str]]]:
    contexts = [[{"role": "user", "content": FIRST.format(q=question)}] for _ in range(AGENTS)]
    for r in range(ROUNDS):
        if r > 0:
            previous = [contexts[b][-1]["content"] for b in range(AGENTS)]  # every agent's last answer, first
            for a in range(AGENTS):
                others = "\n\n".join(f"One agent's answer: ```{previous[b]}```" for b in range(AGENTS) if b != a)
                contexts[a].append({"role": "user", "content": LATER.format(others=others)})
        replies = []
        for a in range(AGENTS):
            res = await client.chat(contexts[a], max_tokens=MAX_TOKENS, temperature=0.7,
                                    seed=(index * ROUNDS + r) * AGENTS + a)
            replies.append(res.text)
        for a in range(AGENTS):
            contexts[a].append({"role": "assistant", "content": replies[a]})
    return contexts


async def main(base_url: str, model: str) -> dict:
    out: dict = {}
    gate = asyncio.Semaphore(2)  # two debates at a time (the server's two slots)

    tasks = [make_vote_task("add", seed=i, size=2) for i in range(N_TASKS)]

    async def one(client: ChatClient, i: int) -> None:
        async with gate:
            ctx = await debate(client, i, tasks[i].question)
        out[tasks[i].question] = [ctx, f"{tasks[i].question}\n#### {tasks[i].answer}"]
        save(out)  # each finished debate is kept, whatever happens to the rest
        print(f"debate {i} done", flush=True)

    async with ChatClient(base_url, model, max_concurrency=2, timeout=300.0, deadline=1800.0) as client:
        await asyncio.gather(*(one(client, i) for i in range(N_TASKS)))
    return out


def save(data: dict) -> None:
    """Write debate.json atomically, questions in task order."""
    order = {make_vote_task("add", seed=i, size=2).question: i for i in range(N_TASKS)}
    path = Path(__file__).parent / "debate.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(sorted(data.items(), key=lambda kv: order[kv[0]])), indent=1) + "\n",
                   encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    t0 = time.time()
    srv = LocalServer(threads=2, parallel=2, ctx=4096).start()
    try:
        data = asyncio.run(main(srv.base_url or "", srv.model))
    finally:
        srv.stop()
    print(f"wrote {len(data)} debates in {time.time() - t0:.0f} s")
