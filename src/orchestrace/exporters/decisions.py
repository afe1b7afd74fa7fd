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
  of its decisions, ``advantage`` = that return − the mean return of the task's episodes.

The rows are written by :func:`~orchestrace.exporters.training.to_trl` /
:func:`~orchestrace.exporters.training.verl_rows` (``turns=``), so they are read back by
TRL's and verl's own code as every other export; ``trace_id`` is ``"<task id>:<episode>"``.
CLI: ``orchestrace export trl|verl CORPUS --decisions exact|broadcast``.

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
    from ..llm.llm_policy import prompt_text
    from ..logged.logged_env import GateContinuation, LoggedDecisions, StopNext

    if credit not in ("exact", "broadcast"):
        raise ConfigError(f"credit {credit!r}: use exact or broadcast")
    if continuation not in ("gate", "stop-next"):
        raise ConfigError(f"continuation {continuation!r}: use gate or stop-next")
    if episodes < 1:
        raise ConfigError(f"episodes {episodes}: must be ≥ 1")
    dec = LoggedDecisions(runs, aggregations=("majority", "logprob"), price_seed=price_seed)
    rows = np.arange(len(runs.task_ids)) if split is None else np.flatnonzero(runs.split == split)
    if not len(rows):
        raise ConfigError(f"split {split!r}: no tasks (the corpus has {sorted(set(runs.split.tolist()))})")
    cont: Any = StopNext()
    if credit == "exact" and continuation == "gate":
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
        eps: list[tuple[list[tuple[Any, int, float, float]], float]] = []
        for _ in range(episodes):
            s: Any = dec.start(int(i))
            total = dec.start_reward(int(i))
            steps = []
            while s is not None:
                valid = dec.valid(s)
                a = int(rng.choice(np.flatnonzero(valid)))
                q = adv = 0.0
                if credit == "exact":
                    qs = dec.q_values(s, cont)
                    q, adv = float(qs[a]), float(qs[a] - np.nanmean(qs))
                steps.append((s, a, q, adv))
                s, r = dec.step(s, a)
                total += r
            eps.append((steps, total))
        mean_ret = float(np.mean([t for _, t in eps]))
        for e, (steps, total) in enumerate(eps):
            for k, (s, a, q, adv) in enumerate(steps):
                reward, advantage = (q, adv) if credit == "exact" else (total, total - mean_ret)
                out.append(Turn(trace_id=f"{tid}:{e}", task_id=tid, agent="orchestrator", role="orchestrator",
                                event_id=f"d{k}", index=k, t=float(k),
                                prompt=({"role": "user", "content": prompt_text(dec.text(s))},),
                                completion=dec.actions[a], has_text=True, tokens_out=None, reward=float(reward),
                                advantage=float(advantage), last=k == len(steps) - 1))
    return out
