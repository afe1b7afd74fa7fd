"""Your own tasks: a JSONL task file, its graders, and :func:`load_task_file`.

One task per line (blank lines and lines starting with ``#`` are skipped)::

    {"id": "q1", "prompt": "What is 17 * 3?", "answer": "51", "grader": "numeric"}
    {"id": "q2", "messages": [{"role": "user", "content": "Capital of France?"}], "answer": "Paris"}
    {"id": "q3", "prompt": "Pick one: red, green", "answer": "green", "grader": {"type": "choice", "choices": ["red", "green"]}}

=============  ==========================================================================
field          meaning
=============  ==========================================================================
``id``         unique task id (string); it also fixes the task's split (60/20/20 by hash)
``prompt``     the question (a user turn; ``system`` optional) — or ``messages`` (a chat)
``answer``     the reference answer (string or number)
``grader``     ``exact`` (default), ``numeric``, ``regex``, ``choice``, or a Python callable
               ``module:function``; or an object ``{"type": …, …}`` with ``tolerance`` /
               ``rel_tolerance`` (numeric), ``pattern`` (regex), ``choices`` (choice),
               ``timeout_s`` (any; default 5)
``suite``      optional group name (default: the file's stem); ``difficulty`` optional int
=============  ==========================================================================

What each grader reads from a reply: a tagged answer wins (``<answer>…</answer>``,
``\\boxed{…}``, ``#### …``, ``the answer is …``), else the last number (``numeric``), the last
choice named (``choice``), or the last non-empty line (``exact``, ``regex``). ``exact``
compares case- and space-insensitively; ``regex`` is correct when the pattern matches the
reply (``re.search``). A callable gets ``(reply, reference)`` and returns a bool (the grade),
a string (the parsed answer, compared exactly with the reference) or None (nothing parsed).

Every answer is reduced to a canonical string: the reference itself when the grade is
correct, so correct votes agree; a wrong answer keeps its own text. :meth:`FileTask.parse`
is the collector's interface (the same as :class:`~orchestrace.llm.tasks.Task`'s);
:meth:`FileTask.grade` gives the answer, the grade and any grader error.

Bad input is never a traceback: :func:`load_task_file` checks every line and raises one
:class:`TaskFileError` listing every problem located ``FILE:LINE`` (missing answer, unknown
grader, duplicate id, a prompt over the context limit, a callable that cannot be imported,
raises, hangs past its timeout, or does not grade its own reference answer correct).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.jsonl"
>>> _ = p.write_text('{"id": "a", "prompt": "2+2?", "answer": 4, "grader": "numeric"}\\n')
>>> [t] = load_task_file(p)
>>> t.id, t.suite, t.parse(None, "I think 4.0"), t.grade("it is 5")
('a', 'mine', '4', Graded(answer='5', correct=False, error=None))
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .._limits import (
    MAX_DIFFICULTY,
    MAX_LINE_BYTES,
    MAX_SMALL_FILE_BYTES,
    printable,
    read_capped,
    scrub,
)
from .._problems import Problem
from ..errors import ConfigError
from ..llm.tasks import parse_choice
from ..vocab import Severity
from ._sandbox import GraderFailed, check_grader, run_grader

__all__ = ["GRADERS", "FileTask", "Graded", "Grader", "TaskFileError", "extract_answer", "load_task_file",
           "parse_grader", "parse_number"]

#: The named graders (besides a ``module:function`` callable).
GRADERS: tuple[str, ...] = ("exact", "numeric", "regex", "choice")
DEFAULT_TIMEOUT_S = 5.0
#: A reference answer's length: what a corpus reader accepts (orchestrace.logged.readers.Answer).
MAX_ANSWER_CHARS = 4096
_MAX_PROBLEMS = 200
_SYSTEM = "You are a careful assistant. Be brief."

_TAGS = (
    re.compile(r"<answer>(.*?)</answer>", re.I | re.S),
    re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}"),
    re.compile(r"####\s*([^\n]*)"),
    re.compile(r"\b(?:final\s+answer|the\s+answer\s+is|answer\s*:)\s*:?\s*([^\n]*)", re.I),
)
_NUM = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-+]?\.\d+")
_MINUS = "\u2212\u2013\u2014\ufe63\uff0d"


class TaskFileError(ConfigError):
    """A task file with problems; ``problems`` lists every one, located ``FILE:LINE``."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class Graded(NamedTuple):
    """A graded reply: the canonical answer (None: nothing parsed), the grade, a grader error if any."""

    answer: str | None
    correct: bool
    error: str | None


def extract_answer(text: str) -> str | None:
    """The answer a reply gives: the last tagged answer (``\\boxed{}`` …), else its last non-empty line.

    >>> extract_answer("so x = 3. \\\\boxed{42}"), extract_answer("hmm\\nParis.\\n"), extract_answer("  ")
    ('42', 'Paris.', None)
    """
    for rx in _TAGS:
        hits = rx.findall(text)
        if hits and hits[-1].strip():
            return hits[-1].strip()
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else None


def parse_number(text: str) -> float | None:
    """The number a reply gives: the last number of its tagged answer if any, else of the whole text.

    >>> parse_number("3 apples and 4 pears: \\\\boxed{7}"), parse_number("It is −1,250.5 then 2"), parse_number("none")
    (7.0, 2.0, None)
    """
    text = text.translate({ord(c): "-" for c in _MINUS})
    for rx in _TAGS:
        hits = rx.findall(text)
        if hits:
            nums = _NUM.findall(hits[-1])
            if nums:
                return float(nums[-1].replace(",", ""))
    nums = _NUM.findall(text)
    return float(nums[-1].replace(",", "")) if nums else None


def _norm(s: str) -> str:
    return " ".join(s.strip().strip(".").split()).casefold()


def _num_str(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class Grader:
    """How a reply is graded against a reference answer (module docstring)."""

    kind: str = "exact"  # exact | numeric | regex | choice | callable
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    pattern: str = ""
    choices: tuple[str, ...] = ()
    func: str = ""  # "module:function" for kind == "callable"
    timeout_s: float = DEFAULT_TIMEOUT_S
    _fn: Any = field(default=None, repr=False, compare=False)

    def grade(self, text: str, reference: str) -> Graded:
        """Grade ``text`` against ``reference``; never raises for a reply (a grader error is returned).

        >>> Grader("numeric", tolerance=0.01).grade("about 3.14159", "3.14")
        Graded(answer='3.14', correct=True, error=None)
        >>> Grader("exact").grade("The answer is  paris.", "Paris")
        Graded(answer='Paris', correct=True, error=None)
        """
        if self.kind == "callable":
            return self._grade_callable(text, reference)
        if self.kind == "numeric":
            x = parse_number(text)
            if x is None:
                return Graded(None, False, None)
            ref = float(reference)
            ok = abs(x - ref) <= max(self.tolerance, self.rel_tolerance * abs(ref))
            return Graded(reference if ok else _num_str(x), ok, None)
        if self.kind == "choice":
            c = parse_choice(text, self.choices)
            ok = c is not None and _norm(c) == _norm(reference)
            return Graded(reference if ok else c, ok, None)
        got = extract_answer(text)
        if self.kind == "regex":
            try:  # in the grader's process: a pattern that backtracks for ever is killed at the deadline
                hit = run_grader(None, text, pattern=self.pattern, timeout_s=self.timeout_s)
            except GraderFailed as exc:
                return Graded(None, False, f"grader regex {printable(self.pattern[:80])!r} {exc}")
            if hit:
                return Graded(reference, True, None)
            return Graded(None if got is None else _wrong(got, reference), False, None)
        if got is None:
            return Graded(None, False, None)
        ok = _norm(got) == _norm(reference)
        return Graded(reference if ok else got, ok, None)

    def _grade_callable(self, text: str, reference: str) -> Graded:
        if self._fn is None:  # a task file's module:function: in its own process (orchestrace.collection._sandbox)
            try:
                out = run_grader(self.func, text, reference=reference, timeout_s=self.timeout_s)
            except GraderFailed as exc:
                return Graded(None, False, f"grader {self.func} {scrub(printable(str(exc)))}")
        else:  # a function object handed in from Python: the caller's own code, run in this process
            try:
                out = call_with_timeout(self._fn, (text, reference), self.timeout_s)
            except TimeoutError:
                return Graded(None, False, f"grader {self.func} did not return within {self.timeout_s:g} s")
            except Exception as exc:  # a user's grader: any error is counted, never a traceback
                return Graded(None, False, f"grader {self.func} raised {type(exc).__name__}: {scrub(str(exc))}")
        if out is None:
            return Graded(None, False, None)
        if isinstance(out, bool):
            got = extract_answer(text)
            return Graded(reference, True, None) if out else Graded(
                None if got is None else _wrong(got, reference), False, None)
        if isinstance(out, (str, int, float)):
            return Graded(str(out), str(out) == reference, None)
        return Graded(None, False, f"grader {self.func} returned {type(out).__name__}; expected bool, str or None")


def _wrong(got: str, reference: str) -> str:
    """A wrong answer's label, never equal to the reference (a grader said it is wrong)."""
    return got if got != reference else f"{got} (graded wrong)"


def call_with_timeout(fn: Callable[..., Any], args: tuple, timeout_s: float) -> Any:
    """``fn(*args)``, raising :class:`TimeoutError` after ``timeout_s`` seconds.

    In the main thread an interval timer interrupts the call; elsewhere the call runs in a
    daemon thread that is abandoned when it hangs.

    >>> call_with_timeout(max, (1, 2), 1.0)
    2
    """
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def _alarm(*_: object) -> None:
            raise TimeoutError

        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            return fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller)
            box.append((False, exc))

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(timeout_s)
    if not box:
        raise TimeoutError
    ok, val = box[0]
    if not ok:
        raise val
    return val


def parse_grader(spec: Any, *, answer: str = "") -> Grader:
    """A :class:`Grader` from a task line's ``grader`` value; :class:`ValueError` says what is wrong.

    >>> parse_grader("numeric").kind, parse_grader({"type": "regex", "pattern": "^4$"}).pattern
    ('numeric', '^4$')
    >>> parse_grader("json:loads").func
    'json:loads'
    """
    if spec is None:
        spec = "exact"
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError("grader must be a name (exact, numeric, regex, choice, module:function) or an object "
                         "with a string 'type'")
    kind = spec["type"]
    known = {"type", "tolerance", "rel_tolerance", "pattern", "choices", "timeout_s"}
    extra = sorted(set(spec) - known)
    if extra:
        raise ValueError(f"unknown grader field(s) {extra}; known: {sorted(known)}")
    timeout = spec.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        raise ValueError(f"timeout_s must be a number of seconds in (0, 600], got {timeout!r}")
    if ":" in kind:
        mod, _, name = kind.partition(":")
        if not mod or not name:
            raise ValueError(f"callable grader {kind!r}: write it as module:function")
        try:  # imported in the grader's own process, under its deadline (a SystemExit or a sleep at import)
            check_grader(kind, float(timeout))
        except GraderFailed as exc:
            raise ValueError(f"callable grader {kind!r} {scrub(printable(str(exc)))}") from None
        return Grader("callable", func=kind, timeout_s=float(timeout))
    if kind not in GRADERS:
        raise ValueError(f"unknown grader {kind!r}; choose exact, numeric, regex, choice or module:function")
    if kind == "numeric":
        tol, rel = spec.get("tolerance", 0.0), spec.get("rel_tolerance", 0.0)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in (tol, rel)):
            raise ValueError("numeric grader: tolerance and rel_tolerance must be numbers >= 0")
        try:
            float(answer or "0")
        except ValueError:
            raise ValueError(f"numeric grader: the reference answer {answer!r} is not a number") from None
        return Grader("numeric", tolerance=float(tol), rel_tolerance=float(rel), timeout_s=float(timeout))
    if kind == "regex":
        pat = spec.get("pattern")
        if not isinstance(pat, str) or not pat:
            raise ValueError("regex grader needs a non-empty string 'pattern'")
        try:
            re.compile(pat)
        except re.error as exc:
            raise ValueError(f"regex grader: pattern {pat!r} does not compile ({exc})") from None
        return Grader("regex", pattern=pat, timeout_s=float(timeout))
    if kind == "choice":
        ch = spec.get("choices")
        if not isinstance(ch, list) or len(ch) < 2 or not all(isinstance(c, str) and c for c in ch):
            raise ValueError("choice grader needs 'choices': a list of at least two non-empty strings")
        if answer and _norm(answer) not in {_norm(c) for c in ch}:
            raise ValueError(f"choice grader: the reference answer {answer!r} is not among the choices {ch}")
        return Grader("choice", choices=tuple(ch), timeout_s=float(timeout))
    return Grader("exact", timeout_s=float(timeout))


@dataclass(frozen=True)
class FileTask:
    """One task of a task file; quacks like :class:`~orchestrace.llm.tasks.Task` for the collectors."""

    id: str
    suite: str
    messages: tuple[dict[str, str], ...]
    answer: str
    grader: Grader
    difficulty: int = 0
    where: str = ""

    @property
    def kind(self) -> str:
        """The grader's kind (``exact``, ``numeric``, ``regex``, ``choice``, ``callable``)."""
        return self.grader.kind

    @property
    def question(self) -> str:
        """The last user turn."""
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")

    def whole_prompt(self) -> list[dict[str, str]]:
        """The chat messages of the task."""
        return [dict(m) for m in self.messages]

    def grade(self, text: str) -> Graded:
        """Grade one reply (:meth:`Grader.grade`)."""
        return self.grader.grade(text, self.answer)

    def parse(self, sid: str | None, text: str) -> str | None:
        """The canonical answer of a reply (the reference when correct); ``sid`` is ignored (no subtasks)."""
        return self.grade(text).answer


def _messages(rec: dict, suite_system: str | None) -> tuple[dict[str, str], ...]:
    if "messages" in rec:
        msgs = rec["messages"]
        if not isinstance(msgs, list) or not msgs or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in msgs):
            raise ValueError("'messages' must be a non-empty list of {role, content} strings")
        if msgs[-1]["role"] != "user":
            raise ValueError("'messages' must end with a user turn")
        return tuple({"role": m["role"], "content": m["content"]} for m in msgs)
    prompt = rec.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("no question: give 'prompt' (a string) or 'messages' (a chat)")
    system = rec.get("system", suite_system)
    if system is not None and not isinstance(system, str):
        raise ValueError("'system' must be a string")
    head = [{"role": "system", "content": system}] if system else []
    return (*head, {"role": "user", "content": prompt})


def estimate_tokens(messages: Sequence[dict[str, str]]) -> int:
    """A generous token estimate of a chat prompt: characters / 3, plus 4 per message.

    >>> estimate_tokens([{"role": "user", "content": "x" * 30}])
    14
    """
    return sum(len(m["content"]) // 3 + 4 for m in messages)


def load_task_file(
    path: str | os.PathLike[str], *, max_prompt_tokens: int | None = None, check_graders: bool = True,
    system: str | None = _SYSTEM, require_prompt: bool = True,
) -> list[FileTask]:
    """Read and check a JSONL task file (module docstring); raise :class:`TaskFileError` listing every problem.

    ``max_prompt_tokens``: a prompt whose estimate (:func:`estimate_tokens`) exceeds it is a
    problem (the context limit minus the reply's tokens). ``check_graders``: each task's grader
    must grade the reference answer itself (``"The answer is REF."``) correct, within its
    timeout — a grader that raises, hangs or is wrong is found before any model is called.
    ``system``: the system turn given to ``prompt`` tasks without their own. ``require_prompt=False``
    accepts lines without a question (references for imported logs: ``collect import --tasks``).
    """
    p = Path(path)
    try:  # stat before open (a FIFO, a device, a symlink loop, a sparse 1 GiB file: refused unread), then a capped read
        data = read_capped(p, limit=MAX_SMALL_FILE_BYTES, what="task file")
    except ConfigError as exc:
        hint = " (JSONL: one task per line; see `orchestrace collect run --help`)" if not p.exists() else ""
        raise TaskFileError(f"{exc}{hint}") from None
    problems: list[Problem] = []
    n_problems = 0
    tasks: list[FileTask] = []
    first_line: dict[str, int] = {}
    # Not _limits.capped_lines (the JSONL streams' reader): a task file is small and read whole under its own cap
    # above, it may hold '#' comment lines, and an over-long line is a located task problem, not a skipped record.
    for ln, raw in enumerate(io.BytesIO(data), 1):  # lines end at \n only: a raw U+2028 is inside its line
        if not raw.strip() or raw.lstrip().startswith(b"#"):
            continue
        if len(raw) > MAX_LINE_BYTES:
            got: FileTask | tuple[str, str, str] = _bad(
                "size", f"the line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit for a task",
                "a collection stores each task's prompt in a trace line, which its reader caps at 1 MiB")
            line = None
        else:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                got, line = _bad("encoding", f"not UTF-8 (byte {exc.start + 1} of the line)"), None
        if line is not None:
            got = _line_task(p, ln, line, first_line, max_prompt_tokens=max_prompt_tokens,
                             check_graders=check_graders, system=system, require_prompt=require_prompt)
        if isinstance(got, FileTask):
            tasks.append(got)
        else:
            n_problems += 1
            if len(problems) < _MAX_PROBLEMS:  # a file of junk lines is counted, not one object per line
                code, msg, hint = got
                problems.append(Problem(code=f"taskfile.{code}", severity=Severity.ERROR, path=f"{p}:{ln}",
                                        message=msg, hint=hint))
            elif n_problems >= 10 * _MAX_PROBLEMS:
                break  # not a task file: stop reading (bounded time)
    if problems:
        more = f" (the first {len(problems)} listed)" if n_problems > len(problems) else ""
        more += f"; reading stopped at line {ln}" if n_problems >= 10 * _MAX_PROBLEMS else ""
        raise TaskFileError(f"{p}: {n_problems} problem(s) in the task file{more}; nothing was run "
                            f"(first: {problems[0]})", problems)
    if not tasks:
        raise TaskFileError(f"{p}: no tasks (one JSON object per line)")
    return tasks


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a task file may hold")


def _bad(code: str, msg: str, hint: str = "") -> tuple[str, str, str]:
    """What is wrong with a task line: the problem code (after ``taskfile.``), the message, the hint."""
    return code, msg, hint


def _line_task(p: Path, ln: int, line: str, first_line: dict[str, int], *, max_prompt_tokens: int | None,
               check_graders: bool, system: str | None, require_prompt: bool) -> FileTask | tuple[str, str, str]:
    """The task of one line of a task file, or what is wrong with it (``code, message, hint``); ``first_line``
    records the line of every id seen."""
    try:
        rec = json.loads(line, parse_constant=_no_constant)
    except ValueError as exc:
        return _bad("json", f"not JSON ({exc.args[0] if exc.args else exc})")
    except RecursionError:
        return _bad("json", "nested too deeply to be a task")
    if not isinstance(rec, dict):
        return _bad("record", "a task line must be a JSON object")
    tid = rec.get("id")
    if not isinstance(tid, (str, int)) or isinstance(tid, bool) or str(tid).strip() == "":
        return _bad("id", "missing or empty 'id' (a string)", "every task needs a unique id")
    tid = str(tid)
    if tid in first_line:
        return _bad("duplicate", f"task id {tid!r} already used on line {first_line[tid]}", "ids must be unique")
    first_line[tid] = ln
    ans = rec.get("answer")
    if ans is None or isinstance(ans, (dict, list, bool)) or str(ans).strip() == "":
        return _bad("answer", f"task {tid!r}: missing reference 'answer' (a string or number)",
                    "a task without a reference answer cannot be graded")
    if isinstance(ans, float) and not math.isfinite(ans):
        return _bad("answer", f"task {tid!r}: the reference answer {ans!r} is not a finite number")
    answer = _num_str(ans) if isinstance(ans, float) else str(ans)
    if len(answer) > MAX_ANSWER_CHARS:
        return _bad("answer", f"task {tid!r}: the reference answer is {len(answer)} characters, over the "
                    f"{MAX_ANSWER_CHARS} a corpus stores", "a corpus reader refuses longer answers")
    try:
        msgs = (_messages(rec, system) if require_prompt or "prompt" in rec or "messages" in rec
                else ({"role": "user", "content": ""},))
    except ValueError as exc:
        return _bad("prompt", f"task {tid!r}: {exc}")
    if max_prompt_tokens is not None and (n := estimate_tokens(msgs)) > max_prompt_tokens:
        return _bad("context", f"task {tid!r}: the prompt is about {n} tokens (characters/3), over the limit of "
                    f"{max_prompt_tokens} (the context minus the reply's tokens)",
                    "shorten the prompt, or serve a larger context (--context-limit for an external endpoint)")
    try:
        grader = parse_grader(rec.get("grader"), answer=answer)
    except ValueError as exc:
        return _bad("grader", f"task {tid!r}: {exc}")
    diff = rec.get("difficulty", 0)
    if not isinstance(diff, int) or isinstance(diff, bool) or not 0 <= diff <= MAX_DIFFICULTY:
        return _bad("difficulty", f"task {tid!r}: 'difficulty' must be an integer in [0, {MAX_DIFFICULTY}], "
                    f"got {printable(repr(diff)[:40])}")
    suite = rec.get("suite", p.name.split(".")[0])
    if not isinstance(suite, str) or not suite:
        return _bad("suite", f"task {tid!r}: 'suite' must be a non-empty string")
    task = FileTask(tid, suite, msgs, answer, grader, diff, f"{p}:{ln}")
    if check_graders:
        g = task.grade(f"The answer is {answer}.")
        if g.error or not g.correct:
            why = g.error or f"graded it wrong (parsed {g.answer!r})"
            return _bad("grader", f"task {tid!r}: the grader was given the reference answer itself and {why}",
                        "a grader must accept its own reference answer; fix the grader or the answer")
    return task

