"""The LLM orchestrator: TRL's own GRPOTrainer on logged decisions (tiny budget), both credit schemes,
resume refusals, bad model paths, the reply parser and its penalty."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainer_helpers import needs

from orchestrace.errors import ConfigError
from orchestrace.llm.llm_policy import DEFAULT_ACTION, load_causal_lm, parse_action

ACTIONS = ("stop", "stop-weighted", "continue")
TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


# ----------------------------------------------------------------------------- parser
@given(st.sampled_from(ACTIONS), st.sampled_from(["", " ", "\n", ".", "**", "'", "`"]),
       st.sampled_from(["", ".", "\nmore text", " because", "!", "**"]), st.booleans())
def test_parse_reads_a_leading_action_word(word, pre, post, upper) -> None:
    text = pre + (word.upper() if upper else word) + post
    assert parse_action(text, ACTIONS) == ACTIONS.index(word)


@given(st.text(max_size=30))
@settings(max_examples=300)
def test_parse_never_invents_an_action(text) -> None:
    i = parse_action(text, ACTIONS)
    if i is not None:
        assert text.lower().lstrip(" \t\r\n\"'`*_.:>#-").startswith(ACTIONS[i])


def test_parse_rejects_words_that_only_start_like_an_action() -> None:
    assert parse_action("stopped", ACTIONS) is None and parse_action("continue-2", ACTIONS) is None
    assert parse_action("I would stop", ACTIONS) is None
    assert parse_action("stop-weighted", ACTIONS) == 1  # the longest word wins


def test_unparsed_reply_gets_the_default_and_the_penalty() -> None:
    from orchestrace.llm.llm_grpo import decision_reward, decision_rows
    from orchestrace.logged.logged_env import LoggedDecisions, StopNext
    from orchestrace.offline import load_logged_runs

    dec = LoggedDecisions(load_logged_runs(TINY), aggregations=("majority", "logprob"))
    rows = decision_rows(dec, np.arange(len(dec.runs.task_ids)), 6, seed=0)
    log: list[dict[str, float]] = []
    f = decision_reward(dec, "exact", StopNext(), penalty=1.0, log=log)
    cols = {k: [r[k] for r in rows] for k in ("task", "calls", "prefix")}
    from orchestrace.llm.llm_grpo import _state

    for reply, pen in (("stop", 0.0), ("hello there", 1.0), ("I say stop", 0.5)):
        got = f(prompts=[r["prompt"] for r in rows], completions=[reply] * len(rows), **cols)
        want = [dec.q_value(_state(dec, t, c), DEFAULT_ACTION, StopNext()) - pen
                for t, c in zip(cols["task"], cols["calls"], strict=True)]
        assert got == pytest.approx(want)
    assert [e["unparsed"] for e in log] == [0.0, 1.0, 1.0]


def test_config_rejects_bad_values() -> None:
    from orchestrace.llm.llm_grpo import LLMGRPOConfig

    with pytest.raises(ConfigError, match="credit"):
        LLMGRPOConfig(credit="shapley")
    with pytest.raises(ConfigError, match="generations"):
        LLMGRPOConfig(generations=1)


# ----------------------------------------------------------------------------- bad models
def test_a_folder_without_a_model_is_a_located_error(tmp_path) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(ConfigError, match="config.json"):
        load_causal_lm(tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load_causal_lm(tmp_path / "missing")


def test_a_model_that_is_not_a_causal_lm_is_refused(tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    cfg = transformers.DistilBertConfig(vocab_size=50, dim=16, n_layers=1, n_heads=2, hidden_dim=32)
    transformers.DistilBertModel(cfg).save_pretrained(tmp_path)  # an encoder: no causal-LM head exists
    with pytest.raises(ConfigError, match="not a causal language model|cannot read"):
        load_causal_lm(tmp_path)


def test_an_unreadable_gguf_is_refused(tmp_path) -> None:
    pytest.importorskip("gguf")
    p = tmp_path / "broken.gguf"
    p.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ConfigError, match="cannot read"):
        load_causal_lm(p)


# ----------------------------------------------------------------------------- TRL, for real
@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
@pytest.mark.parametrize("credit", ["exact", "broadcast"])
def test_trl_grpo_trains_two_updates_and_resume_refuses_another_corpus(credit, tiny_model, tmp_path) -> None:
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator
    from orchestrace.offline import load_logged_runs, make_synthetic_logged

    runs = load_logged_runs(TINY)
    model, tok = tiny_model
    cfg = LLMGRPOConfig(credit=credit, continuation="stop-next", updates=2, prompts_per_update=2, generations=2,
                        states=8, max_completion_length=3, save_every=1, lora_r=4)
    base = (model, tok, {"model": "tiny-llama"})
    res = train_llm_orchestrator(runs, cfg, tmp_path / "run", base=base)
    assert res["throughput"]["updates"] == 2 and len(res["curve"]) == 2
    assert all(math.isfinite(c["reward"]) and 0.0 <= c["unparsed"] <= 1.0 for c in res["curve"])
    assert sorted(p.name for p in (tmp_path / "run").glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    doc = json.loads((tmp_path / "run" / "run.json").read_text())
    assert doc["credit"] == credit and doc["model"] == "tiny-llama"
    with pytest.raises(ConfigError, match=r"\$\.corpus"):
        train_llm_orchestrator(make_synthetic_logged(40, 4, 2, seed=0), cfg, tmp_path / "run", base=base, resume=True)
    with pytest.raises(ConfigError, match="previous run"):
        train_llm_orchestrator(runs, cfg, tmp_path / "run", base=base)
    # resuming the same run continues from checkpoint-2 to update 3
    more = LLMGRPOConfig(**{**cfg.__dict__, "updates": 3})
    res2 = train_llm_orchestrator(runs, more, tmp_path / "run", base=base, resume=True)
    assert res2["throughput"]["updates"] == 1


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_format_warmup_runs_trl_sft_and_leaves_the_base_untouched(tiny_model) -> None:
    import torch

    from orchestrace.llm.llm_grpo import format_warmup
    from orchestrace.offline import load_logged_runs

    runs = load_logged_runs(TINY)
    model, tok = tiny_model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    warm, tok2, ident = format_warmup(runs, (model, tok, {"model": "tiny-llama"}), steps=2, batch=4, lora_r=4,
                                      learning_rate=1e-2)
    assert ident == {"model": "tiny-llama", "format_warmup": {"steps": 2, "batch": 4, "seed": 0}}
    # the base is copied, not modified; the warmed model's weights moved (LoRA merged back)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    moved = [k for k, v in warm.state_dict().items() if k in before and not torch.equal(before[k], v)]
    assert moved and not any("lora" in k for k in warm.state_dict())


def test_format_warmup_rejects_bad_budgets() -> None:
    from orchestrace.llm.llm_grpo import format_warmup
    from orchestrace.offline import load_logged_runs

    runs = load_logged_runs(TINY)
    for kw in ({"steps": 0}, {"steps": -1}, {"batch": 0}, {"learning_rate": 0.0}):
        with pytest.raises(ConfigError, match="format warm-up"):
            format_warmup(runs, (None, None, {}), **kw)


# ----------------------------------------------------------------------------- export, read back
@needs("datasets")
def test_export_trl_decisions_read_back_by_datasets(tmp_path) -> None:
    import datasets
    from trainer_helpers import cli

    from orchestrace.llm.llm_grpo import _state  # noqa: F401  (the same state decoding as training)
    from orchestrace.logged.logged_env import LoggedDecisions, StopNext
    from orchestrace.offline import load_logged_runs

    out = tmp_path / "dec.jsonl"
    cli("export", "trl", str(TINY), "-o", str(out), "--decisions", "exact", "--continuation", "stop-next",
        "--episodes", "2")
    ds = datasets.load_dataset("json", data_files=str(out), split="train")
    runs = load_logged_runs(TINY)
    dec = LoggedDecisions(runs, aggregations=("majority", "logprob"))
    assert len(ds) > 0 and set(ds["agent_id"]) == {"orchestrator"}
    assert {c[0]["content"] for c in ds["completion"]} <= set(dec.actions)
    # every row's reward is the exact Q of its action at its state (re-derived from the text's task and episode)
    ids = {str(t): i for i, t in enumerate(runs.task_ids.tolist())}
    by_trace: dict[str, list[dict]] = {}
    for r in ds:
        by_trace.setdefault(r["trace_id"], []).append(r)
    for tid, steps in list(by_trace.items())[:10]:
        s = dec.start(ids[tid.rsplit(":", 1)[0]])
        for r in steps:
            a = dec.actions.index(r["completion"][0]["content"])
            qs = dec.q_values(s, StopNext())
            assert r["reward"] == pytest.approx(qs[a]) and r["advantage"] == pytest.approx(qs[a] - np.nanmean(qs))
            assert r["prompt"][0]["content"].startswith(dec.text(s))
            s, _ = dec.step(s, a)
        assert s is None  # the episode ended with its last exported decision


@needs("verl", "pyarrow", extra="verl")
@pytest.mark.slow
def test_export_verl_decisions_read_by_verl_dataset(tmp_path, smollm2_tokenizer) -> None:
    from omegaconf import OmegaConf
    from trainer_helpers import cli
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out = tmp_path / "dec.parquet"
    cli("export", "verl", str(TINY), "-o", str(out), "--decisions", "broadcast", "--episodes", "2")
    cfg = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 512, "filter_overlong_prompts": False,
                            "truncation": "left", "return_raw_chat": True, "cache_dir": str(tmp_path)})
    ds = RLHFDataset(data_files=[str(out)], tokenizer=smollm2_tokenizer, config=cfg)
    assert len(ds) > 0
    rows = [ds[i]["extra_info"] for i in range(len(ds))]
    by_trace: dict[str, set[float]] = {}
    for info in rows:
        by_trace.setdefault(info["trace_id"], set()).add(info["reward"])
    assert all(len(v) == 1 for v in by_trace.values())  # broadcast: one return per episode


def test_export_decisions_bad_input_is_a_located_error(tmp_path) -> None:
    import subprocess
    import sys

    from trainer_helpers import SRC

    env = {**__import__("os").environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run([sys.executable, "-m", "orchestrace", "export", "otlp", str(TINY), "-o", str(tmp_path / "x"),
                        "--decisions", "exact"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and "trl or verl" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "orchestrace", "export", "trl", str(tmp_path), "-o", str(tmp_path / "x"),
                        "--decisions", "exact"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr and str(tmp_path) in r.stderr


# ----------------------------------------------------------------------------- corpora lacking the decisions
@needs("trl", "datasets", "transformers")
def test_a_corpus_without_decisions_is_a_located_error(tmp_path) -> None:
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator
    from orchestrace.offline import make_synthetic_logged

    one_round = make_synthetic_logged(30, 1, 2, seed=0)
    with pytest.raises(ConfigError, match="no decision"):
        train_llm_orchestrator(one_round, LLMGRPOConfig(continuation="stop-next", aggregations=("majority",)),
                               tmp_path / "a", base=(None, None, {}))
    team = make_synthetic_logged(80, 3, 3, seed=0, members=("cold", "hot", "reviser"))
    with pytest.raises(ConfigError, match="team corpus needs StopNext"):
        train_llm_orchestrator(team, LLMGRPOConfig(continuation="gate"), tmp_path / "b", base=(None, None, {}))


def test_team_rewards_value_member_subsets_exactly() -> None:
    from orchestrace.llm.llm_grpo import _state, decision_reward, decision_rows
    from orchestrace.logged.logged_env import LoggedDecisions, StopNext
    from orchestrace.offline import make_synthetic_logged

    team = make_synthetic_logged(40, 3, 3, seed=1, members=("cold", "hot", "reviser"))
    dec = LoggedDecisions(team)
    rows = decision_rows(dec, np.arange(40), 20, seed=0)
    f = decision_reward(dec, "exact", StopNext())
    cols = {k: [r[k] for r in rows] for k in ("task", "calls", "prefix")}
    for word in dec.actions:
        got = f(prompts=[r["prompt"] for r in rows], completions=[word] * len(rows), **cols)
        for g, t, c in zip(got, cols["task"], cols["calls"], strict=True):
            s = _state(dec, t, c)
            a = dec.actions.index(word)
            if dec.valid(s)[a]:
                want = dec.q_value(s, a, StopNext())
            else:  # an action word not valid here: unparsed → the default (stop, else the first valid), half penalty
                want = dec.q_value(s, 0 if dec.valid(s)[0] else int(np.flatnonzero(dec.valid(s))[0]), StopNext()) - 0.5
            assert g == pytest.approx(want)


def test_balanced_rows_take_the_task_cells_in_turn() -> None:
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, balanced_rows
    from orchestrace.logged.logged_env import LoggedDecisions
    from orchestrace.offline import make_synthetic_logged

    team = make_synthetic_logged(60, 3, 3, seed=2, members=("cold", "hot", "reviser"))
    dec = LoggedDecisions(team)
    rows = balanced_rows(dec, np.arange(60), 14, seed=0)
    cells = [f"{team.suite[r['task']]}:{team.difficulty[r['task']]}" for r in rows]
    k = len(set(cells))
    assert len(rows) == 14 and k >= 2
    for i in range(0, 14 - k + 1, k):  # every block of k consecutive rows holds each cell once
        assert sorted(cells[i: i + k]) == sorted(set(cells))
    with pytest.raises(ConfigError, match="beta"):
        LLMGRPOConfig(beta=-0.1)


@needs("transformers")
def test_a_reply_is_never_cut_short_of_an_action(smollm2_tokenizer, tiny_model, tmp_path) -> None:
    """Greedy replies run to the longest action word; the trainer refuses a shorter completion length —
    cut one token short, the longest action is unparseable, so it could never be taken."""
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator
    from orchestrace.llm.llm_policy import action_tokens
    from orchestrace.offline import load_logged_runs

    tok = smollm2_tokenizer
    acts = ("stop", "cold+hot", "cold+hot+calc")
    n = action_tokens(tok, acts)
    ids = tok(" cold+hot+calc", add_special_tokens=False)["input_ids"]
    assert n == len(ids) >= 2
    assert parse_action(tok.decode(ids), acts) == 2
    assert parse_action(tok.decode(ids[: n - 1]), acts) is None
    runs = load_logged_runs(TINY)
    model, tok2 = tiny_model
    cfg = LLMGRPOConfig(credit="exact", continuation="stop-next", updates=1, prompts_per_update=1, generations=2,
                        states=4, max_completion_length=2, lora_r=0)
    with pytest.raises(ConfigError, match=r"cuts the action 'stop-weighted' \(3 tokens\).*≥ 3"):
        train_llm_orchestrator(runs, cfg, tmp_path / "run", base=(model, tok2, {"model": "tiny"}))
    assert not (tmp_path / "run").exists()


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_keep_best_returns_the_weights_of_the_best_probe(tiny_model, tmp_path) -> None:
    """Early stopping on a validation probe: the model returned holds the trainable weights the model had
    at the best probe (the start is probed too), not the last update's."""
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator
    from orchestrace.offline import load_logged_runs

    runs = load_logged_runs(TINY)
    model, tok = tiny_model
    cfg = LLMGRPOConfig(credit="exact", continuation="stop-next", updates=3, prompts_per_update=2, generations=4,
                        states=8, max_completion_length=3, save_every=100, lora_r=4, learning_rate=5e-2)
    seen: dict[int, dict[str, np.ndarray]] = {}
    scripted = {0: 0.5, 1: 0.9, 2: 0.1, 3: 0.95 - 0.2}

    def probe(m, _tok, update):
        seen[update] = {n: p.detach().cpu().numpy().copy() for n, p in m.named_parameters() if p.requires_grad}
        return {"val_return": scripted[update]}

    res = train_llm_orchestrator(runs, cfg, tmp_path / "run", base=(model, tok, {"model": "tiny"}), probe=probe,
                                 probe_every=1, keep_best="val_return")
    assert [int(p["update"]) for p in res["probes"]] == [0, 1, 2, 3] and res["kept_update"] == 1
    now = {n: p.detach().cpu().numpy() for n, p in res["model"].named_parameters() if p.requires_grad}
    assert now.keys() == seen[1].keys() and all(np.array_equal(now[n], seen[1][n]) for n in now)
    moved = [u for u in (2, 3) if any(not np.array_equal(seen[u][n], seen[1][n]) for n in now)]
    assert moved, ("training moved the weights after update 1", {u: sum(float(np.abs(seen[u][n]).sum()) for n in now)
                                                                  for u in seen})



@needs("trl", "datasets", "transformers", "peft")
def test_keep_best_names_a_probe_value_that_does_not_exist(tiny_model, tmp_path) -> None:
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator
    from orchestrace.offline import load_logged_runs

    model, tok = tiny_model
    cfg = LLMGRPOConfig(credit="exact", continuation="stop-next", updates=1, prompts_per_update=1, generations=2,
                        states=4, max_completion_length=3, save_every=100, lora_r=0)
    with pytest.raises(ConfigError, match=r"keep_best 'val_retrun'.*\['val_return'\]"):
        train_llm_orchestrator(load_logged_runs(TINY), cfg, tmp_path / "run", base=(model, tok, {"model": "tiny"}),
                               probe=lambda m, t, u: {"val_return": 0.5}, probe_every=1, keep_best="val_retrun")
