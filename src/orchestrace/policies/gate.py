"""The learned stop gate as a small object user code calls each round ("stop now?").

A gate file (``gate.json``, written by ``orchestrace train --from-traces``) is plain JSON: the
model class and its per-check weights, the feature standardisation, and the loop it was fitted
for (width, aggregation, round limit, the token scale of the price). No pickle: it loads with
numpy only (no torch), whatever the class. Use::

    gate = StopGate.load("runs/offline/gate.json")
    rounds = []                                   # one list of answers per round, gate.width each
    while True:
        rounds.append([ask_llm(q) for _ in range(gate.width)])
        if gate.should_stop(rounds, price=0.05):  # + logprobs=, completion_tokens=, prompt_tokens=
            break
    answer = gate.aggregate(rounds)

``price`` is what one more full round (``gate.width`` attempts) costs in correct answers, in
the units the gate was trained with: the cost of ``gate.token_scale`` tokens. :meth:`decide`
gives the same decision with its explanation (the estimated advantage of continuing and the
features it read).

>>> g = StopGate(model_class="linear", checks=[{"w": [0.0] * 21, "b": 0.3}], mean=[0.0] * 21, std=[1.0] * 21,
...              features=list(FEATURES), width=2, aggregation="majority", max_rounds=2, logged_width=2,
...              token_scale=100.0, lp_fill=-1.0, len_scale=50.0, attempt_tokens=50.0)
>>> g.should_stop([["42", "41"]], price=0.1), g.should_stop([["42", "41"], ["42", "42"]], price=0.1)
(False, True)
>>> g.aggregate([["41", "42"], ["42", None]])
'42'
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from .._limits import LOGPROB_MIN, MAX_TOKENS
from ..errors import ConfigError
from . import regressors
from .features import FEATURES, features_from_attempts
from .policy_file import GateFile, QModel, as_model, model_doc, read_policy_file
from .rules import top_answer

__all__ = ["GATE_FORMAT", "StopDecision", "StopGate", "predict"]

GATE_FORMAT = "orchestrace-stop-gate/1"


def predict(cls: str, m: QModel | Mapping[str, Any], X: np.ndarray) -> np.ndarray:
    """(n,) the fitted advantage of continuing, for standardised features ``X`` (n, F)
    (:func:`~orchestrace.policies.regressors.predict` of a one-output model).

    >>> predict("linear", {"w": [1.0, -1.0], "b": 0.5}, np.array([[1.0, 2.0]])).tolist()
    [-0.5]
    """
    return regressors.predict(cls, m, X)


@dataclass(frozen=True)
class StopDecision:
    """One answer of the gate: ``stop``, why (``reason``), the advantage estimate and the features read."""

    stop: bool
    reason: str
    advantage: float
    features: dict[str, float]

    def __bool__(self) -> bool:
        return self.stop


@dataclass(frozen=True)
class StopGate:
    """A fitted stop gate for a vote loop (see the module docstring); frozen (``meta`` is its one
    mutable part: provenance notes)."""

    model_class: str
    checks: list[QModel]  # one model per check 0..max_rounds−2
    mean: list[float]
    std: list[float]
    features: list[str]
    width: int  # attempts per round the gate was fitted for
    aggregation: str  # majority | logprob
    max_rounds: int
    logged_width: int
    token_scale: float  # tokens of the price's unit (one full-width logged round, mean)
    lp_fill: float  # log-prob used where an attempt has none
    len_scale: float
    attempt_tokens: float  # tokens of an attempt, mean (used when the caller gives none)
    price_seed: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # mappings of weights (hand-built gates) become typed models
        object.__setattr__(self, "checks", [as_model(m, f"$.checks[{k}]") for k, m in enumerate(self.checks)])

    # ----------------------------------------------------------------- file
    def document(self) -> dict[str, Any]:
        """The JSON document of the gate file (format tag first)."""
        doc: dict[str, Any] = {"format": GATE_FORMAT}
        for f in fields(self):
            v = getattr(self, f.name)
            doc[f.name] = [model_doc(m) for m in v] if f.name == "checks" else copy.deepcopy(v)
        return doc

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the gate as JSON (``path`` is a file, or a run directory → ``gate.json`` in it)."""
        from ..logged.readers import write_policy_file

        return write_policy_file(path, "gate.json", self.document())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> StopGate:
        """Read a gate file (or a run directory holding ``gate.json``); located errors for a bad one."""
        p = Path(path)
        if p.is_dir():
            p = p / "gate.json"
        if not (p.exists() or p.is_symlink()):
            raise ConfigError(f"{p}: no gate file; write one with `orchestrace train --from-traces CORPUS -o RUN`")
        # a regular file under 16 MiB, typed and bounded: NaN/inf, std 0, wrong types are refused here
        doc = read_policy_file(p, GateFile, GATE_FORMAT, "gate file")
        gate = cls(**{f.name: getattr(doc, f.name) for f in fields(cls)})
        gate._check(str(p))
        return gate

    def _check(self, where: str) -> None:
        F = len(FEATURES)
        if list(self.features) != list(FEATURES):
            raise ConfigError(f"{where}: $.features differ from this version's {F} features; refit the gate")
        if len(self.mean) != F or len(self.std) != F:
            raise ConfigError(f"{where}: $.mean / $.std must have {F} entries")
        if len(self.checks) != self.max_rounds - 1:
            raise ConfigError(f"{where}: $.checks has {len(self.checks)} models, expected max_rounds − 1 = "
                              f"{self.max_rounds - 1}")
        for k, m in enumerate(self.checks):
            if m.mean is not None or m.std is not None:
                raise ConfigError(f"{where}: $.checks[{k}] has its own mean / std; a gate standardises once ($.mean)")
            try:
                out = predict(self.model_class, m, np.zeros((1, F)))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"{where}: $.checks[{k}] is not a {self.model_class} model ({exc})") from None
            if out.shape != (1,) or not np.isfinite(out).all():
                raise ConfigError(f"{where}: $.checks[{k}] gives a non-finite or mis-shaped output")

    # ----------------------------------------------------------------- arrays (evaluation)
    def advantage(self, X: np.ndarray) -> np.ndarray:
        """(T, R−1) fitted advantage of continuing at each non-final check, from raw features (T, R, F)."""
        Z = (np.asarray(X, np.float64) - np.asarray(self.mean)) / np.asarray(self.std)
        return np.stack([predict(self.model_class, self.checks[k], Z[:, k]) for k in range(self.max_rounds - 1)], 1)

    def stops(self, X: np.ndarray) -> np.ndarray:
        """(T, R) stop decisions at every check (the last check always stops)."""
        a = self.advantage(X)
        return np.concatenate([a <= 0, np.ones((len(a), 1), bool)], 1)

    # ----------------------------------------------------------------- one live loop
    def _codes(self, rounds: Sequence[Sequence[Hashable | None]]) -> np.ndarray:
        if isinstance(rounds, (str, bytes)) or not isinstance(rounds, Sequence):
            raise ConfigError(f"answers_so_far must be a list of rounds, each a list of answers, got "
                              f"{type(rounds).__name__} (e.g. [['42', '41']] after one round of width 2)")
        for i, r in enumerate(rounds):
            if isinstance(r, (str, bytes)) or not isinstance(r, Sequence):
                raise ConfigError(f"answers_so_far[{i}] must be a list of the round's answers, got "
                                  f"{type(r).__name__}; wrap one round as [[...]]")
            if not len(r):
                raise ConfigError(f"answers_so_far[{i}] is empty: a round has at least one answer (None: unparsed)")
        seen: dict[Hashable, int] = {}
        out = np.full((len(rounds), max((len(r) for r in rounds), default=0)), -1, np.int64)
        for i, r in enumerate(rounds):
            if len(r) != len(rounds[0]):
                raise ConfigError(f"answers_so_far[{i}] has {len(r)} answers, round 0 has {len(rounds[0])}; every "
                                  f"round needs the same width (the gate was fitted for {self.width})")
            for j, a in enumerate(r):
                if a is not None:
                    try:
                        out[i, j] = seen.setdefault(a, len(seen))
                    except TypeError:
                        raise ConfigError(f"answers_so_far[{i}][{j}] is a {type(a).__name__}, not hashable; "
                                          "give answers as strings or numbers (None: unparsed)") from None
        return out

    def _grid(self, name: str, x: Sequence[Sequence[float | None]] | None, shape: tuple[int, int],
              fill: float, lo: float, hi: float) -> np.ndarray:
        if x is None:
            return np.full(shape, fill)
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence) or any(
                isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in x):
            raise ConfigError(f"{name}: expected one list of numbers per round, like the answers")
        try:
            a = np.array([[fill if v is None else float(v) for v in r] for r in x], np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ConfigError(f"{name}: expected one list of numbers per round ({exc})") from None
        if a.shape != shape:
            raise ConfigError(f"{name}: shape {a.shape} does not match the answers' {shape}")
        a = np.where(np.isnan(a), fill, a)  # NaN: absent
        off = (a < lo) | (a > hi)
        if off.any():
            i, j = (int(v[0]) for v in np.nonzero(off))
            raise ConfigError(f"{name}[{i}][{j}]: {a[i, j]:g} is out of range [{lo:g}, {hi:g}]")
        return a

    def decide(self, answers_so_far: Sequence[Sequence[Hashable | None]], *, price: float,
               logprobs: Sequence[Sequence[float | None]] | None = None,
               completion_tokens: Sequence[Sequence[float | None]] | None = None,
               prompt_tokens: Sequence[Sequence[float | None]] | None = None) -> StopDecision:
        """Stop after the rounds so far? ``answers_so_far``: one list per finished round of parsed answers
        (any hashable; None = could not be parsed); the optional grids give per attempt the mean token
        log-prob and token counts (missing: the training corpus's means)."""
        codes = self._codes(answers_so_far)  # rounds of answers, not a string or a flat list: ConfigError
        if not len(codes):
            raise ConfigError("answers_so_far is empty: call the gate after each finished round")
        if isinstance(price, bool) or not (isinstance(price, (int, float)) and 0 <= price <= 1e9
                                           and math.isfinite(float(price))):
            raise ConfigError(f"price {price!r}: expected a finite number ≥ 0 (correct answers per "
                              f"{self.token_scale:.0f} tokens)")
        R = len(codes)
        if self.max_rounds <= R:
            return StopDecision(True, f"round limit {self.max_rounds} reached", float("nan"), {})
        comp_default = self.len_scale
        comp = self._grid("completion_tokens", completion_tokens, codes.shape, comp_default, 0, MAX_TOKENS - 1)
        prm = self._grid("prompt_tokens", prompt_tokens, codes.shape, max(self.attempt_tokens - comp_default, 0.0),
                         0, MAX_TOKENS - 1)
        lp = self._grid("logprobs", logprobs, codes.shape, self.lp_fill, LOGPROB_MIN, 0.0)
        # a loop narrower or wider than the gate's: token scale per attempt stays the logged one
        x = features_from_attempts(codes, lp, comp, prm + comp, float(price), self.max_rounds, self.token_scale,
                                   self.lp_fill, self.len_scale)
        z = (x - np.asarray(self.mean)) / np.asarray(self.std)
        adv = float(predict(self.model_class, self.checks[R - 1], z[None])[0])
        stop = adv <= 0
        why = (f"estimated advantage of continuing {adv:+.4f} ≤ 0" if stop
               else f"estimated advantage of continuing {adv:+.4f} > 0")
        return StopDecision(bool(stop), why, adv, dict(zip(FEATURES, x.tolist(), strict=True)))

    def should_stop(self, answers_so_far: Sequence[Sequence[Hashable | None]], *, price: float,
                    logprobs: Sequence[Sequence[float | None]] | None = None,
                    completion_tokens: Sequence[Sequence[float | None]] | None = None,
                    prompt_tokens: Sequence[Sequence[float | None]] | None = None) -> bool:
        """True when the loop should stop after the rounds so far (see :meth:`decide`)."""
        return self.decide(answers_so_far, price=price, logprobs=logprobs, completion_tokens=completion_tokens,
                           prompt_tokens=prompt_tokens).stop

    def aggregate(self, answers_so_far: Sequence[Sequence[Hashable | None]],
                  logprobs: Sequence[Sequence[float | None]] | None = None) -> Hashable | None:
        """The loop's answer: the gate's aggregation (majority, or log-prob-weighted) over every attempt,
        ties → the answer that appeared first; None when nothing could be parsed."""
        codes = self._codes(answers_so_far)
        lp = self._grid("logprobs", logprobs, codes.shape, self.lp_fill, LOGPROB_MIN, 0.0)
        wt = np.exp(lp) if self.aggregation == "logprob" else np.ones(codes.shape)
        flat, fw = codes.reshape(-1), wt.reshape(-1)
        if (flat < 0).all():
            return None
        score = np.bincount(flat[flat >= 0], weights=fw[flat >= 0])
        best = int(top_answer(score[None])[0])  # codes in first-seen order: ties → the first seen
        names = {c: a for r, cr in zip(answers_so_far, codes, strict=True) for a, c in zip(r, cr, strict=True)}
        return names[best]
