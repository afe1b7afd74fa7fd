"""Task suites with verifiable answers that decompose into subtasks with dependencies.

Three suites (:data:`SUITES`), each generated from ``(seed, size)`` and checked exactly:

``arith``   an arithmetic expression tree over small integers with ``+ - *``; every
            internal node is a subtask ``a op b`` whose operands are literals or the
            answers of its child subtasks; the root's value is the answer.
``lookup``  multi-hop lookups over a generated fact table (``the mentor of X is Y``);
            hop ``k`` asks for the mentor of hop ``k-1``'s answer; the last hop's name is
            the answer.
``list``    list processing: the list is cut into chunks, each chunk is reduced
            (``sum`` or ``max``) by one subtask, and a final subtask reduces the chunk
            results.

A subtask's prompt is filled in at run time from the answers its dependencies actually
returned (what the orchestrator communicates, O3), so a wrong intermediate answer
propagates: :meth:`Task.expected` gives the answer that is correct *for the inputs it was
given* (local correctness), :attr:`Subtask.answer` the globally correct one.

Answers are parsed robustly from rambling text (:func:`parse_int`, :func:`parse_choice`: a
tagged answer if there is one, else the last integer / the last named choice) and
compared exactly (:mod:`orchestrace.llm._answers`).

>>> t = make_task("arith", seed=3, size=3)
>>> [s.id for s in t.subtasks] == list(t.order)
True
>>> t.check(f"blah blah. The answer is {t.answer}.")
True
>>> parse_int("So 4 + 4 = 8, hence the result: -12"), parse_int("<answer>7</answer> not 9")
(-12, 7)
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import ConfigError
from ._answers import parse_answer, parse_choice, parse_int

__all__ = [
    "SUITES",
    "VOTE_SUITES",
    "Subtask",
    "Task",
    "make_task",
    "make_tasks",
    "make_vote_task",
    "vote_task_prompt",
    "task_for_dag",
    "parse_answer",
    "parse_choice",
    "parse_int",
]

#: Names of the task suites.
SUITES: tuple[str, ...] = ("arith", "lookup", "list")

_SYSTEM = "You are a careful assistant. Be brief."

# -- tasks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subtask:
    """One unit of work: a prompt template whose ``{dep}`` fields are filled with dependency answers.

    ``op`` and ``args`` say how to compute the locally-correct answer: ``args`` items are
    literals (``"7"``) or dependency ids (``"s1"``).
    """

    id: str
    kind: str  # answer kind: "int" | "choice"
    template: str
    deps: tuple[str, ...]
    answer: str  # globally correct answer
    op: str
    args: tuple[str, ...]
    difficulty: float = 1.0


@dataclass(frozen=True)
class Task:
    """A task: a question, its exact ``answer``, and subtasks (``order`` is a topological order).

    ``root`` is the subtask whose answer is the task's answer; ``context`` is shared
    background every subtask prompt includes (the fact table of ``lookup``).
    """

    id: str
    suite: str
    question: str
    answer: str
    subtasks: tuple[Subtask, ...]
    root: str
    context: str = ""
    choices: tuple[str, ...] = ()
    table: Mapping[str, str] = field(default_factory=dict)
    difficulty: float = 1.0

    @property
    def order(self) -> tuple[str, ...]:
        """Subtask ids in a dependency-respecting order."""
        return tuple(s.id for s in self.subtasks)

    @property
    def kind(self) -> str:
        """Answer kind of the whole task."""
        return self.subtask(self.root).kind

    def subtask(self, sid: str) -> Subtask:
        """The subtask with id ``sid``."""
        for s in self.subtasks:
            if s.id == sid:
                return s
        raise KeyError(sid)

    def describe(self, sid: str) -> str:
        """Subtask ``sid`` as a self-contained expression (its dependencies spelled out).

        >>> t = task_for_dag("arith", [[], [0]], seed=2)
        >>> t.describe("s1").count("(") >= 1
        True
        """
        s = self.subtask(sid)
        parts = [f"({self.describe(a)})" if a in s.deps else a for a in s.args]
        if s.op in ("+", "-", "*"):
            return f"{parts[0]} {s.op} {parts[1]}"
        if s.op == "sum":
            return " + ".join(parts)
        if s.op == "max":
            return f"max({', '.join(parts)})"
        if s.op == "lookup":
            inner = self.describe(s.args[0]) if s.args[0] in s.deps else s.args[0]
            return f"the mentor of {inner}"
        return parts[0]

    def prompt(
        self, sid: str, dep_answers: Mapping[str, str | None], comm: str = "summary",
    ) -> list[dict[str, str]]:
        """Chat messages for subtask ``sid`` given its dependencies' answers and the O3 mode.

        ``comm`` (the O3 communication mode) decides what the worker is told about its
        dependencies: ``"none"`` — nothing, each dependency is spelled out as an expression
        for the worker to work out itself (harder, no upstream errors); ``"summary"`` —
        their answers; ``"full"`` — their answers plus how each was asked. A missing
        dependency answer is spelled out as in ``"none"``.

        >>> t = task_for_dag("arith", [[], [0]], seed=2)
        >>> a0 = t.subtask("s0").answer
        >>> a0 in t.prompt("s1", {"s0": a0})[1]["content"]
        True
        """
        if comm not in ("none", "summary", "full"):
            raise ConfigError(f"unknown communication mode {comm!r}; expected none, summary or full")
        s = self.subtask(sid)
        fill: dict[str, str] = {}
        for d in s.deps:
            ans = dep_answers.get(d)
            if comm == "none" or not ans:
                text = self.describe(d)
                fill[d] = text if self.subtask(d).op == "lookup" else f"({text})"
            else:
                fill[d] = ans
        body = s.template.format(**fill)
        if comm == "full" and s.deps:
            notes = "\n".join(
                f"- {self.describe(d)} = {dep_answers.get(d) or 'unknown'}" for d in s.deps
            )
            body = f"Earlier results:\n{notes}\n\n{body}"
        if self.context:
            body = f"{self.context}\n\n{body}"
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": body}]

    def whole_prompt(self) -> list[dict[str, str]]:
        """Chat messages asking the whole question at once (no decomposition)."""
        body = f"{self.context}\n\n{self.question}" if self.context else self.question
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": body}]

    def parse(self, sid: str | None, text: str) -> str | None:
        """Parse a reply to subtask ``sid`` (None: to the whole task) as a canonical answer string."""
        kind = self.kind if sid is None else self.subtask(sid).kind
        return parse_answer(text, kind, self.choices)

    def expected(self, sid: str, dep_answers: Mapping[str, str | None]) -> str | None:
        """The answer that is correct for subtask ``sid`` *given* these dependency answers.

        None when an input is missing or unusable.
        """
        s = self.subtask(sid)
        vals = [dep_answers.get(a) if a in s.deps else a for a in s.args]
        if any(v is None for v in vals):
            return None
        return _apply(s.op, [str(v) for v in vals], self.table)

    def check(self, text: str, sid: str | None = None) -> bool:
        """Whether ``text`` answers the task (or subtask ``sid``) exactly right."""
        want = self.answer if sid is None else self.subtask(sid).answer
        return self.parse(sid, text) == want


def _apply(op: str, vals: list[str], table: Mapping[str, str]) -> str | None:
    try:
        if op == "lookup":
            return table.get(vals[0])
        if op == "id":
            return vals[0]
        ints = [int(v) for v in vals]
    except (ValueError, IndexError):
        return None
    if op == "+":
        return str(ints[0] + ints[1])
    if op == "-":
        return str(ints[0] - ints[1])
    if op == "*":
        return str(ints[0] * ints[1])
    if op == "sum":
        return str(sum(ints))
    if op == "max":
        return str(max(ints))
    raise ConfigError(f"unknown subtask op {op!r}")


def make_task(suite: str, *, seed: int, size: int = 3) -> Task:
    """Generate one task of ``suite`` (see :data:`SUITES`); ``size`` ≈ number of subtasks.

    >>> t = make_task("list", seed=0, size=3)
    >>> len(t.subtasks), t.subtasks[-1].id == t.root
    (4, True)
    >>> make_task("lookup", seed=1, size=2).kind
    'choice'
    """
    if suite not in SUITES:
        raise ConfigError(f"unknown task suite {suite!r}; choose one of {', '.join(SUITES)}")
    if not 1 <= size <= 32:
        raise ConfigError(f"size must be in [1, 32] (subtasks per task), got {size}")
    rng = random.Random(f"{suite}:{seed}:{size}")
    if suite == "arith":
        return _arith(rng, seed, size)
    if suite == "lookup":
        return _lookup(rng, seed, size)
    return _listproc(rng, seed, size)


def make_tasks(suite: str, n: int, *, seed: int = 0, size: int = 3) -> list[Task]:
    """``n`` tasks of ``suite`` with seeds ``seed, seed+1, …``.

    >>> [t.id for t in make_tasks("arith", 2, seed=5)]
    ['arith-5', 'arith-6']
    """
    return [make_task(suite, seed=seed + i, size=size) for i in range(n)]


_INSTR_INT = "Reply with the number only."


def _arith(rng: random.Random, seed: int, size: int) -> Task:
    # Build a random binary tree with ``size`` internal nodes; leaves are integers 1..9.
    subtasks: list[Subtask] = []

    def build(n_internal: int) -> tuple[str, str, int]:
        """Return (operand reference, infix text, value)."""
        if n_internal == 0:
            v = rng.randint(1, 9)
            return str(v), str(v), v
        left_n = rng.randint(0, n_internal - 1)
        la, lt, lv = build(left_n)
        ra, rt, rv = build(n_internal - 1 - left_n)
        op = rng.choice("+-*") if lv * rv <= 81 else rng.choice("+-")
        value = lv + rv if op == "+" else lv - rv if op == "-" else lv * rv
        sid = f"s{len(subtasks)}"
        deps = tuple(a for a in (la, ra) if a.startswith("s"))
        fa = f"{{{la}}}" if la.startswith("s") else la
        fb = f"{{{ra}}}" if ra.startswith("s") else ra
        subtasks.append(
            Subtask(
                id=sid, kind="int", template=f"Compute {fa} {op} {fb}. {_INSTR_INT}",
                deps=deps, answer=str(value), op=op, args=(la, ra),
            )
        )
        lt = lt if left_n == 0 else f"({lt})"
        rt = rt if n_internal - 1 - left_n == 0 else f"({rt})"
        return sid, f"{lt} {op} {rt}", value

    root, text, value = build(size)
    return Task(
        id=f"arith-{seed}", suite="arith", question=f"Compute {text}. {_INSTR_INT}",
        answer=str(value), subtasks=tuple(subtasks), root=root, difficulty=float(size),
    )


_NAMES = (
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jun",
    "Kofi", "Lena", "Mateo", "Nora", "Omar", "Priya",
)


def _lookup(rng: random.Random, seed: int, size: int) -> Task:
    names = rng.sample(_NAMES, k=min(len(_NAMES), max(6, size + 3)))
    # A random function name -> mentor (no self-mentoring).
    table = {}
    for n in names:
        table[n] = rng.choice([m for m in names if m != n])
    start = rng.choice(names)
    facts = "Facts:\n" + "\n".join(f"- The mentor of {n} is {table[n]}." for n in names)
    subtasks: list[Subtask] = []
    cur, prev_ref = start, start
    for k in range(size):
        sid = f"s{k}"
        ref = f"{{{prev_ref}}}" if prev_ref.startswith("s") and prev_ref[1:].isdigit() else prev_ref
        cur = table[cur]
        subtasks.append(
            Subtask(
                id=sid, kind="choice", template=f"Who is the mentor of {ref}? Reply with the name only.",
                deps=(prev_ref,) if k else (), answer=cur, op="lookup", args=(prev_ref,),
            )
        )
        prev_ref = sid
    chain = "the mentor of " * size
    return Task(
        id=f"lookup-{seed}", suite="lookup", question=f"Who is {chain}{start}? Reply with the name only.",
        answer=cur, subtasks=tuple(subtasks), root=subtasks[-1].id, context=facts,
        choices=tuple(names), table=table, difficulty=float(size),
    )


def _listproc(rng: random.Random, seed: int, size: int) -> Task:
    op = rng.choice(("sum", "max"))
    chunks = [[rng.randint(0, 20) for _ in range(rng.randint(2, 4))] for _ in range(size)]
    word = "Add up" if op == "sum" else "Give the largest of"
    subtasks: list[Subtask] = []
    for k, ch in enumerate(chunks):
        vals = tuple(str(v) for v in ch)
        subtasks.append(
            Subtask(
                id=f"s{k}", kind="int", template=f"{word} these numbers: {', '.join(vals)}. {_INSTR_INT}",
                deps=(), answer=_apply(op, list(vals), {}) or "", op=op, args=vals,
            )
        )
    deps = tuple(s.id for s in subtasks)
    fields = ", ".join(f"{{{d}}}" for d in deps)
    total = _apply(op, [s.answer for s in subtasks], {}) or ""
    subtasks.append(
        Subtask(
            id=f"s{size}", kind="int", template=f"{word} these numbers: {fields}. {_INSTR_INT}",
            deps=deps, answer=total, op=op, args=deps,
        )
    )
    flat = ", ".join(str(v) for ch in chunks for v in ch)
    return Task(
        id=f"list-{seed}", suite="list", question=f"{word} these numbers: {flat}. {_INSTR_INT}",
        answer=total, subtasks=tuple(subtasks), root=f"s{size}", difficulty=float(size),
    )


def task_for_dag(suite: str, parents: Sequence[Sequence[int]], *, seed: int) -> Task:
    """A task of ``suite`` whose subtask ``i`` depends exactly on subtasks ``parents[i]``.

    This maps any dependency DAG (e.g. the environment's task structure; parents must be
    earlier indices) onto verifiable work: ``arith`` node ``i`` computes ``a op b`` with
    its parents' answers as operands (literals fill missing operands, a third parent is
    added in); ``list`` node ``i`` adds up a short list of literals and its parents'
    answers; ``lookup`` node ``i`` asks for the mentor of its first parent's answer (or of
    a start name). The task's ``root`` is the last subtask; every subtask has a globally
    correct answer, so "all subtasks right" is checkable too.

    >>> t = task_for_dag("arith", [[], [], [0, 1]], seed=0)
    >>> t.subtask("s2").deps, t.root
    (('s0', 's1'), 's2')
    >>> t.expected("s2", {"s0": t.subtask("s0").answer, "s1": t.subtask("s1").answer}) == t.subtask("s2").answer
    True
    """
    _check_dag(suite, parents)
    n = len(parents)
    rng = random.Random(f"dag:{suite}:{seed}:{n}")
    sids = [f"s{i}" for i in range(n)]
    subtasks: list[Subtask] = []
    answers: dict[str, str] = {}
    table: dict[str, str] = {}
    context = ""
    choices: tuple[str, ...] = ()
    if suite == "lookup":
        names = rng.sample(_NAMES, k=min(len(_NAMES), max(6, n + 3)))
        for nm in names:
            table[nm] = rng.choice([m for m in names if m != nm])
        context = "Facts:\n" + "\n".join(f"- The mentor of {nm} is {table[nm]}." for nm in names)
        choices = tuple(names)
    for i, ps in enumerate(parents):
        deps = tuple(sids[int(p)] for p in dict.fromkeys(ps))
        if suite == "arith":
            sub = _dag_arith(rng, sids[i], deps, answers)
        elif suite == "list":
            sub = _dag_list(rng, sids[i], deps, answers)
        else:
            sub = _dag_lookup(rng, sids[i], deps, answers, table, choices)
        answers[sub.id] = sub.answer
        subtasks.append(sub)
    task = Task(
        id=f"{suite}-dag-{seed}", suite=suite, question="",
        answer=subtasks[-1].answer, subtasks=tuple(subtasks), root=sids[-1], context=context,
        choices=choices, table=table, difficulty=float(n),
    )
    whole = task.describe(sids[-1])
    if suite == "lookup":
        question = f"Who is {whole}? Reply with the name only."
    else:
        question = f"Compute {whole}. {_INSTR_INT}"
    return dataclasses.replace(task, question=question)


def _check_dag(suite: str, parents: Sequence[Sequence[int]]) -> None:
    """A known suite and a DAG in topological order: every parent an earlier index."""
    if suite not in SUITES:
        raise ConfigError(f"unknown task suite {suite!r}; choose one of {', '.join(SUITES)}")
    if len(parents) < 1:
        raise ConfigError("parents must describe at least one subtask")
    for i, ps in enumerate(parents):
        for p in ps:
            if not 0 <= int(p) < i:
                raise ConfigError(f"parents[{i}] contains {p}; parents must be earlier subtask indices (0..{i - 1})")


def _dag_arith(rng: random.Random, sid: str, deps: tuple[str, ...], answers: dict[str, str]) -> Subtask:
    """``a op b`` over the parents' answers (literals fill missing operands); three or more parents: their sum."""
    args = list(deps)
    while len(args) < 2:
        args.insert(rng.randint(0, len(args)), str(rng.randint(1, 9)))
    vals = [int(answers[a]) if a in answers else int(a) for a in args]
    shown = [f"{{{a}}}" if a in answers else a for a in args]
    if len(args) == 2:
        op_name = rng.choice("+-*") if abs(vals[0] * vals[1]) <= 81 else rng.choice("+-")
        expr = f"{shown[0]} {op_name} {shown[1]}"
    else:  # three or more parents: add them all up
        op_name, expr = "sum", " + ".join(shown)
    answer = _apply(op_name, [str(v) for v in vals], {}) or ""
    return Subtask(id=sid, kind="int", template=f"Compute {expr}. {_INSTR_INT}", deps=deps, answer=answer,
                   op=op_name, args=tuple(args))


def _dag_list(rng: random.Random, sid: str, deps: tuple[str, ...], answers: dict[str, str]) -> Subtask:
    """The sum of a short list of literals and the parents' answers."""
    lits = [str(rng.randint(0, 20)) for _ in range(rng.randint(1, 3) if deps else rng.randint(2, 4))]
    answer = str(sum(int(v) for v in lits) + sum(int(answers[d]) for d in deps))
    fields = ", ".join(lits + [f"{{{d}}}" for d in deps])
    return Subtask(id=sid, kind="int", template=f"Add up these numbers: {fields}. {_INSTR_INT}", deps=deps,
                   answer=answer, op="sum", args=tuple(lits) + deps)


def _dag_lookup(rng: random.Random, sid: str, deps: tuple[str, ...], answers: dict[str, str],
                table: dict[str, str], choices: tuple[str, ...]) -> Subtask:
    """The mentor of the first parent's answer (or of a start name)."""
    src = deps[0] if deps else rng.choice(choices)
    deps = deps[:1]
    ref = f"{{{src}}}" if deps else src
    return Subtask(id=sid, kind="choice", template=f"Who is the mentor of {ref}? Reply with the name only.",
                   deps=deps, answer=table[answers[src] if deps else src], op="lookup", args=(src,))


# -- single-call families for self-consistency votes (not decomposed; see VOTE_SUITES) --------

#: Single-call task families for vote loops (``orchestrace collect``); each is one subtask.
#: ``add``: ``a + b`` or ``a - b`` with ``size``-digit operands (size 1..3). ``mentor``: one
#: lookup in a fact table of ``2 + 3·size`` people (size 1..3).
VOTE_SUITES: tuple[str, ...] = ("add", "mentor")


def make_vote_task(suite: str, *, seed: int, size: int = 1) -> Task:
    """One single-call task of a vote family (:data:`VOTE_SUITES`); ids are ``suite-s<size>-<seed>``.

    >>> t = make_vote_task("add", seed=7, size=2)
    >>> t.id, t.difficulty, t.check(f"The answer is {t.answer}.")
    ('add-s2-000007', 2.0, True)
    >>> m = make_vote_task("mentor", seed=1, size=1)
    >>> len(m.choices), m.kind
    (5, 'choice')
    """
    if suite not in VOTE_SUITES:
        raise ConfigError(f"unknown vote suite {suite!r}; choose one of {', '.join(VOTE_SUITES)}")
    if not 1 <= size <= 3:
        raise ConfigError(f"size must be in [1, 3] for vote suites, got {size}")
    rng = random.Random(f"vote:{suite}:{seed}:{size}")
    tid = f"{suite}-s{size}-{seed:06d}"
    if suite == "add":
        lo, hi = (1 if size == 1 else 10 ** (size - 1)), 10**size - 1
        a, b = rng.randint(lo, hi), rng.randint(lo, hi)
        op = rng.choice("+-")
        value = a + b if op == "+" else a - b
        st = Subtask(id="s0", kind="int", template=f"Compute {a} {op} {b}. {_INSTR_INT}", deps=(),
                     answer=str(value), op=op, args=(str(a), str(b)))
        return Task(id=tid, suite=suite, question=st.template, answer=st.answer, subtasks=(st,), root="s0",
                    difficulty=float(size))
    names = rng.sample(_NAMES, k=2 + 3 * size)
    table = {n: rng.choice([m for m in names if m != n]) for n in names}
    who = rng.choice(names)
    facts = "Facts:\n" + "\n".join(f"- The mentor of {n} is {table[n]}." for n in names)
    q = f"Who is the mentor of {who}? Reply with the name only."
    st = Subtask(id="s0", kind="choice", template=q, deps=(), answer=table[who], op="lookup", args=(who,))
    return Task(id=tid, suite=suite, question=q, answer=table[who], subtasks=(st,), root="s0", context=facts,
                choices=tuple(names), table=table, difficulty=float(size))


def vote_task_prompt(task_id: str) -> str:
    """The user prompt of a vote task, regenerated from its id (``suite-s<size>-<seed>``, :func:`make_vote_task`):
    the one way to tell two logged tasks that ask the same question (duplicate checks across sets).

    >>> vote_task_prompt("add-s2-000007") == make_vote_task("add", seed=7, size=2).whole_prompt()[-1]["content"]
    True
    >>> vote_task_prompt("add-7")
    Traceback (most recent call last):
    orchestrace.errors.ConfigError: task id 'add-7' is not a vote task's (expected suite-s<size>-<seed>, e.g. add-s2-000007)
    """
    suite, size, seed = (str(task_id).rsplit("-", 2) + ["", ""])[:3]
    if not (size[:1] == "s" and size[1:].isascii() and size[1:].isdigit() and seed.isascii() and seed.isdigit()
            and len(seed) <= 12):
        raise ConfigError(f"task id {str(task_id)[:80]!r} is not a vote task's (expected suite-s<size>-<seed>, "
                          "e.g. add-s2-000007)")
    return make_vote_task(suite, seed=int(seed), size=int(size[1:])).whole_prompt()[-1]["content"]
