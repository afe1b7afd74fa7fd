"""The policy files of the logged-runs stack: one typed shape for ``gate.json`` and ``team_policy.json``.

A vote corpus is a team of W identical members; its stop gate and the joint team policy are the
same kind of thing on disk — fitted Q-models of one :class:`QModel` type (:mod:`.regressors`), the
feature standardisation, the loop or team they were fitted for, the action space — written by
``orchestrace train --from-traces`` and read back by :func:`read_policy_file` through frozen
msgspec structs: every field typed and bounded, unknown fields refused, every error located
(``team_policy.json: … - at `$.models[2].w[0][3]```). No pickle; numpy only.

=====================  ==========================================================================
struct                 holds
=====================  ==========================================================================
:class:`QModel`        one fitted model: ``w``/``b`` (linear, quadratic) or ``W1``/``b1``/``W2``/
                       ``b2`` (mlp); a team model also its own ``mean``/``std``
:class:`GateFile`      the stop gate: one model per check, the loop (width, aggregation, rounds),
                       the scales of the features and the price
:class:`TeamPolicyFile`  the joint policy: one model per decision, the team (members, who sees whom),
                       the subsets and aggregations it may choose, the scales; ``prices``: the
                       corpus's member prices (``meta["billing"]``) when it had them
=====================  ==========================================================================

Both record the corpus they were fitted on in ``meta["corpus_fingerprint"]``
(:func:`~orchestrace.logged.readers.corpus_fingerprint`): evaluation warns about a policy fitted on
another corpus. Files written before a field existed still load (new fields have defaults).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "team_policy.json"
>>> _ = p.write_text('{"format": "orchestrace-team-policy/1", "model_class": "linear", "models": [{"w": "x"}]}')
>>> try:
...     read_policy_file(p, TeamPolicyFile, "orchestrace-team-policy/1", "team policy file")
... except ConfigError as e:
...     print(str(e).split(": ", 1)[1])
not a valid team policy file: Expected `array | null`, got `str` - at `$.models[0].w`
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from .._limits import LOGPROB_MIN, MAX_ROUNDS, MAX_SMALL_FILE_BYTES, MAX_WIDTH, read_capped
from ..errors import ConfigError

__all__ = ["GateFile", "QModel", "TeamPolicyFile", "as_model", "model_doc", "read_policy_file"]

Num = Annotated[float, msgspec.Meta(ge=-1e12, le=1e12)]  # finite (JSON has no NaN; 1e400 is refused)
Pos = Annotated[float, msgspec.Meta(ge=1e-9, le=1e12)]
_Name = Annotated[str, msgspec.Meta(max_length=200)]
ModelClass = Literal["linear", "quadratic", "mlp"]


class QModel(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One fitted Q-model (:mod:`.regressors`): ``w`` (F,) or (A, F) and ``b`` (a float or (A,)) for the
    linear and quadratic classes; ``W1`` (H, F), ``b1`` (H,), ``W2`` (H,) or (A, H), ``b2`` for the mlp;
    ``mean`` / ``std`` (F,): the model's own standardisation (team models; a gate standardises once)."""

    mean: list[Num] | None = None
    std: list[Pos] | None = None
    w: list[Num | list[Num]] | None = None
    b: Num | list[Num] | None = None
    W1: list[list[Num]] | None = None  # noqa: N815 (the file's names)
    b1: list[Num] | None = None
    W2: list[Num | list[Num]] | None = None  # noqa: N815
    b2: Num | list[Num] | None = None


def as_model(m: QModel | Any, where: str = "model") -> QModel:
    """``m`` as a :class:`QModel` (a mapping of weight names is converted and checked; a located error).

    >>> as_model({"w": [1.0, -1.0], "b": 0.5})
    QModel(mean=None, std=None, w=[1.0, -1.0], b=0.5, W1=None, b1=None, W2=None, b2=None)
    """
    if isinstance(m, QModel):
        return m
    try:
        return msgspec.convert(m, QModel)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{where}: not a fitted model: {exc}") from None


def model_doc(m: QModel) -> dict[str, Any]:
    """The JSON object of a model: its weights in field order, absent ones left out."""
    return msgspec.to_builtins(m)  # type: ignore[no-any-return]


class GateFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stop-gate file (``gate.json``) as stored: every field typed and bounded, no unknown field.

    ``std`` entries and the scales must be > 0 and finite (a degenerate gate is refused at load,
    not discovered as a loop that never stops); ``lp_fill`` is a log-prob (≤ 0).
    """

    format: str
    model_class: ModelClass
    checks: list[QModel]  # one per check 0..max_rounds−2
    mean: list[Num]
    std: list[Pos]
    features: list[_Name]
    width: Annotated[int, msgspec.Meta(ge=1, le=MAX_WIDTH)]
    aggregation: Literal["majority", "logprob"]
    max_rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)]
    logged_width: Annotated[int, msgspec.Meta(ge=1, le=MAX_WIDTH)]
    token_scale: Pos
    lp_fill: Annotated[float, msgspec.Meta(ge=LOGPROB_MIN, le=0.0)]
    len_scale: Pos
    attempt_tokens: Annotated[float, msgspec.Meta(ge=0.0, le=1e12)]
    price_seed: Annotated[int, msgspec.Meta(ge=0, le=2**32)] = 0
    meta: dict[str, Any] = {}


class TeamPolicyFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A joint team policy file (``team_policy.json``) as stored (the module docstring); the rules between
    fields (one model per decision, subsets of the members, shapes of the weights) are checked by
    :class:`~orchestrace.policies.team_policy.TeamPolicy` when it is built."""

    format: str
    model_class: ModelClass
    models: list[QModel]  # one per decision 0..max_rounds
    members: list[Annotated[str, msgspec.Meta(min_length=1, max_length=200)]]
    sees: list[list[Annotated[int, msgspec.Meta(ge=0, lt=MAX_WIDTH)]]]
    subsets: list[list[Annotated[int, msgspec.Meta(ge=0, lt=MAX_WIDTH)]]]
    aggregations: list[_Name]
    cells: list[_Name]
    features: list[_Name]
    max_rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)]
    token_scale: Pos
    lp_fill: Annotated[float, msgspec.Meta(ge=LOGPROB_MIN, le=0.0)]
    cf_fill: Annotated[float, msgspec.Meta(ge=0.0, le=1e6)]
    member_tokens: list[Annotated[float, msgspec.Meta(ge=0.0, le=1e12)]]
    price_seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] = 0
    meta: dict[str, Any] = {}
    prices: dict[_Name, tuple[Annotated[float, msgspec.Meta(ge=0.0, le=1e12)],
                              Annotated[float, msgspec.Meta(ge=0.0, le=1e12)]]] | None = None


class _Head(msgspec.Struct):
    format: Any = None


F = TypeVar("F", GateFile, TeamPolicyFile)


def read_policy_file(path: str | os.PathLike[str], typ: type[F], fmt: str, what: str) -> F:
    """The policy file at ``path`` decoded as ``typ`` (format tag ``fmt``): a regular file ≤ 16 MiB,
    typed, bounded; a ConfigError naming the file and the field (``$.field``) for anything wrong."""
    data = read_capped(path, limit=MAX_SMALL_FILE_BYTES, what=what)
    try:
        return _decode(data, typ, fmt, f"{path}", what)
    except RecursionError:
        raise ConfigError(f"{path}: not a readable {what} (nested too deeply)") from None


def _decode(data: bytes, typ: type[F], fmt: str, path: str, what: str) -> F:
    try:
        head = msgspec.json.decode(data, type=_Head)  # the other fields are skipped, not decoded
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: not a {what} ({exc}); expected a JSON object") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable {what} ({exc}; NaN and Infinity are not JSON numbers)") from None
    if head.format != fmt:
        raise ConfigError(f"{path}: $.format is {str(head.format)[:80]!r}, expected {fmt!r} (not a {what})")
    try:
        return msgspec.json.decode(data, type=typ)
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid {what}: {exc}") from None
