"""``orchestrace import`` and ``orchestrace export``: real runs in, training data out.

Exit codes: 0 ok (warnings allowed unless ``--strict``), 1 a record could not be read, an
imported trace does not validate, or nothing was imported, 2 usage or I/O error.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, console, err_console, escape, fail
from ._checks import FORCE_HELP


class ImportFormat(str, Enum):
    claude_code = "claude-code"
    codex = "codex"
    otlp = "otlp"
    jaeger = "jaeger"
    openai_agents = "openai-agents"
    chat = "chat"
    reference = "reference"
    auto = "auto"


class ExportFormat(str, Enum):
    otlp = "otlp"
    rllm = "rllm"
    verl = "verl"
    trl = "trl"
    reference = "reference"


class Content(str, Enum):
    keep = "keep"
    hash = "hash"
    drop = "drop"


class Normalize(str, Enum):
    none = "none"
    agent = "agent"
    grpo = "grpo"


@app.command("import")
def import_cmd(
    fmt: ImportFormat = typer.Argument(..., metavar="FORMAT", help="claude-code, codex, otlp, jaeger, openai-agents, chat, reference or auto."),
    paths: list[Path] = typer.Argument(..., metavar="PATH...", help="Input files (a Claude Code session folder works too)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output: .jsonl (all traces, streamed) or .json (one trace)."),
    report: bool = typer.Option(False, "--report", help="Print the per-record-type report (mapped / structure / skipped / unknown)."),
    report_json: bool = typer.Option(False, "--json", help="Print the report as JSON instead of a table."),
    content: Content = typer.Option(Content.hash, "--content", help="keep the text, hash it into content_ref, or drop it."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
    estimate_tokens: bool = typer.Option(False, "--estimate-tokens", help="chat: estimate tokens_out as ceil(characters / 4) (transcripts record no tokens)."),
    orchestrator: str = typer.Option(None, "--orchestrator", metavar="NAME", help="chat: the speaker that is the orchestrator (default: recognised by its name)."),
    labels: bool = typer.Option(False, "--labels", help="chat: keep benchmark labels (mistake_agent/step/reason) in meta.labels (default: dropped)."),
) -> None:
    """Import real runs (Claude Code, Codex, OTLP / Jaeger, OpenAI Agents SDK, chat transcripts, reference) as traces."""
    from ..core.io import atomic_write, dumps
    from ..errors import ConfigError
    from ..importers import import_traces

    for p in paths:
        if not p.exists():
            raise fail(f"{p}: no such file or folder")
    if out.suffix not in (".json", ".jsonl"):
        raise fail(f"{out}: the output must end in .json or .jsonl")
    if estimate_tokens and fmt not in (ImportFormat.chat, ImportFormat.auto):
        raise fail(f"--estimate-tokens is for chat transcripts, which record no tokens; {fmt.value} records its own")
    if orchestrator is not None and fmt not in (ImportFormat.chat, ImportFormat.auto):
        raise fail(f"--orchestrator names a chat transcript's orchestrator; {fmt.value} records who orchestrates")
    try:
        res = import_traces(fmt.value, paths, content=content.value, estimate_tokens=estimate_tokens,  # type: ignore[arg-type]
                            orchestrator=orchestrator or None, labels=labels)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    problems = list(res.report.problems)
    for tr in res.traces:
        problems.extend(_validate(tr))
    if res.traces:
        if out.suffix == ".json" and len(res.traces) > 1:
            raise fail(f"{len(res.traces)} traces were imported; write them to a .jsonl file (-o {out.with_suffix('.jsonl')})")
        try:
            if out.suffix == ".jsonl":
                atomic_write(out, b"".join(dumps(t, format="jsonl") for t in res.traces))
            else:
                atomic_write(out, dumps(res.traces[0]))
        except OSError as exc:
            raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if report_json:
        d = res.report.to_dict()
        d["problems"] = [p.to_dict() for p in problems]
        typer.echo(json.dumps(d, indent=2, ensure_ascii=False))
    else:
        if report:
            _print_report(res.report)
        from rich.text import Text

        for pr in problems:  # the Problem's own one-line form, markup off for the source's text
            colour = "red" if pr.severity == "error" else "yellow"
            err_console.print(Text.assemble((pr.severity.value, colour), " ", str(pr).split(" ", 1)[1]), soft_wrap=True)
        n_ev = sum(len(t.events) for t in res.traces)
        verdict = "wrote" if res.traces else "nothing imported:"
        console.print(f"{verdict} {escape(str(out)) if res.traces else ''} {len(res.traces)} trace(s), {n_ev} events; "
                      f"{len(errors)} error(s), {len(warnings)} warning(s)", soft_wrap=True)
    if any(p.code.startswith("io.") for p in errors):  # unreadable input: I/O, like validate
        raise typer.Exit(EXIT_USAGE)
    if not res.traces or errors or (strict and warnings):
        raise typer.Exit(EXIT_INVALID)
    raise typer.Exit(EXIT_OK)


def _validate(tr):  # type: ignore[no-untyped-def]
    from ..core._validate import validate

    rep = validate(tr)
    return [p.__class__(code=p.code, severity=p.severity, path=f"{tr.trace_id}:{p.path}", message=p.message, hint=p.hint)
            for p in rep.problems]


def _print_report(rep) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from ..importers import BUCKETS

    table = Table(title=f"import report ({rep.format})", show_lines=False)
    table.add_column("record type")
    for b in BUCKETS:
        table.add_column(b, justify="right")
    for rtype, row in sorted(rep.counts.items()):
        table.add_row(escape(rtype), *(str(row[b]) if row[b] else "·" for b in BUCKETS))
    tot = rep.totals()
    table.add_row("[bold]total[/]", *(f"[bold]{tot[b]}[/]" for b in BUCKETS))
    console.print(table)
    for reason, n in sorted(rep.reasons.items()):
        console.print(f"  {n:>6}  {escape(reason)}", soft_wrap=True)
    for text, n in rep.notes.items():
        console.print(f"  {n:>6}  assumed: {escape(text)}", soft_wrap=True)
    for code, n in sorted(rep.sanitised.items()):
        console.print(f"  {n:>6}  values changed or dropped while reading ({escape(code)}; see the warnings)")
    if rep.clamped_times:
        console.print(f"  {rep.clamped_times:>6}  event times clamped so that time never runs backwards along an edge")


def _export_decisions(fmt: ExportFormat, path: Path, out: Path, credit: str, continuation: str,
                      episodes: int) -> None:
    from ..errors import ConfigError, MissingExtraError
    from ..exporters.decisions import decision_turns
    from ..exporters.training import to_trl, to_verl, write_jsonl
    from ._offline import _read

    if fmt not in (ExportFormat.trl, ExportFormat.verl):
        raise fail(f"--decisions exports training rows for trl or verl, not {fmt.value}")
    from ..credit.schemes import parse_scheme

    try:
        credit = parse_scheme(credit).value
    except ConfigError as exc:
        raise fail(f"--decisions: {exc}") from None
    runs, _ = _read(path)  # train's reader and checks: a corpus train refuses is refused here, with its exit code
    try:
        turns = decision_turns(runs, credit=credit, continuation=continuation, episodes=episodes)
        if fmt is ExportFormat.trl:
            write_jsonl(to_trl([], turns=turns), out)
        else:
            to_verl([], out, turns=turns)
    except MissingExtraError as exc:
        raise fail(f"{exc}") from None
    except ConfigError as exc:  # the corpus cannot be fitted (too few tasks …): invalid input, as for train
        raise fail(f"{path}: {exc}", code=EXIT_INVALID) from None
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    n_ep = len({t.trace_id for t in turns})
    console.print(f"wrote {escape(str(out))}: {len(turns)} decision rows from {n_ep} episode(s) of "
                  f"{len({t.task_id for t in turns})} train task(s), credit {credit}"
                  + (f" (Q under the {continuation} continuation)" if credit == "exact" else ""))
    raise typer.Exit(EXIT_OK)


@app.command("export")
def export_cmd(
    fmt: ExportFormat = typer.Argument(..., metavar="FORMAT", help="otlp, rllm, verl, trl or reference."),
    path: Path = typer.Argument(..., metavar="PATH", help="A trace file (JSON, JSONL stream or dataset of streams)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output file (verl: .parquet; rllm/trl: .jsonl; otlp/reference: .json)."),
    method: str = typer.Option("discounted", "--method", help="Credit method for per-turn rewards (training formats)."),
    normalize: Normalize = typer.Option(Normalize.none, "--normalize", help="Advantage normalisation: none, agent (Dr. MAS) or grpo."),
    truth: str = typer.Option(None, "--truth", help="Ground truth for the rewards: a number/true/false verdict or the answer string (an imported run records no outcome)."),
    spec: Path = typer.Option(None, "--spec", help="TOML reward spec whose rewards are credited to the turns (default: the trace's own, else its outcome)."),
    baseline: str = typer.Option(None, "--baseline", help="Per-turn rewards relative to a baseline: a number, or 'group' (the mean reward of the file's runs of the same task); a failed run then gets negative rewards on its causes."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    decisions: str = typer.Option(None, "--decisions", metavar="exact|broadcast|per-turn|per-agent", help="PATH is an always-continue corpus (collect run): export its orchestration decisions (behaviour-policy episodes of the train split) with per-decision credit — exact: Q(state, action) from the log, advantage vs the mean over valid actions; broadcast: the episode's return; per-turn: per-turn rewards normalised at each turn index (MT-GRPO), summed to go; per-agent: the return normalised per agent (Dr. MAS) (trl, verl; docs/credit-schemes.md)."),
    continuation: str = typer.Option("gate", "--continuation", help="--decisions exact: the continuation policy of Q — gate (the stop gate fitted on the train split) or stop-next."),
    episodes: int = typer.Option(4, "--episodes", min=1, help="--decisions: behaviour-policy episodes per task."),
) -> None:
    """Export traces as OTLP JSON, reference JSON, or RL training data (rLLM, verl, TRL)."""
    from ..errors import ConfigError, MissingExtraError
    from ..exporters import export_turns, export_warnings
    from ..exporters.files import write_export
    from ._checks import load_traces
    from ._credit import _spec, baseline_option, signals_of

    if out.exists() and not out.is_file():  # a device, a FIFO, a folder: refused before any work, never replaced
        raise fail(f"{out}: not a regular file; -o must name a file (it is replaced atomically)")
    if decisions is not None:
        _export_decisions(fmt, path, out, decisions, continuation, episodes)
    traces = load_traces(path, force=force, verb="export")
    kw: dict[str, Any] = {}
    warnings: list[str] = []
    training = fmt in (ExportFormat.verl, ExportFormat.rllm, ExportFormat.trl)
    if not training and (truth is not None or spec is not None or baseline is not None):
        raise fail(f"--truth, --spec and --baseline set the rewards of training data; {fmt.value} has none "
                   f"(use rllm, verl or trl)")
    if training:
        sigs, bases = signals_of(traces, _spec(spec), truth, baseline_option(baseline), path)
        missing = [t.trace_id for t, sg in zip(traces, sigs, strict=True) if not sg]
        if missing:
            warnings.append(f"{len(missing)} trace(s) record no outcome, rewards or signals (first {missing[0]!r}): "
                            f"their rows have reward 0; pass --truth true|false or --spec SPEC")
        try:
            turns = export_turns(traces, method=method, normalize=normalize.value,
                                 signals={t.trace_id: sg for t, sg in zip(traces, sigs, strict=True) if sg},
                                 baseline={t.trace_id: b for t, b in zip(traces, bases, strict=True) if b is not None})
        except ConfigError as exc:
            raise fail(str(exc)) from None
        warnings.extend(export_warnings(turns))
        kw = {"turns": turns}
    if fmt is ExportFormat.reference and len(traces) != 1:
        raise fail(f"{path} holds {len(traces)} traces; the reference format holds one (use convert per trace)")
    try:
        n, what = write_export(fmt.value, traces, out, **kw)
    except (ConfigError, MissingExtraError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"wrote {escape(str(out))}: {n} {what} from {len(traces)} trace(s)")
    if training:
        nz = sum(1 for t in kw["turns"] if t.reward != 0)
        console.print(f"{nz} of {len(kw['turns'])} turn rewards are non-zero", soft_wrap=True)
    for w in warnings:
        err_console.print(f"[yellow]warning[/] {escape(w)}", soft_wrap=True)
    raise typer.Exit(EXIT_OK)
