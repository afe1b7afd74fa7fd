"""``orchestrace blame RUN [--json]``: the decisive error of a failed run, from the evidence in its trace.

For each trace in RUN (a trace file: import a transcript first with ``orchestrace import``)
it prints the decisive error — agent, step (the turn index in the source transcript for chat
imports, else the event index), the evidence lines, a confidence — and the runner-up. With
no evidence it says "no evidence" and names the fallback rule it used. ``--json`` prints one
JSON object per trace per line. Signed credit per unit: ``orchestrace credit RUN --method blame
--unit agent``.

Exit codes: 0 a culprit was named for every trace (a fallback pick included); 1 a trace is
invalid or undecodable, or has no agent turn to blame; 2 usage or I/O error.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .._limits import printable, scrub
from ._app import EXIT_INVALID, EXIT_USAGE, app, fail, note
from ._checks import FORCE_HELP

__all__ = ["blame_cmd"]


def _p(x: object) -> str:
    """A name or a line from the trace, safe for a terminal (control characters escaped)."""
    return printable(x)


@app.command("blame")
def blame_cmd(
    path: Path = typer.Argument(..., metavar="RUN", help="Trace file (.json or .jsonl); import transcripts first."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per trace per line."),
    fallback: str = typer.Option("first-reply", "--fallback", help="Rule without evidence: first-reply or first-worker."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Name the decisive error of a failed run: agent, step, evidence, confidence, runner-up."""
    import msgspec

    from ..blame import FALLBACKS, blame
    from ..errors import ConfigError, TraceError
    from ._checks import load_traces

    if fallback not in FALLBACKS:
        raise fail(f"--fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}", code=EXIT_USAGE)
    if path.is_dir():
        raise fail(f"{path}: is a folder; give one .json or .jsonl trace file", code=EXIT_USAGE)
    traces = load_traces(path, force=force, verb="blame")
    nobody = 0
    for tr in traces:
        try:
            r = blame(tr, fallback=fallback)
        except (ConfigError, TraceError) as exc:
            raise fail(f"{_p(path)}: trace {_p(repr(tr.trace_id))}: {_p(scrub(str(exc)))}", code=EXIT_INVALID) from None
        nobody += r.decisive is None
        if as_json:
            typer.echo(msgspec.json.encode(r.to_dict()).decode())
            continue
        typer.echo(f"{_p(tr.trace_id)}: " + ("failed run" if r.failed else "run not recorded as failed"
                                                    if r.failed is False else "outcome unknown"))
        if not r.evidence_found:
            typer.echo("  no evidence of what went wrong in this trace")
        d = r.decisive
        if d is None:
            typer.echo(f"  nobody to blame: {_p(r.rule)}")
        else:
            typer.echo(f"  decisive error: agent {_p(d.agent)}, step {d.step} ({d.step_of}), event {d.event}, "
                       f"confidence {d.confidence:g}")
            typer.echo(f"  rule: {_p(r.rule)}")
            for line in d.evidence:
                typer.echo(f"    {_p(scrub(line))}")
        if r.runner_up is not None:
            u = r.runner_up
            typer.echo(f"  runner-up: agent {_p(u.agent)}, step {u.step}, event {u.event}, confidence "
                       f"{u.confidence:g} ({_p(', '.join(u.kinds))})")
        for n in r.notes:
            note(f"{_p(tr.trace_id)}: {_p(scrub(n))}")
    if nobody:
        raise typer.Exit(EXIT_INVALID)
