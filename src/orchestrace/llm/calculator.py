"""The tool member's calculator: the expression a ``calc`` member writes, its evaluation, its prompt.

Shared by the team collectors (:mod:`orchestrace.collection.team`) and the worker trainer
(:mod:`orchestrace.llm.worker_grpo`), which grades a trained ``calc`` member exactly as it was
graded when the corpus was collected.

>>> calc_eval("12 + 7 - 3"), calc_eval("2 ** 99"), calc_eval("import os")
(16, None, None)
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .tasks import Task

__all__ = ["calc_eval"]

_EXPR = re.compile(r"[-+*() 0-9]{1,60}")
_FIND_EXPR = re.compile(r"\(?-?\d+\)?(?:\s*[-+*]\s*\(?-?\d+\)?)+")


def calc_eval(expr: str) -> int | None:
    """Evaluate a calculator expression (integers ≤ 10¹², + - * and parentheses, ≤ 60 characters); None if not one.

    >>> calc_eval("(3 + 4) * 2"), calc_eval("3 / 4"), calc_eval("9" * 70)
    (14, None, None)
    """
    expr = expr.strip()
    if not _EXPR.fullmatch(expr):
        return None
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError):
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and type(n.value) is int and n.value <= 10**12:
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Mult) and abs(a) * abs(b) > 10**12:
                raise ValueError("too large")
            return a + b if isinstance(n.op, ast.Add) else a - b if isinstance(n.op, ast.Sub) else a * b
        raise ValueError("not a calculator expression")

    try:
        return ev(node)
    except (ValueError, RecursionError):
        return None


_CALC_ASK = "Do not answer it yourself. Write only the arithmetic expression a calculator should evaluate."


def _calc_prompt(task: Task) -> list[dict[str, str]]:
    """The whole-task prompt plus the calculator instruction (a shared prefix keeps the server's prompt cache warm).

    The member is a calculator specialist: it asks for an expression on every task, so on a
    task no calculator can answer (a lookup) it spends tokens and answers nothing useful.
    """
    msgs = task.whole_prompt()
    msgs[-1] = {"role": "user", "content": f"{msgs[-1]['content']}\n\n{_CALC_ASK}"}
    return msgs


def _calc_answer(task: Task, text: str) -> tuple[str | None, dict[str, Any]]:
    """The calculator's answer for the calc member's reply, and what the tool was given and gave."""
    m = _FIND_EXPR.search(text)
    expr = m.group(0) if m else None
    value = calc_eval(expr) if expr else None
    return (None if value is None else str(value)), {"tool": "calculator", "input": expr, "output": value}


