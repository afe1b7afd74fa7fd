"""Fuzz every importer and the validator: no input may make them raise.

    nice -n 15 python benchmarks/fuzz.py --minutes 10            # atheris when installed, else Hypothesis
    nice -n 15 python benchmarks/fuzz.py --engine hypothesis --minutes 2
    python benchmarks/fuzz.py --replay tests/data/fuzz           # run the kept findings once

One execution writes the input to a file and runs one target on it:

===============  ==========================================================================
target           contract
===============  ==========================================================================
``claude-code``  ``import_traces(fmt, [file])`` returns a report and never raises; every
``codex``        trace it returns passes through ``validate`` without raising, and a trace
``otlp``         that validates has its measures computed (``measures.compute``) without
``jaeger``       raising anything but a located ``TraceError``
``openai-agents``
``reference``
``auto``
``validate``     ``validate(file)`` returns a report and never raises; a valid trace is
                 measured as above
===============  ==========================================================================

Inputs are mutated structurally (values replaced by hostile ones — ``-5``, ``"12"``,
``1e300``, 400-digit numbers, deep nesting, self-parented spans, invalid UTF-8, a BOM, cut
lines …) from seeds: orchestrace's own formats (synthetic traces as native, reference and
JSONL; their OTLP export), small hand-written records of every import format, and the
third-party fixtures in ``tests/data/fixtures``. Under atheris, libFuzzer's
byte mutations and coverage guidance are added.

A crash (any exception escaping a target) is written to ``--findings`` (default
``tests/data/fuzz``) as ``<target>-<sha1>.bin``; ``tests/importers/test_fuzz_regressions.py``
replays every file there. Fuzzing goes on after a crash; the summary prints the duration,
the executions and the distinct crash signatures.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "fixtures"
TARGETS = ("claude-code", "codex", "otlp", "jaeger", "openai-agents", "reference", "auto", "validate", "chat")


# ----------------------------------------------------------------------------- the contract
def run_one(target: str, data: bytes, workdir: str | None = None) -> None:
    """Run ``target`` on ``data`` (written to a file); raises only when the contract is broken."""
    from orchestrace import validate
    from orchestrace.analysis.measures import compute
    from orchestrace.errors import TraceError
    from orchestrace.importers import import_traces

    fd, path = tempfile.mkstemp(suffix=".jsonl" if target in ("claude-code", "codex") else ".json", dir=workdir)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if target == "validate":
                rep = validate(path)
                traces = []
                if rep.valid:
                    from orchestrace.core.io import iter_traces

                    traces = list(iter_traces(path))
            else:
                res = import_traces(target, [path], content="keep")
                res.report.to_dict()
                traces = [tr for tr in res.traces if validate(tr).valid]
            for tr in traces:
                with contextlib.suppress(TraceError):
                    compute(tr)
    finally:
        os.unlink(path)


# ----------------------------------------------------------------------------- seeds
def _synth_seeds() -> list[tuple[str, bytes]]:
    from orchestrace import synth
    from orchestrace.core.io import dumps, to_reference
    from orchestrace.exporters import to_otlp

    tr = synth(events=24, agents=2, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = json.dumps(to_reference(tr)).encode()
    return [("validate", dumps(tr)), ("validate", dumps(tr, format="jsonl")), ("validate", ref),
            ("reference", dumps(tr, format="jsonl")), ("auto", ref), ("otlp", json.dumps(to_otlp(tr)).encode())]


def _hand_seeds() -> list[tuple[str, bytes]]:
    def lines(recs: list[dict[str, Any]]) -> bytes:
        return b"".join(json.dumps(r).encode() + b"\n" for r in recs)

    ts = "2026-01-01T00:00:0{}Z"
    claude = lines([
        {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": ts.format(0),
         "message": {"role": "user", "content": "do it"}},
        {"type": "assistant", "sessionId": "s", "uuid": "u2", "parentUuid": "u1", "timestamp": ts.format(1),
         "message": {"id": "m1", "role": "assistant", "model": "x",
                     "usage": {"input_tokens": 10, "cache_read_input_tokens": 3, "output_tokens": 5},
                     "content": [{"type": "text", "text": "ok"},
                                 {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "sub"}}]}},
        {"type": "user", "sessionId": "s", "uuid": "u3", "parentUuid": "u2", "timestamp": ts.format(4),
         "toolUseResult": {"agentId": "a1", "totalTokens": 7},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}},
    ])
    codex = lines([
        {"timestamp": ts.format(0), "type": "session_meta", "payload": {"id": "r1", "cwd": "/x"}},
        {"timestamp": ts.format(1), "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
        {"timestamp": ts.format(2), "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"}},
        {"timestamp": ts.format(3), "type": "event_msg",
         "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 4, "output_tokens": 2},
                                                     "total_token_usage": {"input_tokens": 4, "output_tokens": 2}}}},
        {"timestamp": ts.format(4), "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}},
        {"timestamp": ts.format(5), "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
    ])

    def attr(k: str, v: Any) -> dict[str, Any]:
        val = {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}
        return {"key": k, "value": val}

    spans = [
        {"traceId": "ab" * 16, "spanId": "01" * 8, "name": "invoke_agent planner", "startTimeUnixNano": "1700000000000000000",
         "endTimeUnixNano": "1700000005000000000", "attributes": [attr("gen_ai.operation.name", "invoke_agent")]},
        {"traceId": "ab" * 16, "spanId": "02" * 8, "parentSpanId": "01" * 8, "name": "chat",
         "startTimeUnixNano": "1700000001000000000", "endTimeUnixNano": "1700000002000000000",
         "attributes": [attr("gen_ai.usage.input_tokens", 12), attr("gen_ai.usage.output_tokens", 3)]},
        {"traceId": "ab" * 16, "spanId": "03" * 8, "parentSpanId": "01" * 8, "name": "execute_tool search",
         "startTimeUnixNano": "1700000002000000000", "endTimeUnixNano": "1700000003000000000",
         "attributes": [attr("gen_ai.tool.name", "search")], "status": {"code": 2}},
        {"traceId": "ab" * 16, "spanId": "04" * 8, "parentSpanId": "01" * 8, "name": "invoke_agent worker",
         "startTimeUnixNano": "1700000003000000000", "endTimeUnixNano": "1700000004000000000", "attributes": []},
    ]
    otlp = json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "svc")]},
                                          "scopeSpans": [{"spans": spans}]}]}).encode()
    jaeger = json.dumps({"data": [{"traceID": "t1", "processes": {"p1": {"serviceName": "svc"}}, "spans": [
        {"traceID": "t1", "spanID": "s1", "operationName": "invoke_agent a", "startTime": 1700000000000000,
         "duration": 5000000, "processID": "p1", "tags": [{"key": "gen_ai.operation.name", "value": "invoke_agent"}]},
        {"traceID": "t1", "spanID": "s2", "operationName": "chat", "startTime": 1700000001000000, "duration": 1000,
         "references": [{"refType": "CHILD_OF", "spanID": "s1"}], "processID": "p1",
         "tags": [{"key": "gen_ai.usage.input_tokens", "value": 5}]}]}]}).encode()
    agents = json.dumps({"data": [
        {"object": "trace", "id": "trace_1", "workflow_name": "w"},
        {"object": "trace.span", "id": "span_1", "trace_id": "trace_1", "parent_id": None,
         "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:05Z",
         "span_data": {"type": "agent", "name": "triage"}},
        {"object": "trace.span", "id": "span_2", "trace_id": "trace_1", "parent_id": "span_1",
         "started_at": "2026-01-01T00:00:01Z", "ended_at": "2026-01-01T00:00:02Z",
         "span_data": {"type": "generation", "usage": {"input_tokens": 9, "output_tokens": 3}}},
        {"object": "trace.span", "id": "span_3", "trace_id": "trace_1", "parent_id": "span_1",
         "started_at": "2026-01-01T00:00:02Z", "ended_at": "2026-01-01T00:00:03Z",
         "span_data": {"type": "handoff", "from_agent": "triage", "to_agent": "worker"}}]}).encode()
    return [("claude-code", claude), ("auto", claude), ("codex", codex), ("auto", codex), ("otlp", otlp),
            ("auto", otlp), ("jaeger", jaeger), ("openai-agents", agents), ("auto", agents)]


def _fixture_seeds(max_bytes: int = 60_000) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    table = {"claude-code": "claude-code", "codex": "codex", "any-agent": "otlp", "otel-jaeger": "otlp", "chat": "chat"}
    for folder, target in table.items():
        for p in sorted((FIXTURES / folder).glob("*.json*")) if (FIXTURES / folder).is_dir() else []:
            data = p.read_bytes()
            if p.suffix == ".jsonl":
                kept, size = [], 0
                for ln in data.splitlines(keepends=True):
                    if size + len(ln) > max_bytes:
                        break
                    kept.append(ln)
                    size += len(ln)
                data = b"".join(kept)
            elif len(data) > max_bytes:
                continue
            out.append((target, data))
    return out


def seeds() -> list[tuple[str, bytes]]:
    ref = ROOT / "tests" / "data" / "reference" / "example_trace.json"
    extra = [("validate", ref.read_bytes()), ("reference", ref.read_bytes())] if ref.exists() else []
    return _synth_seeds() + _hand_seeds() + extra + _fixture_seeds()


# ----------------------------------------------------------------------------- mutations
def _deep(rng: random.Random) -> Any:
    v: Any = rng.choice([1, "x", None])
    for _ in range(rng.choice([150, 300, 900, 1500])):
        v = [v] if rng.random() < 0.5 else {"a": v}
    return v


HOSTILE: list[Callable[[random.Random], Any]] = [
    lambda r: -5, lambda r: "12", lambda r: 1e300, lambda r: -1e300, lambda r: 1.7e308, lambda r: 10 ** 400,
    lambda r: "1" * 400, lambda r: -(10 ** 30), lambda r: 0, lambda r: 2 ** 63, lambda r: 12.5, lambda r: True,
    lambda r: None, lambda r: "", lambda r: [], lambda r: {}, lambda r: "abc", lambda r: "[env] [bold]x[/]",
    lambda r: "2026-13-45T99:99:99Z", lambda r: "9" * 30, lambda r: "\u0000\ud800", lambda r: "x" * 5000,
    lambda r: 1e307, lambda r: -1e307, lambda r: [1, "a", None, {}], lambda r: {"intValue": "9" * 400},
    lambda r: {"stringValue": r.choice(["invoke_agent", "execute_tool", "chat"])}, lambda r: "NaN", _deep,
]


def _nodes(obj: Any, path: tuple = (), out: list | None = None, depth: int = 0) -> list[tuple[tuple, Any]]:
    out = [] if out is None else out
    out.append((path, obj))
    if depth > 40 or len(out) > 3000:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            _nodes(v, (*path, k), out, depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _nodes(v, (*path, i), out, depth + 1)
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    cur = obj
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return obj


def _mutate_obj(obj: Any, rng: random.Random) -> Any:
    for _ in range(rng.choice([1, 1, 2, 3, 6])):
        nodes = _nodes(obj)
        path, node = rng.choice(nodes)
        op = rng.random()
        if op < 0.55:
            obj = _set(obj, path, rng.choice(HOSTILE)(rng))
        elif op < 0.65 and isinstance(node, dict) and node:
            del node[rng.choice(list(node))]
        elif op < 0.72 and isinstance(node, list) and node:
            node.insert(rng.randrange(len(node) + 1), json.loads(json.dumps(rng.choice(node))))
        elif op < 0.78 and isinstance(node, list):
            rng.shuffle(node)
        elif op < 0.88:  # copy one scalar over another: ids into parent ids, times into other times …
            scal = [(p, v) for p, v in nodes if isinstance(v, (str, int, float)) and p]
            if len(scal) >= 2:
                (_, v), (p2, _) = rng.sample(scal, 2)
                obj = _set(obj, p2, v)
        elif isinstance(node, dict):
            node[rng.choice(["parentSpanId", "parent_id", "t_end", "usage", "timestamp", "type", "id", "events",
                             "edges", "tokens_in", "end"])] = rng.choice(HOSTILE)(rng)
    return obj


def _dump(obj: Any, rng: random.Random) -> bytes:
    try:
        return json.dumps(obj, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return b"{}"


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One structural mutation of a JSON document or JSONL file (falls back to byte edits)."""
    try:
        return _mutate(data, rng)
    except (RecursionError, ValueError, TypeError):  # a seed too deep for the json module
        return _byte_edit(data, rng)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    doc: Any = None
    if len([ln for ln in lines if ln.strip()]) <= 1:
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            doc = None
    r = rng.random()
    if doc is not None and r < 0.8:
        out = _dump(_mutate_obj(doc, rng), rng)
    elif doc is None and len(lines) > 1 and r < 0.8:
        k = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.6:
            try:
                lines[k] = _dump(_mutate_obj(json.loads(lines[k]), rng), rng)
            except (ValueError, RecursionError):
                lines[k] = lines[k][: rng.randrange(len(lines[k]) + 1)]
        elif op < 0.75:
            del lines[k]
        elif op < 0.9:
            lines.insert(k, lines[rng.randrange(len(lines))])
        else:
            rng.shuffle(lines)
        out = b"\n".join(lines)
    else:
        out = _byte_edit(data, rng)
    return out


def _byte_edit(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    op = rng.random()
    if op < 0.15:
        return b"\xef\xbb\xbf" + data
    if op < 0.3 and b:
        i = rng.randrange(len(b))
        b[i:i] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n", b"\r\n", b'"', b"\\u"])
        return bytes(b)
    if op < 0.45:
        return data[: rng.randrange(len(data) + 1)]
    if op < 0.55:
        return data.replace(b"\n", b"")
    if op < 0.65:
        return data.replace(b"\n", b"\r\n")
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


# ----------------------------------------------------------------------------- bookkeeping
class Stats:
    def __init__(self, findings: Path, save: bool) -> None:
        self.execs = 0
        self.crashes: dict[str, str] = {}  # signature -> saved file
        self.findings = findings
        self.save = save
        self.t0 = time.monotonic()
        self.workdir = tempfile.mkdtemp(prefix="orchestrace-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)

    def check(self, target: str, data: bytes) -> None:
        self.execs += 1
        try:
            run_one(target, data, self.workdir)
        except Exception as exc:  # a finding
            tb = traceback.extract_tb(exc.__traceback__)
            frame = next((f for f in reversed(tb) if "orchestrace" in f.filename), tb[-1])
            sig = f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
            if sig not in self.crashes:
                name = f"{target}-{hashlib.sha1(data).hexdigest()[:12]}.bin"
                if self.save:
                    self.findings.mkdir(parents=True, exist_ok=True)
                    (self.findings / name).write_bytes(data)
                self.crashes[sig] = name
                print(f"CRASH {sig} ({target}, {len(data)} bytes) -> {name}: {str(exc)[:200]}", flush=True)

    def summary(self, engine: str) -> dict[str, Any]:
        dt = time.monotonic() - self.t0
        return {"engine": engine, "seconds": round(dt, 1), "executions": self.execs,
                "exec_per_s": round(self.execs / max(dt, 1e-9), 1), "crashes": len(self.crashes),
                "signatures": sorted(self.crashes)}


def fuzz_hypothesis(stats: Stats, seconds: float, seed_list: list[tuple[str, bytes]]) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(seed_list), st.randoms(use_true_random=False), st.integers(1, 4),
           st.sampled_from(TARGETS), st.booleans())
    def one(seed: tuple[str, bytes], rng: random.Random, rounds: int, other: str, cross: bool) -> None:
        target, data = seed
        for _ in range(rounds):
            data = mutate(data, rng)
        stats.check(other if cross else target, data)

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        one()


def fuzz_atheris(stats: Stats, seconds: float, seed_list: list[tuple[str, bytes]]) -> None:
    import atheris

    corpus = Path(tempfile.mkdtemp(prefix="orchestrace-fuzz-corpus-"))
    for k, (target, data) in enumerate(seed_list):
        (corpus / f"seed{k}").write_bytes(bytes([TARGETS.index(target)]) + data)
    end = time.monotonic() + seconds

    def test_one(buf: bytes) -> None:
        if time.monotonic() > end:
            _finish(stats, "atheris")
        if not buf:
            return
        stats.check(TARGETS[buf[0] % len(TARGETS)], buf[1:])

    def mutator(buf: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        head, body = (buf[:1], buf[1:]) if buf else (bytes([rng.randrange(len(TARGETS))]), b"{}")
        if rng.random() < 0.05:
            head = bytes([rng.randrange(len(TARGETS))])
        if rng.random() < 0.3:
            body = atheris.Mutate(body, max(1, max_size - 1))
        else:
            body = mutate(body, rng)
        return (head + body)[:max_size]

    with atheris.instrument_imports(include=["orchestrace"]):
        import orchestrace.analysis.measures
        import orchestrace.importers.chat
        import orchestrace.importers.claude_code
        import orchestrace.importers.codex
        import orchestrace.importers.detect
        import orchestrace.importers.openai_agents
        import orchestrace.importers.otel
        import orchestrace.validate  # noqa: F401
    atheris.Setup([sys.argv[0], str(corpus), "-max_len=400000", "-rss_limit_mb=4096", "-timeout=60",
                   f"-max_total_time={int(seconds) + 5}"], test_one, custom_mutator=mutator)
    atheris.Fuzz()


def _finish(stats: Stats, engine: str) -> None:
    print(json.dumps(stats.summary(engine)), flush=True)
    os._exit(0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="time budget (default 10)")
    ap.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    ap.add_argument("--findings", type=Path, default=ROOT / "tests" / "data" / "fuzz")
    ap.add_argument("--no-save", action="store_true", help="do not write findings")
    ap.add_argument("--replay", type=Path, help="run every <target>-*.bin file in this folder once and exit")
    args = ap.parse_args()
    if args.replay is not None:
        bad = 0
        for f in sorted(args.replay.glob("*.bin")):
            target = f.name.rsplit("-", 1)[0]
            try:
                run_one(target, f.read_bytes())
            except Exception as exc:  # noqa: BLE001
                bad += 1
                print(f"{f.name}: {type(exc).__name__}: {exc}")
        print(f"replayed {len(list(args.replay.glob('*.bin')))} finding(s): {bad} still crash")
        sys.exit(1 if bad else 0)
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "hypothesis"
    stats = Stats(args.findings, save=not args.no_save)
    seed_list = seeds()
    print(f"fuzzing with {engine} for {args.minutes} min: {len(seed_list)} seeds, targets {', '.join(TARGETS)}",
          flush=True)
    if engine == "atheris":
        fuzz_atheris(stats, args.minutes * 60, seed_list)
    else:
        fuzz_hypothesis(stats, args.minutes * 60, seed_list)
    _finish(stats, engine)


if __name__ == "__main__":
    main()
