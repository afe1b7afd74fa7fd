"""Parsing a judge's replies: the agent and step it names, a yes / no, a half of a range.

Split from :mod:`orchestrace.blame.judge` (which re-exports these names).

>>> parse_yes_no("Yes, step 4 is wrong.")
True
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

__all__ = ["match_agent", "parse_half", "parse_verdict", "parse_yes_no"]


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def match_agent(name: str, team: Sequence[str]) -> tuple[str | None, str]:
    """The team member ``name`` means, and a note when the match was not exact ("" if it was).

    >>> match_agent("excel expert", ["Excel_Expert", "Computer_terminal"])
    ('Excel_Expert', "'excel expert' read as 'Excel_Expert'")
    >>> match_agent("Nobody", ["Excel_Expert"])
    (None, "'Nobody' is not in the team (Excel_Expert)")
    """
    name = name.strip().strip("*`'\".,:;()[]<> ")
    if not name:
        return None, "no agent name"
    if name in team:
        return name, ""
    n = _norm(name)
    norm = {_norm(a): a for a in team}
    hit = norm.get(n)
    if hit is None and n:
        contained = [a for a in team if _norm(a) and (_norm(a) in n or n in _norm(a))]
        if len(contained) == 1:
            hit = contained[0]
        elif len(contained) > 1:  # the longest team name the reply contains wins
            inside = sorted((a for a in contained if _norm(a) in n), key=lambda a: -len(_norm(a)))
            hit = inside[0] if inside else None
    if hit is None and n:
        close = difflib.get_close_matches(n, list(norm), n=1, cutoff=0.6)
        hit = norm[close[0]] if close else None
    if hit is None:
        return None, f"{name[:60]!r} is not in the team ({', '.join(team)})"
    return hit, f"{name[:60]!r} read as {hit!r}"


_AGENT_RE = re.compile(r"\bagent(?:\s*name)?\s*[\"']?\s*[:=\-]\s*[\"']?([^\n,;{}\"]+)", re.I)
_LABEL_RE = re.compile(r"\[(\d+)\]")  # a step as the transcript labels it: ``[6] Agent: …``
_STEP_RE = re.compile(r"\bstep(?:\s*(?:number|index|no\.?))?\s*[\"']?\s*[:=#\-]?\s*[\"']?\s*(-?\d+)", re.I)


def parse_verdict(reply: str, team: Sequence[str], steps: Sequence[int]) -> tuple[str | None, int | None, list[str]]:
    """``(agent, step, notes)`` from an all-at-once reply; each is None when the reply has none.

    Reads ``Agent: X`` / ``Step: N`` (any case, JSON-ish too), else a team member named
    anywhere in the reply and a step label ``[N]``; the step is clamped into ``steps``
    (noted). Never raises.

    >>> parse_verdict('{"agent": "WebSurfer", "step": 99}', ["Orchestrator", "WebSurfer"], range(12))
    ('WebSurfer', 11, ['step 99 is not in the transcript (steps 0–11): read as 11'])
    >>> parse_verdict("I cannot tell.", ["A1"], [0, 1])
    (None, None, [])
    """
    notes: list[str] = []
    agent: str | None = None
    m = _AGENT_RE.search(reply)
    if m:
        agent, note = match_agent(m.group(1), team)
        if note:
            notes.append(note)
    if agent is None:  # a team member named anywhere, the first one mentioned
        low = reply.lower()
        found = sorted((low.find(a.lower()), a) for a in team if a and a.lower() in low)
        if found:
            agent = found[0][1]
            notes.append(f"agent read as {agent!r}, the first team member the reply names")
    step: int | None = None
    valid = sorted(set(steps))
    s = _STEP_RE.search(reply) or _LABEL_RE.search(reply)
    if s and valid:
        want = int(s.group(1))
        if want in valid:
            step = want
        else:
            step = min(valid, key=lambda v: (abs(v - want), v))
            notes.append(f"step {want} is not in the transcript (steps {valid[0]}–{valid[-1]}): read as {step}")
    return agent, step, notes


def parse_yes_no(reply: str) -> bool | None:
    """True for a yes, False for a no, None when the reply says neither first.

    >>> parse_yes_no("Yes, step 3 is wrong"), parse_yes_no("no."), parse_yes_no("Maybe")
    (True, False, None)
    """
    m = re.search(r"\b(yes|no|true|false)\b", reply.lower())
    return None if m is None else m.group(1) in ("yes", "true")


def parse_half(reply: str, ranges: tuple[tuple[int, int], tuple[int, int]] | None = None) -> str | None:
    """``"A"`` (the first half) or ``"B"`` (the second), or None when the reply does not say.

    In order: a reply that *is* a letter (``B``, ``(A).``), a letter given as the answer
    (``answer: B``, ``(A)``), a word (first / upper / earlier, second / lower / later); then,
    given the two ``ranges`` of step numbers, the only range the reply names, else the half
    that holds every other step number it names (small models answer "the error is in step 7").
    An article ("A decisive error …") is not a letter.

    >>> parse_half("B"), parse_half("The answer is (A)."), parse_half("upper half"), parse_half("?")
    ('B', 'A', 'A', None)
    >>> parse_half("The error is in steps 4-7", ((0, 3), (4, 7))), parse_half("A bad step: 5.", ((0, 3), (4, 7)))
    ('B', 'B')
    """
    text = reply.strip()
    m = (re.match(r"^[^\w]*([AB])(?:[^\w\s]|\s*$|\s*\n)", text)
         or re.search(r"(?i:answer|reply|option|choice)(?:\s+is)?\s*:?\s*\(?[\"']?([AB])(?![A-Za-z])", text)
         or re.search(r"\(([AB])\)", text))
    if m:
        return m.group(1)
    word = re.search(r"\b(first|upper|earlier|lower|second|later|last)\b", text.lower())
    if word is not None:
        return "A" if word.group(1) in ("first", "upper", "earlier") else "B"
    if ranges is None:
        return None
    named = [h for h, (lo, hi) in zip("AB", ranges, strict=True)
             if re.search(rf"(?<!\d){lo}\s*(?:–|-|to|through)\s*{hi}(?!\d)", text)]
    if len(named) == 1:
        return named[0]
    rest = re.sub(r"\d+\s*(?:–|-|to|through)\s*\d+", " ", text)
    halves = {h for n in map(int, re.findall(r"(?<![\d.])\d{1,6}(?![\d])", rest))
              for h, (lo, hi) in zip("AB", ranges, strict=True) if lo <= n <= hi}
    return halves.pop() if len(halves) == 1 else None
