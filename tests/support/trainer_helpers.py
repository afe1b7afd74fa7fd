"""Helpers of the trainer checks (a module of its own: every test folder has a ``conftest``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def needs(*modules: str, extra: str = "trainers") -> pytest.MarkDecorator:
    """Skip, naming the install command, when one of ``modules`` is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}: pip install 'orchestrace[{extra}]'")


def cli(*args: str) -> str:
    """Run ``python -m orchestrace ARGS`` as a user would; returns stdout, fails the test on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, f"orchestrace {' '.join(args)} exited {r.returncode}: {r.stderr}"
    return r.stdout


def tiny_llama(tok):
    """A 2-layer Llama (SmolLM2's architecture, hidden size 64) for ``tok``, randomly initialised
    (seeded, one torch thread): a real transformers model that trains for a few CPU steps in seconds."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      tie_word_embeddings=True)
    return LlamaForCausalLM(cfg)
