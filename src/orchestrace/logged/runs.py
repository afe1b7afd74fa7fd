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
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._limits import MAX_PROBLEMS, MAX_ROUNDS, MAX_WIDTH, corpus_bytes, regular_file
from .._problems import Problem
from ..core.io import iter_stream_records
from ..errors import ConfigError, TraceInvalidError
from ..vocab import Severity
from .readers import check_aggregate, check_return, check_run_meta

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
    #: (W,) member kind of each attempt column; () = a homogeneous vote (every column the same sampler)
    members: tuple[str, ...] = ()
    #: per column, the columns whose answers (rounds 0..r, this round included) it was shown at round r
    sees: tuple[tuple[int, ...], ...] = ()
    #: (T, R, W) float32 DeepConf-style confidence of each reply (NaN where the server gave no top-k); or None
    confidence: np.ndarray | None = None

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
        fields = {f.name: getattr(self, f.name)[idx] for f in dataclasses.fields(self)
                  if isinstance(getattr(self, f.name), np.ndarray)}
        return dataclasses.replace(self, **fields, meta=dict(self.meta))


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
    if k > max(r * w, 1) or int(answers.min(initial=-1)) < -1:
        raise ConfigError(f"answer codes must be -1..{r * w - 1} (one distinct answer per attempt at most), got "
                          f"{int(answers.min(initial=-1))}..{k - 1}")
    counts = np.zeros((t, r, k), dtype=np.int32)  # (T, R, k) votes per code, then cumulated over rounds
    ti, ri, _ = np.nonzero(answers >= 0)
    np.add.at(counts, (ti, ri, answers[answers >= 0]), 1)
    counts = counts.cumsum(axis=1)
    from .._vote import top_answer  # the one majority vote (ties: the lowest code, the first seen)

    maj = top_answer(counts)
    round_correct = (maj >= 0) & (maj == correct_code[:, None])
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


#: Solve-rate multipliers of the synthetic team's member kinds (a kind not listed: 1).
SYNTHETIC_SKILL = {"cold": 1.4, "hot": 0.7, "calc": 1.0, "reviser": 1.1}


def make_synthetic_logged(T: int, R: int, W: int, seed: int = 0, *, members: tuple[str, ...] = (),  # noqa: N803
                          sees: tuple[tuple[int, ...], ...] = (), prefix: str = "synth") -> LoggedRuns:
    """Random logged runs for tests: per task a solve rate p ~ U(0, 1) and 1–3 wrong answers.

    ``members`` (W kinds): a synthetic team — column c solves at p × :data:`SYNTHETIC_SKILL` of its
    kind (capped at 0.98) and logs a DeepConf confidence (higher when right); ``sees`` is recorded
    as given. ``prefix`` names the task ids (a different prefix: a disjoint, "fresh" task set).

    >>> r = make_synthetic_logged(4, 3, 2, seed=0)
    >>> bool(((r.answers >= -1) & (r.answers < 4)).all()), r.meta["source"]
    (True, 'synthetic')
    >>> make_synthetic_logged(4, 2, 3, members=("cold", "hot", "reviser"), sees=((), (), (0, 1))).members
    ('cold', 'hot', 'reviser')
    """
    if members and len(members) != W:
        raise ConfigError(f"members: {len(members)} kinds for W = {W} columns")
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, T)
    skill = np.array([SYNTHETIC_SKILL.get(m, 1.0) for m in members]) if members else np.ones(W)
    pc = np.minimum(p[:, None, None] * skill[None, None, :], 0.98)
    raw = np.where(rng.uniform(size=(T, R, W)) < pc, 0, rng.integers(1, 4, (T, R, W)))
    raw = np.where(rng.uniform(size=(T, R, W)) < 0.05, -1, raw)
    if members:  # a calc member is right or unparsed; a reviser repeats the majority it saw 80 % of the time
        if "calc" in members:
            c = members.index("calc")
            raw[:, :, c] = np.where(raw[:, :, c] == 0, 0, np.where(rng.uniform(size=(T, R)) < 0.5, -1, raw[:, :, c]))
        if not sees:  # a reviser sees every other column (as the team collector logs it)
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
    ids = [f"{prefix}-s{1 + i % 3}-{i:06d}" for i in range(T)]
    right = answers == cc[:, None, None]
    out = logged_from_codes(
        ids, ["synth"] * T, [1 + i % 3 for i in range(T)], answers, cc,
        prompt_tokens=np.full((T, R, W), 60, dtype=np.int32),
        completion_tokens=rng.integers(3, 17, (T, R, W)).astype(np.int32),
        logprob_mean=np.minimum(np.where(right, -0.3, -1.2).astype(np.float32)
                                + rng.normal(0, 0.2, (T, R, W)).astype(np.float32), 0.0),  # a log-prob is <= 0
        meta={"source": "synthetic", "seed": seed, "rounds": R, "width": W},
    )
    if not members:
        return out
    conf = (np.where(right, 3.0, 2.0) + rng.normal(0, 0.4, (T, R, W))).astype(np.float32)
    return dataclasses.replace(out, members=tuple(members), sees=tuple(tuple(x) for x in sees), confidence=conf)


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
    elif path.exists() or path.is_symlink():
        regular_file(path, limit=corpus_bytes(), what="corpus stream")  # a FIFO, a device, a loop: located
        files, man = [path], path.parent / "manifest.json"
    else:
        raise ConfigError(f"{path}: no such corpus file or folder")
    meta: dict = {}
    if man.exists() or man.is_symlink():
        from .readers import read_manifest

        meta = read_manifest(man)
    return files, meta


class _Run:
    __slots__ = ("where", "task_id", "meta", "returns", "aggs", "stop", "ended", "bad")

    def __init__(self, where: str, task_id: str, meta: dict) -> None:
        self.where, self.task_id, self.meta = where, task_id, meta
        self.returns: list[dict] = []
        self.aggs: list[tuple[str, dict]] = []
        self.stop = False
        self.ended = False
        self.bad: list[tuple[str, str, str]] = []  # (where, code, what): a record of this run that is not valid


def _read_runs(files: list[Path], problems: list[Problem]) -> list[_Run]:
    runs: list[_Run] = []
    budget = corpus_bytes()  # for the whole corpus, decompressed
    for f in files:
        cur: _Run | None = None
        # regular files only, the decompressed total and each line capped (_limits.capped_lines);
        # a torn gzip member or the cap: one "unreadable" record after the records before it
        for rec in iter_stream_records(f, limit=budget):
            where = f"{f}:{rec.line}"
            budget -= rec.size
            if len(problems) >= MAX_PROBLEMS or (cur is not None and len(cur.bad) >= MAX_PROBLEMS):
                problems.append(Problem(code="corpus.unreadable", severity=Severity.ERROR, path=where,
                                        message=f"more than {MAX_PROBLEMS} bad records; the rest was not read",
                                        hint="this is not a corpus the collectors wrote"))
                return runs
            if rec.error == "unreadable":
                if cur is not None and not cur.ended:
                    cur.bad.append((where, "corpus.unreadable", f"the stream ends in unreadable data inside this run ({rec.detail})"))
                problems.append(Problem(code="corpus.unreadable", severity=Severity.ERROR, path=where,
                                        message=f"stream ends in unreadable data ({rec.detail})",
                                        hint="the runs before it are kept; re-compress or cut the file"))
                break
            if rec.error == "too-long":
                if cur is not None:
                    cur.bad.append((where, "corpus.json", rec.detail))
                else:
                    problems.append(Problem(code="corpus.json", severity=Severity.ERROR, path=where,
                                            message=rec.detail))
                continue
            if rec.error == "not-json":
                if cur is not None and not cur.ended:  # counted against the run it belongs to
                    cur.bad.append((where, "corpus.json", f"line is not JSON, a torn write? ({rec.detail})"))
                    continue
                problems.append(Problem(code="corpus.json", severity=Severity.ERROR, path=where,
                                        message="line is not JSON (a torn write?)",
                                        hint="`orchestrace collect run --resume` cuts a torn tail"))
                continue
            kind, body = rec.kind, rec.body
            if kind is None or body is None:
                problems.append(Problem(code="corpus.record", severity=Severity.ERROR, path=where,
                                        message="not a trace stream record ({header|event|edge|end: {...}})"))
                continue
            if kind == "header":
                cur = _header_run(where, body)
                runs.append(cur)
            elif cur is None:
                problems.append(Problem(code="corpus.orphan", severity=Severity.ERROR, path=where,
                                        message="record before any header"))
            elif kind == "event":
                _take_event(cur, where, body)
            elif kind == "end":
                cur.ended = True
    return runs


def _header_run(where: str, body: dict) -> _Run:
    """A run opened by its header record (its meta checked when it names an answer)."""
    meta = body.get("meta")
    tid = body.get("task_id")
    run = _Run(where, tid[:200] if isinstance(tid, str) else str(tid)[:200], meta if isinstance(meta, dict) else {})
    err = check_run_meta(run.meta) if run.meta.get("answer") is not None else None
    if err is not None:
        run.bad.append((where, "corpus.value", err.replace("`$", "`$.header.meta")))
    return run


def _take_event(cur: _Run, where: str, body: dict) -> None:
    """Keep what the arrays read of one event: an attempt (``return``), a graded round
    (``aggregate``), or the stop decision."""
    et = body.get("type")
    dec = body.get("decision")
    if et == "return":
        err = check_return(body, MAX_ROUNDS, MAX_WIDTH)
        if err is not None:
            cur.bad.append((where, "corpus.value", err.replace("`$", "`$.event")))
        body.pop("content", None)  # the reply text is not read: not kept in memory
        cur.returns.append(body)
    elif et == "aggregate":
        err = check_aggregate(body, MAX_ROUNDS)
        if err is not None and isinstance(body.get("outcome"), dict) and "success" in body["outcome"]:
            cur.bad.append((where, "corpus.value", err.replace("`$", "`$.event")))
        cur.aggs.append((where, body))
    elif et == "orchestrator_decision" and isinstance(dec, dict) and dec.get("kind") == "stop":
        cur.stop = True


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
    stream_problems = len(problems)  # not counted against a run: lines outside any run, a stream's torn end
    cfg = manifest.get("config") or {}
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: manifest.json $.config is not an object")
    if not runs:
        raise TraceInvalidError(f"{path}: no run could be read ({len(problems)} problem(s)"
                                f"{'; first: ' + str(problems[0]) if problems else ''})", problems)
    R, W = _shape(path, cfg, runs, rounds, width)  # noqa: N806
    cells = cfg.get("cells", [])
    suites = {str(c[0]) for c in cells if isinstance(c, (list, tuple)) and c} if isinstance(cells, list) else set()
    members = _members(cfg, runs)
    bad: dict[str, list[str]] = {}
    keep: list[_Run] = []
    seen_ids: set[str] = set()

    def flag(run: _Run, code: str, where: str, msg: str, hint: str = "") -> None:
        problems.append(Problem(code=code, severity=Severity.ERROR, path=where, message=f"task {run.task_id}: {msg}",
                                hint=hint))
        bad.setdefault(code.split(".", 1)[1], []).append(run.task_id)

    for run in runs:
        unfit = _unfit(run, R, W, suites, members, seen_ids)
        if unfit is not None:
            flag(run, *unfit)
            continue
        seen_ids.add(run.task_id)
        keep.append(run)
    lost = _lost(manifest, len(runs))
    if lost:
        problems.append(Problem(code="corpus.lost", severity=Severity.ERROR, path=str(path),
                                message=f"the manifest records {lost + len(runs)} finished task(s), {len(runs)} "
                                        f"run(s) could be read: {lost} run(s) lost to unreadable data"))
    if problems and not exclude:
        n = len(problems)
        raise TraceInvalidError(f"{path}: {n} problem(s) in the corpus; first: {problems[0]}. Pass exclude=True "
                                "to drop these runs, counted in meta['excluded']", problems)
    if bad or lost or stream_problems:
        counts = ", ".join(f"{k}: {len(v)}" for k, v in sorted(bad.items()))
        stream = (f"; {stream_problems} unreadable line(s) or stream end(s) outside the runs (first: "
                  f"{problems[0]})" if stream_problems else "")
        warnings.warn(f"{path}: excluded {sum(map(len, bad.values())) + lost} run(s) ({counts}"
                      f"{', ' if counts and lost else ''}{f'unreadable: {lost}' if lost else ''}){stream}; "
                      "see meta['excluded']", stacklevel=2)
    if not keep:
        raise TraceInvalidError(f"{path}: no usable runs", problems)
    out = _arrays(keep, R, W, members, {**manifest, "path": str(path), "rounds": R, "width": W, "excluded": bad,
                                        "lost_runs": lost, "problems": [str(p) for p in problems[:50]]})
    # per-member prices in the manifest: the token arrays become billed tokens
    from ._prices import charge_prices

    return charge_prices(out, cfg, where=f"{path}: manifest.json")


def _shape(path: str | os.PathLike[str], cfg: dict, runs: list[_Run], rounds: int | None,
           width: int | None) -> tuple[int, int]:
    """The round limit and width: given, else the manifest's, else the first run's (bounded)."""
    R = _int(rounds or cfg.get("rounds") or (runs[0].meta.get("rounds") if runs else 0))  # noqa: N806
    W = _int(width or cfg.get("width") or (runs[0].meta.get("width") if runs else 0))  # noqa: N806
    if R < 1 or W < 1:
        raise ConfigError(f"{path}: no round limit / width (manifest config.rounds / config.width, or the first "
                          f"run's meta at {runs[0].where}); got {R} x {W}")
    if R > MAX_ROUNDS or W > MAX_WIDTH:
        raise ConfigError(f"{path}: {R} rounds x {W} attempts; the limits are {MAX_ROUNDS} rounds x {MAX_WIDTH} "
                          "attempts per round")
    return R, W


def _unfit(run: _Run, R: int, W: int, suites: set[str], members: tuple[str, ...],  # noqa: N803
           seen_ids: set[str]) -> tuple[str, str, str] | tuple[str, str, str, str] | None:
    """Why a run cannot be kept — ``(code, where, message[, hint])``, the first rule it breaks — or None."""
    m = run.meta
    if run.task_id in seen_ids:
        return ("corpus.duplicate", run.where, "the task appears twice", "keep one run per task")
    if not (run.ended and run.stop and len(run.aggs) >= (_int(m.get("rounds")) if _int(m.get("rounds")) > 0 else R)):
        return ("corpus.truncated", run.where,
                f"run is cut short ({len(run.aggs)} graded rounds, stop={'yes' if run.stop else 'no'}, "
                f"end record={'yes' if run.ended else 'no'})", "resume the collection or drop the run (exclude)")
    if run.bad:
        return (run.bad[0][1], run.bad[0][0], f"{run.bad[0][2]}"
                + (f" (and {len(run.bad) - 1} more invalid record(s) in this run)" if len(run.bad) > 1 else ""),
                "fix or drop the run (exclude)")
    if _int(m.get("rounds")) != R or _int(m.get("width")) != W:
        return ("corpus.shape", run.where,
                f"logged with {m.get('rounds')} rounds x {m.get('width')} attempts, the corpus has {R} x {W}",
                "read one round limit and width at a time (rounds=, width=) with exclude=True")
    if suites and m.get("suite") not in suites:
        return ("corpus.suite", run.where,
                f"suite {m.get('suite')!r} is not among the manifest's suites {sorted(suites)}",
                "mixed corpora: read each collection separately")
    if m.get("answer") is None or not isinstance(m.get("difficulty", 0), int):
        return ("corpus.grade", run.where, "no correct answer in the trace meta; attempts cannot be graded")
    ungraded = [w for w, ev in run.aggs
                if not isinstance(ev.get("outcome"), dict) or not isinstance(ev["outcome"].get("success"), bool)]
    if ungraded:
        return ("corpus.grade", ungraded[0], f"{len(ungraded)} aggregate event(s) without a graded outcome",
                "every round's aggregate must carry outcome.success")
    if len(run.returns) != R * W:
        return ("corpus.shape", run.where, f"{len(run.returns)} attempts, expected {R} x {W} = {R * W}")
    slots = {_slot(ev, R, W) for ev in run.returns}
    rounds_logged = {_slot({"attrs": {**_attrs(ev), "worker": 0}}, R, W) for _, ev in run.aggs}
    if None in slots or len(slots) != R * W or None in rounds_logged or len(rounds_logged) != R:
        return ("corpus.shape", run.where, "attempts or aggregates without distinct attrs.round / attrs.worker "
                f"in range (R={R}, W={W})", "every return needs attrs.round and attrs.worker; every aggregate attrs.round")
    if any(not isinstance(ev.get(k, 0), int) for ev in run.returns for k in ("tokens_in", "tokens_out")) or any(
            not isinstance(_attrs(ev).get("logprob_mean", 0.0), (int, float, type(None))) for ev in run.returns):
        return ("corpus.record", run.where, "tokens_in / tokens_out / attrs.logprob_mean of wrong type")
    team_problem = _team_problem(run, members, W)
    if team_problem:
        return ("corpus.team", run.where, team_problem,
                "a team corpus needs the same members in every run and every reviser's `saw` list")
    return None


def _lost(manifest: dict, n_read: int) -> int:
    """Runs the manifest says were written (``tasks_done``, or a packaged corpus's ``tasks``) but not read."""
    done = manifest.get("tasks_done", manifest.get("tasks"))
    return max(done - n_read, 0) if isinstance(done, int) and not isinstance(done, bool) else 0


def _members(cfg: dict, runs: list[_Run]) -> tuple[str, ...]:
    """The team's member columns: the manifest's ``config.members`` (else the first run's meta); () for a vote."""
    listed = cfg.get("members")
    if isinstance(listed, list) and listed:
        names = [m.get("name") if isinstance(m, dict) else m for m in listed]
    else:
        first = runs[0].meta.get("members") if runs else None
        names = first if isinstance(first, list) else []
    if not all(isinstance(n, str) for n in names):
        raise ConfigError("manifest config.members (or the first run's meta.members) must be a list of member names")
    return tuple(str(n) for n in names)


def _team_problem(run: _Run, members: tuple[str, ...], W: int) -> str:  # noqa: N803
    """Why a run does not fit the corpus's team ('' when it does, or when the corpus is a vote)."""
    got = run.meta.get("members")
    if not members and got in (None, []):
        return ""
    if list(members) != got:
        return f"members {got!r} differ from the corpus's {list(members)!r}"
    if len(members) != W:
        return f"{len(members)} members for width {W}"
    sees = run.meta.get("sees") or [[] for _ in members]
    if not isinstance(sees, list) or len(sees) != W or not all(
            isinstance(c, list) and all(isinstance(x, int) and 0 <= x < W for x in c) for c in sees):
        return f"meta.sees must list, for each of the {W} columns, the columns it was shown"
    logged = {(_attrs(e).get("round"), _attrs(e).get("worker")): _attrs(e).get("answer") for e in run.returns}
    for ev in run.returns:
        a = _attrs(ev)
        w = a.get("worker")
        if not isinstance(w, int) or not 0 <= w < W:
            continue
        if a.get("member") != members[w]:
            return f"attempt in column {w} is by {a.get('member')!r}, expected {members[w]!r}"
        if w < len(sees) and sees[w] and not isinstance(a.get("saw"), list):
            return f"the {members[w]} (round {a.get('round')}) is logged without the answers it saw (attrs.saw)"
        if w < len(sees) and sees[w]:
            r = a.get("round")
            shown = [logged.get((q, c)) for q in range(r + 1) for c in sees[w]] if isinstance(r, int) else None
            if shown != a.get("saw"):
                return (f"the {members[w]} (round {r}) saw {a.get('saw')!r}, but the logged answers of the columns "
                        f"it sees are {shown!r}")
    return ""


def _arrays(runs: list[_Run], R: int, W: int, members: tuple[str, ...], meta: dict) -> LoggedRuns:  # noqa: N803
    T = len(runs)  # noqa: N806
    conf = np.full((T, R, W), np.nan, dtype=np.float32)
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
            c = a.get("confidence")
            if isinstance(c, (int, float)) and not isinstance(c, bool) and 0 <= c < 1e6:
                conf[i, r, w] = c
        for _, ev in run.aggs[:R]:
            rc[i, int((ev.get("attrs") or {})["round"])] = bool(ev["outcome"]["success"])
    answers, cc = _recode(raw, truth)
    out = logged_from_codes([r.task_id for r in runs], [r.meta.get("suite", "") for r in runs],
                            [int(r.meta.get("difficulty", 0)) for r in runs], answers, cc,
                            prompt_tokens=pt, completion_tokens=ct, logprob_mean=lp, meta=meta)
    out.meta["round_correct_recomputed_mismatch"] = int((out.round_correct != rc).any(axis=1).sum())
    sees: tuple[tuple[int, ...], ...] = ()
    if members:
        raw_sees = runs[0].meta.get("sees") or []
        sees = tuple(tuple(int(x) for x in col) if isinstance(col, list) else () for col in raw_sees)
    return dataclasses.replace(out, round_correct=rc, members=members, sees=sees,
                               confidence=conf if bool(np.isfinite(conf).any()) else None)
