"""One call evaluates logged runs: every rule and every fitted run on a corpus's test tasks and on fresh collections.

:func:`evaluate_logged` is what ``orchestrace eval --traces CORPUS [RUN …] [--test FRESH …]`` runs — the
command line only parses its arguments, calls it and prints. It reads the corpus (a vote corpus or a team
corpus: a vote is a team of W identical members), the fitted runs (stop gates, or joint team policies), and
every fresh collection, each held to the contract once; it warns about a gate or a team policy fitted on another
corpus; it
values every rule of the family and every run exactly, with the paired claims; and it returns a typed
:class:`LoggedEvaluation` (the results and the Markdown summary), which :meth:`LoggedEvaluation.write`
writes to a folder.

Errors: a path that does not exist → :class:`FileNotFoundError` (an ``OSError``); an invalid corpus →
:class:`~orchestrace.errors.TraceInvalidError` (located problems) or :class:`~orchestrace.errors.ConfigError`;
an invalid run file or a fresh collection that does not fit the corpus → :class:`~orchestrace.errors.ConfigError`.

>>> import tempfile
>>> from pathlib import Path
>>> from orchestrace.offline import make_synthetic_logged, save_runs
>>> with tempfile.TemporaryDirectory() as d:
...     corpus = save_runs(make_synthetic_logged(T=200, R=3, W=2, seed=0), Path(d) / "runs.npz")
...     ev = evaluate_logged(corpus)
>>> ev.kind, ev.summary.startswith("# Stop rules on logged runs"), ev.results["corpus"]["tasks"]["test"] > 0
('vote', True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..logged.corpus import CheckedRuns
    from ..logged.runs import LoggedRuns

__all__ = ["LoggedEvaluation", "evaluate_logged"]


@dataclass(frozen=True)
class LoggedEvaluation:
    """What :func:`evaluate_logged` found.

    ``kind``: ``"vote"`` (stop gates on a vote corpus) or ``"team"`` (joint team policies on a team corpus);
    ``results``: what ``results.json`` holds (rules chosen on validation, each run's returns with 95 % CIs,
    the claims, each fresh collection); ``summary``: the Markdown summary the command line prints.
    """

    kind: Literal["vote", "team"]
    results: dict[str, Any]
    summary: str

    def write(self, out: Path) -> list[str]:
        """Write ``results.json``, ``summary.md`` (and, for a vote corpus, ``pareto.png`` when matplotlib is
        installed) into ``out`` (created), atomically; the names written."""
        from .runfiles import write_results

        return write_results(self.results, self.summary, out, pareto=self.kind == "vote")


def _read(path: Path, note: Callable[[str, str], None], *, fresh: bool = False) -> CheckedRuns:
    """The corpus (``fresh``: a ``--test`` collection) read and checked, the one check of this call."""
    from ..logged.corpus import CheckedRuns
    from .runfiles import load_corpus

    if not (path.exists() or path.is_symlink()):  # a dangling link or a loop: the loader says which
        what = "--test collection" if fresh else "corpus"
        raise FileNotFoundError(f"{path}: no such {what} (a directory of logged traces, or an .npz of logged runs)")
    runs, notes = load_corpus(path, fresh=fresh)
    for n in notes:
        note(f"{path}: {n}", "note")
    return CheckedRuns(runs, tuple(notes))


def evaluate_logged(corpus: str | Path, runs: Sequence[str | Path] = (), *, tests: Sequence[str | Path] = (),
                    log: Callable[[str], None] | None = None,
                    note: Callable[[str, str], None] | None = None) -> LoggedEvaluation:
    """Value every rule and every fitted run (``runs``: run folders or their gate / team-policy files) exactly
    on ``corpus``'s test tasks and on every fresh collection in ``tests``.

    ``log`` receives the progress lines; ``note(message, kind)`` the notes (``kind`` ``"note"``: what a
    reader excluded) and warnings (``kind`` ``"warning"``: a gate or team policy fitted on another corpus), in the order
    they arise. See the module docstring for the errors.
    """
    from .logged import evaluate_traces
    from .logged_team import evaluate_team, render_team
    from .runfiles import foreign_gates, load_gates, load_team_policies, run_names
    from .summary import render as render_summary

    say = log or (lambda s: None)
    tell = note or (lambda s, kind: None)
    corpus, paths, fresh_paths = Path(corpus), [Path(r) for r in runs], [Path(t) for t in tests]
    logged = _read(corpus, tell)
    team = bool(logged.runs.members)

    def read_fresh() -> list[tuple[str, LoggedRuns | CheckedRuns]]:
        return [(str(t), _read(t, tell, fresh=True)) for t in fresh_paths]

    fingerprint = logged.runs.meta.get("fingerprint")
    fingerprint = fingerprint if isinstance(fingerprint, str) else None
    if team:  # the runs, then --test
        policies = load_team_policies(paths)
        for warning in foreign_gates(paths, policies, fingerprint, corpus):
            tell(warning, "warning")
        res = evaluate_team(logged, policies, names=run_names(paths, "team_policy.json"), tests=read_fresh(), log=say)
        return LoggedEvaluation("team", res, render_team(res))
    fresh = read_fresh()  # a vote corpus reads --test before the runs
    gates = load_gates(paths)
    for warning in foreign_gates(paths, gates, fingerprint, corpus):
        tell(warning, "warning")
    res = evaluate_traces(logged, gates, names=run_names(paths, "gate.json"), log=say, tests=fresh)
    return LoggedEvaluation("vote", res, render_summary(res))
