"""``orchestrace demo``'s two-family team section, with the task generator's prompts for the duplicate check.

:func:`team2_demo_section` is :func:`orchestrace.evaluation.team2_demo.team2_section` with ``prompt_of`` the
vote tasks' own prompt regeneration (:func:`orchestrace.llm.tasks.vote_task_prompt`): a fresh task that asks a
question of the development corpus is excluded and counted, as the pre-registration says. It lives on this
floor because the task generator does (``llm``); the analysis and its Markdown are the evaluation floor's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["team2_demo_section"]


def team2_demo_section(out: str | Path, *, log: Callable[[str], None] = lambda s: None) -> str:
    """The demo's hook: the two-family team section under ``OUT/real-team2/`` (Markdown, headline first)."""
    from ..evaluation.team2_demo import team2_section
    from ..llm.tasks import vote_task_prompt

    return team2_section(out, prompt_of=vote_task_prompt, log=log)
