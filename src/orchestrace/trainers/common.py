"""Plumbing shared by the trainers: seeding, RNG state, device, metric log, progress bar.

Nothing here is algorithmic; the trainers (reinforce.py, grpo.py, ppo.py) read top to bottom.

The metric log of a run is ``metrics.jsonl`` (one JSON object per update, namespaced
scalars such as ``charts/episodic_return`` or ``losses/policy``) and the same rows as
``metrics.csv``; TensorBoard event files are written too when ``tensorboard`` is installed.
Keys under ``time/`` hold wall-clock measurements and are the only ones that differ between
two runs of the same config and seed.
"""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import require
from .progress import (
    progress_bar,  # the one progress display (a rich bar, or plain lines when piped)
)

__all__ = [
    "MetricLogger",
    "get_rng_state",
    "progress_bar",
    "require_learn",
    "seed_everything",
    "select_device",
    "set_rng_state",
]


def require_learn() -> None:
    """Fail with the install command when torch or gymnasium is missing."""
    require("torch", extra="learn")
    require("gymnasium", extra="learn")


def seed_everything(seed: int) -> None:
    """Seed python, numpy's global RNG and torch."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def select_device(name: str, num_threads: int) -> Any:
    """``auto`` → cuda when available, else cpu; sets torch's CPU thread count."""
    import torch

    torch.set_num_threads(num_threads)
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            from ..errors import ConfigError

            raise ConfigError("device='cuda' but no CUDA device is available; use device='auto' or 'cpu'")
        return torch.device("cuda")
    return torch.device("cpu")


def get_rng_state() -> dict[str, Any]:
    """Python, numpy and torch RNG states in a form ``torch.load(weights_only=True)`` accepts.

    Python's and numpy's states are JSON text; torch's is a uint8 tensor.
    """
    import torch

    py = random.getstate()
    npst: Any = np.random.get_state()
    state: dict[str, Any] = {
        "python": json.dumps([py[0], list(py[1]), py[2]]),
        "numpy": json.dumps([npst[0], npst[1].tolist(), int(npst[2]), int(npst[3]), float(npst[4])]),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Inverse of :func:`get_rng_state`."""
    import torch

    v, internal, gauss = json.loads(state["python"])
    random.setstate((v, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = json.loads(state["numpy"])
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _first_rows(path: Path, keep: int) -> list[dict[str, Any]]:
    """The first ``keep`` rows of a metrics log, through the capped line reader every JSONL stream of a
    run uses (:func:`orchestrace._limits.capped_lines`: a regular file, bounded lines); the rows after them
    are not read (a resume drops them). A row that cannot be read is a located :class:`ConfigError`."""
    from .._limits import capped_lines
    from ..errors import ConfigError

    rows: list[dict[str, Any]] = []
    for ln, line in capped_lines(path):
        if len(rows) == keep:
            break
        try:
            if isinstance(line, Exception):
                raise line
            rows.append(json.loads(line))
        except ValueError as exc:  # not JSON, or over the line cap
            raise ConfigError(f"{path}:{ln}: not a metrics row ({exc}); the run's metrics log is damaged: "
                              "resume from a copy of the run, or start a new run") from None
        except OSError as exc:
            raise ConfigError(f"{path}:{ln}: cannot read the metrics log ({exc})") from None
    return rows


class MetricLogger:
    """Append namespaced scalars to ``metrics.jsonl`` + ``metrics.csv`` (+ TensorBoard if installed).

    ``keep`` rows of an existing log are kept (resume truncates the log to the checkpoint),
    the rest are dropped so that a resumed run writes the same rows as an uninterrupted one.
    """

    def __init__(self, run_dir: Path, *, keep: int = 0, tensorboard: bool = True) -> None:
        self.path = run_dir / "metrics.jsonl"
        self.csv_path = run_dir / "metrics.csv"
        rows: list[dict[str, Any]] = []
        if keep and self.path.exists():
            rows = _first_rows(self.path, keep)
        self.rows = rows
        with self.path.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
        self._tb: Any = None
        if tensorboard:
            try:
                import importlib

                importlib.import_module("tensorboard")
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(run_dir / "tb"))
            except Exception:  # tensorboard missing or broken: the JSONL/CSV log is enough
                self._tb = None

    def log(self, step: int, scalars: dict[str, float]) -> dict[str, Any]:
        row: dict[str, Any] = {"step": step}
        for k, v in scalars.items():
            fv = float(v)
            row[k] = fv if math.isfinite(fv) else None
        self.rows.append(row)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        if self._tb is not None:
            for k, v in scalars.items():
                self._tb.add_scalar(k, float(v), step)
        return row

    def close(self) -> None:
        keys: list[str] = []
        for r in self.rows:
            keys += [k for k in r if k not in keys]
        with self.csv_path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(self.rows)
        if self._tb is not None:
            self._tb.close()
