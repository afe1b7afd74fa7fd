"""``orchestrace blame RUN [--json]``: the decisive error of a failed run, from the evidence in its trace.

For each trace in RUN (a trace file: import a transcript first with ``orchestrace import``)
it prints the decisive error — agent, step (the turn index in the source transcript for chat
imports, else the event index), the evidence lines, calibrated confidences (that the agent,
and that the step, is the culprit) — and the runner-up. ``--method learned`` names the learned
scorer's pick instead of the fixed rule's. With
no evidence it says "no evidence" and names the fallback rule it used. ``--json`` prints one
JSON object per trace per line. Signed credit per unit: ``orchestrace credit RUN --method blame
--unit agent``.

A run recorded as a success says "nothing to blame"; a run that states no outcome (or
contradictory ones) says "outcome unknown" and blames nobody unless ``--assume-failed``. Agent
names, excerpts and ids are printed with terminal control characters escaped (``\\x1b``, a newline as ``\\x0a``).

Exit codes: 0 every trace got its answer (a culprit, a fallback pick, "nothing to blame",
"outcome unknown"); 1 a trace is invalid or undecodable, or has no agent turn to blame; 2 usage
or I/O error.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from .._limits import scrub
from ._app import EXIT_INVALID, EXIT_USAGE, app, escape, fail, note
from ._checks import FORCE_HELP

__all__ = ["blame_cmd"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _plain(text: str) -> str:
    """Text from a trace, safe on a terminal: control characters written as ``\\xNN``.

    >>> print(_plain("Eve\\x1b[2J\\n"))
    Eve\\x1b[2J\\x0a
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", scrub(text))  # and never a key


def _show(text: str) -> str:
    """:func:`_plain`, then markup escaped (as every command's output)."""
    return escape(_plain(text))


@app.command("blame")
def blame_cmd(
    path: Path = typer.Argument(..., metavar="RUN", help="Trace file (.json or .jsonl); import transcripts first."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per trace per line."),
    fallback: str = typer.Option("first-reply", "--fallback", help="Rule without evidence: first-reply or first-worker."),
    method: str = typer.Option("rule", "--method",
                               help="rule (the earliest flagged error) or learned (the scorer over turns)."),
    assume_failed: bool = typer.Option(False, "--assume-failed",
                                       help="Blame a run that states no outcome as if it failed."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Name the decisive error of a failed run: agent, step, evidence, confidence, runner-up."""
    import msgspec

    from ..blame import FALLBACKS, METHODS, blame
    from ..errors import ConfigError, TraceError
    from ._checks import load_traces

    if fallback not in FALLBACKS:
        raise fail(f"--fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}", code=EXIT_USAGE)
    if method not in METHODS:
        raise fail(f"--method must be one of {', '.join(METHODS)}, got {method!r}", code=EXIT_USAGE)
    if path.is_dir():
        raise fail(f"{path}: is a folder; give one .json or .jsonl trace file", code=EXIT_USAGE)
    traces = load_traces(path, force=force, verb="blame")
    nobody = 0
    for tr in traces:
        try:
            r = blame(tr, fallback=fallback, assume_failed=assume_failed, method=method)
        except (ConfigError, TraceError) as exc:
            raise fail(f"{path}: trace {tr.trace_id!r}: {exc}", code=EXIT_INVALID) from None
        nobody += r.status == "no agent"
        if as_json:
            typer.echo(msgspec.json.encode(r.to_dict()).decode())
            continue
        typer.echo(f"{_show(tr.trace_id)}: " + ("failed run" if r.failed else "run recorded as a success"
                                                   if r.failed is False else "outcome unknown"))
        d = r.decisive
        if r.status in ("nothing to blame", "outcome unknown"):
            typer.echo(f"  {_show(r.rule)}")
        elif d is None:
            typer.echo(f"  nobody to blame: {_show(r.rule)}")
        else:
            if not r.evidence_found:
                typer.echo("  no evidence of what went wrong in this trace")
            sc = "" if d.step_confidence is None else f", step confidence {d.step_confidence:g}"
            typer.echo(f"  decisive error: agent {_show(d.agent)}, step {d.step} ({d.step_of}), event {_show(d.event)}, "
                       f"confidence {d.confidence:g}{sc}")
            typer.echo(f"  rule: {_show(r.rule)}")
            for line in d.evidence:
                typer.echo(f"    {_show(line)}")
        if r.runner_up is not None:
            u = r.runner_up
            typer.echo(f"  runner-up: agent {_show(u.agent)}, step {u.step}, event {_show(u.event)}, confidence "
                       f"{u.confidence:g} ({_show(', '.join(u.kinds))})")
        for n in r.notes:
            note(f"{_plain(tr.trace_id)}: {_plain(n)}")
    if nobody:
        raise typer.Exit(EXIT_INVALID)
