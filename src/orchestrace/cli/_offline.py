"""``orchestrace train --from-traces CORPUS`` and ``orchestrace eval --traces CORPUS [RUN …] [--test FRESH …]``.

The stop learned and evaluated from logged real runs only (:mod:`orchestrace.offline`, the run
files in :mod:`orchestrace.evaluation.runfiles`); the options live on the existing ``train`` /
``eval`` commands (``cli/_learn.py`` dispatches here). Exit codes: 0 ok; 1 the corpus or a gate
file is invalid; 2 usage or I/O (a missing corpus, an option that does not apply, an unwritable
output).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._app import EXIT_INVALID, EXIT_USAGE, console, fail, note

__all__: list[str] = []


def _read(corpus: Path, *, fresh: bool = False) -> Any:
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
    return (lambda s: None) if quiet else (lambda s: console.print(s, markup=False, highlight=False))


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
    console.print(done.message, markup=False)
    console.print(f"run: {out} ({done.path.name}, fit.json)", markup=False)


def eval_traces(corpus: Path, runs: list[Path], out: Path | None, *, quiet: bool, tests: list[Path] | None = None
                ) -> None:
    """Value every rule and every gate run exactly on the corpus's test tasks and on every fresh collection
    (``--test``); print the summary (a team corpus: the joint policy's evaluation)."""
    from ..errors import ConfigError
    from ..evaluation.runfiles import foreign_gates, load_runs, run_names, write_results
    from ..offline import evaluate_team, evaluate_traces, render_summary, render_team

    logged, _ = _read(corpus)
    team = bool(logged.members)
    def read_fresh() -> list[tuple[str, Any]]:
        return [(str(t), _read(t, fresh=True)[0]) for t in tests or []]

    fresh = [] if team else read_fresh()  # a vote corpus reads --test before the gates, a team one after
    try:
        gates = load_runs(runs, team=team)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    if team:
        fresh = read_fresh()
    for warning in [] if team else foreign_gates(runs, gates, logged.meta.get("fingerprint"), corpus):
        note(warning, kind="warning")
    names = run_names(runs, "team_policy.json" if team else "gate.json")
    try:
        if team:
            res = evaluate_team(logged, gates, names=names, tests=fresh, log=_log(quiet))
        else:
            res = evaluate_traces(logged, gates, names=names, log=_log(quiet), tests=fresh)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID if team else EXIT_USAGE) from None
    text = render_team(res) if team else render_summary(res)
    if out is not None:
        try:
            written = write_results(res, text, out, pareto=not team)
        except OSError as exc:
            raise fail(f"cannot write the results to {out}: {exc.strerror or exc}") from None
        console.print(f"wrote {out}/ ({', '.join(written)})", markup=False)
    console.print(text, markup=False, highlight=False, soft_wrap=True)
