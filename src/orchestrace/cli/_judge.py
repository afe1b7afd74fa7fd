"""``blame-judge``: the Who&When LLM-judge protocols on imported runs, against an OpenAI-compatible endpoint.

::

    orchestrace import chat run.json --content keep -o run.trace.json
    orchestrace blame-judge run.trace.json --protocol binary-search --base-url http://127.0.0.1:8080/v1 --model m
    orchestrace blame-judge run.trace.json --local --context-tokens 2048 --json

Exit codes: 0 every run judged (a "no verdict" is a stated result, not an error) · 1 a
trace has no text · 2 usage, or the endpoint failed for good (one ``error:`` line with
the cause: connect, timeout, http_4xx …).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_USAGE, app, console, fail


@app.command("blame-judge")
def blame_judge(
    run: Path = typer.Argument(..., help="A trace imported with its text (import chat FILE --content keep); "
                                         ".jsonl: every trace in it."),
    protocol: str = typer.Option("all-at-once", "--protocol", "-p",
                                 help="all-at-once, step-by-step or binary-search."),
    base_url: str = typer.Option(None, "--base-url", help="API root ending in /v1 (omit with --local)."),
    model: str = typer.Option(None, "--model", help="Model name sent to the endpoint."),
    local: bool = typer.Option(False, "--local", help="Start the local SmolLM2 server (one slot of "
                                                      "--context-tokens) for this command."),
    with_ground_truth: bool = typer.Option(False, "--with-ground-truth", help="Show the model the task's correct "
                                           "answer (meta.source_fields.ground_truth, or --ground-truth)."),
    ground_truth: str = typer.Option(None, "--ground-truth", metavar="TEXT", help="The correct answer to show "
                                     "(implies --with-ground-truth)."),
    context_tokens: int = typer.Option(4096, "--context-tokens", help="The model's context per request "
                                       "(serve-local's default slot: 1024)."),
    max_tokens: int = typer.Option(48, "--max-tokens", help="Answer length limit (yes/no questions use ≤ 3, A/B ones ≤ 16)."),
    chars_per_token: float = typer.Option(3.0, "--chars-per-token", help="Characters per token for the prompt "
                                          "budget (lower is safer)."),
    max_calls: int = typer.Option(400, "--max-calls", help="step-by-step: give up (no verdict) after this many calls."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per HTTP read (a long prompt on a CPU is slow)."),
    max_retries: int = typer.Option(2, "--max-retries", help="Retries of transient failures per call."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Env var with the API key (default "
                                    "ORCHESTRACE_API_KEY, then OPENAI_API_KEY)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per run."),
) -> None:
    """Ask an LLM which agent made the decisive error of a failed run, and at which step."""
    from ..blame.judge import JudgeConfig, transcript_of
    from ..errors import LLMError, require

    if not local and (not base_url or not model):
        raise fail("give --base-url and --model, or --local to start the local SmolLM2 server")
    cfg = JudgeConfig(protocol=protocol, context_tokens=context_tokens, max_tokens=max_tokens,
                      chars_per_token=chars_per_token, with_ground_truth=with_ground_truth or ground_truth is not None,
                      max_calls=max_calls)
    transcripts = [transcript_of(tr, ground_truth=ground_truth) for tr in _traces(run)]
    require("httpx", extra="llm")
    import logging

    quiet = logging.getLogger("orchestrace.llm")  # the retries are counted in the one error line
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
    srv = None
    try:
        if local:
            from ..llm.local import LocalServer

            srv = LocalServer(threads=1, parallel=1, ctx=max(context_tokens, 256), startup_timeout=120).start()
            base_url, model = srv.base_url or "", srv.model
        verdicts = _judge_all(transcripts, cfg, base_url, model, timeout=timeout, max_retries=max_retries,
                              api_key_env=api_key_env)
    except LLMError as exc:
        hint = ("; is the server up? (`orchestrace serve-local` starts a local one)" if exc.cause == "connect" else
                "; lower --context-tokens to the model's context" if "context" in str(exc).lower() else "")
        raise fail(f"{run}: {exc}{hint}", code=EXIT_USAGE) from None
    finally:
        if srv is not None:
            srv.stop()
    for v in verdicts:
        if as_json:
            console.print(json.dumps(v.to_dict(), ensure_ascii=False), markup=False, soft_wrap=True)
        else:
            _print(v)


def _traces(run: Path) -> list[Any]:
    """The traces in ``run``; a transcript that was not imported yet gets the import command."""
    from ..core.load import read_any
    from ..errors import TraceDecodeError

    try:
        return read_any(run).traces
    except TraceDecodeError:
        from ..importers.detect import detect

        try:
            fmt = detect(run)
        except TraceDecodeError:
            fmt = "reference"
        if fmt != "reference":
            raise fail(f"{run}: a {fmt} file, not a trace: import it first with its text: orchestrace import {fmt} "
                       f"{run} --content keep -o run.trace.json") from None
        raise


def _judge_all(transcripts: list[Any], cfg: Any, base_url: str, model: str, **kw: Any) -> list[Any]:
    """Every transcript judged in one event loop, one client (its retries, timeouts, secret handling)."""
    import asyncio

    from ..blame.judge import ajudge
    from ..llm.client import ChatClient

    async def go() -> list[Any]:
        async with ChatClient(base_url, model, timeout=kw["timeout"], max_retries=kw["max_retries"],
                              api_key_env=kw["api_key_env"], deadline=max(3 * kw["timeout"], 60.0),
                              max_concurrency=1) as client:
            return [await ajudge(tx, client, cfg) for tx in transcripts]

    return asyncio.run(go())


def _print(v: Any) -> None:
    from .._limits import printable, scrub

    def p(x: Any) -> str:  # from the trace or the endpoint: no key, no terminal control
        return printable(scrub(str(x)))

    cost = (f"{v.calls} call(s), {v.prompt_tokens:,}+{v.completion_tokens:,} tokens, {v.seconds:.1f} s"
            + (", with the ground truth" if v.with_ground_truth else ""))
    if v.ok:
        agent = v.agent if v.agent is not None else "(none named)"
        step = v.step if v.step is not None else "(none named)"
        console.print(f"{p(v.trace_id)}: agent {p(agent)}, step {p(step)} ({v.protocol}; {cost})", markup=False, soft_wrap=True)
        console.print(f"  why: {p(v.reason)}", markup=False, soft_wrap=True)
    else:
        console.print(f"{p(v.trace_id)}: {p(v.reason)} ({v.protocol}; {cost})", markup=False, soft_wrap=True)
        last = v.raw[-1] if v.raw else ""
        console.print(f"  raw reply: {printable(json.dumps(scrub(last)[:300], ensure_ascii=False))}", markup=False, soft_wrap=True)
    if v.truncated:
        console.print(f"  truncated to fit: {v.truncation_summary()}", markup=False, soft_wrap=True)
    for n in v.notes:
        console.print(f"  note: {p(n)}", markup=False, soft_wrap=True)
