"""Logged always-continue vote runs as arrays: :class:`LoggedRuns` and :func:`load_logged_runs`.

A corpus (``orchestrace collect run``) holds, per task, R rounds × W attempts of a vote loop
that never stopped early, and the graded majority after every round. :func:`load_logged_runs`
reads it (a folder with ``manifest.json`` and ``traces*.jsonl[.gz]``, or one stream file) into
the arrays below; ``T`` tasks, ``R`` rounds, ``W`` attempts per round:

=====================  ==============  ==========================================================
field                  shape, dtype    meaning
=====================  ==============  ==========================================================
``task_ids``           (T,) str        stable task id, e.g. ``"add-s2-000123"``
``suite``              (T,) str        task suite
``difficulty``         (T,) int        the generator's size knob
``split``              (T,) str        ``train`` / ``validation`` / ``test`` (:func:`split_of`)
``answers``            (T, R, W) int32 per-task answer code, 0..k-1 in order of first appearance
                                       (round-major, then worker); -1 = nothing parsed
``correct``            (T, R, W) bool  the attempt's parsed answer is the right one
``correct_code``       (T,) int32      code of the right answer, -1 if no attempt produced it
``prompt_tokens``      (T, R, W) int32
``completion_tokens``  (T, R, W) int32
``logprob_mean``       (T, R, W) f32   mean token log-prob of the reply (NaN if absent)
``round_correct``      (T, R) bool     graded majority over rounds 0..r, as logged
``meta``               dict            the manifest, plus ``excluded`` (reason → task ids)
=====================  ==============  ==========================================================

Bad input never passes silently: missing grades, a different round limit or width, mixed
suites (a suite the manifest does not list) and truncated runs are
:class:`~orchestrace.errors.TraceInvalidError` with every problem located
(``file:line``, the task id); with ``exclude=True`` those runs are dropped instead, counted
in ``meta["excluded"]`` and named in a warning.

>>> runs = make_synthetic_logged(20, 3, 2, seed=0)
>>> runs.answers.shape, runs.round_correct.shape, sorted(map(str, set(runs.split)))
((20, 3, 2), (20, 3), ['test', 'train', 'validation'])
>>> runs.subset(runs.split == "test").task_ids.shape[0] == int((runs.split == "test").sum())
True
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._problems import Problem
from ..errors import ConfigError, TraceInvalidError
from ..vocab import Severity

__all__ = ["LoggedRuns", "load_logged_runs", "logged_from_codes", "make_synthetic_logged", "split_of"]


@dataclass(frozen=True)
class LoggedRuns:
    """Always-continue logged runs of a vote loop: T tasks x R rounds x W attempts per round."""

    task_ids: np.ndarray  # (T,) str
    suite: np.ndarray  # (T,) str
    difficulty: np.ndarray  # (T,) int
    split: np.ndarray  # (T,) str  "train" | "validation" | "test"
    answers: np.ndarray  # (T, R, W) int32
    correct: np.ndarray  # (T, R, W) bool
    correct_code: np.ndarray  # (T,) int32
    prompt_tokens: np.ndarray  # (T, R, W) int32
    completion_tokens: np.ndarray  # (T, R, W) int32
    logprob_mean: np.ndarray  # (T, R, W) float32
    round_correct: np.ndarray  # (T, R) bool
    meta: dict
    members: tuple[str, ...] = ()  # (W,) member kind of each attempt column; () = homogeneous vote (all columns one sampler)
    sees: tuple[tuple[int, ...], ...] = ()  # per column, the columns whose answers (rounds 0..r, same round included) it was shown at round r; () or () per column = none
    confidence: np.ndarray | None = None  # (T,R,W) float32: DeepConf-style confidence of the reply; NaN/None if the server gave no top-k

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(T, R, W)``."""
        t, r, w = self.answers.shape
        return int(t), int(r), int(w)

    def subset(self, mask: np.ndarray) -> LoggedRuns:
        """The runs of the tasks selected by ``mask`` (a boolean mask or an index array).

        >>> make_synthetic_logged(5, 2, 2, seed=1).subset(np.array([0, 2])).answers.shape
        (2, 2, 2)
        """
        idx = np.asarray(mask)
        fixed = ("meta", "members", "sees", "confidence")
        fields = {f.name: getattr(self, f.name)[idx] for f in dataclasses.fields(self) if f.name not in fixed}
        conf = None if self.confidence is None else self.confidence[idx]
        return LoggedRuns(**fields, meta=dict(self.meta), members=self.members, sees=self.sees, confidence=conf)


def split_of(task_id: str) -> str:
    """The split of a task, from a hash of its id: 60 % ``train``, 20 % ``validation``, 20 % ``test``.

    >>> split_of("add-s1-000000") in ("train", "validation", "test")
    True
    """
    h = int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % 100
    return "train" if h < 60 else "validation" if h < 80 else "test"


def logged_from_codes(
    task_ids: Any, suite: Any, difficulty: Any, answers: np.ndarray, correct_code: np.ndarray, *,
    prompt_tokens: np.ndarray | None = None, completion_tokens: np.ndarray | None = None,
    logprob_mean: np.ndarray | None = None, meta: dict | None = None,
) -> LoggedRuns:
    """Build :class:`LoggedRuns` from answer codes, grading each round's majority (ties: the lowest code,
    i.e. the answer that appeared first). Codes must be in first-appearance order.

    >>> a = np.array([[[0, 1], [1, -1]]], dtype=np.int32)  # T=1, R=2, W=2
    >>> r = logged_from_codes(["x"], ["s"], [1], a, np.array([1]))
    >>> r.round_correct.tolist(), int(r.correct.sum())
    ([[False, True]], 2)
    """
    answers = np.asarray(answers, dtype=np.int32)
    t, r, w = answers.shape
    correct_code = np.asarray(correct_code, dtype=np.int32)
    correct = (answers == correct_code[:, None, None]) & (correct_code[:, None, None] >= 0)
    k = max(int(answers.max(initial=-1)) + 1, 1)
    flat = answers.reshape(t, r * w)
    onehot = (flat[:, :, None] == np.arange(k)[None, None, :]).astype(np.int32)  # (T, R*W, k)
    counts = onehot.reshape(t, r, w, k).sum(axis=2).cumsum(axis=1)  # (T, R, k)
    maj = counts.argmax(axis=2)
    has = counts.max(axis=2) > 0
    round_correct = has & (maj == correct_code[:, None])
    ids = np.asarray(task_ids, dtype=str)
    zeros = np.zeros((t, r, w), dtype=np.int32)
    return LoggedRuns(
        task_ids=ids, suite=np.asarray(suite, dtype=str), difficulty=np.asarray(difficulty, dtype=np.int64),
        split=np.array([split_of(x) for x in ids], dtype=str), answers=answers, correct=correct,
        correct_code=correct_code,
        prompt_tokens=zeros.copy() if prompt_tokens is None else np.asarray(prompt_tokens, dtype=np.int32),
        completion_tokens=zeros.copy() if completion_tokens is None else np.asarray(completion_tokens, dtype=np.int32),
        logprob_mean=(np.full((t, r, w), np.nan, dtype=np.float32) if logprob_mean is None
                      else np.asarray(logprob_mean, dtype=np.float32)),
        round_correct=round_correct, meta=dict(meta or {}),
    )


def make_synthetic_logged(T: int, R: int, W: int, seed: int = 0,  # noqa: N803 (the contract's names)
                          members: tuple[str, ...] | None = None) -> LoggedRuns:
    """Random logged runs for tests: per task a solve rate p ~ U(0, 1) and 1–3 wrong answers.

    With ``members`` (W member kinds) the run is a synthetic heterogeneous team: two suites,
    ``synth-a`` and ``synth-b``, and each kind's solve rate shifted per suite (a kind named
    ``cold`` is better on ``synth-a``, ``hot`` on ``synth-b``, ``calc`` is right or unparsed);
    a kind named ``reviser`` sees every other column (:attr:`LoggedRuns.sees`) and repeats
    their majority so far 80 % of the time.

    >>> r = make_synthetic_logged(4, 3, 2, seed=0)
    >>> bool(((r.answers >= -1) & (r.answers < 4)).all()), r.meta["source"]
    (True, 'synthetic')
    >>> t = make_synthetic_logged(6, 2, 3, seed=0, members=("cold", "hot", "reviser"))
    >>> t.members, t.sees
    (('cold', 'hot', 'reviser'), ((), (), (0, 1)))
    """
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, T)
    if members is not None:
        if len(members) != W:
            raise ConfigError(f"members: {len(members)} kinds for width {W}; give one kind per attempt column")
        suites = np.array(["synth-a" if i % 2 == 0 else "synth-b" for i in range(T)])
        shift = {"cold": (0.3, -0.3), "hot": (-0.3, 0.3), "calc": (0.2, 0.2)}
        rate = np.stack([np.clip(p + np.where(suites == "synth-a", *shift.get(m, (0.0, 0.0))), 0.02, 0.98)
                         for m in members], 1)  # (T, W)
    else:
        suites = np.array(["synth"] * T)
        rate = np.broadcast_to(p[:, None], (T, W))
    raw = np.where(rng.uniform(size=(T, R, W)) < rate[:, None, :], 0, rng.integers(1, 4, (T, R, W)))
    raw = np.where(rng.uniform(size=(T, R, W)) < 0.05, -1, raw)
    sees: tuple[tuple[int, ...], ...] = ()
    if members is not None:
        if "calc" in members:
            c = members.index("calc")
            raw[:, :, c] = np.where(raw[:, :, c] == 0, 0, np.where(rng.uniform(size=(T, R)) < 0.5, -1, raw[:, :, c]))
        sees = tuple(tuple(j for j in range(W) if members[j] != "reviser") if m == "reviser" else ()
                     for m in members)
        for c, seen in enumerate(sees):
            for i in range(T):
                for r in range(R if seen else 0):
                    votes = raw[i, : r + 1, list(seen)].reshape(-1)
                    votes = votes[votes >= 0]
                    if votes.size and rng.uniform() < 0.8:
                        raw[i, r, c] = int(np.bincount(votes).argmax())
    answers, cc = _recode(raw, np.zeros(T, dtype=np.int32))
    ids = [f"synth-s{1 + i % 3}-{i:06d}" for i in range(T)]
    out = logged_from_codes(
        ids, suites.tolist(), [1 + i % 3 for i in range(T)], answers, cc,
        prompt_tokens=np.full((T, R, W), 60, dtype=np.int32),
        completion_tokens=rng.integers(3, 17, (T, R, W)).astype(np.int32),
        logprob_mean=np.where(answers == cc[:, None, None], -0.3, -1.2).astype(np.float32)
        + rng.normal(0, 0.2, (T, R, W)).astype(np.float32),
        meta={"source": "synthetic", "seed": seed, "rounds": R, "width": W},
    )
    if members is None:
        return out
    return dataclasses.replace(out, members=tuple(members), sees=sees)


def _recode(raw: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relabel arbitrary non-negative labels to first-appearance codes per task (−1 kept)."""
    t = raw.shape[0]
    out = np.full(raw.shape, -1, dtype=np.int32)
    cc = np.full(t, -1, dtype=np.int32)
    for i in range(t):
        seen: dict[int, int] = {}
        flat = raw[i].reshape(-1)
        codes = out[i].reshape(-1)
        for j, v in enumerate(flat):
            if v >= 0:
                codes[j] = seen.setdefault(int(v), len(seen))
        out[i] = codes.reshape(raw.shape[1:])
        cc[i] = seen.get(int(truth[i]), -1)
    return out, cc


# ----------------------------------------------------------------------------- reading
def _streams(path: Path) -> tuple[list[Path], dict]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.startswith("traces") and
                       (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz")))
        if not files:
            raise ConfigError(f"{path}: no traces*.jsonl or traces*.jsonl.gz in this folder; is it a corpus "
                              "written by `orchestrace collect run`?")
        man = path / "manifest.json"
    elif path.is_file():
        files, man = [path], path.parent / "manifest.json"
    else:
        raise ConfigError(f"{path}: no such corpus file or folder")
    meta: dict = {}
    if man.is_file():
        try:
            meta = json.loads(man.read_text())
        except ValueError as exc:
            raise ConfigError(f"{man}: not valid JSON ({exc})") from None
    return files, meta


def _lines(p: Path) -> Any:
    opener = gzip.open if p.name.endswith(".gz") else open
    try:
        with opener(p, "rb") as fh:
            yield from enumerate(fh, 1)
    except (OSError, EOFError) as exc:  # a torn gzip member: the records before it were yielded
        yield 0, exc


class _Run:
    __slots__ = ("where", "task_id", "meta", "returns", "aggs", "stop", "ended")

    def __init__(self, where: str, task_id: str, meta: dict) -> None:
        self.where, self.task_id, self.meta = where, task_id, meta
        self.returns: list[dict] = []
        self.aggs: list[tuple[str, dict]] = []
        self.stop = False
        self.ended = False


def _read_runs(files: list[Path], problems: list[Problem]) -> list[_Run]:
    import msgspec

    decode = msgspec.json.Decoder().decode
    runs: list[_Run] = []
    for f in files:
        cur: _Run | None = None
        for ln, line in _lines(f):
            if isinstance(line, Exception):
                problems.append(Problem(code="corpus.unreadable", severity=Severity.ERROR, path=f"{f}",
                                        message=f"stream ends in unreadable data ({line})",
                                        hint="the runs before it are kept; re-compress or cut the file"))
                break
            where = f"{f}:{ln}"
            try:
                rec = decode(line)
            except (ValueError, msgspec.DecodeError):
                problems.append(Problem(code="corpus.json", severity=Severity.ERROR, path=where,
                                        message="line is not JSON (a torn write?)",
                                        hint="`orchestrace collect run --resume` cuts a torn tail"))
                continue
            kind = next(iter(rec), None) if isinstance(rec, dict) and len(rec) == 1 else None
            body = rec[kind] if kind is not None else None
            if kind not in ("header", "event", "edge", "end") or not isinstance(body, dict):
                problems.append(Problem(code="corpus.record", severity=Severity.ERROR, path=where,
                                        message="not a trace stream record ({header|event|edge|end: {...}})"))
                continue
            if kind == "header":
                meta = body.get("meta")
                cur = _Run(where, str(body.get("task_id")), meta if isinstance(meta, dict) else {})
                runs.append(cur)
            elif cur is None:
                problems.append(Problem(code="corpus.orphan", severity=Severity.ERROR, path=where,
                                        message="record before any header"))
            elif kind == "event":
                et = body.get("type")
                dec = body.get("decision")
                if et == "return":
                    cur.returns.append(body)
                elif et == "aggregate":
                    cur.aggs.append((where, body))
                elif et == "orchestrator_decision" and isinstance(dec, dict) and dec.get("kind") == "stop":
                    cur.stop = True
            elif kind == "end":
                cur.ended = True
    return runs


def _int(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) else -1


def _attrs(ev: dict) -> dict:
    a = ev.get("attrs")
    return a if isinstance(a, dict) else {}


def _slot(ev: dict, R: int, W: int) -> tuple[int, int] | None:  # noqa: N803
    a = _attrs(ev)
    r, w = a.get("round"), a.get("worker")
    if isinstance(r, int) and isinstance(w, int) and 0 <= r < R and 0 <= w < W:
        return r, w
    return None


def load_logged_runs(
    path: str | os.PathLike[str], *, exclude: bool = False, rounds: int | None = None, width: int | None = None,
) -> LoggedRuns:
    """Read a vote corpus (folder or stream file, ``.jsonl`` or ``.jsonl.gz``) into :class:`LoggedRuns`.

    The round limit and width are the manifest's (else the first run's) unless given. Runs
    that break a rule raise :class:`~orchestrace.errors.TraceInvalidError` listing every
    problem, located; ``exclude=True`` drops them instead (``meta["excluded"]``, a warning).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "traces.jsonl"
    >>> _ = p.write_text('{"header": {"trace_id": "x", "task_id": "x", "meta": {"rounds": 1, "width": 1}}}\\n')
    >>> try:
    ...     load_logged_runs(p)
    ... except TraceInvalidError as e:
    ...     print(e.problems[0].code)
    corpus.truncated
    """
    files, manifest = _streams(Path(path))
    problems: list[Problem] = []
    runs = _read_runs(files, problems)
    cfg = manifest.get("config") or {}
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: manifest.json 'config' is not an object")
    R = _int(rounds or cfg.get("rounds") or (runs[0].meta.get("rounds") if runs else 0))  # noqa: N806
    W = _int(width or cfg.get("width") or (runs[0].meta.get("width") if runs else 0))  # noqa: N806
    if R < 1 or W < 1:
        raise ConfigError(f"{path}: no round limit / width (manifest config.rounds / config.width, or the first "
                          f"run's meta); got {R} x {W}")
    cells = cfg.get("cells", [])
    suites = {str(c[0]) for c in cells if isinstance(c, (list, tuple)) and c} if isinstance(cells, list) else set()
    bad: dict[str, list[str]] = {}
    keep: list[_Run] = []
    seen_ids: set[str] = set()

    def flag(run: _Run, code: str, where: str, msg: str, hint: str = "") -> None:
        problems.append(Problem(code=code, severity=Severity.ERROR, path=where, message=f"task {run.task_id}: {msg}",
                                hint=hint))
        bad.setdefault(code.split(".", 1)[1], []).append(run.task_id)

    for run in runs:
        m = run.meta
        if run.task_id in seen_ids:
            flag(run, "corpus.duplicate", run.where, "the task appears twice", "keep one run per task")
            continue
        if not (run.ended and run.stop and len(run.aggs) >= (_int(m.get("rounds")) if _int(m.get("rounds")) > 0 else R)):
            flag(run, "corpus.truncated", run.where,
                 f"run is cut short ({len(run.aggs)} graded rounds, stop={'yes' if run.stop else 'no'}, "
                 f"end record={'yes' if run.ended else 'no'})", "resume the collection or drop the run (exclude)")
            continue
        if _int(m.get("rounds")) != R or _int(m.get("width")) != W:
            flag(run, "corpus.shape", run.where,
                 f"logged with {m.get('rounds')} rounds x {m.get('width')} attempts, the corpus has {R} x {W}",
                 "read one round limit and width at a time (rounds=, width=) with exclude=True")
            continue
        if suites and m.get("suite") not in suites:
            flag(run, "corpus.suite", run.where,
                 f"suite {m.get('suite')!r} is not among the manifest's suites {sorted(suites)}",
                 "mixed corpora: read each collection separately")
            continue
        if m.get("answer") is None or not isinstance(m.get("difficulty", 0), int):
            flag(run, "corpus.grade", run.where, "no correct answer in the trace meta; attempts cannot be graded")
            continue
        ungraded = [w for w, ev in run.aggs
                    if not isinstance(ev.get("outcome"), dict) or not isinstance(ev["outcome"].get("success"), bool)]
        if ungraded:
            flag(run, "corpus.grade", ungraded[0], f"{len(ungraded)} aggregate event(s) without a graded outcome",
                 "every round's aggregate must carry outcome.success")
            continue
        if len(run.returns) != R * W:
            flag(run, "corpus.shape", run.where, f"{len(run.returns)} attempts, expected {R} x {W} = {R * W}")
            continue
        slots = {_slot(ev, R, W) for ev in run.returns}
        rounds_logged = {_slot({"attrs": {**_attrs(ev), "worker": 0}}, R, W) for _, ev in run.aggs}
        if None in slots or len(slots) != R * W or None in rounds_logged or len(rounds_logged) != R:
            flag(run, "corpus.shape", run.where, "attempts or aggregates without distinct attrs.round / attrs.worker "
                 f"in range (R={R}, W={W})", "every return needs attrs.round and attrs.worker; every aggregate attrs.round")
            continue
        if any(not isinstance(ev.get(k, 0), int) for ev in run.returns for k in ("tokens_in", "tokens_out")) or any(
                not isinstance(_attrs(ev).get("logprob_mean", 0.0), (int, float, type(None))) for ev in run.returns):
            flag(run, "corpus.record", run.where, "tokens_in / tokens_out / attrs.logprob_mean of wrong type")
            continue
        seen_ids.add(run.task_id)
        keep.append(run)
    if problems and not exclude:
        n = len(problems)
        raise TraceInvalidError(f"{path}: {n} problem(s) in the corpus; first: {problems[0]}. Pass exclude=True "
                                "(CLI: --exclude-bad) to drop these runs, counted in meta['excluded']", problems)
    if bad:
        counts = ", ".join(f"{k}: {len(v)}" for k, v in sorted(bad.items()))
        warnings.warn(f"{path}: excluded {sum(map(len, bad.values()))} run(s) ({counts}); see meta['excluded']",
                      stacklevel=2)
    if not keep:
        raise TraceInvalidError(f"{path}: no usable runs", problems)
    return _arrays(keep, R, W, {**manifest, "path": str(path), "rounds": R, "width": W, "excluded": bad,
                                "problems": [str(p) for p in problems[:50]]})


def _arrays(runs: list[_Run], R: int, W: int, meta: dict) -> LoggedRuns:  # noqa: N803
    T = len(runs)  # noqa: N806
    raw = np.full((T, R, W), -1, dtype=np.int64)
    pt = np.zeros((T, R, W), dtype=np.int32)
    ct = np.zeros((T, R, W), dtype=np.int32)
    lp = np.full((T, R, W), np.nan, dtype=np.float32)
    truth = np.zeros(T, dtype=np.int64)
    rc = np.zeros((T, R), dtype=bool)
    for i, run in enumerate(runs):
        labels: dict[str, int] = {}
        truth[i] = labels.setdefault(str(run.meta["answer"]), 0)
        for ev in run.returns:
            a = ev.get("attrs") or {}
            r, w = int(a["round"]), int(a["worker"])
            if a.get("answer") is not None:
                raw[i, r, w] = labels.setdefault(str(a["answer"]), len(labels))
            pt[i, r, w] = ev.get("tokens_in") or 0
            ct[i, r, w] = ev.get("tokens_out") or 0
            if a.get("logprob_mean") is not None:
                lp[i, r, w] = a["logprob_mean"]
        for _, ev in run.aggs[:R]:
            rc[i, int((ev.get("attrs") or {})["round"])] = bool(ev["outcome"]["success"])
    answers, cc = _recode(raw, truth)
    out = logged_from_codes([r.task_id for r in runs], [r.meta.get("suite", "") for r in runs],
                            [int(r.meta.get("difficulty", 0)) for r in runs], answers, cc,
                            prompt_tokens=pt, completion_tokens=ct, logprob_mean=lp, meta=meta)
    out.meta["round_correct_recomputed_mismatch"] = int((out.round_correct != rc).any(axis=1).sum())
    return dataclasses.replace(out, round_correct=rc)
