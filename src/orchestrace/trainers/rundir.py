"""The run directory of ``orchestrace train``: which files a run writes, and when a folder may take one.

:func:`check_run_dir` refuses to train into a folder that is not empty unless the caller says
what to do with it (``resume``: continue the run in it; ``overwrite``: remove the files a run
writes, :data:`RUN_FILES`, and nothing else); :func:`run_config` is the config a run starts
from (with ``resume``, the run's saved ``config.json`` with the given fields on top). Refusals
are :class:`~orchestrace.errors.ConfigError` whose message says how to go on.

>>> import tempfile, pathlib
>>> run = pathlib.Path(tempfile.mkdtemp())
>>> check_run_dir(run, resume=False, overwrite=False)  # an empty folder takes a new run
>>> (run / "config.json").write_text("{}")
2
>>> try:
...     check_run_dir(run, resume=False, overwrite=False)
... except ConfigError as exc:
...     print(str(exc).split(";")[0].replace(str(run), "RUN"))
RUN is not empty (it holds config.json)
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from ..errors import CheckpointError, ConfigError

__all__ = ["RUN_FILES", "check_run_dir", "describe_run_dir", "run_config"]

#: The files ``orchestrace train`` writes into its run directory (``overwrite`` removes these only).
RUN_FILES = ("checkpoint.pt", "policy.pt", "best.pt", "config.json", "metrics.jsonl", "metrics.csv")


def describe_run_dir(out: Path) -> str:
    """What a run directory holds, in words: ``config.json, metrics.jsonl (12 rows) and 2 more``."""
    names = sorted(p.name for p in out.iterdir())
    parts = []
    for n in names[:6]:
        if n == "metrics.jsonl":
            from .._limits import capped_lines

            with contextlib.suppress(OSError, ConfigError):  # a description: an unreadable log is named without its rows
                rows = sum(1 for _, line in capped_lines(out / n) if isinstance(line, bytes))
                n = f"{n} ({rows} rows)"
        parts.append(n)
    if len(names) > 6:
        parts.append(f"{len(names) - 6} more")
    return ", ".join(parts)


def check_run_dir(out: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse a folder that is not empty unless ``resume`` or ``overwrite`` says what to do (ConfigError).

    ``resume`` needs ``config.json`` and ``checkpoint.pt``: a run stopped (Ctrl-C) before its
    first checkpoint has neither a checkpoint to continue nor a reason to be kept, and the
    message says so and how to start again. ``overwrite`` removes the files a run writes
    (:data:`RUN_FILES`) and nothing else.
    """
    if resume and overwrite:
        raise ConfigError("--resume continues the run in --out and --overwrite replaces it: pass one of them")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file; --out names the run directory")
    held = out.is_dir() and any(out.iterdir())
    if resume:
        if not held or not (out / "config.json").is_file():
            what = f"holds {describe_run_dir(out)}" if held else "is empty" if out.is_dir() else "does not exist"
            raise ConfigError(f"{out}: no config.json to resume from ({out} {what}); run "
                              f"`orchestrace train --out {out}` first")
        if not (out / "checkpoint.pt").is_file():
            raise ConfigError(f"{out}: nothing to resume — it holds {describe_run_dir(out)} but no checkpoint.pt: the "
                              "run stopped before its first checkpoint (it is written every --checkpoint-every "
                              "updates). Start it again with the same options and --overwrite, or choose another --out")
        return
    if not held:
        return
    if not overwrite:
        raise ConfigError(f"{out} is not empty (it holds {describe_run_dir(out)}); pass --resume to continue the run "
                          "in it, --overwrite to replace it, or choose another --out")
    for name in RUN_FILES:
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()


def run_config(out: Path, given: dict[str, Any], *, resume: bool) -> Any:
    """The :class:`~orchestrace.trainers.config.TrainConfig` of a run: ``given`` fields, on top of the run's
    saved ``config.json`` when ``resume`` (CheckpointError when that file cannot be read)."""
    from .config import TrainConfig

    if not resume:
        return TrainConfig.from_dict(given)
    path = out / "config.json"
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: unreadable ({exc})") from None
    return TrainConfig.from_dict({**saved, **given})
