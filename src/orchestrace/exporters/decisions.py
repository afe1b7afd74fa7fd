"""Decision episodes of a logged corpus, with per-decision credit, as training turns (TRL / verl rows).

:func:`decision_turns` plays ``episodes`` episodes per task (of ``split``) with a behaviour
policy (uniform over the valid actions, seeded) in :class:`~orchestrace.logged.logged_env.LoggedDecisions`;
each decision becomes a :class:`~orchestrace.exporters.training.Turn`: prompt = the state text
(:func:`~orchestrace.llm.llm_policy.prompt_text`, one ``user`` message), completion = the
action word, and

- ``credit="exact"``: ``reward`` = Q(state, action) under the continuation (``"gate"``: the
  stop gate fitted on the training split at the logged width; ``"stop-next"``), ``advantage``
  = Q(state, action) − the mean Q over the valid actions at that state (counterfactual:
  every alternative valued from the log);
- ``credit="broadcast"`` (identical credit): ``reward`` = the episode's return for every one
  of its decisions, ``advantage`` = that return − the mean return of the task's episodes;
- ``credit="per-turn"`` (MT-GRPO / verl RFC #7244): ``reward`` = the reward to go from the
  decision, ``advantage`` = the per-turn rewards less their mean among the task's episodes at
  the same turn index, summed to go (biased when the policy stops: ``docs/credit-schemes.md``);
- ``credit="per-agent"`` (Dr. MAS): ``reward`` = the episode's return, ``advantage`` = it less the
  mean over the task's decisions of the same agent (every decision here is the orchestrator's).

Advantages come from :func:`orchestrace.credit.schemes.group_advantages` (scale ``none``: mean
baselines; a trainer that normalises by the std does so itself), the group being a task's episodes.

The rows are written by :func:`~orchestrace.exporters.training.to_trl` /
:func:`~orchestrace.exporters.training.verl_rows` (``turns=``), so they are read back by
TRL's and verl's own code as every other export; ``trace_id`` is ``"<task id>:<episode>"``.
CLI: ``orchestrace export trl|verl CORPUS --decisions exact|broadcast|per-turn|per-agent``.

>>> from orchestrace.offline import make_synthetic_logged
>>> turns = decision_turns(make_synthetic_logged(30, 3, 2, seed=0), continuation="stop-next", split=None)
>>> turns[0].completion in ("stop", "stop-weighted", "continue"), turns[0].agent
(True, 'orchestrator')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConfigError
from .training import Turn

__all__ = ["decision_turns"]


def decision_turns(runs: Any, *, credit: str = "exact", continuation: str = "gate", episodes: int = 4,
                   split: str | None = "train", seed: int = 0, price_seed: int = 0) -> list[Turn]:
    """The decisions of ``episodes`` behaviour-policy episodes per task, credited (module docstring)."""
    from ..credit.schemes import CreditScheme, parse_scheme
    from ..llm.llm_policy import prompt_text
    from ..logged.logged_env import GateContinuation, LoggedDecisions, StopNext

    scheme = parse_scheme(credit)  # a located ConfigError naming the schemes
    if continuation not in ("gate", "stop-next"):
        raise ConfigError(f"continuation {continuation!r}: use gate or stop-next")
    if episodes < 1:
        raise ConfigError(f"episodes {episodes}: must be ≥ 1")
    dec = LoggedDecisions(runs, aggregations=("majority", "logprob"), price_seed=price_seed)
    rows = np.arange(len(runs.task_ids)) if split is None else np.flatnonzero(runs.split == split)
    if not len(rows):
        raise ConfigError(f"split {split!r}: no tasks (the corpus has {sorted(set(runs.split.tolist()))})")
    cont: Any = StopNext()
    if scheme is CreditScheme.EXACT and continuation == "gate":
        if runs.members:
            raise ConfigError("continuation 'gate': the stop gate is fitted on vote corpora; use stop-next for a "
                              "team corpus")
        from ..offline import fit_gate

        gate, _ = fit_gate(runs, classes=("linear",), widths=[dec.W], price_seed=price_seed)
        cont = GateContinuation(gate, dec)
    rng = np.random.default_rng(seed)
    out: list[Turn] = []
    for i in rows:
        tid = str(runs.task_ids[i])
        eps: list[tuple[list[tuple[Any, int, float, float, float]], float]] = []
        for _ in range(episodes):
            s: Any = dec.start(int(i))
            total = dec.start_reward(int(i))
            steps = []
            while s is not None:
                valid = dec.valid(s)
                a = int(rng.choice(np.flatnonzero(valid)))
                q = v = 0.0
                if scheme is CreditScheme.EXACT:
                    qs = dec.q_values(s, cont)
                    q, v = float(qs[a]), float(np.nanmean(qs))  # V of the uniform behaviour policy
                s_next, r = dec.step(s, a)
                steps.append((s, a, q, v, r))
                s, total = s_next, total + r
            eps.append((steps, total))
        advs = _advantages(scheme, eps)
        for e, (steps, total) in enumerate(eps):
            to_go = np.cumsum([st[4] for st in steps][::-1])[::-1]
            for k, (s, a, q, _v, _r) in enumerate(steps):
                reward = {CreditScheme.EXACT: q, CreditScheme.PER_TURN: float(to_go[k])}.get(scheme, total)
                advantage = advs[e, k]
                out.append(Turn(trace_id=f"{tid}:{e}", task_id=tid, agent="orchestrator", role="orchestrator",
                                event_id=f"d{k}", index=k, t=float(k),
                                prompt=({"role": "user", "content": prompt_text(dec.text(s))},),
                                completion=dec.actions[a], has_text=True, tokens_out=None, reward=float(reward),
                                advantage=float(advantage), last=k == len(steps) - 1))
    return out


def _advantages(scheme: Any, eps: list[tuple[list[tuple[Any, int, float, float, float]], float]]) -> np.ndarray:
    """``(episodes, turns)`` advantages of one task's episodes under ``scheme`` (scale ``none``)."""
    from ..credit.schemes import group_advantages

    T = max(len(steps) for steps, _ in eps)
    r, q, v = (np.zeros((1, len(eps), max(T, 1))) for _ in range(3))
    for e, (steps, _total) in enumerate(eps):
        for k, (_s, _a, qk, vk, rk) in enumerate(steps):
            r[0, e, k], q[0, e, k], v[0, e, k] = rk, qk, vk
    start = np.array([[total - sum(st[4] for st in steps) for steps, total in eps]])
    lengths = np.array([[len(steps) for steps, _ in eps]])
    return group_advantages(scheme, r, lengths, q=q, v=v, start=start, scale="none")[0]
