"""The learned joint team policy as a small object user code calls once per round (``StopGate``'s successor).

A policy file (``team_policy.json``, written by ``orchestrace train --from-traces TEAM_CORPUS``)
is plain JSON: the team it was fitted for (member kinds, who sees whom), the action space (the
member subsets it may call, the aggregations it may stop with), one fitted Q-model per decision
(linear, quadratic or MLP weights with their feature standardisation) and the constants of the
features. No pickle, numpy only. Loading validates everything (format, field names and types,
finite weights, shapes) and refuses a bad file with the field named. Use::

    pol = TeamPolicy.load("runs/team/team_policy.json")
    rounds = []                                            # one {member: answer} per round
    while True:
        d = pol.decide(rounds, price=0.05, cell="add:1")
        if d.action == "stop":
            break
        rounds.append({m: ask(m, question, rounds) for m in d.members})
    answer = d.answer                                      # the chosen aggregation of every call

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> from orchestrace.trainers.team_fitted_q import fit_team_policy
>>> pol, _ = fit_team_policy(make_synthetic_team(600, 3, seed=0), classes=("linear",), seed=0)
>>> first = pol.decide([], price=0.05, cell="add:1")
>>> first.action, set(first.members) <= set(pol.members)
('call', True)
>>> pol.decide([{"cold": "7", "hot": "7", "calc": "7", "reviser": "7"}] * 3, price=0.05, cell="add:1").answer
'7'
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from ..errors import ConfigError
from . import regressors
from .policy_file import QModel, TeamPolicyFile, as_model, model_doc, read_policy_file

if TYPE_CHECKING:
    from .team import TeamArrays

__all__ = ["TEAM_POLICY_FORMAT", "TeamDecision", "TeamPolicy", "predict_q"]

TEAM_POLICY_FORMAT = "orchestrace-team-policy/1"
#: How many leading features the quadratic class multiplies pairwise (the vote block).
QUAD_CORE = 16


def predict_q(cls: str, m: QModel | Mapping[str, Any], X: np.ndarray) -> np.ndarray:
    """(N, A) fitted action values for raw features ``X`` (N, F) under model ``m`` of class ``cls``: ``X``
    standardised by the model's ``mean`` / ``std``, then :func:`~orchestrace.policies.regressors.predict`
    (the quadratic class multiplies the first :data:`QUAD_CORE` features pairwise).

    >>> predict_q("linear", {"mean": [0.0], "std": [1.0], "w": [[2.0], [-1.0]], "b": [0.0, 1.0]},
    ...           np.array([[1.0]])).tolist()
    [[2.0, 0.0]]
    """
    mean, std = (m["mean"], m["std"]) if isinstance(m, Mapping) else (m.mean, m.std)
    if mean is None or std is None:
        raise KeyError("mean")  # a team model standardises its own features
    Z = (np.asarray(X, np.float64) - np.asarray(mean, np.float64)) / np.asarray(std, np.float64)
    return regressors.predict(cls, m, Z, QUAD_CORE)


@dataclass(frozen=True)
class TeamDecision:
    """One answer of the policy: ``call`` ``members`` next, or ``stop`` with ``aggregation`` (→ ``answer``)."""

    action: str  # "call" | "stop"
    members: tuple[str, ...]  # whom to call next (empty when stopping)
    aggregation: str | None  # how to aggregate (when stopping)
    answer: Hashable | None  # the aggregate answer (when stopping; None if nothing parsed)
    values: dict[str, float]  # the fitted value of every available action
    reason: str


@dataclass(frozen=True)
class TeamPolicy:
    """A fitted joint team policy (see the module docstring); on disk a
    :class:`~orchestrace.policies.policy_file.TeamPolicyFile`."""

    model_class: str
    models: list[QModel]  # one per decision 0..max_rounds (before round d; d = max_rounds: stop only)
    members: list[str]
    sees: list[list[int]]
    subsets: list[list[int]]  # callable member-column subsets (action j < len(subsets))
    aggregations: list[str]  # stop actions (action len(subsets) + g)
    cells: list[str]  # task cells "suite:difficulty" the policy knows
    features: list[str]
    max_rounds: int
    token_scale: float
    lp_fill: float
    cf_fill: float
    member_tokens: list[float]  # mean tokens of one call of each member (used when the caller gives none)
    price_seed: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] | None = None  # {member: (price_in, price_out)} of a priced corpus

    def __post_init__(self) -> None:  # mappings of weights (hand-built policies) become typed models
        object.__setattr__(self, "models", [as_model(m, f"$.models[{d}]") for d, m in enumerate(self.models)])

    # ----------------------------------------------------------------- file
    def document(self) -> dict[str, Any]:
        """The JSON document of the policy file (format tag first; ``prices`` only when it has them)."""
        doc: dict[str, Any] = {"format": TEAM_POLICY_FORMAT}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "models":
                v = [model_doc(m) for m in v]
            elif f.name == "prices":
                if v is None:
                    continue
                v = {k: list(p) for k, p in v.items()}
            doc[f.name] = copy.deepcopy(v)
        return doc

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the policy as JSON, atomically (``path``: a file, or a run directory → ``team_policy.json``)."""
        from ..logged.readers import write_policy_file

        return write_policy_file(path, "team_policy.json", self.document(), default=float)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TeamPolicy:
        """Read and validate a policy file (or a run directory holding ``team_policy.json``)."""
        p = Path(path)
        if p.is_dir():
            p = p / "team_policy.json"
        if not p.exists():
            raise ConfigError(f"{p}: no team policy file; write one with `orchestrace train --from-traces "
                              "TEAM_CORPUS -o RUN`")
        # a regular file under 16 MiB, as the gate file: a FIFO, a device or a huge file is refused unread
        doc = read_policy_file(p, TeamPolicyFile, TEAM_POLICY_FORMAT, "team policy file")
        return cls._from_file(doc, str(p))

    @classmethod
    def from_dict(cls, doc: Any, *, where: str = "team policy") -> TeamPolicy:
        """Build and validate from the JSON document; a located ConfigError for anything wrong."""
        if not isinstance(doc, dict) or doc.get("format") != TEAM_POLICY_FORMAT:
            got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ConfigError(f"{where}: $.format is {got!r}, expected {TEAM_POLICY_FORMAT!r} (not a team policy)")
        try:
            f = msgspec.convert(doc, TeamPolicyFile)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"{where}: not a valid team policy file: {exc}") from None
        return cls._from_file(f, where)

    @classmethod
    def _from_file(cls, f: TeamPolicyFile, where: str) -> TeamPolicy:
        kw = {x.name: getattr(f, x.name) for x in fields(cls)}
        kw["prices"] = None if f.prices is None else {k: (float(a), float(b)) for k, (a, b) in f.prices.items()}
        pol = cls(**kw)
        pol._check(where)
        return pol

    def _check(self, where: str) -> None:
        """The rules between fields (the file's types and bounds are :class:`TeamPolicyFile`'s)."""
        W = len(self.members)
        if len(self.models) != self.max_rounds + 1:
            raise ConfigError(f"{where}: $.models has {len(self.models)} models, expected max_rounds + 1 = "
                              f"{self.max_rounds + 1}")
        if len(set(self.members)) != W:
            raise ConfigError(f"{where}: $.members must be distinct non-empty names, got {self.members}")
        for name, lst in (("sees", self.sees), ("subsets", self.subsets)):
            for i, s in enumerate(lst):
                if not all(c < W for c in s):
                    raise ConfigError(f"{where}: $.{name}[{i}] = {s!r}: expected a list of column indices 0..{W - 1}")
        if len(self.sees) != W or not self.subsets or any(not s for s in self.subsets):
            raise ConfigError(f"{where}: $.sees needs one entry per member and $.subsets non-empty subsets")
        for i, a in enumerate(self.aggregations):
            if not (a in ("majority", "logprob", "confidence") or (
                    a.startswith("latest:") and a.split(":", 1)[1] in self.members)):
                raise ConfigError(f"{where}: $.aggregations[{i}] = {a!r}: expected majority, logprob, confidence or "
                                  "latest:<member>")
        if len(self.member_tokens) != W:
            raise ConfigError(f"{where}: $.member_tokens needs {W} entries, one per member")
        F = len(self.features)
        A = len(self.subsets) + len(self.aggregations)
        for d, m in enumerate(self.models):
            try:
                out = predict_q(self.model_class, m, np.zeros((1, F)))
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                raise ConfigError(f"{where}: $.models[{d}] is not a {self.model_class} model over {F} features "
                                  f"({type(exc).__name__}: {exc})") from None
            if out.shape != (1, A) or not np.isfinite(out).all():
                raise ConfigError(f"{where}: $.models[{d}] gives shape {out.shape}, expected (1, {A}) finite values")

    # ----------------------------------------------------------------- corpus compatibility
    def check_team(self, members: Sequence[str], sees: Sequence[Sequence[int]], rounds: int, *,
                   where: str = "corpus", prices: Mapping[str, Sequence[float]] | None = None) -> None:
        """Refuse a corpus whose team (members, who sees whom), round limit or member prices (``prices``: the
        corpus's, :func:`~orchestrace.logged.corpus.billed_prices`; checked when the policy has prices) differ,
        naming the difference."""
        got_m = list(members) if members else [f"w{c}" for c in range(len(self.members))]
        diffs = []
        if got_m != list(self.members):
            extra = sorted(set(got_m) - set(self.members))
            lack = sorted(set(self.members) - set(got_m))
            diffs.append(f"members {got_m} vs the policy's {list(self.members)}"
                         + (f" (not in the policy: {extra})" if extra else "")
                         + (f" (missing: {lack})" if lack else "")
                         + (" (same kinds, other column order)" if not extra and not lack else ""))
        norm = [list(s) for s in sees] if sees else [[] for _ in got_m]
        if not diffs and norm != [list(s) for s in self.sees]:
            diffs.append(f"who sees whom {norm} vs the policy's {list(self.sees)}")
        if rounds != self.max_rounds:
            diffs.append(f"{rounds} rounds vs the policy's {self.max_rounds}")
        if diffs:
            raise ConfigError(f"{where}: the team differs from the one the policy was fitted on: "
                              + "; ".join(diffs) + ". Fit a policy on a corpus of this team")
        for m, fitted in (self.prices or {}).items():  # a policy's values hold at the prices it was fitted at
            got = (prices or {}).get(m)
            if got is None or tuple(got) != tuple(fitted):
                raise ConfigError(
                    f"{where}: member {m!r} is priced {'(unpriced)' if got is None else list(got)} on the corpus but "
                    f"{list(fitted)} in the policy (US dollars per million tokens in, out); its values hold only at "
                    "the prices it was fitted at. Fit a policy on a corpus with these prices")

    # ----------------------------------------------------------------- one live loop
    def _read_rounds(self, rounds: Sequence[Mapping[str, Hashable | None]], price: float, cell: str,
                     logprobs: Sequence[Mapping[str, float | None]] | None,
                     confidences: Sequence[Mapping[str, float | None]] | None,
                     tokens: Sequence[Mapping[str, float | None]] | None
                     ) -> tuple[TeamArrays, np.ndarray, dict[Hashable, int]]:
        """The rounds so far as one task's arrays (answer codes in first-seen order, the fills of the training
        corpus where a value is missing), which members each round called (R, W), and the answer codes."""
        from .team import TeamArrays

        W = len(self.members)
        R = self.max_rounds
        codes = np.full((1, R, W), -1, np.int64)
        called = np.zeros((R, W), bool)
        lp = np.full((1, R, W), np.nan)
        cf = np.full((1, R, W), np.nan)
        tok = np.broadcast_to(np.asarray(self.member_tokens, np.float64), (1, R, W)).copy()
        seen: dict[Hashable, int] = {}
        for r, rd in enumerate(rounds):
            if not isinstance(rd, Mapping):
                raise ConfigError(f"rounds[{r}]: expected a mapping member → answer, got {type(rd).__name__}")
            for m, a in rd.items():
                if m not in self.members:
                    raise ConfigError(f"rounds[{r}]: unknown member {m!r} (the policy's team: "
                                      f"{', '.join(self.members)})")
                c = self.members.index(m)
                called[r, c] = True
                if a is not None:
                    codes[0, r, c] = seen.setdefault(a, len(seen))
            for name, grid, dst in (("logprobs", logprobs, lp), ("confidences", confidences, cf),
                                    ("tokens", tokens, tok)):
                if grid is None or r >= len(grid) or grid[r] is None:
                    continue
                for m, v in grid[r].items():
                    if m in self.members and v is not None:
                        if not isinstance(v, (int, float)) or not math.isfinite(v):
                            raise ConfigError(f"{name}[{r}][{m!r}] = {v!r}: expected a finite number")
                        dst[0, r, self.members.index(m)] = float(v)
        arr = TeamArrays(codes=codes, wlp=np.exp(np.where(np.isfinite(lp), lp, self.lp_fill)),
                         wcf=np.maximum(np.where(np.isfinite(cf), cf, self.cf_fill), 0.0),
                         lp=np.where(np.isfinite(lp), lp, self.lp_fill), cf=np.where(np.isfinite(cf), cf, self.cf_fill),
                         tok=tok, correct_code=np.array([-1]), price=np.array([price]),
                         cell=np.array([self.cells.index(cell)]), cells=tuple(self.cells),
                         aggs=tuple(self.aggregations), members=tuple(self.members),
                         sees=tuple(tuple(s) for s in self.sees), token_scale=self.token_scale, lp_fill=self.lp_fill,
                         cf_fill=self.cf_fill, K=max(len(seen), 1))
        return arr, called, seen

    def decide(self, rounds: Sequence[Mapping[str, Hashable | None]], *, price: float, cell: str,
               logprobs: Sequence[Mapping[str, float | None]] | None = None,
               confidences: Sequence[Mapping[str, float | None]] | None = None,
               tokens: Sequence[Mapping[str, float | None]] | None = None) -> TeamDecision:
        """What to do next after ``rounds`` (one ``{member: parsed answer or None}`` per finished round, the
        members called in it). ``price``: correct answers per ``token_scale`` tokens; ``cell``: the task's
        ``suite:difficulty``. The optional per-round maps give log-probs, confidences and tokens of each call
        (missing: the training corpus's means)."""
        from .team import available_actions, team_features, valid_subsets

        if not (isinstance(price, (int, float)) and math.isfinite(price) and price >= 0):
            raise ConfigError(f"price {price!r}: expected a finite number ≥ 0 (correct answers per "
                              f"{self.token_scale:.0f} tokens)")
        if cell not in self.cells:
            raise ConfigError(f"cell {cell!r}: the policy knows {', '.join(self.cells)}")
        d = len(rounds)
        if d > self.max_rounds:
            raise ConfigError(f"{d} rounds given; the policy was fitted for at most {self.max_rounds}")
        R = self.max_rounds
        arr, called, seen = self._read_rounds(rounds, float(price), cell, logprobs, confidences, tokens)
        st = arr.start(np.array([0]))
        subs = [tuple(s) for s in self.subsets]
        for r in range(d):
            if not called[r].any():
                raise ConfigError(f"rounds[{r}] is empty: a round calls at least one member")
            ok = valid_subsets(st, [tuple(np.flatnonzero(called[r]).tolist())], arr.sees)[0, 0]
            if not ok:
                raise ConfigError(f"rounds[{r}]: a member that sees others was called without them in every round "
                                  "so far; the policy's values hold only for the team as logged")
            st = arr.step(st, called[r][None])
        q = predict_q(self.model_class, self.models[d], team_features(arr, st, R))[0]
        avail = available_actions(arr, st, subs, len(self.aggregations))[0]
        names = [" + ".join(self.members[c] for c in s) for s in subs] + [f"stop:{a}" for a in self.aggregations]
        values = {n: float(v) for n, v, ok in zip(names, q, avail, strict=True) if ok}
        best = int(np.where(avail, q, -np.inf).argmax())
        if best < len(subs):
            mem = tuple(self.members[c] for c in subs[best])
            return TeamDecision("call", mem, None, None, values,
                                f"calling {' + '.join(mem)} is worth {q[best]:+.4f} (best of {len(values)} actions)")
        agg = self.aggregations[best - len(subs)]
        code = int(arr.answer(st, agg)[0])
        inv = {v: k for k, v in seen.items()}
        why = "round limit reached; " if d == R else ""
        return TeamDecision("stop", (), agg, inv.get(code), values,
                            f"{why}stopping with the {agg} answer is worth {q[best]:+.4f} (best of {len(values)} actions)")
