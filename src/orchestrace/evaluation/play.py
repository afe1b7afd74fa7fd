"""Play a policy for N episodes into a JSONL file of traces (what ``orchestrace env run`` does).

:func:`policy_for` turns a name into a policy: a baseline of :mod:`orchestrace.env` (with its
``name=value`` parameters, :func:`parse_params`) or a trained run directory / ``.pt`` file
(:func:`orchestrace.learn.load_policy`, checked against the world's observation width).
:func:`play_to_file` plays the episodes — the first one here (it also times the work), the rest
here or, when asked and worth it, as shards on Ray — and writes every episode's trace to one file,
atomically; the file is byte-identical either way. Every refusal is a
:class:`~orchestrace.errors.ConfigError` that says how to fix it.

>>> parse_params(["rounds=2", "threshold=0.8", "mode=fast"])
{'rounds': 2, 'threshold': 0.8, 'mode': 'fast'}
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CheckpointError, ConfigError, MissingExtraError

__all__ = ["parse_params", "play_to_file", "policy_for"]


def parse_params(items: list[str]) -> dict[str, float | int | str]:
    """``name=value`` items; a value is an int, else a float, else the text."""
    out: dict[str, float | int | str] = {}
    for it in items:
        if "=" not in it:
            raise ConfigError(f"--param {it!r} must look like name=value (e.g. rounds=2, threshold=0.8)")
        k, v = it.split("=", 1)
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def policy_for(policy: str, cfg: Any, params: dict[str, Any], env_id: str) -> tuple[Any, str]:
    """The policy named ``policy`` in the world ``cfg`` (id ``env_id``), and the name its traces record."""
    if Path(policy).exists() or "/" in policy or policy.endswith(".pt"):
        if Path(policy).exists() and not (Path(policy).is_dir() or policy.endswith(".pt")):
            raise ConfigError(f"--policy {policy!r} is neither a baseline name nor a run directory / .pt policy file")
        try:
            from ..policies.checkpoint import load_policy

            pol = load_policy(policy)
        except (CheckpointError, MissingExtraError, OSError) as exc:
            raise ConfigError(f"cannot load policy {policy!r}: {exc}") from None
        net = getattr(pol, "policy", None)
        if net is not None and getattr(net, "layout", None) is None and net.obs_dim != cfg.obs_dim:
            raise ConfigError(f"policy {policy!r} was trained on observations {net.obs_dim} wide (world "
                              f"{pol.env_id or '?'}); {env_id} gives {cfg.obs_dim}: run it on the world it was "
                              "trained on")
        return pol, Path(policy).name
    from ..env import make_baseline

    return make_baseline(policy, cfg, **params), policy


def play_to_file(job: Any, seed: int, episodes: int, out: Path, *, label: str, ray: int | None = None,
                 ray_address: str | None = None, min_work_s: float | None = None,
                 note: Callable[[str], None] = lambda s: None) -> Any:
    """Play ``episodes`` episodes of ``job`` (:class:`~orchestrace.scale.EpisodeJob`, seeds ``seed``, ``seed + 1`` …)
    into ``out`` atomically, with a progress display labelled ``label``; the summed
    :class:`~orchestrace.scale.ShardResult` (its ``blobs`` only counted: the bytes are on disk).

    With ``ray`` or ``ray_address`` the rest after the first episode runs as shards on Ray when the
    measured work is worth it (else ``note`` says why not)."""
    from ..scale import ShardResult, connect, ray_decision, run_item, run_shard, shards
    from ..trainers.progress import progress_bar

    tmp = out.with_name(f".{out.name}.orchestrace-tmp")
    total = ShardResult(llm_calls_all_failed=True)

    def add(part: Any, fh: Any) -> None:
        for blob in part.blobs:
            fh.write(blob)
        total.blobs.append(b"")  # count only; the bytes are on disk
        total.success.extend(part.success)
        total.returns.extend(part.returns)
        for k, v in part.failures.items():
            total.failures[k] = total.failures.get(k, 0) + v
        total.llm_calls_all_failed &= part.llm_calls_all_failed

    ok = False
    try:
        with open(tmp, "wb") as fh, progress_bar(episodes, label, transient=True) as advance:
            t0 = time.perf_counter()
            add(run_shard(job, [seed]), fh)
            advance(1)
            rest = list(range(seed + 1, seed + episodes))
            distribute = False
            if (ray is not None or ray_address is not None) and rest:
                work = (time.perf_counter() - t0) * len(rest)
                distribute, why = ray_decision(work, ray or 2, address_given=ray_address is not None,
                                               min_work_s=min_work_s)
                if not distribute:
                    note(why)
            if distribute:
                with connect(ray, ray_address) as cluster:
                    parts = [(job, [rest[i] for i in r]) for r in shards(len(rest), 4 * cluster.workers)]
                    for part in cluster.imap(run_item, parts):
                        add(part, fh)
                        advance(len(part.blobs))
            elif rest:
                add(run_shard(job, rest, progress=lambda: advance(1)), fh)
        os.replace(tmp, out)
        ok = True
    finally:
        if not ok:
            tmp.unlink(missing_ok=True)
    return total
