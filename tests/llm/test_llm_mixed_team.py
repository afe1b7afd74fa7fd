"""The two-family team (issue 42): members at their own endpoints and modes, a fallible calculator, per-member
prices written into the corpus and charged by the reader — against two scripted endpoints on loopback."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.collection.collect import collect
from orchestrace.collection.mixed_team import (
    FAULT_OFFSETS,
    MIXED_TEAM,
    PRICES,
    MixedTeamConfig,
    PricedMember,
    attempt_cost,
    cloze_prompt,
    tool_value,
)
from orchestrace.errors import ConfigError
from orchestrace.llm.tasks import make_vote_task
from orchestrace.logged._prices import charge_prices, member_prices
from orchestrace.logged.runs import load_logged_runs
from orchestrace.policies.team import TeamArrays

pytest.importorskip("httpx")

CELLS = (("add", 2), ("mentor", 1))


def smol_reply(body: dict) -> str:
    """The fake chat model: the calculator member copies the expression exactly, the answerer says 7."""
    user = body["messages"][-1]["content"]
    if "calculator should evaluate" in user:
        m = re.search(r"Compute (.+?)\.", user)
        return f"{m.group(1)} = ?" if m else "I cannot"
    return "7"


def gemma_reply(body: dict) -> str:
    """The fake base model: continues a cloze prompt with the last name in it (or 12 for a sum)."""
    prompt = body["prompt"]
    names = re.findall(r"is (\w+)\.", prompt)
    return f" {names[-1]}" if names else " 12"


def run(faulty, folder: Path, cfg: MixedTeamConfig):  # noqa: ANN001, ANN201
    smol, gem = faulty(text=smol_reply), faulty(text=gemma_reply)
    cfg = dataclasses.replace(cfg, endpoints=(("smollm2", smol.base_url, "smol"), ("gemma", gem.base_url, "gem")))
    res = collect(cfg, folder, base_url="multi", model="multi", client_kw={"max_retries": 0}, concurrency=2)
    return res, smol, gem


def returns(folder: Path) -> list[dict]:
    out = []
    for line in (folder / "traces.jsonl").read_text().splitlines():
        ev = json.loads(line).get("event")
        if ev and ev["type"] == "return":
            out.append(ev)
    return out


def test_each_member_goes_to_its_models_endpoint_in_its_mode(tmp_path: Path, faulty) -> None:  # noqa: ANN001
    cfg = MixedTeamConfig(cells=CELLS, n_tasks=4, rounds=2)
    res, smol, gem = run(faulty, tmp_path, cfg)
    assert res.written == 4
    # SmolLM2's two members (chat) and Gemma's two (cloze) each got 4 tasks x 2 rounds requests
    assert len(smol.requests) == 16 and set(smol.paths) == {"/v1/chat/completions"}
    assert len(gem.requests) == 16 and set(gem.paths) == {"/v1/completions"}
    assert all("prompt" in r and "messages" not in r for r in gem.requests)
    assert {r["temperature"] for r in gem.requests} == {0.2, 0.8}
    evs = returns(tmp_path)
    for ev in evs:
        a = ev["attrs"]
        m = next(x for x in MIXED_TEAM if x.name == a["member"])
        assert (a["model"], a["mode"]) == (m.model, m.mode)
        assert (a["price_in_per_mtok"], a["price_out_per_mtok"]) == (m.price_in, m.price_out)
        assert math.isclose(a["cost_usd"], attempt_cost(m, ev["tokens_in"], ev["tokens_out"]), rel_tol=1e-6)
        assert isinstance(a["prompt"], str) and a["prompt"]
    # the cloze member read the facts: on a look-up the fake base model answers the last name in them
    look = [ev for ev in evs if ev["attrs"]["member"] == "g-cold" and "mentor" in ev["attrs"]["prompt"]]
    assert look and all(ev["attrs"]["answer"] == re.findall(r"is (\w+)\.", ev["attrs"]["prompt"])[-1] for ev in look)


def test_the_manifest_lists_prices_and_the_reader_charges_them(tmp_path: Path, faulty) -> None:  # noqa: ANN001
    run(faulty, tmp_path, MixedTeamConfig(cells=CELLS, n_tasks=4, rounds=2))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "endpoints" not in manifest["config"]  # where a run sent its calls is not a setting of the corpus
    assert [m["name"] for m in manifest["config"]["members"]] == [m.name for m in MIXED_TEAM]
    runs = load_logged_runs(tmp_path)
    bill = runs.meta["billing"]
    ref = PRICES["gpt-4o-mini"][0]
    assert bill["ref_price"] == ref
    # billed tokens x the reference price = the dollars logged on each attempt
    total_usd = sum(ev["attrs"]["cost_usd"] for ev in returns(tmp_path))
    billed = float(runs.prompt_tokens.sum() + runs.completion_tokens.sum())
    assert math.isclose(billed * ref / 1e6, total_usd, rel_tol=5e-3)  # whole billed tokens: rounding
    assert bill["logged_prompt_tokens"] == sum(ev["tokens_in"] for ev in returns(tmp_path))
    # the valuation charges a Gemma column 16.7x a SmolLM2 column per logged token
    arr = TeamArrays.build(runs, price=np.ones(len(runs.task_ids)), token_scale=1.0)
    raw_in = np.array([[ev["tokens_in"] for ev in returns(tmp_path) if ev["attrs"]["member"] == m][0]
                       for m in runs.members])
    ratio = (runs.prompt_tokens[0, 0] / raw_in)
    assert ratio[2] / ratio[0] == pytest.approx(PRICES["gpt-4o"][0] / PRICES["gpt-4o-mini"][0], rel=0.05)
    assert arr.tok.shape == runs.answers.shape


def test_the_calculator_is_wrong_at_its_stated_rate_but_always_parses(tmp_path: Path, faulty) -> None:  # noqa: ANN001
    team = tuple(dataclasses.replace(m, tool_fault=0.5) if m.style == "calc" else m for m in MIXED_TEAM)
    cfg = MixedTeamConfig(cells=(("add", 2),), n_tasks=12, rounds=2, members=team)
    run(faulty, tmp_path, cfg)
    calc = [ev["attrs"] for ev in returns(tmp_path) if ev["attrs"]["member"] == "s-calc"]
    assert len(calc) == 24
    for a in calc:  # the fake member copies the expression exactly: a wrong value is the tool's fault
        truth = eval(a["input"])  # noqa: S307 (a test's own arithmetic on the task's digits)
        assert isinstance(a["output"], int) and a["answer"] == str(a["output"])
        assert (a["output"] != truth) == a["tool_faulty"]
        if a["tool_faulty"]:
            assert a["output"] - truth in FAULT_OFFSETS
        assert a["correct"] == (not a["tool_faulty"])
    assert 3 <= sum(a["tool_faulty"] for a in calc) <= 21  # Binomial(24, 0.5): outside this is p < 0.002


def test_tool_faults_follow_p_and_are_reproducible() -> None:
    for p in (0.0, 0.1, 0.5):
        draws = [tool_value(100, seed=3, task_id=f"t{i}", round_=i % 2, p_fault=p) for i in range(4000)]
        share = sum(f for _, f in draws) / len(draws)
        assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / 4000) + 1e-9
        assert all((v != 100) == f and (not f or v - 100 in FAULT_OFFSETS) for v, f in draws)
    assert tool_value(5, seed=1, task_id="x", round_=0, p_fault=0.3) == tool_value(5, seed=1, task_id="x",
                                                                                   round_=0, p_fault=0.3)


@pytest.mark.parametrize(("kw", "needle"), [
    ({"price_in": -1.0}, "price_in"), ({"price_out": float("nan")}, "price_out"),
    ({"mode": "cloze", "style": "calc"}, "cloze"), ({"tool_fault": 0.2}, "only a 'calc' member"),
    ({"mode": "batch"}, "unknown mode"), ({"model": "Gemma 3"}, "model key"),
    ({"style": "calc", "tool_fault": 1.0}, "tool_fault"),
])
def test_bad_members_are_refused_with_the_field_named(kw: dict, needle: str) -> None:
    base = {"name": "x", "temperature": 0.2, "style": "answer", "model": "smollm2", "mode": "chat",
            "price_in": 0.1, "price_out": 0.4}
    with pytest.raises(ConfigError, match=re.escape(needle)):
        PricedMember(**{**base, **kw})


def test_a_team_without_an_endpoint_for_a_model_is_refused_naming_it() -> None:
    cfg = MixedTeamConfig(cells=CELLS, n_tasks=1, endpoints=(("smollm2", "http://127.0.0.1:9/v1", "m"),))
    with pytest.raises(ConfigError, match="gemma"):
        cfg.make_client(1, {})


def test_cloze_prompts_end_where_the_answer_starts() -> None:
    for seed in range(20):
        add = cloze_prompt(make_vote_task("add", seed=seed, size=2))
        assert add.startswith("Q: What is ") and add.endswith(" =")
        t = make_vote_task("mentor", seed=seed, size=2)
        who = re.search(r"mentor of (\w+)\?", t.whole_prompt()[-1]["content"]).group(1)
        lk = cloze_prompt(t)
        assert lk.endswith(f"A: The mentor of {who} is") and "Reply with" not in lk and "Facts:" in lk


# -------------------------------------------------------------------------------------- the price reader
def _cfg(prices: list) -> dict:  # noqa: ANN001
    return {"members": [{"name": n, **p} for n, p in zip(("cold", "hot", "calc", "reviser"), prices, strict=True)]}


def test_a_price_missing_or_negative_is_a_located_error() -> None:
    from orchestrace.logged.team_synth import make_synthetic_team

    runs = make_synthetic_team(4, 2, seed=0)
    ok = {"price_in": 0.15, "price_out": 0.6}
    with pytest.raises(ConfigError, match=r"members\[1\]\.price_out: missing"):
        charge_prices(runs, _cfg([ok, {"price_in": 0.1}, ok, ok]))
    with pytest.raises(ConfigError, match=r"members\[2\]\.price_in: -1"):
        charge_prices(runs, _cfg([ok, ok, {"price_in": -1, "price_out": 1}, ok]))
    with pytest.raises(ConfigError, match="every price is 0"):
        charge_prices(runs, _cfg([{"price_in": 0, "price_out": 0}] * 4))
    with pytest.raises(ConfigError, match="differ from the corpus"):
        member_prices({"members": [{"name": "other", **ok}]}, runs.members)
    assert charge_prices(runs, {"members": [{"name": m} for m in runs.members]}) is runs  # unpriced: unchanged


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 20), st.floats(0.01, 80)), min_size=4, max_size=4), st.integers(0, 999))
def test_billed_tokens_match_a_plain_reference(prices: list, seed: int) -> None:
    from orchestrace.logged.team_synth import make_synthetic_team

    runs = make_synthetic_team(5, 2, seed=seed)
    billed = charge_prices(runs, _cfg([{"price_in": a, "price_out": b} for a, b in prices]))
    ref = min(a for a, _ in prices)
    T, R, W = runs.answers.shape
    for t in range(T):
        for r in range(R):
            for w in range(W):
                a, b = prices[w]
                assert billed.prompt_tokens[t, r, w] == round(runs.prompt_tokens[t, r, w] * a / ref)
                assert billed.completion_tokens[t, r, w] == round(runs.completion_tokens[t, r, w] * b / ref)
    assert (billed.answers == runs.answers).all() and billed.meta["billing"]["ref_price"] == ref


# -------------------------------------------------------------------------------------- bad input
def test_one_server_dying_mid_collection_stops_cleanly_and_resumes(tmp_path: Path, faulty) -> None:  # noqa: ANN001
    from llm_fakes import scripted

    from orchestrace.errors import LLMError

    cfg = MixedTeamConfig(cells=CELLS, n_tasks=6, rounds=2)
    smol = faulty(text=smol_reply)
    dying = faulty(scripted(*["ok"] * 8, then="500"), text=gemma_reply)  # 8 Gemma calls = 2 tasks, then it fails
    eps = (("smollm2", smol.base_url, "smol"), ("gemma", dying.base_url, "gem"))
    with pytest.raises(LLMError, match=r"endpoint failed after \d of 6 tasks were written.*resumable"):
        collect(dataclasses.replace(cfg, endpoints=eps), tmp_path, base_url="multi", model="multi",
                client_kw={"max_retries": 0}, concurrency=1)
    done = len(load_logged_runs(tmp_path, exclude=True).task_ids)
    assert done == 2  # every written run is whole; the failed one is not written
    healthy = faulty(text=gemma_reply)
    eps = (("smollm2", smol.base_url, "smol"), ("gemma", healthy.base_url, "gem"))
    res = collect(dataclasses.replace(cfg, endpoints=eps), tmp_path, base_url="multi", model="multi",
                  client_kw={"max_retries": 0}, concurrency=1, resume=True)
    assert (res.already, res.written) == (2, 4)
    assert len(load_logged_runs(tmp_path).task_ids) == 6


def test_resuming_with_another_model_file_is_refused_naming_it(tmp_path: Path) -> None:
    from orchestrace.collection.mixed_team import check_same_models

    info = {"servers": {"smollm2": {"model_file": "a.gguf", "model_sha256": "aa"},
                        "gemma": {"model_file": "g.gguf", "model_sha256": "gg"}}}
    (tmp_path / "manifest.json").write_text(json.dumps({"server": info}))
    check_same_models(tmp_path, info)  # the same files: fine
    other = {"servers": {**info["servers"], "gemma": {"model_file": "g2.gguf", "model_sha256": "hh"}}}
    with pytest.raises(ConfigError, match=r"model 'gemma' was collected with 'g.gguf' \(sha256 gg\).*'g2.gguf'"):
        check_same_models(tmp_path, other)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ConfigError, match="unreadable manifest"):
        check_same_models(tmp_path, info)


def test_the_cli_command_refuses_bad_cells_with_a_located_message(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrace.cli import app

    r = CliRunner().invoke(app, ["collect", "mixed-team", str(tmp_path / "c"), "--suites", "sums:2"])
    assert r.exit_code != 0 and "unknown suite 'sums'" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["collect", "mixed-team", "--help"])
    assert r.exit_code == 0 and "two-family team" in r.output
