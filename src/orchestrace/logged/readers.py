"""Validated readers of the learning surfaces' inputs: typed records with bounds on every number.

Each input kind has one typed shape here (msgspec structs with constraints; unknown fields
are ignored in trace records, which carry more than the arrays need) and one function that
turns a decode failure into a located message (``file:line``, the task id, ``$.field``):

=======================  ============================================================================
input                    reader
=======================  ============================================================================
a corpus return event    :func:`check_return` → :class:`ReturnEvent` (tokens, log-prob, round/worker)
a corpus aggregate       :func:`check_aggregate` → :class:`AggregateEvent` (round, graded outcome)
a corpus run's meta      :func:`check_run_meta` → :class:`RunMeta` (suite, difficulty, answer, R, W)
``manifest.json``        :func:`read_manifest` → a dict whose ``config`` passed :class:`ManifestConfig`
a logged-runs ``.npz``   :func:`read_npz` → the arrays, dtypes, shapes and answer codes checked
a gate / team policy     :func:`orchestrace.policies.policy_file.read_policy_file` (frozen, bounded)
=======================  ============================================================================

Bounds (:mod:`orchestrace._limits`): token counts in ``[0, MAX_TOKENS)``, mean log-probs in
``[LOGPROB_MIN, 0]``, rounds ≤ ``MAX_ROUNDS``, width ≤ ``MAX_WIDTH``, difficulty in
``[0, MAX_DIFFICULTY]``, an answer a scalar (string ≤ 4096 characters, number, bool or null),
answer codes of a task ``-1..k-1`` in first-appearance order (``k`` distinct answers).

>>> check_return({"type": "return", "tokens_in": 5, "tokens_out": -1, "attrs": {"round": 0, "worker": 0}}, 2, 2)
'Expected `int` >= 0 - at `$.tokens_out`'
>>> check_return({"type": "return", "tokens_in": 5, "attrs": {"round": 0, "worker": 0, "logprob_mean": 0.5}}, 2, 2)
'Expected `float` <= 0.0 - at `$.attrs.logprob_mean`'
>>> check_return({"type": "return", "attrs": {"round": 1, "worker": 3}}, 2, 2)
'$.attrs.worker: 3 is not below the width 2'
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Annotated, Any, Protocol

import msgspec
import numpy as np

from .._limits import (
    LOGPROB_MIN,
    MAX_DIFFICULTY,
    MAX_ROUNDS,
    MAX_SMALL_FILE_BYTES,
    MAX_TOKENS,
    MAX_WIDTH,
    corpus_bytes,
    read_capped,
    regular_file,
)
from ..errors import ConfigError

__all__ = [
    "AggregateEvent",
    "ManifestConfig",
    "ReturnEvent",
    "RunMeta",
    "check_aggregate",
    "check_return",
    "check_run_meta",
    "corpus_fingerprint",
    "read_manifest",
    "read_npz",
    "write_policy_file",
]

Tokens = Annotated[int, msgspec.Meta(ge=0, lt=MAX_TOKENS)]
LogProb = Annotated[float, msgspec.Meta(ge=LOGPROB_MIN, le=0.0)]
Round = Annotated[int, msgspec.Meta(ge=0, lt=MAX_ROUNDS)]
Worker = Annotated[int, msgspec.Meta(ge=0, lt=MAX_WIDTH)]
Answer = Annotated[str, msgspec.Meta(max_length=4096)] | Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)] | float | bool | None
Confidence = Annotated[float, msgspec.Meta(ge=0.0, le=1e6)]


class ReturnAttrs(msgspec.Struct, frozen=True):
    """The ``attrs`` of a logged attempt that the arrays read."""

    round: Round
    worker: Worker
    answer: Answer = None
    logprob_mean: LogProb | None = None
    confidence: Confidence | None = None


class ReturnEvent(msgspec.Struct, frozen=True):
    """A logged attempt (a ``return`` event): token counts and its attrs."""

    attrs: ReturnAttrs
    tokens_in: Tokens | None = None
    tokens_out: Tokens | None = None


class _AggAttrs(msgspec.Struct, frozen=True):
    round: Round


class _Graded(msgspec.Struct, frozen=True):
    success: bool


class AggregateEvent(msgspec.Struct, frozen=True):
    """A round's graded majority (an ``aggregate`` event)."""

    attrs: _AggAttrs
    outcome: _Graded


class RunMeta(msgspec.Struct, frozen=True):
    """The header ``meta`` of one logged run (the fields the arrays read)."""

    answer: Answer
    rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)]
    width: Annotated[int, msgspec.Meta(ge=1, le=MAX_WIDTH)]
    suite: Annotated[str, msgspec.Meta(max_length=200)] = ""
    difficulty: Annotated[int, msgspec.Meta(ge=0, le=MAX_DIFFICULTY)] = 0


class ManifestConfig(msgspec.Struct, frozen=True):
    """The ``config`` of a corpus manifest (the fields the loader reads; others are kept as they are)."""

    rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)] | None = None
    width: Annotated[int, msgspec.Meta(ge=1, le=MAX_WIDTH)] | None = None
    cells: list[tuple[Annotated[str, msgspec.Meta(max_length=200)], int]] = []
    n_tasks: Annotated[int, msgspec.Meta(ge=0, le=10**9)] | None = None


def _convert(obj: Any, typ: type) -> tuple[Any, str | None]:
    try:
        return msgspec.convert(obj, typ), None
    except msgspec.ValidationError as exc:
        return None, str(exc)


def check_return(ev: dict, R: int, W: int) -> str | None:  # noqa: N803 (the contract's names)
    """None when the return event ``ev`` is a valid attempt of an R × W run, else what is wrong (``$.field``)."""
    x, err = _convert(ev, ReturnEvent)
    if err is not None:
        return err
    if x.attrs.round >= R:
        return f"$.attrs.round: {x.attrs.round} is not below the round limit {R}"
    if x.attrs.worker >= W:
        return f"$.attrs.worker: {x.attrs.worker} is not below the width {W}"
    return None


def check_aggregate(ev: dict, R: int) -> str | None:  # noqa: N803
    """None when the aggregate event ``ev`` carries a round below ``R`` and a graded outcome, else what is wrong.

    >>> check_aggregate({"attrs": {"round": 0}, "outcome": {"success": "yes"}}, 4)
    'Expected `bool`, got `str` - at `$.outcome.success`'
    """
    x, err = _convert(ev, AggregateEvent)
    if err is not None:
        return err
    return None if x.attrs.round < R else f"$.attrs.round: {x.attrs.round} is not below the round limit {R}"


def check_run_meta(meta: Any) -> str | None:
    """None when a run's header meta holds a gradable answer and sane numbers, else what is wrong.

    >>> check_run_meta({"answer": "7", "rounds": 4, "width": 2, "difficulty": 1e30})
    'Expected `int`, got `float` - at `$.difficulty`'
    """
    _, err = _convert(meta, RunMeta)
    return None if err is None else err


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest at ``path``: a regular file ≤ 16 MiB holding a JSON object whose ``config``
    (if any) passes :class:`ManifestConfig`; anything else is a located ConfigError.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "manifest.json"; _ = p.write_text('{"config": {"width": "2"}}')
    >>> try:
    ...     read_manifest(p)
    ... except ConfigError as e:
    ...     print(str(e).split(": ", 1)[1])
    Expected `int | null`, got `str` - at `$.config.width`
    """
    data = read_capped(path, limit=MAX_SMALL_FILE_BYTES, what="manifest")
    try:
        doc = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); a corpus manifest is a JSON object in UTF-8") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: $ is a JSON {type(doc).__name__}, expected an object (a corpus manifest)")
    if doc.get("config") is not None:
        _, err = _convert(doc["config"], ManifestConfig)
        if err is not None:
            raise ConfigError(f"{path}: {err.replace('`$', '`$.config')}")
    return doc


# ----------------------------------------------------------------------------- .npz
_NPZ_KINDS = {  # name → (numpy kinds allowed, ndim)
    "task_ids": ("U", 1), "suite": ("U", 1), "split": ("U", 1), "difficulty": ("iu", 1),
    "answers": ("iu", 3), "correct": ("b", 3), "correct_code": ("iu", 1), "prompt_tokens": ("iu", 3),
    "completion_tokens": ("iu", 3), "logprob_mean": ("f", 3), "round_correct": ("b", 2),
}


def read_npz(path: str | os.PathLike[str], names: list[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays ``names`` and the JSON ``meta`` of a logged-runs ``.npz`` (:func:`save_runs`), every
    member's declared size capped before it is decompressed, dtypes and shapes checked, numbers
    bounded (tokens, log-probs) and answer codes in first-appearance order.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.npz"; np.savez(p, answers=np.array([1]))
    >>> try:
    ...     read_npz(p, ["answers"])
    ... except ConfigError as e:
    ...     print(str(e).split(": ", 1)[1])
    not a logged-runs file: missing array(s) meta
    """
    cap = corpus_bytes()
    regular_file(path, limit=cap, what="logged-runs file")
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            infos = {i.filename.removesuffix(".npy"): i for i in zf.infolist()}
            missing = [n for n in [*names, "meta"] if n not in infos]
            if missing:
                raise ConfigError(f"{path}: not a logged-runs file: missing array(s) {', '.join(missing)}")
            total = sum(infos[n].file_size for n in [*names, "meta"])
            if total > cap:
                raise ConfigError(f"{path}: the arrays hold {total} bytes decompressed, over the {cap}-byte limit "
                                  "(ORCHESTRACE_MAX_CORPUS_BYTES)")
            for n in [*names, "meta"]:
                with zf.open(infos[n]) as fh:
                    version = np.lib.format.read_magic(fh)
                    reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                              else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = reader(fh)
                    if dtype.hasobject:
                        raise ConfigError(f"{path}: array {n} holds Python objects; only plain arrays are read")
                    if int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > infos[n].file_size:
                        raise ConfigError(f"{path}: array {n} declares shape {shape} of {dtype}, more than its "
                                          f"{infos[n].file_size} stored bytes")
                with zf.open(infos[n]) as fh:
                    out[n] = np.lib.format.read_array(fh, allow_pickle=False)
    except ConfigError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as exc:
        raise ConfigError(f"{path}: not a readable logged-runs file ({type(exc).__name__}: {exc})") from None
    meta_raw = out.pop("meta")
    try:
        meta = json.loads(str(meta_raw)) if meta_raw.dtype.kind == "U" and meta_raw.ndim == 0 else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise ConfigError(f"{path}: meta is not a JSON object string (as save_runs writes it)")
    _check_npz_arrays(Path(path), out)
    return out, meta


def _check_npz_arrays(path: Path, a: dict[str, np.ndarray]) -> None:
    for n, arr in a.items():
        kinds, ndim = _NPZ_KINDS.get(n, ("iufbU", arr.ndim))
        if arr.dtype.kind not in kinds or arr.ndim != ndim:
            raise ConfigError(f"{path}: array {n} is {arr.dtype} with {arr.ndim} dimension(s), expected "
                              f"{ndim} dimension(s) of kind {'/'.join(kinds)}")
    ans = a.get("answers")
    if ans is None:
        return
    T, R, W = ans.shape  # noqa: N806
    if not (1 <= R <= MAX_ROUNDS and 1 <= W <= MAX_WIDTH):
        raise ConfigError(f"{path}: answers has {R} rounds x {W} attempts; the limits are {MAX_ROUNDS} x {MAX_WIDTH}")
    for n in ("task_ids", "suite", "split", "difficulty", "correct_code"):
        if n in a and a[n].shape != (T,):
            raise ConfigError(f"{path}: {n} has shape {a[n].shape}, expected ({T},)")
    for n in ("correct", "prompt_tokens", "completion_tokens", "logprob_mean"):
        if n in a and a[n].shape != (T, R, W):
            raise ConfigError(f"{path}: {n} has shape {a[n].shape}, expected {(T, R, W)}")
    if "round_correct" in a and a["round_correct"].shape != (T, R):
        raise ConfigError(f"{path}: round_correct has shape {a['round_correct'].shape}, expected {(T, R)}")
    flat = ans.reshape(T, R * W).astype(np.int64)
    if (flat < -1).any() or (flat >= R * W).any():
        t = int(np.flatnonzero(((flat < -1) | (flat >= R * W)).any(1))[0])
        raise ConfigError(f"{path}: task {_tid(a, t)}: answer codes must be -1..{R * W - 1} (at most one distinct "
                          f"answer per attempt), got {int(flat[t].min())}..{int(flat[t].max())}")
    # first-appearance order: the running maximum of the codes seen grows by at most one per attempt
    seen_max = np.maximum.accumulate(np.concatenate([np.full((T, 1), -1), flat], 1), axis=1)[:, :-1]
    bad = (flat > seen_max + 1).any(1)
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"{path}: task {_tid(a, t)}: answer codes are not in first-appearance order (0, then 1, …); "
                          f"{int(bad.sum())} task(s) like it")
    k = flat.max(1) + 1  # (T,) distinct answers of each task (codes -1 only: 0)
    cc = a.get("correct_code")
    if cc is not None:
        off = (cc < -1) | (cc >= k)
        if off.any():
            t = int(np.flatnonzero(off)[0])
            raise ConfigError(f"{path}: task {_tid(a, t)}: correct_code {int(cc[t])} is neither -1 nor one of its "
                              f"{int(k[t])} answer code(s)")
    for n in ("prompt_tokens", "completion_tokens"):
        if n in a and ((a[n] < 0) | (a[n] >= MAX_TOKENS)).any():
            raise ConfigError(f"{path}: {n} must be in [0, {MAX_TOKENS}), got {int(a[n].min())}..{int(a[n].max())}")
    lp = a.get("logprob_mean")
    if lp is not None:
        fin = lp[~np.isnan(lp)]
        if fin.size and (~np.isfinite(fin) | (fin > 0) | (fin < LOGPROB_MIN)).any():
            raise ConfigError(f"{path}: logprob_mean must be NaN (absent) or in [{LOGPROB_MIN:g}, 0], got "
                              f"{float(fin.min())}..{float(fin.max())}")
    if "difficulty" in a and ((a["difficulty"] < 0) | (a["difficulty"] > MAX_DIFFICULTY)).any():
        raise ConfigError(f"{path}: difficulty must be in [0, {MAX_DIFFICULTY}]")


def _tid(a: dict[str, np.ndarray], t: int) -> str:
    ids = a.get("task_ids")
    return str(ids[t])[:200] if ids is not None and t < len(ids) else f"#{t}"


# ----------------------------------------------------------------------------- policy files
class _Identified(Protocol):
    """What a corpus's fingerprint reads: its answer array's shape and its task ids (``LoggedRuns`` has both)."""

    @property
    def answers(self) -> np.ndarray: ...
    @property
    def task_ids(self) -> np.ndarray: ...


def corpus_fingerprint(runs: _Identified) -> str:
    """A short hash of a corpus's identity (its task ids and shape), stored in a gate's meta so that
    applying the gate to another corpus is flagged.

    >>> from orchestrace.offline import make_synthetic_logged
    >>> a, b = make_synthetic_logged(6, 2, 2, seed=0), make_synthetic_logged(7, 2, 2, seed=0)
    >>> corpus_fingerprint(a) == corpus_fingerprint(a), corpus_fingerprint(a) == corpus_fingerprint(b)
    (True, False)
    """
    import hashlib

    h = hashlib.sha256(repr(tuple(int(x) for x in runs.answers.shape[1:])).encode())
    for tid in sorted(map(str, runs.task_ids.tolist())):
        h.update(tid.encode("utf-8", "replace") + b"\n")
    return h.hexdigest()[:16]


def write_policy_file(path: str | os.PathLike[str], name: str, doc: dict[str, Any], *,
                      default: Any = None) -> Path:
    """Write a fitted policy's JSON document atomically; ``path`` is a file, or a run directory
    (then ``name`` in it). Returns the file written. The gate and the team policy save through it.

    >>> import tempfile, json
    >>> p = write_policy_file(tempfile.mkdtemp(), "gate.json", {"format": "x", "w": [1.5]})
    >>> p.name, json.loads(p.read_text())
    ('gate.json', {'format': 'x', 'w': [1.5]})
    """
    from ..core.io import atomic_write

    p = Path(path)
    if p.is_dir() or p.suffix != ".json":
        p.mkdir(parents=True, exist_ok=True)
        p = p / name
    # temp + fsync + rename (a failed write leaves the previous file whole; symlinks are followed)
    atomic_write(p, json.dumps(doc, indent=1, allow_nan=False, default=default).encode())
    return p
