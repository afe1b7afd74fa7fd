"""rLLM: the export has exactly the fields of rLLM's Episode / Trajectory / Step, with
precomputed advantages.

rLLM is not on PyPI, so the field list is pinned here from its source:
rllm-org/rllm, ``rllm/agents/agent.py`` (commit 1da00850) — ``Step.to_dict`` /
``Step.from_dict``, ``Trajectory.to_dict`` / ``from_dict``, ``Episode.to_dict`` /
``from_dict`` — and ``rllm/workflows/workflow.py`` (commit 0ff6a3be) for the
``TerminationReason`` values. ``from_dict`` indexes the keys marked *required* below
(``data[key]``), so a missing one is a ``KeyError`` inside rLLM.
"""

from __future__ import annotations

import json
import math

from trainer_helpers import cli

from orchestrace.exporters import advantages_of
from orchestrace.exporters.training import RLLM_TERMINATION

# key → (required by from_dict, accepted types)
STEP = {
    "prompt_ids": (True, list), "response_ids": (True, list), "logprobs": (True, list),
    "chat_completions": (True, list), "observation": (True, object), "thought": (True, str),
    "action": (True, object), "model_response": (True, str), "model_output": (False, (dict, type(None))),
    "info": (False, dict), "reward": (True, float), "done": (True, bool), "mc_return": (True, float),
    "advantage": (False, (float, list)), "weight_version": (False, (int, type(None))),
}
TRAJECTORY = {"uid": (False, str), "name": (True, str), "task": (True, object), "steps": (False, list),
              "reward": (True, (float, type(None))), "info": (False, dict)}
EPISODE = {"id": (True, str), "task": (True, object), "termination_reason": (False, str), "is_correct": (True, bool),
           "trajectories": (True, list), "metrics": (False, dict), "info": (False, dict)}
TERMINATION = {"max_prompt_length_exceeded", "max_response_length_exceeded", "env_done", "max_turns_exceeded",
               "timeout", "unknown", "error"}


def _check(obj: dict, schema: dict, where: str) -> None:
    assert set(obj) == set(schema), f"{where}: keys {sorted(set(obj) ^ set(schema))} differ from rLLM's"
    for k, (_, types) in schema.items():
        assert isinstance(obj[k], types), f"{where}.{k}: {type(obj[k]).__name__} is not {types}"


def test_rllm_export_has_rllms_fields_and_precomputed_advantages(env_run, tmp_path) -> None:
    path, traces = env_run
    out = tmp_path / "episodes.jsonl"
    cli("export", "rllm", str(path), "-o", str(out), "--method", "shapley")
    episodes = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(episodes) == len(traces)
    assert set(RLLM_TERMINATION) == TERMINATION
    for ep, tr in zip(episodes, traces, strict=True):
        _check(ep, EPISODE, "Episode")
        assert ep["termination_reason"] in TERMINATION
        task_id, rollout = ep["id"].split(":")  # rLLM's Episode.task_id / rollout_idx split the id on ':'
        assert task_id == tr.task_id and rollout.isdigit()
        assert ep["is_correct"] == bool(tr.outcome and tr.outcome.success)
        credit = advantages_of(tr, method="shapley")
        n = 0
        for traj in ep["trajectories"]:
            _check(traj, TRAJECTORY, "Trajectory")
            for k, step in enumerate(traj["steps"]):
                _check(step, STEP, f"Step[{k}]")
                assert step["advantage"] == credit.get(step["info"]["event_id"], 0.0)  # precomputed, unchanged
                assert step["reward"] == step["advantage"]  # no --normalize: the credit itself
                assert math.isfinite(step["mc_return"])
                n += 1
        assert n == sum(len(t["steps"]) for t in ep["trajectories"]) > 0
    values = {s["advantage"] for ep in episodes for t in ep["trajectories"] for s in t["steps"]}
    assert len(values) > 2, "Shapley credit should differ per turn"
