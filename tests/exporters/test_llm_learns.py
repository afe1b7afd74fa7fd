"""The LLM orchestrator *learns*: after TRL's GRPO update the model that generates — sampling, probes,
evaluation — moves toward the higher-advantage replies (issue 40).

The defect these tests catch: TRL's trainers put a per-object ``forward`` on the model that outlives a
``copy.deepcopy``; after ``format_warmup`` the GRPO copy generated with the warm-up's frozen weights while
LoRA trained, so every sample, probe and evaluation came from a model that never moved. The log-probs
here are read through ``generate`` (:func:`~orchestrace.llm.llm_policy.reply_logprobs`), not the loss.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from trainer_helpers import needs, tiny_llama

from orchestrace.offline import load_logged_runs

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"

G = 8  # replies per state (one GRPO group)


@pytest.fixture(scope="module")
def warmed(smollm2_tokenizer):
    """A tiny random Llama with SmolLM2's tokenizer, taught the reply format by ``format_warmup`` (TRL SFT)
    — so it carries TRL's per-object forward, as a warmed SmolLM2 does."""
    from orchestrace.llm.llm_grpo import format_warmup

    tok = smollm2_tokenizer
    runs = load_logged_runs(TINY)
    model, tok2, ident = format_warmup(runs, (tiny_llama(tok), tok, {"model": "tiny-llama"}), steps=16,
                                       batch=8, lora_r=0, learning_rate=1e-2)
    return runs, (model, tok2, ident)


def _train(runs, base, tmp_path, *, credit: str, updates: int, lora_r: int = 0, lr: float = 1e-3, states: int = 2):
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, train_llm_orchestrator

    cfg = LLMGRPOConfig(credit=credit, continuation="stop-next", updates=updates, prompts_per_update=states,
                        generations=G, states=16, max_completion_length=4, save_every=100, lora_r=lora_r,
                        learning_rate=lr, seed=0)
    return train_llm_orchestrator(runs, cfg, tmp_path / f"{credit}-{lora_r}", base=base)


def _moves(res, base):
    """(change of each update-1 reply's log-prob through generate, its GRPO advantage), one row a group."""
    from orchestrace.llm.llm_policy import reply_logprobs

    s = res["samples"][0]
    before = reply_logprobs(base[0], base[1], s["prompts"], s["replies"])
    after = reply_logprobs(res["model"], base[1], s["prompts"], s["replies"])
    r = np.asarray(s["rewards"]).reshape(-1, G)
    adv = (r - r.mean(1, keepdims=True)) / (r.std(1, keepdims=True) + 1e-4)
    return (after - before).reshape(-1, G), adv


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
@pytest.mark.parametrize("lora_r", [0, 4])
def test_one_update_moves_the_generating_model_toward_the_advantage(warmed, tmp_path, lora_r) -> None:
    """One group (one state, 8 sampled replies) — with several groups the same reply can carry opposite
    advantages at different states, and AdamW's first step moves every weight by ±lr."""
    runs, base = warmed
    res = _train(runs, base, tmp_path, credit="exact", updates=1, lora_r=lora_r, lr=1e-3 if lora_r == 0 else 1e-2,
                 states=1)
    d, adv = _moves(res, base)
    d, adv = d[0], adv[0]
    assert adv.std() > 0, "the fixed batch must hold unequal rewards"
    best, worst = int(np.argmax(adv)), int(np.argmin(adv))
    assert d[best] > 0 > d[worst], (d, adv)
    assert np.corrcoef(d, adv)[0, 1] > 0.5


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_without_the_fix_the_generating_model_would_not_move(warmed, tmp_path, monkeypatch) -> None:
    """The defect reproduced: keep TRL's per-object forward (no ``own_forward``) and the trained copy's
    generation log-probs stay bit-equal to the warm-up's — what the old tests never looked at."""
    import copy

    import orchestrace.llm.llm_grpo as grpo
    from orchestrace.llm.llm_policy import reply_logprobs

    runs, (model, tok, ident) = warmed
    stale = copy.deepcopy(model)
    # what format_warmup's SFTTrainer leaves behind: a per-object forward bound to the *original* object
    stale.forward = model.forward.__func__.__get__(model)
    monkeypatch.setattr(grpo, "own_forward", lambda m: m)
    res = _train(runs, (stale, tok, ident), tmp_path, credit="exact", updates=1)
    s = res["samples"][0]
    assert np.array_equal(reply_logprobs(model, tok, s["prompts"], s["replies"]),
                          reply_logprobs(res["model"], tok, s["prompts"], s["replies"]))


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_exact_and_broadcast_samples_part_after_the_first_update(warmed, tmp_path) -> None:
    runs, base = warmed
    ex = _train(runs, base, tmp_path, credit="exact", updates=2, lr=1e-2, states=4)
    br = _train(runs, base, tmp_path, credit="broadcast", updates=2, lr=1e-2, states=4)
    # update 1: the same model and seed sample the same replies, which the two schemes score differently
    assert ex["samples"][0]["replies"] == br["samples"][0]["replies"]
    assert ex["samples"][0]["rewards"] != br["samples"][0]["rewards"]
    # update 2: the two models moved differently, so what they sample differs
    assert ex["samples"][1]["replies"] != br["samples"][1]["replies"]


@needs("trl", "datasets", "transformers", "peft")
@pytest.mark.slow
def test_a_clean_base_without_warmup_learns_too(warmed, tmp_path) -> None:
    """No trainer has touched the base (saved and reloaded): the same direction of learning."""
    from transformers import AutoModelForCausalLM

    runs, (model, tok, ident) = warmed
    model.save_pretrained(tmp_path / "clean")
    clean = AutoModelForCausalLM.from_pretrained(tmp_path / "clean")
    assert "forward" not in vars(clean)
    base = (clean, tok, ident)
    res = _train(runs, base, tmp_path, credit="exact", updates=1, states=1)
    d, adv = _moves(res, base)
    assert adv[0].std() > 0 and np.corrcoef(d[0], adv[0])[0, 1] > 0.5
