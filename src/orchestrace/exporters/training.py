"""Traces → RL training data: rLLM episodes, verl parquet rows, TRL prompt/completion/reward.

A **turn** is one model-generated event of an agent — the credit module's ``turn`` unit
(``orchestrator_decision, message, tool_call, return, aggregate``). Each turn becomes one
training sample: its *prompt* is the agent's conversation before it (spawn prompt and
human input as ``user``, tool results as ``tool``, the agent's earlier turns as
``assistant``; at most ``context`` messages), its *completion* the turn's own content (a
tool call is written ``tool(arguments)``). Traces imported with ``--content hash`` have no
text: the completion is then the ``content_ref`` and :attr:`Turn.has_text` is False.

Per-turn values: ``reward`` = the credit of the turn from :func:`orchestrace.credit.assign`
(``unit="turn"``, ``method`` as given, default ``discounted``: the team outcome discounted
by γ per hop back along the causal graph) for the trace's reward signals — its own, else its
outcome (R1), or the ``signals={trace id: [...]}`` given (from a reward spec or a verdict:
``export --spec``, ``--truth``) — relative to ``baseline`` when one is given (a number or
``{trace id: number}``; ``export --baseline VALUE|group``), so that a failed run yields
negative rewards on the causes of its failure; ``advantage`` = the same value, or normalised
over all exported turns with the same ``(task_id, agent)`` key (``normalize="agent"``,
Dr. MAS; singleton groups keep their value) or ``(task_id,)`` (``"grpo"``). An explicit
``advantages={event id: value}`` mapping overrides the credit module.

A trace with no outcome, rewards or signals exports rows with reward 0; so does a failed
run without a baseline. :func:`export_warnings` says when every exported reward is 0 and
when completions carry no text (an import with ``--content hash`` or ``drop``), which
``orchestrace export`` prints.

>>> from orchestrace import synth
>>> tr = synth(events=40, agents=2, seed=0)
>>> rows = to_trl([tr])
>>> sorted(rows[0])[:5], len(rows) == len(turns_of(tr))
(['advantage', 'agent_id', 'completion', 'prompt', 'reward'], True)
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.trace import Event, Signal, Trace
from ..errors import ConfigError
from ..vocab import EventType

__all__ = ["RLLM_TERMINATION", "Turn", "advantages_of", "credit_reward", "dpo_pairs", "export_turns", "export_warnings",
           "to_rllm", "to_trl", "to_verl", "turns_of", "verl_rows"]

Signals = Mapping[str, Sequence[Signal]]
Baseline = float | Mapping[str, float] | None

_TURN_TYPES = frozenset({EventType.ORCHESTRATOR_DECISION, EventType.MESSAGE, EventType.TOOL_CALL, EventType.RETURN,
                         EventType.AGGREGATE})
_INPUT_TYPES = {EventType.HUMAN_INTERVENTION: "user", EventType.SPAWN: "user", EventType.TOOL_RESULT: "tool"}


@dataclass(frozen=True)
class Turn:
    """One training sample: an agent's model turn, its prompt, completion and values."""

    trace_id: str
    task_id: str
    agent: str
    role: str | None
    event_id: str
    index: int  # position among this agent's turns
    t: float
    prompt: tuple[dict[str, str], ...]
    completion: str
    has_text: bool
    tokens_out: int | None
    reward: float = 0.0
    advantage: float = 0.0
    last: bool = False


def _text(e: Event) -> tuple[str, bool]:
    if e.content is not None:
        body, ok = e.content, True
    elif e.content_ref is not None:
        body, ok = f"<{e.content_ref}>", False
    else:
        body, ok = "", False
    if e.type is EventType.TOOL_CALL:
        return f"{e.tool or 'tool'}({body})", ok
    if e.decision is not None:
        return f"{e.decision.kind.value}: {e.decision.action}" + (f"\n{body}" if body else ""), True
    return body, ok


def _calls_of(trace: Trace) -> dict[str, list[Event]]:
    """``{turn id: [tool calls it made]}``: the same agent's tool_call events a turn causes (its
    tool-use blocks, as the Claude Code and chat importers record them), in time order."""
    by_id = {e.id: e for e in trace.events}
    out: dict[str, list[Event]] = {}
    for d in trace.edges:
        src, dst = by_id.get(d.src), by_id.get(d.dst)
        if (src is not None and dst is not None and dst.type is EventType.TOOL_CALL and src.agent == dst.agent
                and src.type is not EventType.TOOL_CALL and src.content is None and src.content_ref is None):
            out.setdefault(src.id, []).append(dst)
    for v in out.values():
        v.sort(key=lambda e: e.t)
    return out


def advantages_of(trace: Trace, *, method: str = "discounted", signals: Sequence[Signal] | None = None,
                  baseline: float | None = None, **kw: Any) -> dict[str, float]:
    """Per-turn credit ``{event id: value}`` from :func:`orchestrace.credit.assign` (unit ``turn``)
    for ``signals`` (default: the trace's own, else its outcome), relative to ``baseline``.

    >>> from orchestrace import synth
    >>> adv = advantages_of(synth(events=40, agents=2, seed=0), method="broadcast")
    >>> set(adv.values())
    {1.0}
    >>> set(advantages_of(synth(events=40, agents=2, seed=0), method="broadcast", baseline=0.25).values())
    {0.75}
    """
    from ..credit import assign

    return assign(trace, signals, unit="turn", method=method, baseline=baseline, **kw).as_dict()


def _baseline_of(baseline: Baseline, trace_id: str) -> float | None:
    if baseline is None or isinstance(baseline, (int, float)):
        return baseline
    return baseline.get(trace_id)


def turns_of(trace: Trace, advantages: Mapping[str, float] | None = None, *, method: str = "discounted",
             context: int = 32, signals: Sequence[Signal] | None = None, baseline: float | None = None) -> list[Turn]:
    """The trace's turns in time order per agent, with ``reward`` and ``advantage`` set
    (credit of ``signals`` relative to ``baseline``; 0 when the trace has nothing to credit)."""
    if advantages is None:
        try:
            advantages = advantages_of(trace, method=method, signals=signals, baseline=baseline)
        except ConfigError:
            advantages = {}
    convo: dict[str, list[dict[str, str]]] = {}
    count: dict[str, int] = {}
    out: list[Turn] = []
    calls = _calls_of(trace)
    inbox: dict[str, list[dict[str, str]]] = {}  # spawn prompts / messages addressed to an agent
    for e in sorted(trace.events, key=lambda e: e.t):
        hist = convo.setdefault(e.agent, [])
        if e.type is EventType.SPAWN and e.to:
            body, _ = _text(e)
            inbox.setdefault(e.to, []).append({"role": "user", "content": body})
        if e.type is EventType.MESSAGE and e.to and e.to != e.agent:
            body, _ = _text(e)
            inbox.setdefault(e.to, []).append({"role": "user", "content": body})
        hist.extend(inbox.pop(e.agent, []))
        if e.type in _TURN_TYPES and e.type is not EventType.SPAWN:
            body, ok = _text(e)
            if not body and e.id in calls:  # a turn that only called tools: its output is the calls
                rendered = [_text(c) for c in calls[e.id]]
                body, ok = "\n".join(b for b, _ in rendered), all(k for _, k in rendered)
            i = count.get(e.agent, 0)
            count[e.agent] = i + 1
            v = float(advantages.get(e.id, 0.0))
            out.append(Turn(trace.trace_id, trace.task_id, e.agent, e.role, e.id, i, e.t, tuple(hist[-context:]),
                            body, ok, e.tokens_out, reward=v, advantage=v))
            hist.append({"role": "assistant", "content": body})
        elif e.type in _INPUT_TYPES and e.type is not EventType.SPAWN:
            body, _ = _text(e)
            hist.append({"role": _INPUT_TYPES[e.type], "content": body})
    last: dict[str, int] = {}
    for k, tu in enumerate(out):
        last[tu.agent] = k
    marks = set(last.values())
    return [Turn(**{**tu.__dict__, "last": k in marks}) for k, tu in enumerate(out)]


def export_turns(traces: Iterable[Trace], *, advantages: Mapping[str, Mapping[str, float]] | None = None,
                 method: str = "discounted", normalize: str = "none", signals: Signals | None = None,
                 baseline: Baseline = None) -> list[Turn]:
    """Every turn of every trace with its reward and (normalised) advantage: what the
    ``to_*`` exporters write (pass the result as their ``turns=`` to credit only once)."""
    if normalize not in ("none", "agent", "grpo"):
        raise ConfigError(f"normalize must be 'none', 'agent' or 'grpo', not {normalize!r}")
    turns: list[Turn] = []
    for tr in traces:
        turns.extend(turns_of(tr, (advantages or {}).get(tr.trace_id), method=method,
                              signals=(signals or {}).get(tr.trace_id), baseline=_baseline_of(baseline, tr.trace_id)))
    if normalize != "none" and turns:
        from ..credit.advantages import agentwise_advantages, grpo_advantages

        r = np.array([t.reward for t in turns], dtype=float)
        if normalize == "agent":
            a = agentwise_advantages(r, prompts=[t.task_id for t in turns], agents=[t.agent for t in turns])
        else:
            a = grpo_advantages(r, groups=[t.task_id for t in turns])
        turns = [Turn(**{**t.__dict__, "advantage": float(x)}) for t, x in zip(turns, a.tolist(), strict=True)]
    return turns


# ----------------------------------------------------------------------------- rLLM
#: rLLM's ``TerminationReason`` values (``rllm/workflows/workflow.py``); a trace that ends in a
#: stop decision ended normally (``env_done``), one without is ``unknown``.
RLLM_TERMINATION = ("max_prompt_length_exceeded", "max_response_length_exceeded", "env_done", "max_turns_exceeded",
                    "timeout", "unknown", "error")


def to_rllm(traces: Iterable[Trace], *, advantages: Mapping[str, Mapping[str, float]] | None = None,
            method: str = "discounted", normalize: str = "none", signals: Signals | None = None,
            baseline: Baseline = None, turns: Sequence[Turn] | None = None) -> list[dict[str, Any]]:
    """rLLM episodes: one per trace, one trajectory per agent, one step per turn.

    The dicts have exactly the keys of rLLM's ``Episode.to_dict()`` / ``Trajectory.to_dict()``
    / ``Step.to_dict()`` (``rllm/agents/agent.py``), so ``Episode.from_dict`` reads them::

        Episode{id "<task_id>:<rollout>", task, termination_reason, is_correct, metrics, info,
          trajectories[Trajectory{uid, name, task, reward, info{agent_id, role},
            steps[Step{prompt_ids, response_ids, logprobs, chat_completions, observation,
                       thought, action, model_response, model_output, info, reward, done,
                       mc_return, advantage, weight_version}]}]}

    ``Step.advantage`` is precomputed (rLLM's trainer uses a step's advantage as is);
    ``prompt_ids`` / ``response_ids`` / ``logprobs`` are empty (traces keep text, not token
    ids: rLLM tokenises ``chat_completions``). The trace id is in ``Episode.info.trace_id``.
    """
    traces = list(traces)
    if turns is None:
        turns = export_turns(traces, advantages=advantages, method=method, normalize=normalize, signals=signals,
                             baseline=baseline)
    by_trace: dict[str, list[Turn]] = {}
    for tu in turns:
        by_trace.setdefault(tu.trace_id, []).append(tu)
    episodes = []
    rollout: dict[str, int] = {}
    for tr in traces:
        trajs: dict[str, list[Turn]] = {}
        for tu in by_trace.get(tr.trace_id, []):
            trajs.setdefault(tu.agent, []).append(tu)
        out_trajs = []
        for agent, steps in trajs.items():
            rets = np.cumsum([s.reward for s in steps][::-1])[::-1]  # undiscounted return-to-go
            out_trajs.append({
                "uid": f"{tr.trace_id}/{agent}",
                "name": steps[0].role or agent,
                "task": tr.task_id,
                "steps": [{
                    "prompt_ids": [], "response_ids": [], "logprobs": [],
                    "chat_completions": [*s.prompt, {"role": "assistant", "content": s.completion}],
                    "observation": s.prompt[-1]["content"] if s.prompt else "",
                    "thought": "",
                    "action": s.completion,
                    "model_response": s.completion,
                    "model_output": None,
                    "info": {"event_id": s.event_id, "turn": s.index, "t": s.t, "tokens_out": s.tokens_out,
                             "has_text": s.has_text},
                    "reward": s.reward,
                    "done": s.last,
                    "mc_return": float(rets[k]),
                    "advantage": s.advantage,
                    "weight_version": None,
                } for k, s in enumerate(steps)],
                "reward": float(sum(s.reward for s in steps)),
                "info": {"agent_id": agent, "role": steps[0].role},
            })
        success = tr.outcome.success if tr.outcome is not None else None
        k = rollout[tr.task_id] = rollout.get(tr.task_id, -1) + 1
        episodes.append({
            "id": f"{tr.task_id}:{k}", "task": tr.task_id,
            "termination_reason": "env_done" if tr.stop_event is not None else "unknown",
            "is_correct": bool(success),
            "trajectories": out_trajs,
            "metrics": dict(tr.metrics),
            "info": {"trace_id": tr.trace_id, "system": tr.system, "success": success, "rewards": dict(tr.rewards)},
        })
    return episodes


# ----------------------------------------------------------------------------- verl
def verl_rows(traces: Iterable[Trace], *, advantages: Mapping[str, Mapping[str, float]] | None = None,
              method: str = "discounted", normalize: str = "none", signals: Signals | None = None,
              baseline: Baseline = None, turns: Sequence[Turn] | None = None) -> list[dict[str, Any]]:
    """verl RL-dataset rows: ``data_source, prompt, ability, reward_model, extra_info``.

    ``extra_info`` holds ``trace_id, agent_id, role, turn_id, turn, response, reward,
    advantage, tokens_out``; :func:`orchestrace.exporters.verl_plugin.compute_score` reads
    the reward back, :func:`~orchestrace.exporters.verl_plugin.token_level_advantages`
    spreads the advantage over the response tokens.
    """
    if turns is None:
        turns = export_turns(traces, advantages=advantages, method=method, normalize=normalize, signals=signals,
                             baseline=baseline)
    rows = []
    for k, tu in enumerate(turns):
        rows.append({
            "data_source": "orchestrace",
            "prompt": list(tu.prompt) or [{"role": "user", "content": ""}],
            "ability": "multi_agent",
            "reward_model": {"style": "precomputed", "ground_truth": ""},
            "extra_info": {"index": k, "trace_id": tu.trace_id, "task_id": tu.task_id, "agent_id": tu.agent,
                           "role": tu.role or "", "turn_id": tu.event_id, "turn": tu.index, "response": tu.completion,
                           "reward": tu.reward, "advantage": tu.advantage, "tokens_out": tu.tokens_out or 0,
                           "has_text": tu.has_text},
        })
    return rows


def to_verl(traces: Iterable[Trace], path: str | os.PathLike[str], **kw: Any) -> int:
    """Write :func:`verl_rows` as a parquet file (needs the ``parquet`` extra); returns the row count."""
    from ..errors import require

    pa = require("pyarrow", extra="parquet")
    pq = require("pyarrow.parquet", extra="parquet")
    from ..core.io import atomic_write

    rows = verl_rows(traces, **kw)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    atomic_write(path, sink.getvalue().to_pybytes())  # a full disk or a device as -o: the old file stays
    return len(rows)


# ----------------------------------------------------------------------------- TRL
def to_trl(traces: Iterable[Trace], *, advantages: Mapping[str, Mapping[str, float]] | None = None,
           method: str = "discounted", normalize: str = "none", signals: Signals | None = None,
           baseline: Baseline = None, turns: Sequence[Turn] | None = None) -> list[dict[str, Any]]:
    """TRL rows in the conversational prompt–completion format with a scalar ``reward``.

    ``{"prompt": [messages], "completion": [{"role": "assistant", "content": …}], "reward",
    "advantage", "trace_id", "agent_id", "turn_id"}`` — one row per turn.
    """
    if turns is None:
        turns = export_turns(traces, advantages=advantages, method=method, normalize=normalize, signals=signals,
                             baseline=baseline)
    return [{
        "prompt": list(tu.prompt) or [{"role": "user", "content": ""}],
        "completion": [{"role": "assistant", "content": tu.completion}],
        "reward": tu.reward,
        "advantage": tu.advantage,
        "trace_id": tu.trace_id,
        "agent_id": tu.agent,
        "turn_id": tu.event_id,
    } for tu in turns]


def export_warnings(turns: Sequence[Turn]) -> list[str]:
    """What a user should know before training on these rows (empty when nothing is amiss).

    >>> from orchestrace import synth
    >>> t = export_turns([synth(events=40, agents=2, seed=2)])  # a failed run, no baseline
    >>> export_warnings(t)[0][:40]
    'every exported reward is 0 (22 rows from'
    """
    out = []
    if turns and all(t.reward == 0 and t.advantage == 0 for t in turns):
        n_tr = len({t.trace_id for t in turns})
        out.append(f"every exported reward is 0 ({len(turns)} rows from {n_tr} trace(s)): the traces record no "
                   f"outcome, or failed with no baseline; pass --truth true|false or --spec SPEC for the outcome, "
                   f"and --baseline VALUE|group to give a failed run negative rewards on its causes")
    hashed = [t for t in turns if not t.has_text and "<" in t.completion]
    empty = [t for t in turns if not t.completion]
    if hashed:
        out.append(f"{len(hashed)} of {len(turns)} completions carry a content reference, not text (content hashed "
                   "or dropped at import); re-import with --content keep to train on the text")
    if empty:
        out.append(f"{len(empty)} of {len(turns)} completions are empty: the trace records no text for those turns "
                   f"(first: trace {empty[0].trace_id!r}, event {empty[0].event_id!r})")
    return out


def _content(x: Any) -> str:
    """The text of a TRL completion: a string, or the last message of a conversational one."""
    if isinstance(x, str):
        return x
    if isinstance(x, Sequence) and x and isinstance(x[-1], Mapping):
        return str(x[-1].get("content", ""))
    return ""


def credit_reward(rows: Sequence[Mapping[str, Any]], *, key: str = "reward",
                  similarity: Callable[[str, str], float] | None = None) -> Callable[..., list[float]]:
    """A TRL reward function (``GRPOTrainer(reward_funcs=…)``) built from the exported credit.

    A generated completion for the prompt of a recorded turn earns ``credit × similarity``:
    the turn's exported ``key`` (``reward``: its credit; ``advantage``: the normalised value)
    times the similarity of the generated text to the recorded completion (default
    :class:`difflib.SequenceMatcher` ratio, in [0, 1]). Reproducing the recorded turn earns
    exactly its credit, so a turn the credit method blames (negative leave-one-out or Shapley
    value) is pushed away from and a credited one pulled towards; wasted work (credit 0)
    gives no signal. TRL passes the dataset's ``trace_id`` and ``turn_id`` columns to the
    function, which finds the recorded turn by them.

    >>> rows = [{"trace_id": "t", "turn_id": "e1", "reward": 0.5,
    ...          "completion": [{"role": "assistant", "content": "delegate: w1"}]}]
    >>> f = credit_reward(rows)
    >>> f(prompts=[[]], completions=[[{"role": "assistant", "content": "delegate: w1"}]],
    ...   trace_id=["t"], turn_id=["e1"])
    [0.5]
    >>> f(prompts=[[]], completions=["xyz"], trace_id=["t"], turn_id=["e1"])
    [0.0]
    """
    sim = similarity or (lambda a, b: difflib.SequenceMatcher(None, a, b).ratio())
    recorded = {(str(r["trace_id"]), str(r["turn_id"])): (_content(r["completion"]), float(r[key])) for r in rows}

    def orchestrace_credit(prompts: Sequence[Any], completions: Sequence[Any], trace_id: Sequence[str],
                           turn_id: Sequence[str], **_: Any) -> list[float]:
        out = []
        for c, tr, tu in zip(completions, trace_id, turn_id, strict=True):
            text, credit = recorded[(str(tr), str(tu))]
            out.append(credit * float(sim(_content(c), text)))
        return out

    return orchestrace_credit


def dpo_pairs(rows: Sequence[Mapping[str, Any]], *, key: str = "reward", min_margin: float = 1e-9) -> list[dict[str, Any]]:
    """Preference pairs for TRL's DPO: turns with the same prompt, ranked by their credit.

    For every prompt that several exported turns share (e.g. the same decision point in
    several episodes), each pair of different completions whose ``key`` values differ by more
    than ``min_margin`` gives ``{"prompt", "chosen", "rejected", "margin"}`` (chosen: the
    higher credit). Rows are :func:`to_trl` rows.

    >>> c = lambda s: [{"role": "assistant", "content": s}]
    >>> p = [{"role": "user", "content": "task"}]
    >>> dpo_pairs([{"prompt": p, "completion": c("a"), "reward": 0.2},
    ...            {"prompt": p, "completion": c("b"), "reward": 0.9}])
    [{'prompt': [{'role': 'user', 'content': 'task'}], 'chosen': [{'role': 'assistant', 'content': 'b'}], 'rejected': [{'role': 'assistant', 'content': 'a'}], 'margin': 0.7}]
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(json.dumps(r["prompt"], sort_keys=True), []).append(r)
    out = []
    for group in groups.values():
        best: dict[str, Mapping[str, Any]] = {}  # one row per distinct completion: its highest credit
        for r in group:
            c = _content(r["completion"])
            if c not in best or float(r[key]) > float(best[c][key]):
                best[c] = r
        ranked = sorted(best.values(), key=lambda r: -float(r[key]))
        for i, hi in enumerate(ranked):
            for lo in ranked[i + 1:]:
                m = float(hi[key]) - float(lo[key])
                if m > min_margin:
                    out.append({"prompt": list(hi["prompt"]), "chosen": list(hi["completion"]),
                                "rejected": list(lo["completion"]), "margin": round(m, 12)})
    return out


def write_jsonl(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """One JSON object per line (UTF-8), written atomically (an existing file keeps its mode)."""
    from ..core.io import atomic_write

    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
