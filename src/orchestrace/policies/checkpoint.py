"""Checkpoints: torch state dicts + JSON metadata, loaded with ``weights_only=True`` only.

A run directory holds::

    config.json     the TrainConfig (JSON)
    checkpoint.pt   {"format": "orchestrace-checkpoint", "version", "spec", "config", "update",
                     "policy": state_dict, "optim": state_dict, "rng": {python, numpy, torch},
                     "log_rows"}   — everything ``--resume`` needs to continue bit-exactly
    policy.pt       {"format": "orchestrace-policy", "version", "spec", "env_id", "policy"} — for acting
    metrics.jsonl / metrics.csv

Files are written to a temporary name and renamed, so a crash never leaves a half-written
checkpoint; a failed (NaN) update never overwrites the last good one. Loading never
unpickles arbitrary objects (``torch.load(..., weights_only=True)``); a corrupted,
truncated, foreign or mismatched file raises :class:`~orchestrace.errors.CheckpointError`
saying which file and what is wrong.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CheckpointError

__all__ = ["LearnedPolicy", "load_checkpoint", "load_policy", "save_checkpoint", "save_policy"]

CKPT_FORMAT, POLICY_FORMAT, VERSION = "orchestrace-checkpoint", "orchestrace-policy", 1


def _atomic_save(obj: Any, path: Path) -> None:
    import torch

    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def save_checkpoint(run_dir: Path, *, policy: Any, optim: Any, config_json: str, update: int,
                    rng: dict[str, Any], log_rows: int, env_id: str, extra: dict[str, Any] | None = None,
                    env_set: tuple[str, ...] = ()) -> Path:
    """Write ``checkpoint.pt`` and ``policy.pt`` (atomically) into ``run_dir``."""
    spec = json.dumps(policy.spec(), sort_keys=True)
    ckpt = {"format": CKPT_FORMAT, "version": VERSION, "spec": spec, "config": config_json,
            "update": int(update), "policy": policy.state_dict(), "optim": optim.state_dict(),
            "rng": rng, "log_rows": int(log_rows), "env_id": env_id, "extra": json.dumps(extra or {}),
            "env_set": json.dumps(list(env_set))}
    _atomic_save(ckpt, run_dir / "checkpoint.pt")
    save_policy(run_dir / "policy.pt", policy, env_id=env_id, env_set=env_set)
    return run_dir / "checkpoint.pt"


def save_policy(path: Path, policy: Any, *, env_id: str, env_set: tuple[str, ...] = ()) -> Path:
    """Write a policy-only file (architecture spec + weights + the world it was trained on)."""
    _atomic_save({"format": POLICY_FORMAT, "version": VERSION, "spec": json.dumps(policy.spec(), sort_keys=True),
                  "env_id": env_id, "env_set": json.dumps(list(env_set)), "policy": policy.state_dict()}, Path(path))
    return Path(path)


def _load(path: Path) -> dict[str, Any]:
    import pickle

    import torch

    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, OSError, AttributeError, KeyError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(
            f"{path}: corrupted, truncated or not a safe checkpoint ({msg[:200]}); "
            "re-train or restore the file from a backup"
        ) from None
    if not isinstance(data, dict) or data.get("format") not in (CKPT_FORMAT, POLICY_FORMAT):
        raise CheckpointError(f"{path}: not an orchestrace checkpoint (missing 'format' marker)")
    if data.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {data.get('version')!r} is not supported (expected {VERSION})")
    return data


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a ``checkpoint.pt`` (or a run directory holding one)."""
    p = Path(path)
    if p.is_dir():
        p = p / "checkpoint.pt"
    data = _load(p)
    if data["format"] != CKPT_FORMAT:
        raise CheckpointError(f"{p}: this is a policy file, not a training checkpoint; --resume needs checkpoint.pt")
    return data


def build_policy(data: dict[str, Any], source: Path, *, expect_spec: dict[str, Any] | None = None) -> Any:
    """Rebuild the policy from a loaded checkpoint and load its weights (strict)."""
    from .neural import OrchestrationPolicy

    try:
        spec = json.loads(data["spec"])
        policy = OrchestrationPolicy.from_spec(spec)
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{source}: the architecture spec is unreadable ({exc})") from None
    if expect_spec is not None and spec != expect_spec:
        diff = sorted(k for k in set(spec) | set(expect_spec) if spec.get(k) != expect_spec.get(k))
        raise CheckpointError(
            f"{source}: checkpoint was made for another model/environment (differs in {', '.join(diff)}: "
            f"checkpoint {[spec.get(k) for k in diff]} vs now {[expect_spec.get(k) for k in diff]}); "
            "use the same --env and architecture, or start a new run"
        )
    try:
        policy.load_state_dict(data["policy"], strict=True)
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()
        raise CheckpointError(f"{source}: weights do not match the architecture ({' '.join(first[:3])[:300]})") from None
    return policy


class LearnedPolicy:
    """A trained policy wrapped like the environment's baselines.

    ``act(obs_dict, info) -> int`` for :class:`~orchestrace.env.OrchestrationEnv`;
    ``act_batch(obs (B, D), mask (B, A)) -> (B,) int64`` for the batched env.
    ``greedy`` takes each head's most likely action (the STOP gate stops when λ ≥ ½).
    """

    name = "learned"

    def __init__(self, policy: Any, *, env_id: str = "", device: str = "cpu", greedy: bool = True, seed: int = 0) -> None:
        import torch

        self.policy = policy.to(device).eval()
        #: the world overrides the policy was trained with (``TrainConfig.env_set``) and its file
        self.env_set: tuple[str, ...] = ()
        self.source: Path | None = None
        self.env_id, self.device, self.greedy = env_id, torch.device(device), greedy
        self._gen = torch.Generator(device="cpu").manual_seed(seed)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: Any = None) -> np.ndarray:
        import torch

        o = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self.device)
        m = torch.as_tensor(np.asarray(mask, dtype=bool), device=self.device)
        a, _, _ = self.policy.act(o, m, greedy=self.greedy, generator=None if self.greedy else self._gen)
        return a.cpu().numpy().astype(np.int64)

    def stop_prob_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """λ (probability of STOP) for each row."""
        import torch

        with torch.no_grad():
            o = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self.device)
            m = torch.as_tensor(np.asarray(mask, dtype=bool), device=self.device)
            return self.policy(o, m).stop_prob.cpu().numpy()

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        return self.act_with_logprob(obs)[0]

    def act_with_logprob(self, obs: dict[str, np.ndarray]) -> tuple[int, float]:
        """One action and its log-probability under the policy (for the trace's decision payload)."""
        import torch

        o = torch.as_tensor(np.asarray(obs["obs"], dtype=np.float32)[None, :], device=self.device)
        m = torch.as_tensor(np.asarray(obs["action_mask"], dtype=bool)[None, :], device=self.device)
        a, logp, _ = self.policy.act(o, m, greedy=self.greedy, generator=None if self.greedy else self._gen)
        return int(a[0]), float(logp[0])


def load_policy(path: str | Path, *, device: str = "cpu", greedy: bool = True) -> LearnedPolicy:
    """Load a policy from a run directory, ``best.pt``, ``policy.pt`` or ``checkpoint.pt``.

    A run directory gives its validation-selected ``best.pt`` when there is one, else the
    last ``policy.pt``.
    """
    p = Path(path)
    if p.is_dir():
        p = next((p / f for f in ("best.pt", "policy.pt") if (p / f).exists()), p / "checkpoint.pt")
    data = _load(p)
    policy = build_policy(data, p)
    lp = LearnedPolicy(policy, env_id=str(data.get("env_id", "")), device=device, greedy=greedy)
    lp.env_set = tuple(json.loads(data.get("env_set", "[]")))
    lp.source = p
    return lp
