"""The demo's learned-from-traces sections: the committed real corpora, no model needed.

:func:`demo_section` fits the stop gate on the committed ``smollm2-v1`` corpus (1,509 logged
SmolLM2-135M vote loops) exactly as ``orchestrace train --from-traces`` does, values it and the
whole rule family on the corpus's test tasks and on its separately collected fresh set
(``smollm2-v1-fresh``) as ``orchestrace eval --traces … --test FRESH`` does, writes both under
``OUT/real/`` and returns the Markdown section whose first line is its headline.

:func:`team_demo_section` does the same for the team corpus (``smollm2-team-v1``, its fresh set
``smollm2-team-fresh-v1``): the joint O1–O5 policy against every (rule × fixed team) and the rule
chosen per task family, under ``OUT/real-team/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..logged.corpus import CheckedRuns
    from ..logged.runs import LoggedRuns
    from ..policies.gate import StopGate
    from ..policies.team_policy import TeamPolicy
    from ..trainers.fit_steps import FitReport

#: The policy a fitter returns (the two of the one fitter interface, trainers.fit_steps.LoggedFitter).
P = TypeVar("P", "StopGate", "TeamPolicy")

__all__ = ["DEFAULT_CORPUS", "DEFAULT_FRESH", "TEAM_CORPUS", "TEAM_FRESH", "ci_text", "demo_section", "team_claims",
           "team_demo_section", "verdict"]

_CORPORA = Path(__file__).resolve().parent.parent / "data" / "corpora"
#: The committed corpus of real runs (package data) and its fresh set (collected separately).
DEFAULT_CORPUS = _CORPORA / "smollm2-v1"
DEFAULT_FRESH = _CORPORA / "smollm2-v1-fresh"
#: The committed team corpus and its fresh set.
TEAM_CORPUS = _CORPORA / "smollm2-team-v1"
TEAM_FRESH = _CORPORA / "smollm2-team-fresh-v1"


def verdict(d: dict[str, float]) -> str:
    """``beats`` / ``ties`` / ``trails``: where a paired 95 % interval of a return difference lies.

    >>> verdict({"lo": 0.01, "hi": 0.2}), verdict({"lo": -0.01, "hi": 0.2}), verdict({"lo": -0.2, "hi": -0.01})
    ('beats', 'ties', 'trails')
    """
    return "beats" if d["lo"] > 0 else ("ties" if d["hi"] >= 0 else "trails")


def ci_text(d: dict[str, float], digits: int = 4) -> str:
    return f"{d['mean']:+.{digits}f} [{d['lo']:+.{digits}f}, {d['hi']:+.{digits}f}]"


def _fresh(fresh: str | Path | None) -> list[tuple[str, LoggedRuns | CheckedRuns]]:
    """The fresh set as ``evaluate_*``'s ``tests``, checked once (none when ``fresh`` is None or not installed)."""
    if fresh is None or not Path(fresh).exists():
        return []
    from ..logged.corpus import CheckedRuns, check_runs, read_corpus

    runs, notes = check_runs(read_corpus(Path(fresh)), where=str(fresh), splits=False)  # a vote is a team of one kind
    return [(Path(fresh).name, CheckedRuns(runs, tuple(notes)))]


def _fit(corpus: Path, what: str, fitter: Callable[..., tuple[P, FitReport]], run: Path, *, seed: int,
         log: Callable[[str], None]) -> tuple[CheckedRuns, P]:
    """The committed corpus read and checked once, its policy fitted (the gate or the joint team policy: one fitter
    interface) and saved in ``run`` with its ``fit.json`` (the fit report, exclusions, seed, corpus)."""
    from ..errors import ConfigError
    from ..logged.corpus import CheckedRuns, check_runs, read_corpus

    if not corpus.exists():
        raise ConfigError(f"{corpus}: the committed {what} is missing from this installation")
    runs, notes = check_runs(read_corpus(corpus), where=str(corpus))  # a team corpus: the team's rules
    policy, fit = fitter(runs, seed=seed, log=log)
    policy.save(run)
    (run / "fit.json").write_text(json.dumps({**fit, "exclusions": notes, "seed": seed, "corpus": str(corpus)},
                                             indent=1, default=float), encoding="utf-8")
    return CheckedRuns(runs, tuple(notes)), policy


def demo_section(out: str | Path, *, corpus: str | Path = DEFAULT_CORPUS, fresh: str | Path | None = DEFAULT_FRESH,
                 seed: int = 0, log: Callable[[str], None] = lambda s: None) -> str:
    """Fit and evaluate the stop on the real corpus (and its fresh set); write ``OUT/real/``; return Markdown.

    The first line is a one-sentence headline (the demo prints it) — on the fresh tasks when
    ``fresh`` exists, else on the corpus's test split; the rest is the ``eval --traces``
    summary with its claims and their rules.

    >>> from orchestrace.evaluation.logged_demo import DEFAULT_CORPUS
    >>> (DEFAULT_CORPUS / "manifest.json").exists()
    True
    """
    from ..trainers.fitted_q import fit_gate
    from .logged import evaluate_traces
    from .summary import render, write_pareto

    corpus, real = Path(corpus), Path(out) / "real"
    runs, gate = _fit(corpus, "corpus of real runs", fit_gate, real / "run", seed=seed, log=log)
    res = evaluate_traces(runs, [gate], names=["learned"], log=log, tests=_fresh(fresh))
    text = render(res)
    (real / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    (real / "summary.md").write_text(text, encoding="utf-8")
    write_pareto(res, real / "pareto.png")
    g = res["gates"]["learned"]
    where = f"{corpus.name}: {res['corpus']['tasks']['test']} test-split tasks"
    for fname, f in res.get("fresh", {}).items():  # the fresh set, when there is one, is the headline
        g, where = {**f["gates"]["learned"], "model_class": g["model_class"]}, f"{fname}: {f['tasks']} fresh tasks"
    d = g["claims"]["beats_best_rule"]["return_diff"]
    fc = g["claims"]["fewer_calls_at_equal_accuracy"]
    calls = (f"{100 * fc['call_saving']['mean']:.0f} % fewer LLM calls than {fc['baseline']} at equal accuracy"
             if fc["met"] else f"{100 * fc['call_saving']['mean']:.0f} % fewer LLM calls than {fc['baseline']}, but not "
             "at equal accuracy")
    head = (f"**Learned from real traces** ({where}; SmolLM2-135M): the gate fitted from the "
            f"logs alone ({g['model_class']}) {verdict(d)} the best validation-tuned rule of the whole family "
            f"({res['best_rule']}), return {ci_text(d)}; {calls}.")
    body = text.replace("# Stop rules on logged runs (exact offline evaluation)",
                        "## Learned from real LLM traces (exact offline evaluation)", 1)
    return head + "\n\n" + body + "\n\nFiles: `real/` (results.json, summary.md, pareto.png, run/gate.json).\n"


def team_demo_section(out: str | Path, *, corpus: str | Path = TEAM_CORPUS, fresh: str | Path | None = TEAM_FRESH,
                      seed: int = 0, log: Callable[[str], None] = lambda s: None) -> str:
    """Fit the joint team policy on the team corpus, evaluate it (and its fresh set); write ``OUT/real-team/``.

    Exactly ``orchestrace train --from-traces CORPUS`` then ``eval --traces CORPUS RUN --test FRESH``.
    Returns Markdown whose first line is a one-sentence headline (the fresh set's numbers when
    there is one): the policy against the best (rule × fixed team) and against the rule chosen
    per task family on validation — each verdict from its paired 95 % interval, a tie as a tie.

    >>> from orchestrace.evaluation.logged_demo import TEAM_CORPUS, TEAM_FRESH
    >>> (TEAM_CORPUS / "manifest.json").exists(), (TEAM_FRESH / "manifest.json").exists()
    (True, True)
    """
    from ..trainers.team_fitted_q import fit_team_policy
    from .logged_team import evaluate_team, render_team

    corpus, real = Path(corpus), Path(out) / "real-team"
    runs, pol = _fit(corpus, "team corpus", fit_team_policy, real / "run", seed=seed, log=log)
    res = evaluate_team(runs, [pol], names=["learned"], tests=_fresh(fresh), log=log)
    res["model"] = str(runs.runs.meta.get("model") or "the logged model")
    text = render_team(res)
    (real / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    (real / "summary.md").write_text(text, encoding="utf-8")
    head = "**A real team, orchestrated from its logs** " + team_claims(res)
    body = text.replace("# Team policy vs fixed teams", "## A real team, orchestrated from its logs: the joint "
                        "policy vs fixed teams", 1)
    return head + "\n\n" + body + "\n\nFiles: `real-team/` (results.json, summary.md, run/team_policy.json).\n"


def team_claims(res: dict[str, Any]) -> str:
    """The team result in one sentence, from :func:`~orchestrace.offline.evaluate_team`'s result (plus
    ``model``): the last set evaluated (the fresh set when there is one)."""
    name, s = list(res["sets"].items())[-1]
    c = s["policies"]["learned"]["claims"]
    best, cell, fc = c["beats_best_rule"], c["beats_best_rule_per_cell"], c["fewer_calls_at_equal_accuracy"]
    calls = (f" with {100 * fc['call_saving']['mean']:.0f} % fewer LLM calls than {fc['baseline']} at equal accuracy"
             if fc["met"] else "")
    members = ", ".join(res["corpus"]["members"])
    return (f"({res.get('model', 'the logged model')}; members {members}; {s['tasks']} "
            f"{'fresh ' if name != 'test' else ''}tasks): the joint policy learned from the logs "
            f"{verdict(best['return_diff'])} the best (rule × fixed team), `{best['baseline']}`, return "
            f"{ci_text(best['return_diff'], 3)}{calls}; it {verdict(cell['return_diff'])} the rule chosen per task "
            f"family on validation, return {ci_text(cell['return_diff'], 3)}.")
