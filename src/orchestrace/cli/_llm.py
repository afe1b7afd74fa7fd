"""LLM commands: ``serve-local`` (SmolLM2 on llama.cpp) and ``llm run`` (real-time LLM episodes).

The environment backend of ``--workers llm`` is :func:`orchestrace.llm.envbackend.make_llm_workers`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_INVALID, EXIT_USAGE, app, console, err_console, fail

llm_app = typer.Typer(help="Run orchestration episodes with real LLM sub-agents (OpenAI-compatible endpoint).",
                      no_args_is_help=True)
app.add_typer(llm_app, name="llm")


@app.command("serve-local")
def serve_local(
    threads: int = typer.Option(1, "--threads", help="Compute threads (1: two collapse when the other core is busy)."),
    parallel: int = typer.Option(4, "--parallel", help="Concurrent request slots (batched)."),
    ctx: int = typer.Option(4096, "--ctx", help="Total context, split over the slots."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0 = a free one)."),
    startup_timeout: float = typer.Option(90.0, "--startup-timeout", help="Seconds to wait for readiness."),
) -> None:
    """Serve SmolLM2-135M-Instruct (llama.cpp, OpenAI-compatible) on 127.0.0.1 until Ctrl-C."""
    from ..errors import OrchestraceError
    from ..llm.local import LocalServer

    try:
        srv = LocalServer(threads=threads, parallel=parallel, ctx=ctx, port=port, startup_timeout=startup_timeout)
        srv.start()
    except OrchestraceError as exc:
        raise fail(str(exc)) from None
    console.print(srv.base_url, markup=False)
    err_console.print(f"model: {srv.model} (threads={threads}, slots={parallel}); Ctrl-C to stop", markup=False)
    try:
        while srv.running:
            time.sleep(0.5)
        raise fail("the local model server exited unexpectedly")
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()


@llm_app.command("run")
def llm_run(
    base_url: str = typer.Option(None, "--base-url", help="API root ending in /v1 (omit with --local)."),
    model: str = typer.Option(None, "--model", help="Model name sent to the endpoint."),
    local: bool = typer.Option(False, "--local", help="Start the local SmolLM2 server for this run."),
    suite: str = typer.Option("arith", "--suite", help="Task suite: arith, lookup or list."),
    plan: str = typer.Option("fanout3-majority", "--plan", help="Orchestration plan (baseline)."),
    episodes: int = typer.Option(3, "--episodes", "-n", help="Number of episodes (tasks)."),
    size: int = typer.Option(3, "--size", help="Subtasks per task."),
    seed: int = typer.Option(0, "--seed", help="First task seed."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Override every profile's max_tokens."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Env var with the API key (default ORCHESTRACE_API_KEY, then OPENAI_API_KEY)."),
    out: Path = typer.Option(None, "-o", "--out", help="Write the traces here (.jsonl stream or .json)."),
) -> None:
    """Run real-time episodes with LLM sub-agents; print success, tokens and latency per episode."""
    from ..errors import OrchestraceError
    from ..llm.episode import PLANS, EpisodeTally, run_episodes
    from ..llm.tasks import SUITES
    from ..llm.workers import LLMWorkers

    if plan not in PLANS:
        raise fail(f"unknown plan {plan!r}; choose one of {', '.join(PLANS)}")
    if suite not in SUITES:
        raise fail(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if episodes < 1 or size < 1:
        raise fail(f"--episodes and --size must be ≥ 1, got {episodes} and {size}")
    if not local and (not base_url or not model):
        raise fail("give --base-url and --model, or --local to start the local SmolLM2 server")
    srv = None
    try:
        if local:
            from ..llm.local import LocalServer

            srv = LocalServer().start()
            base_url, model = srv.base_url or "", srv.model
        tally = EpisodeTally()
        with LLMWorkers(base_url, model, api_key_env=api_key_env, max_tokens=max_tokens) as w:
            for task, r in run_episodes(suite, PLANS[plan], w, episodes=episodes, size=size, seed=seed, tally=tally):
                causes = ", ".join(f"{c}×{n}" for c, n in sorted(r.causes.items())) or "-"
                console.print(
                    f"{task.id}: {'OK ' if r.success else 'BAD'} answer={r.answer!s} expected={task.answer} "
                    f"status={r.status} tokens={r.tokens} wall={r.wall_clock_s:.2f}s calls={r.calls} errors={causes}",
                    markup=False, soft_wrap=True,
                )
        console.print(f"success {tally.ok}/{len(tally.traces)} ({plan}, {suite})", markup=False)
        if out is not None:
            _write(tally.traces, out)
    except OrchestraceError as exc:
        raise fail(str(exc)) from None
    finally:
        if srv is not None:
            srv.stop()
    if tally.nothing_reached_a_model:  # the numbers above are not results
        counted = ", ".join(f"{c}×{n}" for c, n in tally.causes.most_common()) or "unknown causes"
        raise fail(f"all {tally.calls} LLM calls failed ({counted}); check --base-url {base_url} and --model {model}, "
                   "and that the server is up (`orchestrace serve-local` starts a local one)", code=EXIT_USAGE)
    if tally.ok == 0 and episodes > 0:
        raise typer.Exit(EXIT_INVALID)


def _write(traces: list[Any], out: Path) -> None:
    """All traces to one JSONL stream (``.jsonl``), or the last one as a JSON document."""
    from ..core.io import atomic_write, dump, dumps

    try:
        if out.suffix == ".jsonl":
            atomic_write(out, b"".join(dumps(tr, format="jsonl") for tr in traces))
        else:
            dump(traces[-1], out)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"wrote {out}", markup=False)
