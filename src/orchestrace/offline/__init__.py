"""Learning when to stop from logged real runs, valued exactly offline (issue 25).

A vote loop logged *always-continue* (every round's attempts kept, every round's aggregate
graded) holds the outcome of every stopping time, every narrower width and every aggregation
rule. This package fits and evaluates the stop (O5) from such logs alone — no simulator::

    LoggedRuns (T tasks × R rounds × W attempts)  ──►  valuation: return of stopping at each check
        │                                                   │
        ├─► rules: budgets, vote share, Adaptive-Consistency (Beta, Dirichlet), ESC, CISC, DeepConf,
        │          price-aware logistic, fitted same-feature ridge/logistic — × every configuration and
        │          aggregation (family_candidates / value_candidates, one list the evaluations iterate)
        ├─► fit_gate: Longstaff–Schwartz backward induction, linear → quadratic → MLP, chosen on validation
        └─► evaluate_traces: every rule tuned on validation, valued on test, claims with paired CIs
                                                            │
    StopGate.load(path).should_stop(answers_so_far, price=…)  ◄── the fitted gate in user code

A **team** corpus (``LoggedRuns.members``: one member kind per column, every member called every
round) values every policy over {whom to call each round (O1, O2), the reviser or not (O3), how
to aggregate (O4), when to stop (O5)} exactly (:func:`rollout`); :func:`fit_team_policy` learns
the joint policy by backward induction over the per-round joint action, :class:`TeamPolicy`
deploys it (``decide(rounds, price=…, cell=…)`` once per round) and :func:`evaluate_team` judges
it against every fixed team configuration × stop rule and the defaults people run.

CLI: ``orchestrace train --from-traces CORPUS -o RUN``; ``orchestrace eval --traces CORPUS [RUN …]
[--test FRESH …]`` (a team corpus dispatches to the joint policy) is one call:
:func:`evaluate_logged` (``evaluate_logged(corpus, runs, tests=[…])`` → :class:`LoggedEvaluation`).

>>> runs = make_synthetic_logged(T=200, R=3, W=2, seed=0)
>>> gate, report = fit_gate(runs, classes=("linear",))
>>> isinstance(gate.should_stop([["7", "7"]], price=0.05), bool)
True
"""

from ..evaluation.family import (
    FAMILIES,
    Candidate,
    FeatureRule,
    columns_of,
    configs,
    family_candidates,
    value_candidates,
)
from ..evaluation.logged import evaluate_traces, fresh_mismatch
from ..evaluation.logged_demo import ci_text as demo_ci_text
from ..evaluation.logged_demo import demo_section, team_claims, team_demo_section
from ..evaluation.logged_demo import verdict as demo_verdict
from ..evaluation.logged_eval import LoggedEvaluation, evaluate_logged
from ..evaluation.logged_team import evaluate_team, render_team
from ..evaluation.summary import render as render_summary
from ..evaluation.summary import write_pareto
from ..logged.corpus import check_runs, check_team_runs, read_corpus, save_runs
from ..logged.readers import read_manifest
from ..logged.runs import (
    LoggedRuns,
    load_logged_runs,
    logged_from_codes,
    make_synthetic_logged,
    split_of,
)
from ..logged.team_synth import make_synthetic_team
from ..logged.value import (
    AGGREGATIONS,
    Valuation,
    continuation_values,
    first_stop,
    task_prices,
    valuation,
)
from ..policies.features import FEATURES
from ..policies.gate import StopDecision, StopGate
from ..policies.rules import (
    CISC,
    ESC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    DeepConf,
    FixedBudget,
    PriceLogistic,
    StopRule,
    ThresholdRule,
    VoteShare,
    VoteState,
)
from ..policies.team import TeamArrays, TeamState, rollout
from ..policies.team_policy import TeamDecision, TeamPolicy
from ..trainers.fitted_q import fit_gate, fit_price_logistic
from ..trainers.team_fitted_q import fit_team_policy

__all__ = [
    "AGGREGATIONS",
    "CISC",
    "ESC",
    "FAMILIES",
    "FEATURES",
    "AdaptiveBeta",
    "AdaptiveDirichlet",
    "Candidate",
    "DeepConf",
    "FeatureRule",
    "FixedBudget",
    "LoggedEvaluation",
    "LoggedRuns",
    "PriceLogistic",
    "StopDecision",
    "StopGate",
    "StopRule",
    "ThresholdRule",
    "TeamArrays",
    "TeamDecision",
    "TeamPolicy",
    "TeamState",
    "Valuation",
    "VoteShare",
    "VoteState",
    "check_runs",
    "columns_of",
    "continuation_values",
    "configs",
    "check_team_runs",
    "demo_section",
    "evaluate_logged",
    "evaluate_team",
    "evaluate_traces",
    "family_candidates",
    "first_stop",
    "fit_gate",
    "fit_price_logistic",
    "fresh_mismatch",
    "fit_team_policy",
    "team_demo_section",
    "team_claims",
    "demo_ci_text",
    "demo_verdict",
    "load_logged_runs",
    "logged_from_codes",
    "make_synthetic_logged",
    "make_synthetic_team",
    "read_corpus",
    "read_manifest",
    "render_summary",
    "render_team",
    "rollout",
    "save_runs",
    "split_of",
    "task_prices",
    "valuation",
    "value_candidates",
    "write_pareto",
]
