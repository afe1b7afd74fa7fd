"""What the judge reads of a run, and how it is fitted into a prompt: the transcript and its rendering.

:func:`transcript_of` turns an imported chat trace into a :class:`Transcript` (the task, the steps
with their speakers and text, the team, the ground truth); :func:`plan_caps` shares a character
budget among the steps (short ones whole, long ones at a common cap, the middle omitted when even
a minimum does not fit), :func:`truncate` cuts one text around a visible marker, and
:func:`_render` writes the user message's transcript part, saying what it cut
(:class:`Truncation`). The protocols that ask about it are in :mod:`orchestrace.blame.judge`,
which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.trace import Trace
from ..errors import TraceError
from ..evidence import turn_key as _turn_of
from ..vocab import EventType

_MIN_CAP = 48  # a turn shows at least this many characters (when the turns fit at all)

_GT_KEYS = ("ground_truth", "answer", "expected_answer", "gold")


@dataclass(frozen=True)
class Step:
    """One turn of the transcript: its index in the source list, its speaker and its text."""

    index: int
    agent: str
    text: str


@dataclass(frozen=True)
class Transcript:
    """What the judge reads of a trace: the task, the steps (in order), the team, the ground truth."""

    trace_id: str
    task: str
    steps: tuple[Step, ...]
    team: tuple[str, ...]
    ground_truth: str | None = None


@dataclass(frozen=True)
class Truncation:
    """A turn shown cut: ``shown`` characters of its ``chars`` (0 = omitted), the least any prompt showed."""

    step: int
    chars: int
    shown: int


# -- the trace → the transcript ---------------------------------------------------------------------
def transcript_of(trace: Trace, *, ground_truth: str | None = None) -> Transcript:
    """The steps (turns) of an imported chat transcript, with their speakers and text.

    The step index is the turn's index in the source list (time is that index when the
    transcript had no timestamps; otherwise it is read from ``Event.source``). Speaker
    selections (``orchestrator_decision``) are structure, not steps. ``ground_truth``
    overrides the answer found in ``meta.source_fields`` (``ground_truth``, ``answer`` …).
    Raises :class:`~orchestrace.errors.TraceError` (located) when the trace has no turn text.

    >>> from orchestrace.importers.chat import from_doc
    >>> tr = from_doc([{"name": "A", "content": "hi"}, {"name": "B", "content": "yo"}], "x.json",
    ...               content="keep")[0][0]
    >>> [(s.index, s.agent, s.text) for s in transcript_of(tr).steps]
    [(0, 'A', 'hi'), (1, 'B', 'yo')]
    """
    by_turn = (trace.meta or {}).get("time_unit") == "step"
    groups: dict[int, list[Any]] = {}
    hashed = 0
    ordinal = -1
    last_key: object = None
    for k, e in enumerate(trace.events):
        if e.type == EventType.ORCHESTRATOR_DECISION:
            continue
        if e.content is None and e.content_ref is not None:  # hashed at import: no text to show
            hashed += 1
            continue
        if by_turn:
            idx = int(e.t)
        else:
            key, found = _turn_of(e.source or f"<event {k}>")
            if key != last_key:
                ordinal += 1
                last_key = key
            idx = found if found is not None else ordinal
        groups.setdefault(idx, []).append(e)
    if not any(e.content for evs in groups.values() for e in evs):
        why = "its text was hashed at import (content_ref only)" if hashed else "no event carries text"
        raise TraceError(f"trace {trace.trace_id!r}: $.events[*].content: nothing to judge, {why}; import the "
                         "transcript with its text: orchestrace import chat FILE --content keep -o run.json")
    steps = []
    for idx in sorted(groups):
        evs = groups[idx]
        text = "\n".join(e.content for e in evs if e.content)
        steps.append(Step(idx, evs[0].agent, text))
    team = tuple(dict.fromkeys(s.agent for s in steps))
    meta: dict[str, Any] = trace.meta or {}
    task_v = meta.get("task")
    task = task_v if isinstance(task_v, str) else ""
    if ground_truth is None:
        src_v = meta.get("source_fields")
        src: dict[str, Any] = src_v if isinstance(src_v, dict) else {}
        for key in _GT_KEYS:
            v = src.get(key, meta.get(key))
            if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip():
                ground_truth = str(v)
                break
    return Transcript(trace.trace_id, task, tuple(steps), team, ground_truth)


# -- fitting the prompt -------------------------------------------------------------------------
def truncate(text: str, cap: int) -> str:
    """``text`` if it has at most ``cap`` characters, else its head and tail around a visible marker.

    The marker says how many characters were cut; the result has at most ``cap`` characters
    (at least the marker and two characters of the text when ``cap`` is smaller than that).

    >>> truncate("abcdefghijklmnopqrstuvwxyz" * 4, 40)
    'abcdefghijklmnop[… 83 chars cut …]vwxyz'
    >>> truncate("short", 40)
    'short'
    """
    if len(text) <= cap:
        return text
    keep = max(cap - len(f"[… {len(text):,} chars cut …]"), 2)  # the marker's longest form
    head = (keep * 3 + 3) // 4
    tail = keep - head
    return f"{text[:head]}[… {len(text) - keep:,} chars cut …]{text[len(text) - tail:] if tail else ''}"


def plan_caps(lengths: Sequence[int], budget: int, *, label: int = 16, min_cap: int = _MIN_CAP) -> list[int]:
    """Characters to show of each turn so that the turns (plus ``label`` characters each) fit ``budget``.

    Short turns are shown whole and long ones at a common cap (water-filling). When even
    ``min_cap`` characters per turn do not fit, turns are omitted from the middle (cap 0),
    keeping the first third and the last two thirds of those that fit.

    >>> plan_caps([10, 500, 1000], 700, label=0)
    [10, 345, 345]
    >>> plan_caps([100] * 10, 300, label=0, min_cap=50)
    [50, 50, 0, 0, 0, 0, 50, 50, 50, 50]
    """
    n = len(lengths)
    if n == 0:
        return []
    keep = list(range(n))
    fits = max(budget // max(label + min_cap, 1), 1)
    if sum(min(x, min_cap) for x in lengths) + label * n > budget and fits < n:
        first = fits // 3
        keep = list(range(first)) + list(range(n - (fits - first), n))
    room = max(budget - label * len(keep), 0)
    caps = [0] * n
    order = sorted(keep, key=lambda i: lengths[i])
    left = len(order)
    for i in order:
        share = room // left
        caps[i] = min(lengths[i], share)
        room -= caps[i]
        left -= 1
    return caps


def _render(tx: Transcript, idx: Sequence[int], budget: int, with_gt: bool,
            caps: Sequence[int] | None = None) -> tuple[str, list[Truncation]]:
    """The user message's transcript part for steps ``idx`` (positions in ``tx.steps``).

    ``caps`` (aligned with ``idx``) overrides the fair share computed for these steps.
    """
    top = _header(tx, budget).rstrip(" ")
    steps = [tx.steps[i] for i in idx]
    if caps is None:
        room = budget - len(_header(tx, budget))
        caps = plan_caps([len(s.text) for s in steps], max(room, 0), label=_label(tx))
    lines: list[str] = []
    cuts: list[Truncation] = []
    gap: list[Step] = []
    for s, cap in zip(steps, caps, strict=True):
        if cap == 0 and s.text:
            gap.append(s)
            cuts.append(Truncation(s.index, len(s.text), 0))
            continue
        if gap:
            lines.append(f"[steps {gap[0].index}–{gap[-1].index} omitted to fit]")
            gap = []
        shown = truncate(s.text, cap)
        if len(shown) < len(s.text):
            cuts.append(Truncation(s.index, len(s.text), cap))
        lines.append(f"[{s.index}] {s.agent}: {shown}")
    if gap:
        lines.append(f"[steps {gap[0].index}–{gap[-1].index} omitted to fit]")
    return top + "\n" + "\n".join(lines) + _footer(tx, with_gt), cuts


def _header(tx: Transcript, budget: int) -> str:
    """Task, team, and room kept for the ground truth (padding, stripped when shown), which goes *after*
    the steps: prompts with and without it cut the turns alike and share the transcript as their prefix."""
    head = [f"Task: {truncate(tx.task, max(budget // 5, 200))}" if tx.task else "Task: (not recorded)",
            f"Agents: {', '.join(tx.team)}", "Steps:"]
    return "\n".join(head) + " " * len(_footer(tx, True))


def _footer(tx: Transcript, with_gt: bool) -> str:
    return f"\nCorrect answer: {truncate(tx.ground_truth, 200)}" if with_gt and tx.ground_truth is not None else ""


def _label(tx: Transcript) -> int:
    """Characters of the longest step label (``[12] Agent: ``), plus the line break and slack."""
    return max((len(f"[{s.index}] {s.agent}: ") for s in tx.steps), default=12) + 5
