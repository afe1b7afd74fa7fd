"""Reward specs in TOML: name the reward functions and weights, so a run is reproducible.

::

    name = "parl-with-tools"          # optional: name, description, version

    [[reward]]                        # one table per term: Σ weight · fn(trace; params)
    fn = "shared_outcome"
    weight = 1.0

    [[reward]]
    fn = "parl"
    params = { lambda1 = 0.1, lambda2 = 0.1 }

    [credit]                          # optional defaults for ``orchestrace credit --spec``
    unit = "agent"
    method = "shapley"
    samples = 1000
    seed = 0
    params = { epsilon = 0.02 }

Every field is checked when the spec is parsed; a problem raises
:class:`~orchestrace.errors.ConfigError` whose message names the file and field
(``spec.toml: reward[2].params.alpha``), what was expected and how to fix it.

>>> spec = loads_spec('[[reward]]\\nfn = "shared_outcome"\\nweight = 2.0\\n')
>>> spec.terms[0].fn, spec.terms[0].weight
('shared_outcome', 2.0)
>>> try:
...     loads_spec('[[reward]]\\nfn = "shared_outcom"\\n')
... except ConfigError as e:
...     print(str(e).split(" (choose")[0])
<spec>: reward[0].fn: unknown reward function 'shared_outcom'; did you mean 'shared_outcome'?
"""

from __future__ import annotations

import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..core.trace import Signal, Trace
from ..errors import ConfigError, did_you_mean
from ._core import WeightedSum, bind, weighted_sum
from ._hybrid import BUILTINS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["BUILTINS", "CreditSpec", "RewardSpec", "Term", "load_spec", "loads_spec"]

_TOP = ("name", "description", "version", "reward", "credit")
_TERM = ("fn", "weight", "params")
_CREDIT = ("unit", "method", "samples", "seed", "params")


@dataclass(frozen=True)
class Term:
    """One term ``weight · fn(trace; params)`` of a spec."""

    fn: str
    weight: float = 1.0
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class CreditSpec:
    """Defaults for credit assignment: ``unit``, ``method``, ``samples``, ``seed``, ``params``."""

    unit: str | None = None
    method: str | None = None
    samples: int | None = None
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class RewardSpec:
    """A parsed, validated reward spec (see the module docstring)."""

    terms: tuple[Term, ...]
    name: str | None = None
    description: str | None = None
    credit: CreditSpec | None = None
    source: str = "<spec>"

    def reward_fn(self) -> WeightedSum:
        """The spec as one reward function ``Σ weight · bind(fn, **params)``."""
        return weighted_sum(*[(bind(BUILTINS[t.fn], **dict(t.params)), t.weight) for t in self.terms])

    def evaluate(self, trace: Trace, *, truth: Any = None) -> list[Signal]:
        """Signals of ``trace`` under this spec (merged per unit).

        >>> from orchestrace import synth
        >>> spec = loads_spec('[[reward]]\\nfn = "shared_outcome"\\nweight = 0.5\\n')
        >>> [s.value for s in spec.evaluate(synth(events=60, agents=3, seed=4))]
        [0.5]
        """
        return self.reward_fn()(trace, truth=truth)


def load_spec(path: str | os.PathLike[str]) -> RewardSpec:
    """Read and validate a TOML reward spec file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read spec {os.fspath(path)}: {exc.strerror or exc}") from None
    return loads_spec(data.decode("utf-8", errors="replace"), source=os.fspath(path))


def loads_spec(text: str, *, source: str = "<spec>") -> RewardSpec:
    """Parse and validate a TOML reward spec from a string."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    _unknown(doc, _TOP, source, "")
    terms_raw = doc.get("reward")
    if terms_raw is None:
        raise ConfigError(f"{source}: no [[reward]] table: add at least one, e.g. [[reward]] fn = \"shared_outcome\"")
    if isinstance(terms_raw, dict):
        terms_raw = [terms_raw]
    if not isinstance(terms_raw, list) or not terms_raw:
        raise ConfigError(f"{source}: reward must be an array of tables ([[reward]] …), got {type(terms_raw).__name__}")
    terms = tuple(_term(t, f"{source}: reward[{k}]") for k, t in enumerate(terms_raw))
    credit = _credit(doc["credit"], f"{source}: credit") if "credit" in doc else None
    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise ConfigError(f"{source}: {key} must be a string, got {doc[key]!r}")
    return RewardSpec(terms=terms, name=doc.get("name"), description=doc.get("description"), credit=credit,
                      source=source)


def _unknown(table: Mapping[str, Any], allowed: tuple[str, ...], source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{source}: {where}{key}: unknown key{did_you_mean(key, allowed, prefix='; ')} (allowed: {', '.join(allowed)})")


def _term(t: Any, at: str) -> Term:
    if not isinstance(t, dict):
        raise ConfigError(f"{at}: must be a table with fn, weight, params")
    _unknown(t, _TERM, at, ".")
    fn = t.get("fn")
    if not isinstance(fn, str):
        raise ConfigError(f"{at}.fn: missing or not a string; name a reward function ({', '.join(BUILTINS)})")
    if fn not in BUILTINS:
        raise ConfigError(f"{at}.fn: unknown reward function {fn!r}{did_you_mean(fn, BUILTINS, prefix='; ')} (choose from {', '.join(BUILTINS)})")
    w = t.get("weight", 1.0)
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
        raise ConfigError(f"{at}.weight: must be a finite number, got {w!r}")
    params = t.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{at}.params: must be a table, e.g. params = {{ alpha = 0.5 }}")
    return Term(fn=fn, weight=float(w), params=MappingProxyType(_params(BUILTINS[fn], params, f"{at}.params")))


def _params(fn: Callable[..., Any], params: Mapping[str, Any], at: str) -> dict[str, Any]:
    sig = inspect.signature(fn)
    accepted = {k: p for k, p in sig.parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and k != "truth"}
    out: dict[str, Any] = {}
    for key, val in params.items():
        name = key if key in accepted else f"{key}_" if f"{key}_" in accepted else None  # global → global_
        if name is None:
            allowed = ", ".join(accepted) or "none"
            raise ConfigError(f"{at}.{key}: {fn.__name__} has no parameter {key!r}{did_you_mean(key, accepted, prefix='; ')} "
                              f"(parameters: {allowed})")
        default = accepted[name].default
        _check_type(val, default, f"{at}.{key}")
        out[name] = val
    return out


def _check_type(val: Any, default: Any, at: str) -> None:
    if isinstance(default, bool):
        if not isinstance(val, bool):
            raise ConfigError(f"{at}: must be true or false (default {str(default).lower()}), got {val!r}")
    elif isinstance(default, (int, float)):
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
            raise ConfigError(f"{at}: must be a finite number (default {default}), got {val!r}")
        if isinstance(default, int) and not isinstance(default, bool) and not isinstance(val, int):
            raise ConfigError(f"{at}: must be an integer (default {default}), got {val!r}")
    elif isinstance(default, str) and not isinstance(val, str):
        raise ConfigError(f"{at}: must be a string (default {default!r}), got {val!r}")


def _credit(c: Any, at: str) -> CreditSpec:
    from ..analysis.units import parse_unit
    from .credit_methods import METHOD_OPTIONS, parse_method

    if not isinstance(c, dict):
        raise ConfigError(f"{at}: must be a table with unit, method, samples, seed, params")
    _unknown(c, _CREDIT, at, ".")
    unit = method = None
    try:
        if "unit" in c:
            unit = parse_unit(c["unit"]).value
    except ConfigError as exc:
        raise ConfigError(f"{at}.unit: {exc}") from None
    try:
        if "method" in c:
            method = parse_method(c["method"]).value
    except ConfigError as exc:
        raise ConfigError(f"{at}.method: {exc}") from None
    samples = c.get("samples")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 2):
        raise ConfigError(f"{at}.samples: must be an integer ≥ 2 (permutations), got {samples!r}")
    seed = c.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{at}.seed: must be an integer, got {seed!r}")
    params = c.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{at}.params: must be a table, e.g. params = {{ gamma = 0.9 }}")
    if method is not None:
        allowed = METHOD_OPTIONS[parse_method(method)]
        for key in params:
            if key not in allowed:
                raise ConfigError(f"{at}.params.{key}: {method} credit has no option {key!r}{did_you_mean(key, allowed, prefix='; ')} "
                                  f"(options: {', '.join(sorted(allowed)) or 'none'})")
    return CreditSpec(unit=unit, method=method, samples=samples, seed=seed, params=MappingProxyType(dict(params)))
