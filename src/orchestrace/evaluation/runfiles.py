"""The files of the stop learned from logs: a corpus read to the contract, a fitted run, an evaluation.

``orchestrace train --from-traces CORPUS -o RUN`` and ``orchestrace eval --traces CORPUS [RUN …]``
are these functions in a row:

* :func:`load_corpus` — :func:`~orchestrace.offline.read_corpus`, then the one corpus check
  (:func:`~orchestrace.offline.check_runs`: a vote corpus is a team of identical members); the
  exclusions it made come back as notes.
* :func:`fit_run` — the stop gate (:func:`~orchestrace.offline.fit_gate`) or, for a team corpus,
  the joint policy (:func:`~orchestrace.offline.fit_team_policy`), saved in ``RUN`` as
  ``gate.json`` / ``team_policy.json`` with the corpus and its exclusions in its ``meta``, and the
  fit's report in ``RUN/fit.json``; one line that says what was learned.
* :func:`load_gates` / :func:`load_team_policies` / :func:`run_names` / :func:`foreign_gates` — the gate or
  policy files to evaluate, their names in the tables, and the gates fitted on another corpus.
* :func:`write_results` — ``results.json``, ``summary.md`` (and ``pareto.png`` when matplotlib is
  there) into an output folder, atomically.

>>> import tempfile, pathlib
>>> from orchestrace.offline import make_synthetic_logged
>>> run = pathlib.Path(tempfile.mkdtemp())
>>> done = fit_run(make_synthetic_logged(T=120, R=3, W=2, seed=0), [], "corpus", run, seed=0, classes=("linear",))
>>> done.path.name, sorted(p.name for p in run.iterdir())
('gate.json', ['fit.json', 'gate.json'])
>>> run_names([pathlib.Path("a/gate.json"), pathlib.Path("b")], "gate.json")
['a', 'b']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..logged.runs import LoggedRuns
    from ..policies.gate import StopGate
    from ..policies.team_policy import TeamPolicy
    from ..trainers.fit_steps import FitReport

__all__ = ["FitRun", "fit_run", "fit_simulator_file", "foreign_gates", "load_corpus", "load_gates", "load_split",
           "load_team_policies", "run_names", "write_results"]


def load_corpus(corpus: Path, *, fresh: bool = False) -> tuple[LoggedRuns, list[str]]:
    """The corpus's logged runs held to the contract, and the notes of what was excluded.

    ``fresh``: a ``--test`` collection, valued on all its tasks (no splits needed). Raises the
    loader's :class:`~orchestrace.errors.TraceInvalidError` (located problems) or ConfigError.
    """
    from ..logged.corpus import check_runs, read_corpus

    return check_runs(read_corpus(corpus), where=str(corpus), splits=not fresh)


@dataclass(frozen=True)
class FitRun:
    """What :func:`fit_run` wrote: the gate or policy file, the fit's report, and a one-line summary."""

    path: Path
    report: FitReport
    message: str


def _fit_report(report: FitReport, notes: list[str], seed: int, corpus: str) -> bytes:
    return json.dumps({**report, "exclusions": notes, "seed": seed, "corpus": corpus}, indent=1,
                      default=float).encode()


def fit_run(runs: LoggedRuns, notes: list[str], corpus: str | Path, out: Path, *, seed: int = 0,
            log: Callable[[str], None] = lambda s: None, **fit_options: Any) -> FitRun:
    """Fit the corpus's policy and save it with ``fit.json`` in ``out``: the stop gate of a vote corpus
    (:func:`~orchestrace.trainers.fitted_q.fit_gate`), the joint policy of a team corpus
    (:func:`~orchestrace.trainers.team_fitted_q.fit_team_policy`); either way its ``meta`` records the
    corpus (path, fingerprint) and its exclusions.

    ``notes``: the corpus's exclusions (from :func:`load_corpus`), kept in the file's ``meta`` and in
    ``fit.json``. ConfigError when the corpus cannot be fitted; OSError when ``out`` cannot be written.
    """
    from ..core.io import atomic_write
    from ..trainers.fitted_q import fit_gate
    from ..trainers.team_fitted_q import fit_team_policy

    # the two fitters of one interface (trainers.fit_steps.LoggedFitter): member kinds per column → the joint
    # policy; one kind → the stop gate (the vote's choices are only "call again" and "stop")
    policy: StopGate | TeamPolicy
    report: FitReport
    if runs.members:
        policy, report = fit_team_policy(runs, seed=seed, log=log, **fit_options)
    else:
        policy, report = fit_gate(runs, seed=seed, log=log, **fit_options)
    policy.meta["corpus_path"] = str(corpus)
    policy.meta["corpus_fingerprint"] = runs.meta.get("fingerprint")
    policy.meta["exclusions"] = notes
    path = policy.save(out)
    atomic_write(out / "fit.json", _fit_report(report, notes, seed, str(corpus)))
    return FitRun(path, report, _fit_message(runs, policy, report["chosen"], report["by_class"]))


def _fit_message(runs: LoggedRuns, policy: StopGate | TeamPolicy, c: dict[str, Any], by_class: dict[str, float]
                 ) -> str:
    """The one line that says what was learned, from how many runs, and what won on validation."""
    from ..policies.team_policy import TeamPolicy

    n = {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")}
    by = ", ".join(f"{k} {v:.4f}" for k, v in by_class.items())
    if isinstance(policy, TeamPolicy):
        return (f"learned the joint team policy ({', '.join(policy.members)}) from {n['train']} training runs "
                f"({n['validation']} validation chose the class; {n['test']} test held out); won on validation: "
                f"{c['class']} (reg {c['reg']:g}) — validation return {c['validation_return']:.4f} (by class: {by})")
    return (f"learned the stop from {n['train']} training runs ({n['validation']} validation runs chose the model; "
            f"{len(runs.task_ids) - n['train'] - n['validation']} test runs held out); won on validation: "
            f"{c['class']} (reg {c['reg']:g}) at width {c['width']}, {c['aggregation']} vote — validation return "
            f"{c['validation_return']:.4f} (by class: {by})")


def load_gates(paths: Sequence[Path]) -> list[StopGate]:
    """The stop gates of ``paths`` (files or run directories); ConfigError for a bad one."""
    from ..policies.gate import StopGate

    return [StopGate.load(p) for p in paths]


def load_team_policies(paths: Sequence[Path]) -> list[TeamPolicy]:
    """The joint team policies of ``paths`` (files or run directories); ConfigError for a bad one."""
    from ..policies.team_policy import TeamPolicy

    return [TeamPolicy.load(p) for p in paths]



def run_names(paths: Sequence[Path], default_file: str) -> list[str]:
    """Table names of the runs: the run directory's name (a file's own name unless it is ``default_file``);
    the whole paths when two names collide."""
    names = [p.name if p.name != default_file else p.parent.name for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def foreign_gates(paths: Sequence[Path], gates: Sequence[StopGate | TeamPolicy], fingerprint: str | None,
                  corpus: Path) -> list[str]:
    """A warning per gate or team policy fitted on another corpus than the one it is evaluated on (its return
    is then no held-out test)."""
    from ..policies.team_policy import TeamPolicy

    out = []
    for r, g in zip(paths, gates, strict=True):
        there = g.meta.get("corpus_fingerprint")
        if isinstance(there, str) and there != fingerprint:
            what = "team policy" if isinstance(g, TeamPolicy) else "gate"
            out.append(f"{r}: this {what} was fitted on another corpus ({str(g.meta.get('corpus_path'))[:200]}); its "
                       f"return on {corpus} is not a held-out test on the tasks it was fitted for")
    return out


def write_results(res: dict[str, Any], text: str, out: Path, *, pareto: bool = True) -> list[str]:
    """Write ``results.json`` and ``summary.md`` (and ``pareto.png`` with ``pareto``, when it can be drawn) into
    ``out`` (created), atomically; the names written."""
    from ..core.io import atomic_write
    from .summary import write_pareto

    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "results.json", json.dumps(res, indent=1, default=float).encode())
    atomic_write(out / "summary.md", text.encode())
    names = ["results.json", "summary.md"]
    pic = write_pareto(res, out / "pareto.png") if pareto else None
    return names + ([pic.name] if pic else [])


def load_split(corpus: Path, split: str = "train", *, exclude: bool = False,
               warn: Callable[[str], None] = lambda s: None) -> LoggedRuns:
    """The logged runs of a corpus's ``split`` (``all``: every task; possibly none). ``exclude`` drops bad
    runs, each exclusion counted through ``warn``, instead of refusing the corpus."""
    import warnings

    from ..logged.runs import load_logged_runs

    with warnings.catch_warnings(record=True) as caught:  # the counted exclusions: one plain line each
        warnings.simplefilter("always")
        runs = load_logged_runs(corpus, exclude=exclude)
    for w in caught:
        warn(str(w.message))
    return runs if split == "all" else runs.subset(runs.split == split)


def fit_simulator_file(runs: LoggedRuns, out: Path, *, corpus: str, split: str, n_sim: int = 1500, n_search: int = 300,
                       seed: int = 0) -> dict[str, Any]:
    """Fit the simulator's worker model to ``runs`` (:func:`load_split`) and write the fit, with the corpus and
    split it came from, to ``out`` as JSON (``collect fit-sim``); the fit."""
    from ..core.io import atomic_write
    from ..logged.simfit import fit_simulator

    fit = fit_simulator(runs, n_sim=n_sim, n_search=n_search, seed=seed)
    fit["corpus"], fit["split"] = corpus, split
    atomic_write(out, (json.dumps(fit, indent=1) + "\n").encode())
    return fit
