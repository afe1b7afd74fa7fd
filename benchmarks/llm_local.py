"""Real LLM workers on the local model: latency, tokens/s, and baseline success per task suite.

    python benchmarks/llm_local.py [--quick]

Starts SmolLM2-135M-Instruct on xllamacpp (127.0.0.1, ONE thread, 4 slots), then measures
(1) latency per call and decode tokens/s, sequential and 4 concurrent; (2) the success rate
of the real-time orchestration plans (orchestrace.llm.episode.PLANS) on each task suite;
(3) the success rate of the environment's baseline orchestrators with LLM workers on each
suite (EnvConfig.small). Prints medians; LAST, the ratios against the anchors measured in
the same run (anchor: sequential single calls).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer calls and episodes")
    args = ap.parse_args()
    from orchestrace.llm.client import ChatClient
    from orchestrace.llm.episode import PLANS, run_episode
    from orchestrace.llm.local import LocalServer
    from orchestrace.llm.tasks import SUITES, make_task
    from orchestrace.llm.workers import LLMWorkers

    n_calls = 8 if args.quick else 24
    n_ep = 3 if args.quick else 10
    n_env = 2 if args.quick else 6
    msgs = [{"role": "user", "content": "Compute 17 + 25. Reply with the number only."}]
    long_msgs = [{"role": "user", "content": "Write one sentence about rivers."}]
    t0 = time.time()
    with LocalServer(threads=1, parallel=4, ctx=4096) as srv:
        print(f"local server up in {time.time() - t0:.2f} s at {srv.base_url} (1 thread, 4 slots)")

        async def calls(concurrency: int, n: int, m: list[dict[str, str]], max_tokens: int) -> list:
            async with ChatClient(srv.base_url or "", srv.model, max_concurrency=concurrency) as c:
                out = []
                for k in range(0, n, concurrency):
                    batch = await asyncio.gather(*(c.chat(m, max_tokens=max_tokens, temperature=0.0, seed=k + j,
                                                          extra={"ignore_eos": True} if max_tokens > 8 else None)
                                                   for j in range(min(concurrency, n - k))))
                    out.append(batch)
                return out

        def summarize(label: str, batches: list) -> tuple[float, float, float]:
            flat = [r for b in batches for r in b]
            lat = statistics.median(r.latency_s for r in flat)
            tps_call = statistics.median(r.completion_tokens / r.latency_s for r in flat)
            wall = sum(max(r.t_end for r in b) - min(r.t_start for r in b) for b in batches)
            agg = sum(r.completion_tokens for r in flat) / wall
            print(f"{label}: median latency {lat * 1000:.0f} ms, median per-call {tps_call:.1f} tok/s, "
                  f"aggregate {agg:.1f} tok/s, {flat[0].prompt_tokens} prompt + "
                  f"{statistics.median(r.completion_tokens for r in flat):.0f} completion tokens per call")
            return lat, tps_call, agg

        short = asyncio.run(calls(1, n_calls, msgs, 8))
        lat1, _, _ = summarize("short answer (≤8 tok), sequential", short)
        seq = asyncio.run(calls(1, n_calls, long_msgs, 32))
        _, tps1, agg1 = summarize("32-token completion, sequential", seq)
        par = asyncio.run(calls(4, n_calls, long_msgs, 32))
        lat4, tps4, agg4 = summarize("32-token completion, 4 concurrent", par)

        print("\nreal-time plans (orchestrace.llm.episode), success / episodes, median tokens, median wall s:")
        with LLMWorkers(srv.base_url or "", srv.model) as w:
            for suite in SUITES:
                for name, plan in PLANS.items():
                    res = [run_episode(make_task(suite, seed=100 + k, size=3), w, plan) for k in range(n_ep)]
                    ok = sum(r.success for r in res)
                    print(f"  {suite:6s} {name:18s} {ok:2d}/{n_ep}  tokens {statistics.median(r.tokens for r in res):6.0f}"
                          f"  wall {statistics.median(r.wall_clock_s for r in res):5.2f}")

        try:
            import gymnasium  # noqa: F401
        except ImportError:
            print("\n(gymnasium missing: environment baselines skipped)")
        else:
            from orchestrace.env import EnvConfig, OrchestrationEnv
            from orchestrace.env.baselines import make_baseline
            from orchestrace.llm.envbackend import make_llm_workers

            cfg = EnvConfig.small()
            print("\nenvironment baselines (EnvConfig.small) with LLM workers, success / episodes [simulated-worker success]:")
            for suite in SUITES:
                for name in ("fixed-fanout", "greedy", "fixed-budget", "threshold"):
                    ok = sim_ok = 0
                    toks = []
                    for k in range(n_env):
                        for use_llm in (True, False):
                            env = OrchestrationEnv(cfg, record_trace=True)
                            be = make_llm_workers(srv.base_url or "", srv.model, suite=suite, config=cfg) if use_llm else None
                            if be is not None:
                                env.world.backend = be
                            pol = make_baseline(name, cfg).bind(env)
                            obs, info = env.reset(seed=200 + k)
                            done = False
                            while not done:
                                obs, _, done, _, info = env.step(pol.act(obs, info))
                            if be is not None:
                                ok += info["success"]
                                toks.append(be.tokens)
                                be.workers.close()
                            else:
                                sim_ok += info["success"]
                    print(f"  {suite:6s} {name:14s} {ok:2d}/{n_env} [sim {sim_ok}/{n_env}]  "
                          f"LLM tokens/episode {statistics.median(toks):6.0f}")

    print("\nratios (anchor: sequential 32-token calls, same run; loaded 2-core machine):")
    print(f"  aggregate tok/s, 4 concurrent / sequential: {agg4 / agg1:.2f}x")
    print(f"  per-call tok/s, 4 concurrent / sequential: {tps4 / tps1:.2f}x")
    print(f"  short-answer latency / 32-token latency: {lat1 / statistics.median(r.latency_s for b in seq for r in b):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
