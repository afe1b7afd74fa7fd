"""A team member LLM trained with exact per-member credit (issue 40 item 4): the credit math against plain
references, the located errors, and one real TRL GRPO update that moves the *generating* model toward
the higher-credit replies (log-probs read through ``generate``)."""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from trainer_helpers import needs

from orchestrace.errors import ConfigError
from orchestrace.llm.worker_grpo import TeamLog, WorkerGRPOConfig, member_credit, team_return

FRESH = Path(__file__).resolve().parents[2] / "src" / "orchestrace" / "data" / "corpora" / "smollm2-team-fresh-v1"
G = 8  # replies per task (one GRPO group)


def _plain_majority(answers):
    counts, order = {}, []
    for a in answers:
        if a is None:
            continue
        if a not in counts:
            counts[a] = 0
            order.append(a)
        counts[a] += 1
    if not order:
        return None
    best = max(counts.values())
    return next(a for a in order if counts[a] == best)


def _plain_value(team, truth, cols):
    return float(_plain_majority([team[c] for c in sorted(cols)]) == truth)


def test_exact_and_shapley_credit_match_plain_references_on_random_teams() -> None:
    from orchestrace.credit import leave_one_out

    rng = np.random.default_rng(0)
    checked = {"exact": 0, "shapley": 0}
    for _ in range(300):
        n = int(rng.integers(2, 6))
        team = [None if rng.random() < 0.2 else str(int(rng.integers(1, 4))) for _ in range(n)]
        truth, k = "1", int(rng.integers(n))
        full = _plain_value(team, truth, range(n))
        assert member_credit(team, truth, k, "broadcast") == full
        ex = member_credit(team, truth, k, "exact")
        assert ex == full - _plain_value(team, truth, [c for c in range(n) if c != k])
        assert ex == pytest.approx(leave_one_out(lambda s, t=team, y=truth: _plain_value(t, y, s), n,
                                                 batched=False).values[k])
        phi = 0.0  # Shapley by its definition: the mean marginal contribution over every order
        for perm in itertools.permutations(range(n)):
            before = list(perm[: perm.index(k)])
            phi += _plain_value(team, truth, [*before, k]) - _plain_value(team, truth, before)
        assert member_credit(team, truth, k, "shapley") == pytest.approx(phi / math.factorial(n), abs=1e-9)
        checked["exact"] += ex != 0
        checked["shapley"] += phi != 0
    assert min(checked.values()) > 20, checked  # the random teams exercised non-zero credit


@pytest.fixture(scope="module")
def fresh() -> TeamLog:
    return TeamLog.load(FRESH)


def test_team_return_is_the_exact_mean_over_the_others_logged_rounds(fresh) -> None:
    rows = [0, 5, 17, 42]
    k = fresh.column("cold")
    got = team_return(fresh, "cold", rows, [["7", None] for _ in rows])
    for i, t in enumerate(rows):
        truth = str(fresh.tasks[t].answer)
        vals = [float(_plain_majority([mine, fresh.texts[t, a, 1], fresh.texts[t, b, 2]]) == truth)
                for mine in ("7", None) for a in range(3) for b in range(3)]
        assert got[i] == pytest.approx(np.mean(vals))
    logged = team_return(fresh, "cold", rows, [fresh.texts[t, :, k] for t in rows])
    assert ((logged >= 0) & (logged <= 1)).all()


def test_the_grader_and_prompts_are_the_collectors(fresh) -> None:
    t = int(np.flatnonzero(fresh.runs.suite == "add")[0])
    task = fresh.tasks[t]
    assert fresh.grade(t, "cold", f"{task.answer}\nmore 12345") == str(task.answer)
    assert fresh.grade(t, "calc", "12 + 7") == "19"
    assert "calculator" in fresh.messages(t, "calc")[-1]["content"]
    assert fresh.messages(t, "cold") == task.whole_prompt()
    assert fresh.team("cold") == [0, 1, 2]  # the reviser sees cold: it is left out


@pytest.mark.parametrize("member, words", [("nobody", "not in the team"), ("reviser", "shown the answers")])
def test_a_member_that_cannot_be_trained_is_a_located_error(fresh, member, words) -> None:
    with pytest.raises(ConfigError, match=words):
        fresh.team(member)


def _write_corpus(dest: Path, n: int, *, drop_return: bool = False) -> Path:
    """The first ``n`` runs of the fresh corpus (optionally without round 1's cold answer in the first run)."""
    dest.mkdir()
    man = json.loads((FRESH / "manifest.json").read_text())
    man["tasks"] = n
    (dest / "manifest.json").write_text(json.dumps(man))
    out, runs = [], 0
    with gzip.open(FRESH / "traces-0.jsonl.gz", "rt") as f:
        for line in f:
            d = json.loads(line)
            if "header" in d:
                runs += 1
                if runs > n:
                    break
            ev = d.get("event") or {}
            if (drop_return and runs == 1 and ev.get("type") == "return"
                    and ev["attrs"].get("round") == 1 and ev["attrs"].get("member") == "cold"):
                continue
            out.append(line)
    with gzip.open(dest / "traces-0.jsonl.gz", "wt") as f:
        f.writelines(out)
    return dest


def test_a_corpus_without_every_answer_is_a_located_error(tmp_path) -> None:
    ok = TeamLog.load(_write_corpus(tmp_path / "ok", 6))
    assert ok.texts.shape == (6, 3, 4)
    with pytest.raises(ConfigError, match="every member's answer in every round"):
        TeamLog.load(_write_corpus(tmp_path / "bad", 6, drop_return=True))


@pytest.mark.parametrize("kw", [{"credit": "sometimes"}, {"generations": 1}, {"updates": 0}, {"learning_rate": 0.0},
                                {"optim": "adamw_banana"}])
def test_bad_config_is_a_located_error(kw) -> None:
    with pytest.raises(ConfigError):
        WorkerGRPOConfig(**kw)


@pytest.fixture(scope="module")
def add_log(fresh) -> TeamLog:
    """16 add tasks of the fresh corpus with a constructed context: ``hot`` never parses and ``calc`` is always
    right, so cold's exact credit is −1 for a wrong number (it ties calc and, the earlier column, wins) and 0
    for anything else — a group of sampled replies holds unequal credits."""
    rows = np.flatnonzero((fresh.runs.suite == "add") & (fresh.runs.split == "train"))[:16]
    sub = fresh.subset(rows)
    texts = sub.texts.copy()
    texts[:, :, 1] = None
    for i, task in enumerate(sub.tasks):
        texts[i, :, 2] = str(task.answer)
    return dataclasses.replace(sub, texts=texts)


@pytest.fixture(scope="module")
def answering(smollm2_tokenizer, add_log):
    """A tiny random Llama with SmolLM2's tokenizer, taught by a few SFT steps to reply with a number (the right
    one or a wrong one, half each) — so some sampled replies parse and some do not."""
    import tempfile

    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import SFTConfig, SFTTrainer

    from orchestrace.llm.llm_policy import own_forward, prepare_tokenizer
    from orchestrace.llm.worker_grpo import prompt_of

    torch.set_num_threads(1)
    torch.manual_seed(0)
    tok = smollm2_tokenizer
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      tie_word_embeddings=True)
    lm = LlamaForCausalLM(cfg)
    prepare_tokenizer(lm, tok)
    rng = np.random.default_rng(0)
    rows = [{"prompt": prompt_of(add_log, tok, t, "cold"),
             "completion": str(int(task.answer) + (0 if rng.random() < 0.5 else int(rng.integers(1, 9))))}
            for t, task in enumerate(add_log.tasks)]
    with tempfile.TemporaryDirectory() as tmp:
        args = SFTConfig(output_dir=tmp, max_steps=8, per_device_train_batch_size=8, learning_rate=1e-2,
                         lr_scheduler_type="constant", save_strategy="no", report_to="none", use_cpu=True,
                         completion_only_loss=True, packing=False, disable_tqdm=True, dataloader_num_workers=0,
                         eos_token=tok.eos_token, seed=0)
        tr = SFTTrainer(model=lm, args=args, train_dataset=Dataset.from_list(rows), processing_class=tok)
        tr.train()
    model = own_forward(tr.model)
    model.eval()
    return model, tok, {"model": "tiny-llama-answers"}


def _train(fresh, base, out, **kw):
    from orchestrace.llm.worker_grpo import train_team_member

    cfg = WorkerGRPOConfig(**{"credit": "exact", "updates": 1, "prompts_per_update": 1, "generations": G,
                              "lora_r": 0, "learning_rate": 1e-2, "optim": "sgd", "max_completion_length": 4, "seed": 0,
                              **kw})
    return train_team_member(fresh, "cold", cfg, out, base=base)


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_one_update_moves_the_generating_member_toward_its_exact_credit(answering, add_log, tmp_path) -> None:
    from orchestrace.llm.llm_policy import reply_logprobs

    fresh = add_log
    res = _train(fresh, answering, tmp_path / "run")
    s = res["samples"][0]
    r = np.asarray(s["rewards"])
    assert r.std() > 0, ("the group must hold unequal credits", s)
    def tokens_lp(model):  # the reply's own tokens: reply_logprobs adds the eos, which a truncated sample lacks
        tok = answering[1]
        whole = reply_logprobs(model, tok, s["prompts"], s["replies"])
        eos = reply_logprobs(model, tok, [p + x for p, x in zip(s["prompts"], s["replies"], strict=True)],
                             [""] * len(s["replies"]))
        return whole - eos

    d = tokens_lp(res["model"]) - tokens_lp(answering[0])
    adv = (r - r.mean()) / (r.std() + 1e-4)
    # the tiny model is nearly uniform (SFT entropy ≈ 10 nats): one AdamW step (±lr on every weight) moves
    # every reply's log-prob by several nats whatever its advantage, so the update is a plain SGD step —
    # to first order Δ = lr·K·adv with K the Gram matrix of the replies' gradients, so advᵀΔ ≥ 0: the
    # higher-credit replies gain on the lower-credit ones
    hi, lo = adv >= adv.max() - 1e-9, adv <= adv.min() + 1e-9
    assert d[hi].mean() > d[lo].mean(), (d, adv, s["replies"])
    assert np.corrcoef(d, adv)[0, 1] > 0.5, (d, adv)
    assert res["curve"][0]["unparsed"] < 1.0

    # a resumed run refuses another credit scheme, member, model or corpus — before any training
    from orchestrace.llm.worker_grpo import train_team_member

    for kw, words in (({"credit": "broadcast"}, "credit scheme"),):
        with pytest.raises(ConfigError, match=words):
            train_team_member(fresh, "cold", WorkerGRPOConfig(lora_r=0, **kw), tmp_path / "run", base=answering,
                              resume=True)
    with pytest.raises(ConfigError, match="member"):
        train_team_member(fresh, "hot", WorkerGRPOConfig(lora_r=0), tmp_path / "run", base=answering, resume=True)
    with pytest.raises(ConfigError, match="model"):
        train_team_member(fresh, "cold", WorkerGRPOConfig(lora_r=0), tmp_path / "run",
                          base=(answering[0], answering[1], {"model": "another"}), resume=True)
    other = dataclasses.replace(fresh, runs=fresh.runs.subset(np.arange(len(fresh.tasks) - 1)),
                                texts=fresh.texts[:-1], tasks=fresh.tasks[:-1])
    with pytest.raises(ConfigError, match="corpus"):
        train_team_member(other, "cold", WorkerGRPOConfig(lora_r=0), tmp_path / "run", base=answering, resume=True)
    with pytest.raises(ConfigError, match="previous run"):
        train_team_member(fresh, "cold", WorkerGRPOConfig(lora_r=0), tmp_path / "run", base=answering)
