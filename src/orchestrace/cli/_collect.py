"""``orchestrace collect``: a corpus of real always-continue vote runs, and ``collect fit-sim``.

``collect run DIR`` runs the self-consistency vote loop of :mod:`orchestrace.collection.collect`
against ``--base-url`` (default: a local SmolLM2 server started for the run) and writes
``DIR/traces.jsonl`` + ``DIR/manifest.json``. Exit codes: 0 done · 1 the endpoint failed
mid-collection (the count done is printed; ``--resume`` continues) · 2 usage.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_INVALID, EXIT_USAGE, app, console, fail, note, progress

collect_app = typer.Typer(help="Collect real vote-loop runs as traces; fit the simulator to them.",
                          no_args_is_help=True)
app.add_typer(collect_app, name="collect")


@collect_app.command("run")
def collect_run(
    out: Path = typer.Argument(..., help="Corpus folder (traces.jsonl + manifest.json)."),
    suites: str = typer.Option("add:1,add:2,mentor:1,mentor:2", "--suites",
                               help="SUITE:SIZE cells, cycled (add, mentor, arith, lookup, list)."),
    tasks: int = typer.Option(None, "--tasks", "-n", help="Number of tasks (default 1000, or all of --task-file); "
                              "with --resume a larger number grows the corpus."),
    task_file: Path = typer.Option(None, "--task-file", help="Your own tasks: JSONL of id, prompt or messages, "
                                   "answer, grader (exact, numeric, regex, choice or module:function); see "
                                   "docs/your-runs.md. Replaces --suites."),
    context_limit: int = typer.Option(None, "--context-limit", help="With --base-url: the endpoint's context "
                                      "(tokens); task-file prompts that would not fit are refused up front."),
    rounds: int = typer.Option(4, "--rounds", "-R", help="Rounds per task (always all of them)."),
    width: int = typer.Option(2, "--width", "-W", help="Attempts per round."),
    temperature: float = typer.Option(0.7, "--temperature", help="Sampling temperature (> 0)."),
    max_tokens: int = typer.Option(16, "--max-tokens", help="Tokens per reply."),
    seed: int = typer.Option(0, "--seed", help="First task seed; attempt seeds derive from it."),
    resume: bool = typer.Option(False, "--resume", help="Continue the collection in OUT."),
    base_url: str = typer.Option(None, "--base-url", help="API root ending in /v1 (default: start serve-local)."),
    model: str = typer.Option(None, "--model", help="Model name (with --base-url)."),
    concurrency: int = typer.Option(4, "--concurrency", help="Tasks in flight (= the server's slots)."),
    threads: int = typer.Option(1, "--threads", help="Local server compute threads."),
    no_logprobs: bool = typer.Option(False, "--no-logprobs", help="Do not ask for token log-probs."),
) -> None:
    """Run an always-continue self-consistency vote on verifiable tasks; log every round as traces."""
    from ..collection.collect import CollectConfig

    def make() -> object:
        return CollectConfig(**_task_source(suites, tasks, task_file, context_limit, base_url), rounds=rounds,
                             width=width, temperature=temperature, max_tokens=max_tokens, seed=seed,
                             logprobs=not no_logprobs)

    _run_collection(make, out, resume=resume, base_url=base_url, model=model, concurrency=concurrency,
                    threads=threads)


@collect_app.command("team")
def collect_team(
    out: Path = typer.Argument(..., help="Corpus folder (traces.jsonl + manifest.json)."),
    suites: str = typer.Option("add:1,add:2,mentor:1,mentor:2", "--suites",
                               help="SUITE:SIZE cells, cycled (add, mentor)."),
    team: str = typer.Option("cold:0.2,hot:0.7,calc:0.2:calc,reviser:0.2:reviser", "--team",
                             help="Members NAME:TEMPERATURE[:STYLE]; STYLE answer (default), calc (a tool "
                                  "member) or reviser (shown the others' answers)."),
    tasks: int = typer.Option(None, "--tasks", "-n", help="Number of tasks (default 1000, or all of --task-file); "
                              "with --resume a larger number grows the corpus."),
    task_file: Path = typer.Option(None, "--task-file", help="Your own tasks: the task file of `collect run "
                                   "--task-file` (JSONL of id, prompt or messages, answer, grader); see "
                                   "docs/your-runs.md. Replaces --suites."),
    context_limit: int = typer.Option(None, "--context-limit", help="With --base-url: the endpoint's context "
                                      "(tokens); task-file prompts that would not fit beside the calc or reviser "
                                      "member's additions and the reply are refused up front."),
    rounds: int = typer.Option(3, "--rounds", "-R", help="Rounds per task (always all of them, every member)."),
    max_tokens: int = typer.Option(16, "--max-tokens", help="Tokens per reply."),
    top_logprobs: int = typer.Option(5, "--top-logprobs", help="Top-k token log-probs to log (DeepConf; 0 = none)."),
    seed: int = typer.Option(0, "--seed", help="First task seed; attempt seeds derive from it."),
    resume: bool = typer.Option(False, "--resume", help="Continue the collection in OUT."),
    base_url: str = typer.Option(None, "--base-url", help="API root ending in /v1 (default: start serve-local)."),
    model: str = typer.Option(None, "--model", help="Model name (with --base-url)."),
    concurrency: int = typer.Option(4, "--concurrency", help="Tasks in flight (= the server's slots)."),
    threads: int = typer.Option(1, "--threads", help="Local server compute threads."),
) -> None:
    """Run a heterogeneous team on verifiable tasks, every member every round; log it as traces."""
    from ..collection.team import TeamConfig, parse_team

    def make() -> object:
        members = parse_team(team)  # a bad --team is reported before the task file is read
        return TeamConfig(**_task_source(suites, tasks, task_file, context_limit, base_url), rounds=rounds,
                          members=members, max_tokens=max_tokens, top_logprobs=top_logprobs, seed=seed)

    _run_collection(make, out, resume=resume, base_url=base_url, model=model, concurrency=concurrency,
                    threads=threads)


@collect_app.command("mixed-team")
def collect_mixed(
    out: Path = typer.Argument(..., help="Corpus folder (traces.jsonl + manifest.json)."),
    suites: str = typer.Option("add:2,add:3,mentor:1,mentor:2", "--suites", help="SUITE:SIZE cells, cycled."),
    tasks: int = typer.Option(80, "--tasks", "-n", help="Number of tasks; with --resume a larger number grows it."),
    seed: int = typer.Option(0, "--seed", help="First task seed; attempt seeds derive from it."),
    resume: bool = typer.Option(False, "--resume", help="Continue the collection in OUT (same model files)."),
    concurrency: int = typer.Option(2, "--concurrency", help="Tasks in flight (= each server's slots)."),
    threads: int = typer.Option(1, "--threads", help="Compute threads per local server."),
) -> None:
    """Run the two-family team (SmolLM2 + Gemma 3 270M, a fallible calculator, priced members) on two local
    servers, every member every round; see docs/team2.md."""
    from ..collection.collect import parse_cells
    from ..collection.mixed_team import MixedTeamConfig, collect_mixed_team
    from ..errors import LLMError, OrchestraceError

    try:
        cfg = MixedTeamConfig(cells=parse_cells(suites), n_tasks=tasks, seed=seed)
        with progress(cfg.n_tasks, "collect", terminal_only=False) as advance:
            res = collect_mixed_team(cfg, out, resume=resume, concurrency=concurrency, threads=threads,
                                     on_task=_Done(advance))
    except LLMError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    except OrchestraceError as exc:
        raise fail(str(exc), problems=getattr(exc, "problems", ())) from None
    except KeyboardInterrupt:
        raise fail("interrupted; the same command with --resume continues", code=130) from None
    console.print(f"{res.already + res.written}/{cfg.n_tasks} tasks in {out} ({res.written} now, "
                  f"{res.already} before; {res.wall_s:.0f} s)", markup=False)


def _task_source(suites: str, tasks: int | None, task_file: Path | None, context_limit: int | None,
                 base_url: str | None) -> dict[str, Any]:
    """The task fields of a collection config: the built-in ``--suites`` cells (1000 tasks by default), or
    ``--task-file`` (all of its tasks by default, ``n_tasks=0``), checked against the context limit
    (serve-local: 1024 tokens per slot; an external endpoint: ``--context-limit`` if given)."""
    from ..collection.collect import parse_cells
    from ..errors import ConfigError

    if tasks is not None and tasks < 1:
        raise ConfigError(f"--tasks must be >= 1, got {tasks}")
    if task_file is None:
        return {"cells": parse_cells(suites), "n_tasks": 1000 if tasks is None else tasks}
    from .._limits import MAX_SMALL_FILE_BYTES, regular_file

    regular_file(task_file, limit=MAX_SMALL_FILE_BYTES, what="task file")  # a symlink loop: located, before resolve()
    ctx = context_limit if base_url is not None else 1024
    return {"cells": (), "n_tasks": 0 if tasks is None else tasks, "task_file": str(task_file.resolve()),
            "context_limit": ctx}


def _run_collection(make: Callable[[], object], out: Path, *, resume: bool, base_url: str | None,
                    model: str | None, concurrency: int, threads: int) -> None:
    """Build the config, start serve-local unless a URL is given, collect with a progress line."""
    import signal

    from ..collection.collect import collect, collection_endpoint
    from ..errors import LLMError, OrchestraceError

    def _term(*_: object) -> None:  # SIGTERM (and SIGINT, ignored in background jobs) end the run cleanly
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    srv = None
    bar = None
    try:
        cfg: Any = make()
        srv, base_url, model, info = collection_endpoint(base_url, model, threads=threads, concurrency=concurrency)
        with progress(cfg.n_tasks, "collect", terminal_only=False) as advance:
            bar = _Done(advance)
            res = collect(cfg, out, base_url=base_url, model=model, resume=resume, concurrency=concurrency,
                          server_info=info, on_task=bar)
    except LLMError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    except OrchestraceError as exc:  # located problems (a task file's lines): invalid input, 1; else usage, 2
        problems = getattr(exc, "problems", ())
        raise fail(str(exc), problems=problems, code=EXIT_INVALID if problems else EXIT_USAGE) from None
    except KeyboardInterrupt:
        done = "" if bar is None or bar.done is None else f" with {bar.done} tasks written"
        raise fail(f"interrupted{done}; the same command with --resume continues", code=130) from None
    finally:
        if srv is not None:
            srv.stop()
    console.print(f"{res.already + res.written}/{cfg.n_tasks} tasks in {out} ({res.written} now, "
                  f"{res.already} before; {res.wall_s:.0f} s)", markup=False)
    if res.errors:
        note(f"{len(res.errors)} repl(ies) could not be graded (the grader raised or timed out; counted as no "
             f"answer, listed in {out}/manifest.json); first: {res.errors[0]}", kind="warning")


class _Done:
    """``collect(on_task=…)``: tasks done so far (for the interrupt message), shown by ``advance``."""

    def __init__(self, advance: Callable[..., None]) -> None:
        self.advance = advance
        self.done: int | None = None

    def __call__(self, done: int, total: int) -> None:
        self.advance(done - (self.done or 0))  # the first call counts the tasks a resumed corpus held
        self.done = done


@collect_app.command("fit-sim")
def collect_fit_sim(
    corpus: Path = typer.Argument(..., help="Corpus folder or traces file (collect run)."),
    out: Path = typer.Option(..., "-o", "--out", help="Write the fit here (JSON: --set items, profile, moments)."),
    split: str = typer.Option("train", "--split", help="Fit on this split (train, validation, test or all)."),
    n_search: int = typer.Option(300, "--search", help="Random-search candidates (then as many refining)."),
    n_sim: int = typer.Option(1500, "--sim-tasks", help="Simulated tasks per candidate."),
    seed: int = typer.Option(0, "--seed", help="Search and simulation seed."),
    exclude_bad: bool = typer.Option(False, "--exclude-bad", help="Drop bad runs (counted) instead of failing."),
) -> None:
    """Fit the simulator's worker model to a real corpus; print real vs simulated moments.

    The output's "set" items are EnvConfig fields for --set (e.g. `env run --set ...`); the
    fitted profile (tokens, confidence) is applied by orchestrace.logged.simfit.load_fitted_env.
    """
    from ..errors import OrchestraceError
    from ..evaluation.runfiles import fit_simulator_file, load_split

    if split not in ("train", "validation", "test", "all"):
        raise fail(f"--split {split!r}: choose train, validation, test or all")
    if n_search < 1 or n_sim < 50:
        raise fail(f"--search must be >= 1 and --sim-tasks >= 50, got {n_search} and {n_sim}")
    if not (corpus.exists() or corpus.is_symlink()):
        raise fail(f"{corpus}: no such corpus (a folder written by `collect run`, or one traces file)")
    try:
        runs = load_split(corpus, split, exclude=exclude_bad, warn=lambda s: note(s, kind="warning"))
        if split != "all" and runs.shape[0] == 0:
            raise fail(f"{corpus}: no {split} tasks")
        fit = fit_simulator_file(runs, out, corpus=str(corpus), split=split, n_sim=n_sim, n_search=n_search,
                                 seed=seed)
    except OrchestraceError as exc:  # the corpus is invalid: exit 1, as train --from-traces on the same corpus
        hint = "" if exclude_bad or not getattr(exc, "problems", ()) else "; --exclude-bad drops the bad runs (counted)"
        raise fail(f"{exc}{hint}", problems=getattr(exc, "problems", ()), code=EXIT_INVALID) from None
    except OSError as exc:
        raise fail(f"{out}: cannot write ({exc.strerror or exc})") from None
    real, sim = fit["moments"]["real"], fit["moments"]["simulated"]
    for key in ("acc", "maj_first", "maj_last", "wrong_agree", "tokens_out", "tokens_in"):
        console.print(f"{key:12s} real {real[key]:8.3f}   simulated {sim[key]:8.3f}", markup=False)
    console.print("set: " + " ".join(fit["set"]), markup=False, soft_wrap=True)
    console.print(f"wrote {out}", markup=False)


@collect_app.command("import")
def collect_import(
    logs: list[Path] = typer.Argument(..., help="Log files: batch outputs, samples JSONL or debate JSON."),
    out: Path = typer.Option(..., "-o", "--out", help="Corpus folder to write (must be new or empty)."),
    fmt: str = typer.Option("auto", "--format", help="batch (OpenAI/vLLM batch output), samples (JSONL of "
                            "question/samples/answer), debate (llm_multiagent_debate JSON) or auto."),
    tasks: Path = typer.Option(None, "--tasks", help="Task file with the reference answers and graders (ids = "
                               "the batch requests' custom_id); needed for batch outputs."),
    grader: str = typer.Option(None, "--grader", help="Grader for records without one: exact, numeric, regex, "
                               "choice or module:function (default: numeric if the reference is a number)."),
    width: int = typer.Option(2, "--width", "-W", help="Attempts per round when samples are cut into rounds."),
    model: str = typer.Option("", "--model", help="Model name to record in the manifest."),
    strict: bool = typer.Option(False, "--strict", help="Fail if any record is excluded (default: count them)."),
) -> None:
    """Turn logs you already have into a corpus for `train --from-traces` and `eval --traces`.

    Every record that cannot be graded or shaped is excluded, counted and located; replies
    without a parsable answer or log-probs are counted. See docs/your-runs.md.
    """
    from ..collection.logimport import ImportError_, import_logs
    from ..collection.taskfile import TaskFileError
    from ..errors import OrchestraceError

    if out.exists() and any(out.iterdir()) if out.is_dir() else out.exists():
        raise fail(f"{out}: already exists and is not an empty folder; choose a new corpus folder")
    try:
        rep = import_logs(logs, out, fmt=fmt, tasks=tasks, grader=grader, width=width, model=model, strict=strict)
    except (ImportError_, TaskFileError) as exc:  # the logs or the task file: invalid input, located
        io = isinstance(exc, TaskFileError) and not exc.problems  # no such task file, a FIFO …: I/O, as collect run
        raise fail(str(exc), problems=exc.problems, code=EXIT_USAGE if io else EXIT_INVALID) from None
    except OrchestraceError as exc:  # an option that does not fit (a format, --tasks missing): usage
        raise fail(str(exc), problems=getattr(exc, "problems", ())) from None
    except OSError as exc:
        raise fail(f"cannot read the logs or write {out}: {exc}") from None
    for i, line in enumerate(rep.lines()):
        if i == 0:
            console.print(f"wrote {out}: {line}", markup=False, soft_wrap=True)
        else:
            note(line)
