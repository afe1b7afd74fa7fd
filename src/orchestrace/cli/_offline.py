"""``orchestrace train --from-traces CORPUS`` and ``orchestrace eval --traces CORPUS [RUN …] [--test FRESH …]``.

The stop learned and evaluated from logged real runs only (:mod:`orchestrace.offline`); the
options live on the existing ``train`` / ``eval`` commands (``cli/_learn.py`` dispatches here).
Exit codes: 0 ok; 1 the corpus or a gate file is invalid; 2 usage or I/O (a missing corpus, an
option that does not apply, an unwritable output).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._app import EXIT_INVALID, EXIT_USAGE, console, fail, note

__all__: list[str] = []


def _read(corpus: Path, *, fresh: bool = False) -> Any:
    from ..errors import OrchestraceError
    from ..offline import check_runs, check_team_runs, read_corpus

    what = "--test collection" if fresh else "corpus"
    if not (corpus.exists() or corpus.is_symlink()):  # a dangling link or a loop: the loader says which
        raise fail(f"{corpus}: no such {what} (a directory of logged traces, or an .npz of logged runs)")
    try:
        raw = read_corpus(corpus)
        if raw.members:  # a team corpus (member kinds per column): the joint policy's checks
            runs, notes = check_team_runs(raw, where=str(corpus), need_splits=not fresh)
        else:
            runs, notes = check_runs(raw, where=str(corpus), splits=not fresh)
    except OrchestraceError as exc:  # ConfigError, or the loader's TraceInvalidError with located problems
        raise fail(str(exc), problems=getattr(exc, "problems", ()), code=EXIT_INVALID) from None
    for n in notes:
        note(f"{corpus}: {n}")
    return runs, notes


def train_from_traces(corpus: Path, out: Path, *, seed: int, ignored: list[str], quiet: bool) -> None:
    """Fit the stop gate from the corpus's logged paths; write RUN/gate.json and RUN/fit.json."""
    from ..errors import ConfigError, MissingExtraError
    from ..offline import fit_gate

    if ignored:
        raise fail(f"--from-traces learns the stop from logged runs; {', '.join(ignored)} do(es) not apply "
                   "(only --out, --seed and --quiet do)")
    runs, notes = _read(corpus)
    log = (lambda s: None) if quiet else (lambda s: console.print(s, markup=False, highlight=False))
    if runs.members:
        return _train_team(runs, notes, corpus, out, seed=seed, log=log)
    try:
        gate, report = fit_gate(runs, seed=seed, log=log)
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    from ..core.io import atomic_write

    gate.meta["corpus_path"] = str(corpus)
    gate.meta["corpus_fingerprint"] = runs.meta.get("fingerprint")
    gate.meta["exclusions"] = notes
    try:
        path = gate.save(out)
        atomic_write(out / "fit.json", json.dumps({**report, "exclusions": notes, "seed": seed, "corpus": str(corpus)},
                                                  indent=1, default=float).encode())
    except OSError as exc:
        raise fail(f"cannot write the run to {out}: {exc.strerror or exc}") from None
    c = report["chosen"]
    by = ", ".join(f"{k} {v:.4f}" for k, v in report["by_class"].items())
    n_tr, n_va = int((runs.split == "train").sum()), int((runs.split == "validation").sum())
    console.print(f"learned the stop from {n_tr} training runs ({n_va} validation runs chose the model; "
                  f"{len(runs.task_ids) - n_tr - n_va} test runs held out); won on validation: {c['class']} "
                  f"(reg {c['reg']:g}) at width {c['width']}, {c['aggregation']} vote — validation return "
                  f"{c['validation_return']:.4f} (by class: {by})", markup=False)
    console.print(f"run: {out} ({path.name}, fit.json)", markup=False)


def _train_team(runs: Any, notes: list[str], corpus: Path, out: Path, *, seed: int, log: Any) -> None:
    """The joint team policy (a corpus with member kinds): RUN/team_policy.json and RUN/fit.json."""
    from ..errors import ConfigError, MissingExtraError
    from ..offline import fit_team_policy

    try:
        pol, report = fit_team_policy(runs, seed=seed, log=log)
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    pol.meta["corpus_path"] = str(corpus)
    pol.meta["exclusions"] = notes
    try:
        path = pol.save(out)
        (out / "fit.json").write_text(json.dumps({**report, "exclusions": notes, "seed": seed, "corpus": str(corpus)},
                                                 indent=1, default=float), encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write the run to {out}: {exc.strerror or exc}") from None
    c = report["chosen"]
    by = ", ".join(f"{k} {v:.4f}" for k, v in report["by_class"].items())
    n = {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")}
    console.print(f"learned the joint team policy ({', '.join(pol.members)}) from {n['train']} training runs "
                  f"({n['validation']} validation chose the class; {n['test']} test held out); "
                  f"won on validation: {c['class']} (reg {c['reg']:g}) — validation return {c['validation_return']:.4f} "
                  f"(by class: {by})", markup=False)
    console.print(f"run: {out} ({path.name}, fit.json)", markup=False)


def _eval_team(logged: Any, corpus: Path, runs: list[Path], out: Path | None, *, tests: list[Path], log: Any) -> None:
    from ..errors import ConfigError
    from ..offline import TeamPolicy, evaluate_team, render_team

    try:
        pols = [TeamPolicy.load(r) for r in runs]
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    names = [r.name if r.name != "team_policy.json" else r.parent.name for r in runs]
    if len(set(names)) != len(names):
        names = [str(r) for r in runs]
    fresh = [(str(t), _read(t, fresh=True)[0]) for t in tests]
    try:
        res = evaluate_team(logged, pols, names=names, tests=fresh, log=log)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    text = render_team(res)
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
            (out / "summary.md").write_text(text, encoding="utf-8")
        except OSError as exc:
            raise fail(f"cannot write the results to {out}: {exc.strerror or exc}") from None
        console.print(f"wrote {out}/ (results.json, summary.md)", markup=False)
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def eval_traces(corpus: Path, runs: list[Path], out: Path | None, *, quiet: bool, tests: list[Path] | None = None
                ) -> None:
    """Value every rule and every gate run exactly on the corpus's test tasks and on every fresh collection
    (``--test``); print the summary (a team corpus: the joint policy's evaluation)."""
    from ..errors import ConfigError
    from ..offline import StopGate, evaluate_traces, render_summary, write_pareto

    logged, _ = _read(corpus)
    if logged.members:
        log = (lambda s: None) if quiet else (lambda s: console.print(s, markup=False, highlight=False))
        return _eval_team(logged, corpus, runs, out, tests=list(tests or []), log=log)
    fresh = [(str(t), _read(t, fresh=True)[0]) for t in tests or []]
    try:
        gates = [StopGate.load(r) for r in runs]
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    from ..core.io import atomic_write

    here = logged.meta.get("fingerprint")
    for r, g in zip(runs, gates, strict=True):
        there = g.meta.get("corpus_fingerprint")
        if isinstance(there, str) and there != here:
            note(f"{r}: this gate was fitted on another corpus ({str(g.meta.get('corpus_path'))[:200]}); its return "
                 f"on {corpus} is not a held-out test on the tasks it was fitted for", kind="warning")
    names = [r.name if r.name != "gate.json" else r.parent.name for r in runs]
    if len(set(names)) != len(names):
        names = [str(r) for r in runs]
    log = (lambda s: None) if quiet else (lambda s: console.print(s, markup=False, highlight=False))
    try:
        res = evaluate_traces(logged, gates, names=names, log=log, tests=fresh)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None
    text = render_summary(res)
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            atomic_write(out / "results.json", json.dumps(res, indent=1, default=float).encode())
            atomic_write(out / "summary.md", text.encode())
            pic = write_pareto(res, out / "pareto.png")
        except OSError as exc:
            raise fail(f"cannot write the results to {out}: {exc.strerror or exc}") from None
        console.print(f"wrote {out}/ (results.json, summary.md{', ' + pic.name if pic else ''})", markup=False)
    console.print(text, markup=False, highlight=False, soft_wrap=True)
