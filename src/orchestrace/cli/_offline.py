"""``orchestrace train --from-traces CORPUS`` and ``orchestrace eval --traces CORPUS [RUN …] [--test FRESH …]``.

The stop learned and evaluated from logged real runs only (:mod:`orchestrace.offline`, the run
files in :mod:`orchestrace.evaluation.runfiles`); the options live on the existing ``train`` /
``eval`` commands (``cli/_learn.py`` dispatches here). Exit codes: 0 ok; 1 the corpus, a gate
file or a fresh collection is invalid (every ConfigError); 2 usage or I/O (a missing corpus, an
option that does not apply, an unwritable output).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ._app import EXIT_INVALID, console, fail, note

if TYPE_CHECKING:
    from ..logged.runs import LoggedRuns

__all__: list[str] = []


def _read(corpus: Path, *, fresh: bool = False) -> tuple[LoggedRuns, list[str]]:
    """:func:`~orchestrace.evaluation.runfiles.load_corpus`; exit 2 for a missing path, 1 for an invalid corpus."""
    from ..errors import OrchestraceError
    from ..evaluation.runfiles import load_corpus

    what = "--test collection" if fresh else "corpus"
    if not (corpus.exists() or corpus.is_symlink()):  # a dangling link or a loop: the loader says which
        raise fail(f"{corpus}: no such {what} (a directory of logged traces, or an .npz of logged runs)")
    try:
        runs, notes = load_corpus(corpus, fresh=fresh)
    except OrchestraceError as exc:  # ConfigError, or the loader's TraceInvalidError with located problems
        raise fail(str(exc), problems=getattr(exc, "problems", ()), code=EXIT_INVALID) from None
    for n in notes:
        note(f"{corpus}: {n}")
    return runs, notes


def _log(quiet: bool) -> Callable[[str], None]:
    # member names, task ids and cells come from the corpus: printed with control characters escaped
    from .._limits import printable

    return (lambda s: None) if quiet else (lambda s: console.print(printable(s, lines=True), markup=False,
                                                                   highlight=False))


def train_from_traces(corpus: Path, out: Path, *, seed: int, ignored: list[str], quiet: bool) -> None:
    """Fit the stop gate (a team corpus: the joint policy) from the corpus's logged paths into RUN."""
    from ..errors import ConfigError, MissingExtraError
    from ..evaluation.runfiles import fit_run

    if ignored:
        raise fail(f"--from-traces learns the stop from logged runs; {', '.join(ignored)} do(es) not apply "
                   "(only --out, --seed and --quiet do)")
    runs, notes = _read(corpus)
    try:
        done = fit_run(runs, notes, corpus, out, seed=seed, log=_log(quiet))
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    except OSError as exc:
        raise fail(f"cannot write the run to {out}: {exc.strerror or exc}") from None
    from .._limits import printable

    console.print(printable(done.message, lines=True), markup=False)
    console.print(printable(f"run: {out} ({done.path.name}, fit.json)"), markup=False)


def eval_traces(corpus: Path, runs: list[Path], out: Path | None, *, quiet: bool, tests: list[Path] | None = None
                ) -> None:
    """Value every rule and every gate run exactly on the corpus's test tasks and on every fresh collection
    (``--test``); print the summary (a team corpus: the joint policy's evaluation) —
    :func:`orchestrace.evaluation.evaluate_logged` does the work."""
    from ..errors import OrchestraceError
    from ..evaluation import evaluate_logged

    try:
        res = evaluate_logged(corpus, runs, tests=tests or [], log=_log(quiet),
                              note=lambda message, kind: note(message, kind=kind))
    except FileNotFoundError as exc:
        if exc.errno is not None:  # the system's, from inside a reader: the I/O guard of _app says it
            raise
        raise fail(str(exc)) from None  # a named path that is not there
    except OrchestraceError as exc:  # ConfigError, or a reader's TraceInvalidError with located problems
        raise fail(str(exc), problems=getattr(exc, "problems", ()), code=EXIT_INVALID) from None
    if out is not None:
        try:
            written = res.write(out)
        except OSError as exc:
            raise fail(f"cannot write the results to {out}: {exc.strerror or exc}") from None
        console.print(f"wrote {out}/ ({', '.join(written)})", markup=False)
    from .._limits import printable

    console.print(printable(res.summary, lines=True), markup=False, highlight=False, soft_wrap=True)
