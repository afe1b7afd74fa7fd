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
    ├── TrainingError           training stopped (non-finite loss); the last good checkpoint is kept
    ├── CorpusError             a paper-pool CSV could not be read or has errors (also ValueError)
    ├── LLMError                an LLM call failed for good, after retries
    └── LocalServerError        the local llama.cpp server did not start, or died

    OrchestraceWarning (UserWarning)
    ├── TraceFormatWarning      a trace decoded with a structural warning (kept, but say so)
    ├── TruncatedStreamWarning  a JSONL stream was cut or has no end record
    └── ReferenceLossWarning    the reference format dropped native fields

Every error that is about a trace (and :class:`CorpusError`) carries the located
:class:`~orchestrace.Problem` list (``err.problems``) so that callers can print them all.
Close misses get a hint from :func:`did_you_mean`.

>>> try:
...     require("surely_not_a_module_xyz", extra="learn")
... except MissingExtraError as e:
...     print(e)
surely_not_a_module_xyz is needed for this; install it with: pip install 'orchestrace[learn]'
"""

from __future__ import annotations

import enum as _enum
import importlib
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._problems import Problem

E = TypeVar("E", bound=_enum.Enum)

__all__ = [
    "CheckpointError",
    "ConfigError",
    "CorpusError",
    "IllegalActionError",
    "LLMError",
    "LocalServerError",
    "MissingExtraError",
    "OrchestraceError",
    "OrchestraceWarning",
    "ReferenceLossWarning",
    "TraceDecodeError",
    "TraceError",
    "TraceFormatWarning",
    "TraceInvalidError",
    "TrainingError",
    "TruncatedStreamWarning",
    "ValueFunctionError",
    "did_you_mean",
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


class CorpusError(OrchestraceError, ValueError):
    """A pool file could not be read or has errors; ``problems`` lists every problem found."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems: list[Problem] = list(problems)


class LLMError(OrchestraceError):
    """A chat-completions call failed for good (after retries). ``cause`` is one of
    :data:`orchestrace.llm.client.CAUSES`.

    ``attempts`` is the number of HTTP attempts made; ``causes`` the cause of each failed
    attempt, in order. The message never contains the API key.
    """

    def __init__(
        self, message: str, *, cause: str, attempts: int = 1, causes: Sequence[str] = (),
        log: Sequence[tuple[str | None, float, float]] = (),
    ) -> None:
        super().__init__(message)
        self.cause = cause
        self.attempts = attempts
        self.causes: tuple[str, ...] = tuple(causes) or (cause,)
        #: ``(cause, t_start, t_end)`` of every HTTP attempt, wall-clock seconds
        self.log: tuple[tuple[str | None, float, float], ...] = tuple(log)


class LocalServerError(OrchestraceError):
    """The local llama.cpp server did not start, or died."""


class OrchestraceWarning(UserWarning):
    """Root of every warning orchestrace emits (filter them all with this class)."""


class TraceFormatWarning(OrchestraceWarning):
    """A trace loaded, but something in it was adjusted (e.g. an extra property moved to attrs)."""


class TruncatedStreamWarning(OrchestraceWarning):
    """A JSONL stream ended in an incomplete record or without its ``end`` record."""


class ReferenceLossWarning(OrchestraceWarning):
    """Converting to the reference format dropped fields that have no slot there."""


def did_you_mean(name: object, choices: Iterable[str], *, prefix: str = "", n: int = 1,
                 cutoff: float = 0.6) -> str:
    """``prefix + "did you mean 'x'?"`` when a choice is close to ``name``, else ``""``.

    The one "did you mean" hint of the package; ``n`` > 1 offers up to ``n`` names.

    >>> did_you_mean("tool_cal", ["tool_call", "message"])
    "did you mean 'tool_call'?"
    >>> "unknown unit 'agnt'" + did_you_mean("agnt", ["agent", "role"], prefix="; ")
    "unknown unit 'agnt'; did you mean 'agent'?"
    >>> did_you_mean("e2/sped", ["e2/speedup", "e2/speedups", "e4/x"], n=3)
    "did you mean 'e2/speedup' or 'e2/speedups'?"
    >>> did_you_mean("zzz", ["agent"])
    ''
    """
    if not isinstance(name, str) or len(name) > 200:  # a 100 MB string is nobody's typo
        return ""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=cutoff)
    if not close:
        return ""
    names = [repr(c) for c in close]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"{prefix}did you mean {listed}?"


def parse_named(value: object, enum: type[E], *, aliases: Mapping[str, str] | None = None, what: str) -> E:
    """The member of the string enum ``enum`` that ``value`` names (case, ``_``/``-`` and ``aliases``
    forgiven), or a :class:`ConfigError` with a "did you mean" hint and the choices.

    >>> import enum
    >>> class Colour(enum.Enum):
    ...     DARK_RED = "dark-red"
    >>> parse_named("Dark_Red", Colour, what="colour")
    <Colour.DARK_RED: 'dark-red'>
    """
    if isinstance(value, enum):
        return value
    key = str(value).strip().lower().replace("_", "-")
    key = (aliases or {}).get(key, key)
    try:
        return enum(key)
    except ValueError:
        names = [m.value for m in enum]  # type: ignore[attr-defined]
        tip = did_you_mean(key, names, prefix="; ")
        raise ConfigError(f"unknown {what} {value!r}{tip} (choose from {', '.join(names)})") from None


def require(module: str, *, extra: str) -> ModuleType:
    """Import an optional dependency or raise :class:`MissingExtraError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{module.split('.')[0]} is needed for this; install it with: "
            f"pip install 'orchestrace[{extra}]'"
        ) from exc
