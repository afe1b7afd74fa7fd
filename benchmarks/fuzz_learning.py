"""Fuzz the learning surfaces' readers: no input may make them raise anything but a located error.

    nice -n 10 python benchmarks/fuzz_learning.py --minutes 10                 # every target, 10 min each
    nice -n 10 python benchmarks/fuzz_learning.py --target gate --minutes 2
    python benchmarks/fuzz_learning.py --replay tests/data/fuzz-learning       # the kept findings, once

Engine: Hypothesis (``st.data()`` draws the mutations, so a crash is shrunk to a small input),
run in rounds until the time is spent. Targets and their contract:

==========  ===============================================================================
target      contract
==========  ===============================================================================
``corpus``  ``load_logged_runs(folder, exclude=…)`` on the tiny committed corpus (first 4 runs)
            with lines mutated (values replaced by hostile ones — ``-5``, ``"12"``, ``1e300``,
            400-digit numbers, ``-1e308``, objects, control characters —, lines cut, deleted,
            duplicated, non-UTF-8 bytes, a gzip cut short) raises only ``ConfigError`` /
            ``TraceInvalidError``; what it returns holds tokens in ``[0, 2**20)``, log-probs in
            ``[-1000, 0]`` or NaN, answer codes ``-1..R*W-1``; then ``check_runs`` raises only
            ``ConfigError``
``manifest``  the same corpus with its ``manifest.json`` mutated (the whole document, or a field)
``npz``     ``read_corpus`` + ``check_runs`` on a ``save_runs`` file whose arrays were replaced
            (dtype, shape, values: codes up to 2**30, negative tokens, NaN/inf) or whose bytes
            were cut: only ``ConfigError``
``gate``    ``StopGate.load`` on a mutated ``gate.json``: only ``ConfigError``; a gate that loads
            answers ``decide`` with a finite advantage or a round-limit stop
``decide``  ``StopGate.decide`` with drawn arguments (strings, flat lists, nested objects,
            NaN prices, ragged rounds): only ``ConfigError``
``taskfile``  ``load_task_file`` on mutated task lines (every built-in grader, a regex one run in its
            grader process): only ``TaskFileError``; what loads has answers ≤ 4096 characters
            and difficulty in ``[0, 10**6]``   (issue 41)
``import``  ``import_logs`` on mutated samples lines: only ``ConfigError`` (``ImportError_``,
            ``TaskFileError``); what it writes loads back with ``load_logged_runs``
``reply``   the client's ``_parse_completion`` on a mutated chat-completion body: never raises;
            a reply's mean log-prob in ``[-1000, 0]``, token log-probs ≥ -1e6, usage < 2**31
``policy``  ``TeamPolicy.from_dict`` on a mutated fitted policy: only ``ConfigError``; a policy
            that loads has finite fills in range
==========  ===============================================================================

Every execution also has to end within ``--slow`` seconds (default 20; a hang is a finding).
A finding is written to ``--findings`` as ``<target>-<sha1>.json`` (the drawn mutations, to
replay). The summary prints, per target: the duration, the executions, the findings.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import math
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "vote-corpus-tiny"
TARGETS = ("corpus", "manifest", "npz", "gate", "decide", "taskfile", "import", "reply", "policy")

HOSTILE: list[Any] = [
    -5, "12", 1e300, -1e308, 1e38, 10**400, -(10**400), 2**31, 2**63, -1, 0, 0.5, True, None, {}, [], {"a": [1]},
    "\x1b[31m", "", "sk-abcdefghijklmnopqrstuvwx", float("nan"), float("inf"), 4.0, "4", [1, 2, 3], 1500, 2**30,
]


class Finding(Exception):
    """The contract was broken."""


def _hostile_json(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return {"nan": "NaN", "inf": "Infinity"}.get(str(value), "-Infinity")
    return json.dumps(value)


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate_json_text(text: str, draw: Any) -> str:
    """Replace one value at a drawn path of a JSON document by a hostile one (written as raw JSON)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    paths = _paths(obj)
    path = paths[draw(len(paths))]
    value = HOSTILE[draw(len(HOSTILE))]
    if not path:
        return _hostile_json(value)
    node = obj
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = "@@HOSTILE@@"
    return json.dumps(obj).replace('"@@HOSTILE@@"', _hostile_json(value))


def _mutate_lines(lines: list[bytes], draw: Any, n: int) -> list[bytes]:
    lines = list(lines)
    for _ in range(n):
        if not lines:
            break
        i = draw(len(lines))
        op = draw(7)
        if op <= 2:
            lines[i] = _mutate_json_text(lines[i].decode("utf-8", "replace"), draw).encode() + b"\n"
        elif op == 3:
            lines[i] = lines[i][: draw(max(len(lines[i]), 1))]
        elif op == 4:
            del lines[i]
        elif op == 5:
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][:10] + b"\xff\xfe\x00" + lines[i][10:]
    return lines


# ----------------------------------------------------------------------------- the base inputs
def _tiny_lines(runs: int = 4) -> list[bytes]:
    out: list[bytes] = []
    n = 0
    for ln in gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()).splitlines(keepends=True):
        if ln.startswith(b'{"header"'):
            n += 1
            if n > runs:
                break
        out.append(ln)
    return out


def _manifest(runs: int = 4) -> dict:
    m = json.loads((TINY / "manifest.json").read_text())
    m["tasks_done"] = runs
    return m


def _gate_doc() -> dict:
    from orchestrace.offline import StopGate
    from orchestrace.policies.features import FEATURES
    from orchestrace.policies.gate import GATE_FORMAT

    f = len(FEATURES)
    g = StopGate(model_class="linear", checks=[{"w": [0.1] * f, "b": 0.3}] * 2, mean=[0.0] * f, std=[1.0] * f,
                 features=list(FEATURES), width=2, aggregation="majority", max_rounds=3, logged_width=2,
                 token_scale=100.0, lp_fill=-1.0, len_scale=50.0, attempt_tokens=50.0)
    return {"format": GATE_FORMAT, **json.loads(json.dumps(g.__dict__))}


# ----------------------------------------------------------------------------- the targets
def _expected(exc: BaseException) -> bool:
    from orchestrace.errors import ConfigError, TraceInvalidError

    return isinstance(exc, (ConfigError, TraceInvalidError))


def _check_runs_bounds(runs: Any) -> None:
    t, r, w = runs.answers.shape
    if not ((runs.answers >= -1) & (runs.answers < r * w)).all():
        raise Finding("answer codes out of range")
    for a in (runs.prompt_tokens, runs.completion_tokens):
        if not ((a >= 0) & (a < 2**20)).all():
            raise Finding("token counts out of range")
    lp = runs.logprob_mean[~np.isnan(runs.logprob_mean)]
    if lp.size and not ((lp <= 0) & (lp >= -1000)).all():
        raise Finding("log-probs out of range")


def _load_and_check(folder: Path, exclude: bool) -> None:
    from orchestrace.offline import check_runs, load_logged_runs

    try:
        runs = load_logged_runs(folder, exclude=exclude)
    except Exception as exc:
        if _expected(exc):
            return
        raise
    _check_runs_bounds(runs)
    try:
        check_runs(runs, where=str(folder))
    except Exception as exc:
        if not _expected(exc):
            raise


def run_corpus(draw: Any, work: Path, base: list[bytes]) -> None:
    lines = _mutate_lines(base, draw, 1 + draw(4))
    blob = b"".join(lines)
    (work / "manifest.json").write_text(json.dumps(_manifest()))
    if draw(2):
        data = gzip.compress(blob)
        if draw(3) == 0:
            data = data[: draw(len(data))]
        (work / "traces.jsonl.gz").write_bytes(data)
    else:
        (work / "traces.jsonl").write_bytes(blob)
    _load_and_check(work, exclude=bool(draw(2)))


def run_manifest(draw: Any, work: Path, base: list[bytes]) -> None:
    (work / "traces.jsonl").write_bytes(b"".join(base))
    text = json.dumps(_manifest())
    for _ in range(1 + draw(3)):
        text = _mutate_json_text(text, draw)
    if draw(4) == 0:
        text = text[: draw(len(text) + 1)]
    (work / "manifest.json").write_text(text)
    _load_and_check(work, exclude=bool(draw(2)))


_NPZ_VALUES = [
    lambda a: a.astype(np.float32), lambda a: a.astype(np.int64) * 2**30, lambda a: -a - 5, lambda a: a[:-1],
    lambda a: a.reshape(-1), lambda a: np.full(a.shape, np.nan), lambda a: np.full(a.shape, np.inf),
    lambda a: a.astype(str), lambda a: np.zeros((0,) + a.shape[1:], a.dtype), lambda a: a.astype(bool),
    lambda a: np.full(a.shape, 2**31 - 1, np.int64), lambda a: a[..., None],
]


def run_npz(draw: Any, work: Path, base: Any) -> None:
    from orchestrace.offline import check_runs, read_corpus

    arrays = dict(base)
    names = sorted(arrays)
    for _ in range(1 + draw(3)):
        n = names[draw(len(names))]
        if n == "meta":
            arrays[n] = np.array(_mutate_json_text(str(arrays[n]), draw))
            continue
        with contextlib.suppress(ValueError, TypeError):
            arrays[n] = _NPZ_VALUES[draw(len(_NPZ_VALUES))](np.asarray(arrays[n]))
    if draw(6) == 0:
        del arrays[names[draw(len(names))]]
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    data = buf.getvalue()
    if draw(6) == 0:
        data = data[: draw(len(data))]
    p = work / "logged.npz"
    p.write_bytes(data)
    try:
        runs = read_corpus(p)
        _check_runs_bounds(runs)
        check_runs(runs, where=str(p))
    except Exception as exc:
        if not _expected(exc):
            raise


def run_gate(draw: Any, work: Path, base: dict) -> None:
    from orchestrace.offline import StopGate

    text = json.dumps(base)
    for _ in range(1 + draw(3)):
        text = _mutate_json_text(text, draw)
    p = work / "gate.json"
    p.write_text(text)
    try:
        g = StopGate.load(p)
    except Exception as exc:
        if _expected(exc):
            return
        raise
    d = g.decide([["1", "2"]], price=0.1)
    if not (math.isfinite(d.advantage) or "round limit" in d.reason):
        raise Finding(f"a loaded gate answers a non-finite advantage: {d}")


_ARGS: list[Any] = ["abc", ["42", "41"], [["42", "41"]], [[{"a": 1}, "1"]], [], [[]], 42, None, [["1"], ["1", "2"]],
                    [[1.5, None]], [[["x"]]], b"ab", [[float("nan"), "1"]], [("1", "2"), ("2", "2")], {"a": 1}]
_PRICES: list[Any] = [0.1, -1, float("nan"), float("inf"), "0.1", None, True, 10**400, 0]
_GRIDS: list[Any] = [None, [[-0.5, -0.5]], [["x", 1]], [[1e308, -1e308]], "ab", [[None, None]], [[1, 2, 3]], 5]


def run_decide(draw: Any, work: Path, base: Any) -> None:
    g = base
    kw = {"price": _PRICES[draw(len(_PRICES))], "logprobs": _GRIDS[draw(len(_GRIDS))],
          "completion_tokens": _GRIDS[draw(len(_GRIDS))]}
    try:
        d = g.decide(_ARGS[draw(len(_ARGS))], **kw)
    except Exception as exc:
        if _expected(exc):
            return
        raise
    if not (math.isfinite(d.advantage) or "round limit" in d.reason):
        raise Finding(f"non-finite advantage: {d}")


# ----------------------------------------------------------------------------- issue 41: the newest surfaces
_TASKS = [
    {"id": "a", "prompt": "2+2?", "answer": 4, "grader": "numeric", "difficulty": 1},
    {"id": "b", "messages": [{"role": "user", "content": "Capital?"}], "answer": "Paris"},
    {"id": "c", "prompt": "pick", "answer": "red", "grader": {"type": "choice", "choices": ["red", "blue"]}},
    {"id": "d", "prompt": "colour", "answer": "red", "grader": {"type": "regex", "pattern": "red", "timeout_s": 2}},
]


def run_taskfile(draw: Any, work: Path, base: Any) -> None:
    from orchestrace.collection.taskfile import TaskFileError, load_task_file

    lines = _mutate_lines([json.dumps(t).encode() + b"\n" for t in _TASKS], draw, 1 + draw(4))
    p = work / "t.jsonl"
    p.write_bytes(b"".join(lines))
    try:
        tasks = load_task_file(p)
    except TaskFileError:
        return
    for t in tasks:
        if len(t.answer) > 4096 or not 0 <= t.difficulty <= 10**6:
            raise Finding(f"task {t.id!r} loaded out of bounds")


def run_import(draw: Any, work: Path, base: Any) -> None:
    from orchestrace.collection.logimport import import_logs
    from orchestrace.errors import ConfigError
    from orchestrace.offline import load_logged_runs

    rows = [{"id": f"q{i}", "answer": str(i % 3), "samples": [
        {"text": f"answer {(i + j) % 3}", "logprob_mean": -0.1 * j, "tokens": 5 + j} if j % 2 else f"so {i % 3}"
        for j in range(4)]} for i in range(4)]
    lines = _mutate_lines([json.dumps(r).encode() + b"\n" for r in rows], draw, 1 + draw(4))
    p = work / "s.jsonl"
    p.write_bytes(b"".join(lines))
    try:
        import_logs([p], work / "c", width=2)
    except ConfigError:
        return
    load_logged_runs(work / "c")  # what the import wrote reads back


def run_reply(draw: Any, work: Path, base: Any) -> None:
    from orchestrace.llm.client import _parse_completion

    body = {"model": "m", "choices": [{"message": {"content": "4"}, "finish_reason": "stop", "logprobs": {"content": [
        {"logprob": -0.5, "top_logprobs": [{"logprob": -0.5}, {"logprob": -2.0}]}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    text = json.dumps(body)
    for _ in range(1 + draw(3)):
        text = _mutate_json_text(text, draw)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return
    out = _parse_completion(data)
    if hasattr(out, "mean_logprob"):
        if out.mean_logprob is not None and not -1000 <= out.mean_logprob <= 0:
            raise Finding(f"mean log-prob {out.mean_logprob}")
        if any(not -1e6 <= v <= 0 for v in out.token_logprobs):
            raise Finding("token log-prob out of range")
    if out.usage is not None and max(out.usage) >= 2**31:
        raise Finding(f"usage {out.usage}")


def run_policy(draw: Any, work: Path, base: dict) -> None:
    from orchestrace.errors import ConfigError
    from orchestrace.offline import TeamPolicy

    text = json.dumps(base)
    for _ in range(1 + draw(3)):
        text = _mutate_json_text(text, draw)
    try:
        pol = TeamPolicy.from_dict(json.loads(text))
    except ConfigError:
        return
    except ValueError:  # json.loads of a mutated document: not the reader's contract
        return
    if not (-1000 <= pol.lp_fill <= 0 and 0 <= pol.cf_fill <= 1e6 and 0 < pol.token_scale <= 1e12):
        raise Finding("a policy loaded with a fill or scale out of range")


# ----------------------------------------------------------------------------- the loop
def _base(target: str) -> Any:
    if target in ("taskfile", "import", "reply"):
        return None
    if target == "policy":

        from orchestrace.offline import fit_team_policy, make_synthetic_team

        pol, _ = fit_team_policy(make_synthetic_team(240, 3, seed=3), classes=("linear",), seed=0, histories=1)
        return json.loads(json.dumps(pol.document(), default=float))
    if target in ("corpus", "manifest"):
        return _tiny_lines()
    if target == "gate":
        return _gate_doc()
    if target == "decide":
        from orchestrace.offline import StopGate

        d = tempfile.mkdtemp()
        (Path(d) / "gate.json").write_text(json.dumps(_gate_doc()))
        return StopGate.load(Path(d) / "gate.json")
    from orchestrace.offline import make_synthetic_logged, save_runs

    p = save_runs(make_synthetic_logged(30, 3, 2, seed=0), Path(tempfile.mkdtemp()) / "x.npz")
    with np.load(p) as z:
        return {k: z[k] for k in z.files}


RUNNERS = {"corpus": run_corpus, "manifest": run_manifest, "npz": run_npz, "gate": run_gate, "decide": run_decide,
           "taskfile": run_taskfile, "import": run_import, "reply": run_reply, "policy": run_policy}


def fuzz(target: str, seconds: float, findings: Path, slow: float) -> dict[str, Any]:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    base = _base(target)
    stats = {"target": target, "executions": 0, "findings": 0, "slowest_s": 0.0, "signatures": set()}
    t_end = time.time() + seconds

    @settings(max_examples=200, deadline=None, database=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data: Any) -> None:
        log: list[int] = []

        def draw(n: int) -> int:
            v = data.draw(st.integers(0, max(n - 1, 0)))
            log.append(v)
            return v

        work = Path(tempfile.mkdtemp(prefix=f"fz-{target}-"))
        t0 = time.time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                RUNNERS[target](draw, work, base)
        except Exception as exc:  # the contract is broken: keep the drawn choices to replay
            sig = f"{type(exc).__name__}: {traceback.extract_tb(exc.__traceback__)[-1][:3]}"
            if sig not in stats["signatures"]:
                stats["signatures"].add(sig)
                findings.mkdir(parents=True, exist_ok=True)
                rec = {"target": target, "draws": log, "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                       "where": traceback.format_exc()[-2000:]}
                name = hashlib.sha1(json.dumps(log).encode()).hexdigest()[:12]
                (findings / f"{target}-{name}.json").write_text(json.dumps(rec, indent=1))
                print(f"FINDING {target}: {sig}", file=sys.stderr, flush=True)
            stats["findings"] += 1
        finally:
            took = time.time() - t0
            stats["slowest_s"] = max(stats["slowest_s"], took)
            if took > slow:
                stats["findings"] += 1
                print(f"FINDING {target}: took {took:.1f} s (draws {log})", file=sys.stderr, flush=True)
            stats["executions"] += 1
            shutil.rmtree(work, ignore_errors=True)

    while time.time() < t_end:
        one()
    return stats


def replay(folder: Path) -> int:
    """Run every kept finding once; the number that still break the contract."""
    bad = 0
    for p in sorted(folder.glob("*.json")):
        rec = json.loads(p.read_text())
        draws = iter(rec["draws"])

        def draw(n: int, draws: Any = draws) -> int:
            return min(next(draws, 0), max(n - 1, 0))

        work = Path(tempfile.mkdtemp())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                RUNNERS[rec["target"]](draw, work, _base(rec["target"]))
            print(f"ok    {p.name}")
        except Exception as exc:
            bad += 1
            print(f"FAIL  {p.name}: {type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=TARGETS, action="append", help="fuzz only these (repeatable)")
    ap.add_argument("--minutes", type=float, default=1.0, help="per target")
    ap.add_argument("--findings", type=Path, default=ROOT / "tests" / "data" / "fuzz-learning")
    ap.add_argument("--slow", type=float, default=20.0, help="an execution slower than this is a finding")
    ap.add_argument("--replay", type=Path, help="run the findings in this folder once, then exit")
    a = ap.parse_args(argv)
    if a.replay is not None:
        return 1 if replay(a.replay) else 0
    total = 0
    for t in a.target or TARGETS:
        t0 = time.time()
        s = fuzz(t, a.minutes * 60, a.findings, a.slow)
        total += s["findings"]
        print(f"{t:9s} {time.time() - t0:7.0f} s  {s['executions']:8d} executions  {s['findings']} finding(s)  "
              f"slowest {s['slowest_s']:.2f} s  {sorted(s['signatures'])}", flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
