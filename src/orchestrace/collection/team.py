"""Collect a corpus of real runs of a *heterogeneous* team, every decision logged counterfactually.

A vote corpus (:mod:`orchestrace.collection.collect`) logs identical samplers. A team corpus logs a
team of different **member kinds** and calls *every* member in *every* round (always-continue,
all members), so the log alone holds the exact outcome of every orchestration policy over

- O1 / O2 — which members to call in a round (how many, and whom),
- O3 — whether to call the ``reviser``, the member shown the others' answers so far,
- O4 — how to aggregate (majority, log-prob or confidence weighted, the reviser's answer),
- O5 — when to stop.

The default team (:data:`DEFAULT_TEAM`), chosen from a probe of SmolLM2-135M (docs/team-corpus.md):

=========  ===========  =====================================================================
member     temperature  what it does
=========  ===========  =====================================================================
``cold``   0.2          answers the question directly (answer only)
``hot``    0.7          the same prompt sampled hot — the vote corpus's sampler
``calc``   0.2          a tool member: writes the arithmetic expression and a calculator evaluates
                        it — exact when the transcription is right; a specialist, it has nothing
                        useful to say on a lookup
``reviser``  0.2        shown every answer of the other members so far (counts), answers last
=========  ===========  =====================================================================

Each attempt's return event carries ``attrs.member``, the parsed answer, its grade, the mean
token log-prob, the per-token log-probs, a DeepConf-style confidence computed from the top-k
token log-probs (the lowest mean over a sliding window of 4 tokens of ``-mean(top-k)``; Fu et
al. 2025), the tool's input and output (``calc``) and the answers the reviser was shown
(``saw``). The trace meta lists the members and, per member, the columns it sees.

>>> cfg = TeamConfig(cells=(("add", 1),), n_tasks=2, rounds=2)
>>> [m.name for m in cfg.members], cfg.width, cfg.sees()
(['cold', 'hot', 'calc', 'reviser'], 4, [[], [], [], [0, 1, 2]])
>>> calc_eval("12 + 7 - 3"), calc_eval("2 ** 99"), calc_eval("import os")
(16, None, None)
>>> deepconf_confidence([(-0.1, -2.0), (-0.1, -3.0)], window=4)
1.3
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..errors import ConfigError
from ..llm.calculator import _CALC_ASK, _calc_answer, _calc_prompt, calc_eval
from ..llm.tasks import VOTE_SUITES, Task
from .collect import Attempt, CollectConfig, attempt_attrs, majority

__all__ = ["DEFAULT_TEAM", "TEAM_FORMAT", "Member", "TeamConfig", "calc_eval", "deepconf_confidence", "team_trace"]

#: Format tag written into every team trace's meta and the manifest.
TEAM_FORMAT = "orchestrace-team-corpus-v1"
STYLES = ("answer", "calc", "reviser")


@dataclass(frozen=True)
class Member:
    """One member kind of the team: a name, a sampling temperature and a style (answer, calc, reviser)."""

    name: str
    temperature: float
    style: str = "answer"

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ConfigError(f"member {self.name!r}: unknown style {self.style!r}; choose one of {', '.join(STYLES)}")
        if not 0 < self.temperature <= 2:
            raise ConfigError(f"member {self.name!r}: temperature must be in (0, 2], got {self.temperature}")
        if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", self.name):
            raise ConfigError(f"member name {self.name!r}: use 1-32 lowercase letters, digits, - or _")


DEFAULT_TEAM: tuple[Member, ...] = (
    Member("cold", 0.2), Member("hot", 0.7), Member("calc", 0.2, "calc"), Member("reviser", 0.2, "reviser"),
)


def parse_team(text: str) -> tuple[Member, ...]:
    """``"cold:0.2,hot:0.7,calc:0.2:calc,reviser:0.2:reviser"`` → members (NAME:TEMPERATURE[:STYLE]).

    >>> [m.style for m in parse_team("a:0.2, b:0.7:reviser")]
    ['answer', 'reviser']
    """
    out: list[Member] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        bits = part.split(":")
        if len(bits) not in (2, 3):
            raise ConfigError(f"--team: {part!r} is not NAME:TEMPERATURE[:STYLE] (e.g. cold:0.2 or calc:0.2:calc)")
        try:
            temp = float(bits[1])
        except ValueError:
            raise ConfigError(f"--team: temperature {bits[1]!r} in {part!r} is not a number") from None
        out.append(Member(bits[0], temp, bits[2] if len(bits) == 3 else "answer"))
    if not out:
        raise ConfigError("--team: give at least one member, e.g. cold:0.2,hot:0.7")
    if len({m.name for m in out}) != len(out):
        raise ConfigError("--team: member names must be distinct")
    return tuple(out)


@dataclass(frozen=True)
class TeamConfig(CollectConfig):
    """What to collect: :class:`CollectConfig`'s tasks and rounds, with a team of ``members`` per round.

    ``width`` is derived (one attempt per member per round); ``top_logprobs`` alternatives per
    token are asked for (the confidence DeepConf needs; 0 = none).
    """

    members: tuple[Member, ...] = DEFAULT_TEAM
    rounds: int = 3
    width: int = 0
    temperature: float = 0.2  # unused: each member has its own
    top_logprobs: int = 5
    format: ClassVar[str] = TEAM_FORMAT

    def __post_init__(self) -> None:
        object.__setattr__(self, "width", len(self.members))
        super().__post_init__()
        if not self.members:
            raise ConfigError("a team needs at least one member")
        if len({m.name for m in self.members}) != len(self.members):
            raise ConfigError("member names must be distinct")
        styles = [m.style for m in self.members]
        if "reviser" in styles and any(s != "reviser" for s in styles[styles.index("reviser"):]):
            raise ConfigError("list reviser members last: a reviser is shown the answers of every member before it")
        for suite, _ in self.cells:
            if suite not in VOTE_SUITES:
                raise ConfigError(f"team suites are the single-answer families {', '.join(VOTE_SUITES)}; got {suite!r}")
        if not 0 <= self.top_logprobs <= 20:
            raise ConfigError(f"top_logprobs must be in [0, 20], got {self.top_logprobs}")

    def prompt_margin(self) -> int:
        """Tokens beside a task's own prompt: the reply's, plus the calc member's instruction or, larger,
        what a reviser is shown (every distinct answer of the other members over all rounds).

        >>> TeamConfig(cells=(("add", 1),), n_tasks=1, rounds=3, max_tokens=16).prompt_margin()
        216
        """
        extra = 0
        if any(m.style == "calc" for m in self.members):
            extra = len(_CALC_ASK) // 3 + 4
        n_plain = sum(m.style != "reviser" for m in self.members)
        if n_plain < len(self.members):  # a reviser: its instruction and up to rounds × n_plain distinct answers
            extra = max(extra, len(_REVISE_ASK) // 3 + 4 + self.rounds * n_plain * (self.max_tokens + 4))
        return self.max_tokens + extra

    def sees(self) -> list[list[int]]:
        """Per member column, the columns whose answers it is shown (a reviser: every non-reviser)."""
        plain = [i for i, m in enumerate(self.members) if m.style != "reviser"]
        return [plain if m.style == "reviser" else [] for m in self.members]

    async def run_task(self, client: Any, index: int, task: Any, errors: list[str] | None = None) -> Any:
        """One task through every member for every round (see :func:`run_team_task`)."""
        return await run_team_task(client, self, index, task, errors)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for the manifest)."""
        d = super().to_dict()
        d["members"] = [asdict(m) for m in self.members]
        d.pop("temperature", None)
        return d


# ----------------------------------------------------------------------------- the tool member
# the calculator, its prompt and its answer live with the task suites (llm/calculator), where the
# worker trainer reads them too; re-exported here for the collectors
_REVISE_ASK = "Check them and reply with the correct answer only."


def _reviser_prompt(task: Task, seen: Sequence[str | None]) -> list[dict[str, str]]:
    counts: dict[str, int] = {}
    for a in seen:
        if a is not None:
            counts[a] = counts.get(a, 0) + 1
    shown = ", ".join(f"{a} ({n}x)" for a, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "none yet"
    msgs = task.whole_prompt()
    msgs[-1] = {"role": "user", "content": f"{msgs[-1]['content']}\n\nYour team answered: {shown}. {_REVISE_ASK}"}
    return msgs


def deepconf_confidence(top: Sequence[Sequence[float]], window: int = 4) -> float | None:
    """DeepConf's trace confidence: the lowest sliding-window mean of the token confidence ``-mean(top-k log-probs)``.

    Higher is more confident. None when no token has alternatives. (Fu et al. 2025, "lowest
    group confidence"; a reply shorter than the window is one group.)

    >>> deepconf_confidence([(-0.01, -5.0), (-1.0, -1.2)], window=1)
    1.1
    """
    tok = [-sum(t) / len(t) for t in top if t]
    if not tok:
        return None
    w = max(1, min(window, len(tok)))
    return round(min(sum(tok[i:i + w]) / w for i in range(len(tok) - w + 1)), 4)


def _graded(task: Any, text: str, where: str, errors: list[str] | None) -> tuple[str | None, str | None]:
    """A reply's canonical answer and grader error: a task-file task's own grader (its errors counted in
    ``errors``, never raised), else the built-in task's parser."""
    if not hasattr(task, "grade"):
        return task.parse(None, text), None
    answer, _, err = task.grade(text)
    if err and errors is not None:
        errors.append(f"{task.id} {where}: {err}")
    return answer, err


async def run_team_task(client: Any, cfg: TeamConfig, index: int, task: Task,
                        errors: list[str] | None = None) -> Any:
    """Run one task through every member for every round; returns its native trace.

    A task-file task (:mod:`orchestrace.collection.taskfile`) is graded by its own grader; the calculator's
    value is graded as if the member had replied with it. A grader that raises or times out makes
    that reply unanswered; the error goes to ``errors`` and into the return event (``grade_error``).
    """
    rows: list[list[Attempt]] = []
    extras: list[list[dict[str, Any]]] = []
    plain_answers: list[str | None] = []
    sees = cfg.sees()
    extra_req = {"top_logprobs": cfg.top_logprobs} if cfg.logprobs and cfg.top_logprobs else None
    for r in range(cfg.rounds):
        row: list[Attempt] = []
        ext: list[dict[str, Any]] = []
        for w, m in enumerate(cfg.members):
            seed = cfg.attempt_seed(index, r, w)
            info: dict[str, Any] = {"member": m.name, "temperature": m.temperature}
            if m.style == "calc":
                messages = _calc_prompt(task)
            elif m.style == "reviser":
                messages = _reviser_prompt(task, plain_answers)
                info["saw"] = list(plain_answers)
            else:
                messages = task.whole_prompt()
            res = await client.chat(messages, max_tokens=cfg.max_tokens, temperature=m.temperature, seed=seed,
                                    logprobs=cfg.logprobs, stop=list(cfg.stop) or None, extra=extra_req)
            err = None
            if m.style == "calc":
                answer, tool = _calc_answer(task, res.text)
                info.update(tool)
                if answer is not None and hasattr(task, "grade"):
                    answer, err = _graded(task, answer, f"round {r} member {m.name} (calculator)", errors)
            else:
                answer, err = _graded(task, res.text, f"round {r} member {m.name}", errors)
            if m.style != "reviser" and sees:
                plain_answers.append(answer)
            info["confidence"] = deepconf_confidence(res.top_logprobs)
            info["token_logprobs"] = [round(x, 4) for x in res.token_logprobs]
            row.append(Attempt(text=res.text, answer=answer, prompt_tokens=res.prompt_tokens,
                               completion_tokens=res.completion_tokens, logprob_mean=res.mean_logprob,
                               finish_reason=res.finish_reason, seed=seed, t_start=res.t_start, t_end=res.t_end,
                               error=err))
            ext.append(info)
        rows.append(row)
        extras.append(ext)
    return team_trace(task, rows, extras, cfg)


def team_trace(task: Task, attempts: Sequence[Sequence[Attempt]], extras: Sequence[Sequence[dict[str, Any]]],
               cfg: TeamConfig) -> Any:
    """The native trace of one always-continue team run (``attempts[r][w]``: round ``r``, member column ``w``).

    Per round: an O1/O2 ``spawn`` decision naming the members called, one spawn + return per
    member (``attrs.member`` and the logged details), an aggregate whose outcome is the graded
    majority of every answer so far; then the O5 stop at the round limit.

    >>> from orchestrace.llm.tasks import make_vote_task
    >>> t = make_vote_task("add", seed=0, size=1)
    >>> cfg = TeamConfig(cells=(("add", 1),), n_tasks=1, rounds=1)
    >>> a = Attempt(text=t.answer, answer=t.answer, prompt_tokens=30, completion_tokens=2, logprob_mean=-0.1,
    ...             finish_reason="stop", seed=1, t_start=0.0, t_end=0.5)
    >>> tr = team_trace(t, [[a] * 4], [[{"member": m.name} for m in cfg.members]], cfg)
    >>> tr.meta["members"], tr.outcome.success
    (['cold', 'hot', 'calc', 'reviser'], True)
    """
    from ..core.builder import TraceBuilder
    from ..core.trace import Outcome
    from ..vocab import Decision

    names = [m.name for m in cfg.members]
    b = TraceBuilder(f"team-{task.id}", task_id=task.id, topology="centralized", meta={
        "format": TEAM_FORMAT, "suite": task.suite, "difficulty": int(task.difficulty), "answer": task.answer,
        "kind": task.kind, "rounds": len(attempts), "width": len(names), "members": names, "sees": cfg.sees(),
    })
    t0 = min((a.t_start for row in attempts for a in row), default=0.0)
    prev: str | None = None
    returns: list[str] = []
    seen: list[str | None] = []
    outcome = None
    for r, (row, ext) in enumerate(zip(attempts, extras, strict=True)):
        d = b.decide(Decision.SPAWN, action="call:" + "+".join(names), alternatives=["call:" + "+".join(names)],
                     t=min(a.t_start for a in row) - t0, after=prev, attrs={"round": r})
        for w, (a, info) in enumerate(zip(row, ext, strict=True)):
            agent = f"r{r}-{names[w]}"
            role = "reviser" if cfg.members[w].style == "reviser" else "worker"
            s = b.spawn(agent, t=a.t_start - t0, after=d, role=role)
            returns.append(b.return_(
                agent, t=a.t_start - t0, t_end=a.t_end - t0, after=s, content=a.text,
                tokens_in=a.prompt_tokens, tokens_out=a.completion_tokens,
                attrs={**attempt_attrs(a, r, w, task.answer), **info},
            ))
            seen.append(a.answer)
        agg = majority(seen)
        outcome = Outcome(success=agg == task.answer, score=float(agg == task.answer), verifier="exact",
                          answer_ref=agg)
        prev = b.aggregate(t=max(a.t_end for a in row) - t0, after=list(returns), outcome=outcome,
                           attrs={"round": r, "answer": agg, "rule": "majority-first-tie"})
    b.decide(Decision.STOP, action="stop", alternatives=["stop", "continue"], t=b._events[-1].t, after=prev,
             attrs={"round": len(attempts) - 1, "reason": "round_limit"})
    return b.build(outcome=outcome, rewards={"team": float(bool(outcome and outcome.success))})
