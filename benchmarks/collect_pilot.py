"""Pilot for the vote corpus: SmolLM2-135M throughput and per-task accuracy by task family and size.

    python benchmarks/collect_pilot.py [SLOTS=4] [MAX_TOKENS=16]

Starts the local server (1 thread, SLOTS parallel slots), sends N=6 tasks x 4 samples
(temperature 0.7, distinct seeds, log-probs) of each candidate cell concurrently, and prints
calls/s, tokens per call and the per-task accuracy of every cell (used to pick the corpus's
cells: spread, neither ~0 % nor ~100 %).
"""

from __future__ import annotations

import asyncio
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from orchestrace.llm.client import ChatClient  # noqa: E402
from orchestrace.llm.local import LocalServer  # noqa: E402
from orchestrace.llm.tasks import make_vote_task  # noqa: E402

PAR = int(sys.argv[1]) if len(sys.argv) > 1 else 4
MT = int(sys.argv[2]) if len(sys.argv) > 2 else 16
CANDIDATES = [("add", 1), ("add", 2), ("add", 3), ("mentor", 1), ("mentor", 2), ("mentor", 3)]


async def main(url: str, model: str) -> None:
    c = ChatClient(url, model, max_concurrency=PAR, deadline=3600.0)  # all requests queue at once
    n, w = 6, 4
    res: dict = collections.defaultdict(list)
    t0 = time.time()
    ctok = ptok = calls = 0

    async def one(t, s, k):
        r = await c.chat(t.whole_prompt(), max_tokens=MT, temperature=0.7, seed=1000 * s + k, logprobs=True)
        return t, r

    jobs = [one(make_vote_task(su, seed=i, size=sz), i, k) for su, sz in CANDIDATES for i in range(n) for k in range(w)]
    for t, r in await asyncio.gather(*jobs):
        ctok += r.completion_tokens
        ptok += r.prompt_tokens
        calls += 1
        res[(t.suite, int(t.difficulty), t.id)].append(t.parse(None, r.text) == t.answer)
    dt = time.time() - t0
    print(f"slots={PAR} max_tokens={MT} calls={calls} wall={dt:.1f}s calls/s={calls / dt:.2f} "
          f"completion tokens/call={ctok / calls:.1f} prompt tokens/call={ptok / calls:.1f}")
    agg = collections.defaultdict(list)
    for k, v in res.items():
        agg[k[:2]].append(sum(v) / len(v))
    for k, v in agg.items():
        print(f"{k[0]}:{k[1]} per-task accuracy {[round(x, 2) for x in v]} mean {sum(v) / len(v):.2f}")
    await c.aclose()


if __name__ == "__main__":
    with LocalServer(threads=1, parallel=PAR, ctx=1024 * PAR) as srv:
        asyncio.run(main(srv.base_url or "", srv.model))
