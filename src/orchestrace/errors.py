"""One exception tree for orchestrace.

::

    OrchestraceError
    ├── TraceError              a trace could not be read or is not valid
    │   ├── TraceDecodeError    not JSON / wrong shape (structural layer)
    │   └── TraceInvalidError   decodes, but breaks a semantic rule
    ├── ConfigError             a config, spec or argument is inconsistent (also ValueError)
    ├── MissingExtraError       an optional dependency is missing (also ImportError)
    ├── ValueFunctionError      a user value function raised or returned a non-number
    ├── IllegalActionError      an environment got a masked action (also ValueError)
    ├── CheckpointError         a checkpoint is corrupted or does not match
    └── TrainingError           training stopped (non-finite loss); the last good checkpoint is kept

Every error that is about a trace carries the located :class:`~orchestrace.Problem` list
(``err.problems``) so that callers can print them all.

>>> try:
...     require("surely_not_a_module_xyz", extra="learn")
... except MissingExtraError as e:
...     print(e)
surely_not_a_module_xyz is needed for this; install it with: pip install 'orchestrace[learn]'
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._problems import Problem

__all__ = [
    "CheckpointError",
    "ConfigError",
    "IllegalActionError",
    "MissingExtraError",
    "OrchestraceError",
    "TraceDecodeError",
    "TraceError",
    "TraceInvalidError",
    "TrainingError",
    "ValueFunctionError",
    "require",
]


class OrchestraceError(Exception):
    """Root of every error raised by orchestrace."""


class TraceError(OrchestraceError):
    """A trace could not be read, or is not valid. ``problems`` lists every problem found."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems: list[Problem] = list(problems)


class TraceDecodeError(TraceError):
    """The input is not a trace at all: not JSON, wrong types, missing fields."""


class TraceInvalidError(TraceError):
    """The trace decodes but breaks a semantic rule (cycle, dangling edge, …)."""


class ConfigError(OrchestraceError, ValueError):
    """A configuration, spec or argument is inconsistent; the message says how to fix it."""


class MissingExtraError(OrchestraceError, ImportError):
    """An optional dependency is missing; the message gives the ``pip install`` command."""


class ValueFunctionError(OrchestraceError):
    """A user-supplied value function raised, or returned NaN or a non-number."""


class IllegalActionError(OrchestraceError, ValueError):
    """An environment was given an action that its action mask forbids."""


class CheckpointError(OrchestraceError):
    """A checkpoint is corrupted, truncated, or belongs to another model/config."""


class TrainingError(OrchestraceError):
    """Training stopped (e.g. a NaN loss); the message says where the last good checkpoint is."""


def require(module: str, *, extra: str) -> ModuleType:
    """Import an optional dependency or raise :class:`MissingExtraError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{module.split('.')[0]} is needed for this; install it with: "
            f"pip install 'orchestrace[{extra}]'"
        ) from exc
