"""TRL, for real: the TRL export is loaded with ``datasets`` and TRL's own trainers run on it.

GRPO with :func:`orchestrace.exporters.training.credit_reward` (the trace's per-turn credit
as the reward function), SFT on the credited turns, DPO on pairs ranked by credit — a few
steps each on CPU with a small Llama and SmolLM2's tokenizer (no hub). Checks: the loss is finite, and the rewards in
the dataset and inside the trainer are the exported credit, unchanged.
"""

from __future__ import annotations

import copy
import json
import math

import pytest
from trainer_helpers import cli, needs

from orchestrace.exporters import advantages_of
from orchestrace.exporters.training import credit_reward, dpo_pairs

pytestmark = [needs("trl", "datasets", "transformers"), pytest.mark.slow]


@pytest.fixture(scope="module")
def trl_export(env_run, tmp_path_factory):
    """(rows as JSON, datasets.Dataset) of ``orchestrace export trl`` on the recorded run."""
    import datasets

    path, _ = env_run
    out = tmp_path_factory.mktemp("trl") / "trl.jsonl"
    cli("export", "trl", str(path), "-o", str(out), "--method", "leave_one_out")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    ds = datasets.load_dataset("json", data_files=str(out), split="train")
    return rows, ds


def _args(cls, tmp_path, **kw):
    return cls(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2, learning_rate=1e-5,
               logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False,
               dataloader_num_workers=0, seed=0, **kw)


def _losses(trainer) -> list[float]:
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


def test_trl_dataset_holds_the_credit_unchanged(env_run, trl_export) -> None:
    _, traces = env_run
    rows, ds = trl_export
    assert len(ds) == len(rows) > 0
    assert ds.column_names[:3] == ["prompt", "completion", "reward"]
    credit = {(t.trace_id, k): v for t in traces for k, v in advantages_of(t, method="leave_one_out").items()}
    got = [(r["trace_id"], r["turn_id"], r["reward"]) for r in ds]
    assert all(r == credit.get((tr, tu), 0.0) for tr, tu, r in got)  # bit for bit
    assert len({r for *_, r in got}) > 2, "leave-one-out credit should differ per turn"


def test_grpo_trains_on_the_credit_reward(trl_export, tiny_model, tmp_path) -> None:
    from trl import GRPOConfig, GRPOTrainer

    rows, ds = trl_export
    model, tok = tiny_model
    seen: list[tuple[str, str, float, float]] = []  # (trace, turn, exported reward, returned reward)
    inner = credit_reward(rows)

    def orchestrace_credit(prompts, completions, trace_id, turn_id, reward, **kw):
        out = inner(prompts, completions, trace_id=trace_id, turn_id=turn_id)
        seen.extend(zip(trace_id, turn_id, reward, out, strict=True))
        return out

    ds = ds.filter(lambda r: r["reward"] != 0).select(range(4))
    args = _args(GRPOConfig, tmp_path, num_generations=2, max_completion_length=8, temperature=1.0)
    trainer = GRPOTrainer(model=model, reward_funcs=[orchestrace_credit], args=args, train_dataset=ds,
                          processing_class=tok)
    trainer.train()
    losses = _losses(trainer)
    assert losses and all(math.isfinite(x) for x in losses)
    exported = {(r["trace_id"], r["turn_id"]): r["reward"] for r in rows}
    assert seen and all(exported[(tr, tu)] == r for tr, tu, r, _ in seen)  # the trainer passed the credit unchanged
    # what the trainer logged as this reward's mean is the mean of what the function returned
    logged = [h["rewards/orchestrace_credit/mean"] for h in trainer.state.log_history
              if "rewards/orchestrace_credit/mean" in h]
    assert logged and math.isclose(sum(logged) / len(logged), sum(x[3] for x in seen) / len(seen), abs_tol=1e-4)


def test_sft_trains_on_the_credited_turns(trl_export, tiny_model, tmp_path) -> None:
    from trl import SFTConfig, SFTTrainer

    _, ds = trl_export
    model, tok = tiny_model
    credited = ds.filter(lambda r: r["reward"] > 0).select_columns(["prompt", "completion"]).select(range(4))
    trainer = SFTTrainer(model=model, args=_args(SFTConfig, tmp_path, max_length=256), train_dataset=credited,
                         processing_class=tok)
    trainer.train()
    losses = _losses(trainer)
    assert losses and all(math.isfinite(x) for x in losses)


def test_dpo_trains_on_pairs_ranked_by_credit(trl_export, tiny_model, tmp_path) -> None:
    import datasets
    from trl import DPOConfig, DPOTrainer

    rows, _ = trl_export
    pairs = dpo_pairs(rows)
    assert pairs, "the run should hold decision points shared by episodes with different credit"
    assert all(p["margin"] > 0 for p in pairs)
    model, tok = tiny_model
    ds = datasets.Dataset.from_list([{k: p[k] for k in ("prompt", "chosen", "rejected")} for p in pairs[:4]])
    ref = copy.deepcopy(model).eval()  # the frozen reference policy (TRL would fetch one from the hub)
    trainer = DPOTrainer(model=model, ref_model=ref, args=_args(DPOConfig, tmp_path, max_length=256),
                         train_dataset=ds, processing_class=tok)
    trainer.train()
    losses = _losses(trainer)
    assert losses and all(math.isfinite(x) for x in losses)
