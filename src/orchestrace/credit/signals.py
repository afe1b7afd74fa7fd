"""The rewards to credit and the baseline of every trace of a batch (``orchestrace credit``).

``--truth`` and ``--baseline`` arrive as text: :func:`parse_truth` reads a verdict, a number or
an answer; :func:`parse_baseline` a finite number or ``"group"``. :func:`signals_and_baselines`
then evaluates each trace's reward signals and gives each trace its baseline — a number, or
with ``"group"`` the mean reward of the traces of the same ``task_id`` (a GRPO group), so that a
failed run gets negative credit on the causes of its failure.

>>> parse_truth("True"), parse_truth("0.5"), parse_truth("Paris")
(True, 0.5, 'Paris')
>>> parse_baseline("group"), parse_baseline("0.25"), parse_baseline(None)
('group', 0.25, None)
>>> alone_note(["a", "a", "b"])
'1 trace(s) are alone in their task group: their baseline is their own reward (advantage 0); put several runs of one task in the file'
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, TraceError

if TYPE_CHECKING:
    from ..core.trace import Trace

__all__ = ["alone_note", "parse_baseline", "parse_truth", "signals_and_baselines"]


def parse_truth(raw: str | None) -> Any:
    """``--truth``: ``true`` / ``false`` (any case), a number, else the answer text itself (or None)."""
    if raw is None:
        return None
    low = raw.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return float(raw)
    except ValueError:
        return raw


def parse_baseline(raw: str | None) -> float | str | None:
    """``--baseline``: None, a finite number, or ``"group"``; ConfigError otherwise."""
    if raw is None:
        return None
    if raw.strip().lower() == "group":
        return "group"
    try:
        v = float(raw)
    except ValueError:
        raise ConfigError(f"--baseline must be a number or 'group', got {raw!r}") from None
    if not math.isfinite(v):
        raise ConfigError(f"--baseline must be finite, got {raw!r}")
    return v


def alone_note(groups: Sequence[str]) -> str | None:
    """The note for traces alone in their task group (their group baseline is their own reward), or None."""
    sizes = Counter(groups)
    alone = sum(1 for g in groups if sizes[g] == 1)
    if not alone:
        return None
    return (f"{alone} trace(s) are alone in their task group: their baseline is their own "
            f"reward (advantage 0); put several runs of one task in the file")


def signals_and_baselines(traces: Sequence[Trace], spec: Any, truth: str | None, baseline: float | str | None,
                          where: Callable[[Trace], str]) -> tuple[list[Any], list[float | None], str | None]:
    """Per trace: the reward signals to credit and its baseline; and :func:`alone_note` for ``"group"``.

    A trace without a recorded outcome gets the user's verdict ``truth``. Errors name the trace
    with ``where(trace)``: ConfigError for a spec that does not apply, TraceError (with the
    located problems) for a trace the reward functions cannot read.
    """
    from ..rewards import signals_for
    from ._assign import group_baselines

    sigs: list[Any] = []
    verdict = parse_truth(truth)
    for tr in traces:
        try:
            sigs.append(signals_for(tr, spec=spec, truth=verdict))
        except ConfigError as exc:
            raise ConfigError(f"{where(tr)}: {exc}") from None
        except TraceError as exc:
            raise type(exc)(f"{where(tr)}: {exc}", problems=exc.problems) from None
    if baseline == "group":
        groups = [tr.task_id for tr in traces]
        base = group_baselines([sum(x.value for x in s) for s in sigs], groups).tolist()
        return sigs, base, alone_note(groups)
    return sigs, [baseline] * len(traces), None  # type: ignore[list-item]
