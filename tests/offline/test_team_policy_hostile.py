"""Team policy files on hostile numbers (issue 41, class 8): a 400-digit integer anywhere is a located
refusal (not an OverflowError), fills and scales outside what a fit writes are refused (a lp_fill of
1e308 would silently wreck the policy's values), deep nesting is refused; what the fitter writes loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace.errors import ConfigError
from orchestrace.offline import TeamPolicy, fit_team_policy, make_synthetic_team

BIG = "9" * 400


@pytest.fixture(scope="module")
def policy_doc() -> str:
    pol, _ = fit_team_policy(make_synthetic_team(240, 3, seed=3), classes=("linear",), seed=0, histories=1)
    return json.dumps(pol.document())


def test_what_the_fitter_writes_loads(policy_doc: str, tmp_path: Path) -> None:
    p = tmp_path / "team_policy.json"
    p.write_text(policy_doc)
    assert TeamPolicy.load(p).members


@pytest.mark.parametrize(("field", "raw", "msg"), [
    ("lp_fill", BIG, r"\$\.lp_fill: 9+…? is out of range|\$\.lp_fill"),
    ("lp_fill", "1e308", r"\$\.lp_fill"),
    ("lp_fill", "-1e308", r"\$\.lp_fill"),
    ("cf_fill", "-1", r"\$\.cf_fill"),
    ("token_scale", BIG, r"\$\.token_scale"),
    ("token_scale", "1e-300", r"\$\.token_scale"),
    ("price_seed", BIG, r"\$\.price_seed"),
    ("max_rounds", BIG, r"\$\.max_rounds|\$\.models has"),
    ("member_tokens", f"[{BIG}, 1, 1, 1]", r"\$\.member_tokens\[0\]"),
])
def test_absurd_numbers_are_located_refusals(policy_doc: str, tmp_path: Path, field: str, raw: str, msg: str) -> None:
    doc = json.loads(policy_doc)
    doc[field] = "@@"
    p = tmp_path / "team_policy.json"
    p.write_text(json.dumps(doc).replace('"@@"', raw))
    with pytest.raises(ConfigError, match=msg):
        TeamPolicy.load(p)


def test_absurd_weights_and_deep_nesting_are_refused(policy_doc: str, tmp_path: Path) -> None:
    p = tmp_path / "team_policy.json"
    for w in (BIG, "1e300"):
        doc = json.loads(policy_doc)
        doc["models"][0]["b"] = "@@"
        p.write_text(json.dumps(doc).replace('"@@"', f"[{w}]"))
        with pytest.raises(ConfigError, match=r"\$\.models\[0\]"):
            TeamPolicy.load(p)
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match="expected a JSON object"):
        TeamPolicy.load(p)
    p.write_text('{"format": "orchestrace-team-policy/1", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match="nested too deeply"):
        TeamPolicy.load(p)
