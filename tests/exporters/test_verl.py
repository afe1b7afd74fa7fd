"""verl: the parquet export is read by verl's own dataset class, and the advantage plug-in's
estimator runs through verl's registry and its ``compute_advantage`` on a real batch.

The batch is what verl's trainer holds after a rollout: left-padded prompt ids (the chat
template applied to each row's prompt), right-padded response ids (the recorded completion
plus EOS), the attention and response masks, and the non-tensor columns of the dataset.
verl's ``NaiveRewardManager`` scores it with the plug-in's reward function, then
``verl.trainer.ppo.ray_trainer.compute_advantage(adv_estimator="orchestrace")`` looks the
estimator up in verl's registry.
"""

from __future__ import annotations

import numpy as np
import pytest
from trainer_helpers import cli, needs

from orchestrace.exporters import advantages_of

pytestmark = [needs("verl", "ray", "cachetools", extra="verl"), pytest.mark.slow]


@pytest.fixture(scope="module")
def verl_export(env_run, tmp_path_factory):
    path, traces = env_run
    out = tmp_path_factory.mktemp("verl") / "rows.parquet"
    cli("export", "verl", str(path), "-o", str(out), "--method", "leave-one-out", "--normalize", "agent")
    return out, traces


def test_verl_rlhf_dataset_reads_the_export(verl_export, smollm2_tokenizer) -> None:
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    path, traces = verl_export
    cfg = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 1024, "filter_overlong_prompts": False,
                            "truncation": "left", "return_raw_chat": True, "cache_dir": str(path.parent)})
    ds = RLHFDataset(data_files=[str(path)], tokenizer=smollm2_tokenizer, config=cfg)
    credit = {(t.trace_id, k): v for t in traces for k, v in advantages_of(t, method="leave-one-out").items()}
    assert len(ds) == sum(len([k for k in credit if k[0] == t.trace_id]) for t in traces) > 0
    for i in range(len(ds)):
        item = ds[i]
        info = item["extra_info"]
        assert item["index"] == info["index"] == i
        assert item["data_source"] == "orchestrace"
        assert info["reward"] == credit[(info["trace_id"], info["turn_id"])]  # the credit, unchanged
        assert isinstance(item["raw_prompt"], list) and item["raw_prompt"][0]["role"] in ("user", "assistant", "tool")


def _batch(path, tok, n: int = 8):
    """A verl DataProto of the first ``n`` rows: prompts left-padded, recorded responses + EOS right-padded."""
    import pyarrow.parquet as pq
    import torch
    from verl import DataProto

    rows = pq.read_table(path).to_pylist()[:n]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    prompts = [tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True) for r in rows]
    prompts = [p["input_ids"] if isinstance(p, dict) or hasattr(p, "keys") else p for p in prompts]
    responses = [tok(r["extra_info"]["response"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
                 for r in rows]
    P, R = max(map(len, prompts)), max(map(len, responses))
    prompt_ids = torch.tensor([[pad] * (P - len(p)) + p for p in prompts])  # (B, P) left-padded
    response_ids = torch.tensor([r + [pad] * (R - len(r)) for r in responses])  # (B, R) right-padded
    prompt_mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts])
    response_mask = torch.tensor([[1] * len(r) + [0] * (R - len(r)) for r in responses])
    batch = DataProto.from_dict(
        tensors={"prompts": prompt_ids, "responses": response_ids, "input_ids": torch.cat([prompt_ids, response_ids], 1),
                 "attention_mask": torch.cat([prompt_mask, response_mask], 1), "response_mask": response_mask},
        non_tensors={"data_source": np.array([r["data_source"] for r in rows], dtype=object),
                     "reward_model": np.array([r["reward_model"] for r in rows], dtype=object),
                     "extra_info": np.array([r["extra_info"] for r in rows], dtype=object),
                     "uid": np.array([r["extra_info"]["task_id"] for r in rows], dtype=object)})
    return rows, batch


def test_orchestrace_estimator_through_verls_registry(verl_export, smollm2_tokenizer) -> None:
    import torch
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.workers.reward_manager.naive import NaiveRewardManager

    from orchestrace.exporters import verl_plugin

    path, _ = verl_export
    rows, batch = _batch(path, smollm2_tokenizer)
    verl_plugin.register()
    assert core_algos.get_adv_estimator_fn(verl_plugin.ESTIMATOR) is verl_plugin.precomputed_advantage
    rm = NaiveRewardManager(tokenizer=smollm2_tokenizer, num_examine=0, compute_score=verl_plugin.compute_advantage)
    batch.batch["token_level_rewards"] = rm(batch)  # (B, R): the advantage on each response's last token
    out = compute_advantage(batch, adv_estimator=verl_plugin.ESTIMATOR)
    adv = out.batch["advantages"]  # (B, R)
    mask = batch.batch["response_mask"].to(adv.dtype)
    want = torch.tensor([r["extra_info"]["advantage"] for r in rows], dtype=adv.dtype)[:, None] * mask
    assert torch.allclose(adv, want, atol=1e-6)  # every response token carries its turn's advantage
    assert torch.allclose(out.batch["returns"], want, atol=1e-6)
    assert len({round(float(x), 6) for x in want.max(1).values}) > 1, "advantages should differ between turns"
    # the numpy/torch helper for custom trainers agrees
    helper = verl_plugin.token_level_advantages([r["extra_info"] for r in rows], batch.batch["response_mask"].double())
    assert torch.allclose(helper.to(adv.dtype), want, atol=1e-6)
