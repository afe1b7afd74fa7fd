"""Issue 34, candidates beyond the flagged turn: the orchestrator's instructions on a Magentic-One run,
the later fabricated result after an earlier harmless failure, the features that say so, and the
Platt maps that calibrate the learned scorer's confidence."""

from __future__ import annotations

import numpy as np

from orchestrace.blame import blame
from orchestrace.blame._features import FEATURES, candidates
from orchestrace.blame._scorer import Scorer, brier, fit_platt, platt
from orchestrace.importers.chat import from_doc

LEDGER = ('Updated Ledger:\n{"is_request_satisfied": {"reason": "no", "answer": false}, "is_in_loop": '
          '{"reason": "the same page again", "answer": true}, "is_progress_being_made": {"reason": "stuck", '
          '"answer": false}, "next_speaker": {"reason": "retry", "answer": "WebSurfer"}}')


def _scorer(**w: float) -> Scorer:
    """A scorer that weighs only the named features (both families), temperature 1, no Platt map."""
    vec = np.array([w.get(f, 0.0) for f in FEATURES])
    return Scorer(FEATURES, {"chat": vec, "ledger": vec}, {"chat": 1.0, "ledger": 1.0}, {"chat": 1.0, "ledger": 1.0})


def _col(c: object, name: str) -> list[float]:
    return [float(v) for v in c.x[:, FEATURES.index(name)]]  # type: ignore[attr-defined]


def test_orchestrator_plans_and_instructions_are_candidates_on_a_magentic_one_run() -> None:
    hist = [{"role": "human", "content": "find the opening hours"},
            {"role": "Orchestrator (thought)", "content": "Plan: WebSurfer searches the wrong city's site."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Search the Springfield, Ohio site."},
            {"role": "WebSurfer", "content": "I typed 'Springfield hours' into the search box."},
            {"role": "Orchestrator (thought)", "content": LEDGER},
            {"role": "Orchestrator (-> WebSurfer)", "content": "Search again."},
            {"role": "WebSurfer", "content": "I typed 'Springfield hours' into the search box."},
            {"role": "Orchestrator (thought)", "content": LEDGER},
            {"role": "Assistant", "content": "The hours are 9 to 5."}]
    (tr,), _ = from_doc({"history": hist, "is_corrected": False}, "m.json", content="keep")
    c = candidates(tr)
    assert c.family == "ledger"
    steps = {t.step: t.agent for t in c.turns}
    assert 0 not in steps  # the person's task statement is no candidate
    assert steps[1] == steps[2] == "Orchestrator"  # the plan and the instruction are candidates
    inst = [t.step for t, v in zip(c.turns, _col(c, "is_instruction"), strict=True) if v]
    assert inst == [2, 5]
    # the instruction right before the flagged worker turn precedes the failure
    before = [t.step for t, v in zip(c.turns, _col(c, "orch_before_failure"), strict=True) if v]
    assert 2 in before
    # the worker turns the next ledger calls a stall, and the fixed rule, which blames the worker's streak
    stall = [t.step for t, v in zip(c.turns, _col(c, "ledger_stall_next"), strict=True) if v]
    assert stall == [3, 6]
    assert blame(tr).decisive.agent == "WebSurfer"  # type: ignore[union-attr]
    # a scorer that weighs the orchestrator's instructions names the Orchestrator at its instruction's step
    r = blame(tr, method="learned", scorer=_scorer(orch_before_failure=4.0, is_instruction=1.0))
    assert r.decisive is not None and (r.decisive.agent, r.decisive.step) == ("Orchestrator", 2)
    assert r.runner_up is not None and r.runner_up.agent != "Orchestrator"


def _fabricated_run() -> object:
    hist = [{"name": "Planner_Expert", "content": "Task: how many stars does the repository have? Plan: fetch it."},
            {"name": "Coder_Expert", "content": "```python\nprint(requests.get(URL).json()['stars'])\n```"},
            {"name": "Computer_terminal",
             "content": "exitcode: 1 (execution failed)\nCode output: NameError: name 'requests' is not defined"},
            {"name": "Coder_Expert", "content": "I forgot the import.\n```python\nimport requests\nprint(1)\n```"},
            {"name": "Computer_terminal", "content": "exitcode: 0 (execution succeeded)\nCode output: 403"},
            {"name": "Data_Expert", "content": "I cannot access the API. Let's assume the repository has 1520 stars, "
                                               "a typical value. The answer is 1520."},
            {"name": "Verification_Expert", "content": "I agree, the answer is 1520. TERMINATE"}]
    (tr,), _ = from_doc({"history": hist, "is_correct": False}, "f.json", content="keep")
    return tr


def test_the_later_fabricated_result_is_a_candidate_with_the_features_that_say_so() -> None:
    tr = _fabricated_run()
    c = candidates(tr)  # type: ignore[arg-type]
    row = {t.step: k for k, t in enumerate(c.turns)}
    fab = row[5]
    for name in ("fabrication_cue", "giving_up_cue", "since_fail_2", "introduces_final"):
        assert _col(c, name)[fab] == 1.0, name
    assert _col(c, "since_fail_1")[row[3]] == 1.0 and _col(c, "since_fail_1")[fab] == 0.0
    assert _col(c, "before_first_fail")[row[1]] == 1.0
    assert _col(c, "ev_strong_origin")[row[1]] == 1.0  # the harmless failure is still the rule's origin
    assert blame(tr).decisive.step == 1  # type: ignore[arg-type,union-attr]  # the fixed rule: earliest error
    r = blame(tr, method="learned", scorer=_scorer(fabrication_cue=2.0, since_fail_2=1.0, ev_strong_origin=1.0))  # type: ignore[arg-type]
    assert r.decisive is not None and (r.decisive.agent, r.decisive.step) == ("Data_Expert", 5)


def test_platt_maps_are_fitted_and_applied_to_the_confidence() -> None:
    rng = np.random.default_rng(7)
    conf = rng.uniform(0.5, 0.99, 300)
    hit = (rng.uniform(size=300) < conf - 0.3).astype(float)  # over-confident by 0.3
    a, b = fit_platt(conf.tolist(), hit.tolist())
    cal = [platt(float(c), a, b) for c in conf]
    assert brier(cal, hit.tolist()) < brier(conf.tolist(), hit.tolist())
    assert abs(float(np.mean(cal)) - float(hit.mean())) < abs(float(conf.mean()) - float(hit.mean()))
    assert fit_platt([], []) == (1.0, 0.0)
    tr = _fabricated_run()
    s = _scorer(ev_strong_origin=2.0)
    base = blame(tr, method="learned", scorer=s).decisive  # type: ignore[arg-type]
    damped = Scorer(s.features, s.weights, s.temperature, s.l2, platt={"chat": (1.0, -2.0, 1.0, -2.0)})
    low = blame(tr, method="learned", scorer=damped).decisive  # type: ignore[arg-type]
    assert base is not None and low is not None and (low.agent, low.step) == (base.agent, base.step)
    assert abs(low.confidence - platt(base.confidence, 1.0, -2.0)) < 5e-3  # (both rounded to 3 places)
    assert low.confidence < base.confidence and (low.step_confidence or 0) < (base.step_confidence or 1)
