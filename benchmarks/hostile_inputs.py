"""Run the learning surfaces' commands on hostile inputs; count tracebacks, hangs, memory, leaks.

    nice -n 10 python benchmarks/hostile_inputs.py                 # every case, a table on stdout
    nice -n 10 python benchmarks/hostile_inputs.py --json out.json

Each case builds one hostile input in a temporary folder (a corpus, a manifest, an ``.npz``,
a gate file, a FIFO, a sparse file, a gzip bomb, a symlink loop, …) and runs one CLI command
on it in a subprocess under ``/usr/bin/time`` with a 60 s limit. A case passes when the command
ends in time, exits non-zero with an ``error:`` line (or 0 where the input is acceptable), prints
no ``Traceback`` and no ``internal error``, stays under 500 MB peak memory, and prints no secret
planted in the input (``sk-HOSTILE…``). The cases are this repository's own; the issue's held-back
set is run independently.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "vote-corpus-tiny"
SECRET = "sk-HOSTILEabcdefghijklmnop0123"
LIMIT_S = 60
LIMIT_MB = 500


def _corpus(d: Path, edit: Callable[[list[str]], list[str]] | None = None, manifest: str | None = None) -> Path:
    c = d / "corpus"
    c.mkdir(exist_ok=True)
    lines = gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()).decode().splitlines(keepends=True)
    (c / "traces.jsonl").write_text("".join(edit(lines) if edit else lines))
    if manifest is None:
        shutil.copy(TINY / "manifest.json", c / "manifest.json")
    else:
        (c / "manifest.json").write_bytes(manifest.encode("utf-8", "surrogateescape"))
    return c


def _ret(field: str, raw: str) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        i = next(k for k, ln in enumerate(lines) if '"type":"return"' in ln)
        rec = json.loads(lines[i])
        tgt = rec["event"]["attrs"] if field.startswith("attrs.") else rec["event"]
        tgt[field.removeprefix("attrs.")] = "@@"
        lines[i] = json.dumps(rec).replace('"@@"', raw) + "\n"
        return lines
    return edit


def _gate(d: Path, field: str | None = None, raw: str | None = None) -> Path:
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.offline import StopGate
    from orchestrace.policies.features import FEATURES
    from orchestrace.policies.gate import GATE_FORMAT

    f = len(FEATURES)
    g = StopGate(model_class="linear", checks=[{"w": [0.0] * f, "b": 0.3}] * 3, mean=[0.0] * f, std=[1.0] * f,
                 features=list(FEATURES), width=2, aggregation="majority", max_rounds=4, logged_width=2,
                 token_scale=100.0, lp_fill=-1.0, len_scale=50.0, attempt_tokens=50.0)
    doc = {"format": GATE_FORMAT, **json.loads(json.dumps(g.__dict__))}
    if field is not None:
        doc[field] = "@@"
    p = d / "run" / "gate.json"
    p.parent.mkdir(exist_ok=True)
    p.write_text(json.dumps(doc).replace('"@@"', raw or "null"))
    return p.parent


def _npz(d: Path, **over: np.ndarray) -> Path:
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.offline import make_synthetic_logged, save_runs

    p = save_runs(make_synthetic_logged(60, 4, 2, seed=0), d / "logged.npz")
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(over)
    np.savez_compressed(p, **arrays)
    return p


def cases() -> list[tuple[str, Callable[[Path], list[str]]]]:
    out: list[tuple[str, Callable[[Path], list[str]]]] = []

    def train(build: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
        return lambda d: ["train", "--from-traces", str(build(d)), "-o", str(d / "out"), "-q"]

    def fitsim(build: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
        return lambda d: ["collect", "fit-sim", str(build(d)), "-o", str(d / "fit.json"), "--search", "2",
                          "--sim-tasks", "50"]

    def evalg(gate: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
        return lambda d: ["eval", "--traces", str(_corpus(d)), str(gate(d))]

    for name, field, raw in [
        ("logprob 400 digits", "attrs.logprob_mean", "-" + "9" * 400), ("logprob -1e308", "attrs.logprob_mean", "-1e308"),
        ("logprob +1e38", "attrs.logprob_mean", "1e38"), ("logprob > 0", "attrs.logprob_mean", "0.3"),
        ("tokens 2^31", "tokens_out", "2147483648"), ("tokens 2^31-1", "tokens_out", "2147483647"),
        ("tokens < 0", "tokens_in", "-7"), ("answer object", "attrs.answer", '{"x": [1]}'),
        ("round 1.0", "attrs.round", "1.0"), ("secret in answer", "attrs.answer", json.dumps(SECRET + "\x1b[2J")),
    ]:
        out.append((f"train: {name}", train(lambda d, f=field, r=raw: _corpus(d, _ret(f, r)))))
        out.append((f"fit-sim: {name}", fitsim(lambda d, f=field, r=raw: _corpus(d, _ret(f, r)))))
    out.append(("train: difficulty 1e30", train(lambda d: _corpus(d, lambda ls: [ls[0].replace(
        '"difficulty":1', '"difficulty":1e30', 1), *ls[1:]]))))
    for name, doc in [("list", "[1, 2]"), ("not JSON", "{nope"), ("width '2'", '{"config": {"width": "2"}}'),
                      ("rounds 4.0", '{"config": {"rounds": 4.0}}'), ("width 1500", '{"config": {"width": 1500}}'),
                      ("non-UTF-8", '{"model": "\udcff"}')]:
        out.append((f"train: manifest {name}", train(lambda d, m=doc: _corpus(d, manifest=m))))
        out.append((f"fit-sim: manifest {name}", fitsim(lambda d, m=doc: _corpus(d, manifest=m))))
    for name, over in [("code 2^30", {"answers": np.full((60, 4, 2), 2**30, np.int32)}),
                       ("answers float", {"answers": np.zeros((60, 4, 2), np.float32)}),
                       ("tokens < 0", {"completion_tokens": np.full((60, 4, 2), -5, np.int32)}),
                       ("tokens 2^31-1", {"completion_tokens": np.full((60, 4, 2), 2**31 - 1, np.int64)}),
                       ("logprob +inf", {"logprob_mean": np.full((60, 4, 2), np.inf, np.float32)}),
                       ("zero tokens", {"completion_tokens": np.zeros((60, 4, 2), np.int32),
                                        "prompt_tokens": np.zeros((60, 4, 2), np.int32)})]:
        out.append((f"train: npz {name}", train(lambda d, o=over: _npz(d, **o))))
    for name, field, raw in [
        ("max_rounds 4.0", "max_rounds", "4.0"), ("max_rounds '4'", "max_rounds", '"4"'), ("checks null", "checks", "null"),
        ("features null", "features", "null"), ("meta list", "meta", "[]"), ("width 0", "width", "0"),
        ("width '1'", "width", '"1"'), ("aggregation median", "aggregation", '"median"'), ("suites 5", "suites", "5"),
        ("mean NaN", "mean", "[NaN]"), ("lp_fill NaN", "lp_fill", "NaN"), ("std 0", "std", "[" + ",".join(["0"] * 21) + "]"),
        ("std 1e400", "std", "[1e400]"),
    ]:
        out.append((f"eval: gate {name}", evalg(lambda d, f=field, r=raw: _gate(d, f, r))))

    def fifo_corpus(d: Path) -> Path:
        c = d / "fc"
        c.mkdir()
        os.mkfifo(c / "traces.jsonl")
        return c

    def fifo_gate(d: Path) -> Path:
        (d / "g").mkdir()
        os.mkfifo(d / "g" / "gate.json")
        return d / "g"

    def sparse(d: Path) -> Path:
        c = d / "sp"
        c.mkdir()
        with open(c / "traces.jsonl", "wb") as fh:
            fh.truncate(2**30)
        return c

    def sparse_gate(d: Path) -> Path:
        (d / "g").mkdir()
        with open(d / "g" / "gate.json", "wb") as fh:
            fh.truncate(2**30)
        return d / "g"

    def bomb(d: Path) -> Path:
        c = d / "bomb"
        c.mkdir()
        with gzip.open(c / "traces.jsonl.gz", "wb", compresslevel=9) as fh:
            for _ in range(1024):
                fh.write(b"\0" * 2**20)  # 1 GiB of zeros, ~1 MiB on disk
        return c

    def loop(d: Path) -> Path:
        p = d / "loop.jsonl"
        os.symlink(p, p)
        return p

    def truncated_gz(d: Path) -> Path:
        c = d / "tg"
        c.mkdir()
        shutil.copy(TINY / "manifest.json", c / "manifest.json")
        b = (TINY / "traces.jsonl.gz").read_bytes()
        (c / "traces.jsonl.gz").write_bytes(b[: len(b) // 3])
        return c

    for name, build in [("FIFO", fifo_corpus), ("1 GiB sparse", sparse), ("1 GiB gzip bomb", bomb),
                        ("symlink loop", loop), ("truncated gzip", truncated_gz)]:
        out.append((f"train: corpus {name}", train(build)))
        out.append((f"fit-sim: corpus {name}", fitsim(build)))
    out.append(("fit-sim --exclude-bad: truncated gzip", lambda d: [
        "collect", "fit-sim", str(truncated_gz(d)), "-o", str(d / "f.json"), "--exclude-bad", "--search", "2",
        "--sim-tasks", "50"]))
    out.append(("eval: gate FIFO", evalg(fifo_gate)))
    out.append(("eval: gate 1 GiB sparse", evalg(sparse_gate)))
    return out


def run_case(name: str, argv_of: Callable[[Path], list[str]], check: Callable[..., str | None] | None = None) -> dict:
    """Run one case; ``check(tmp, output, rc)`` (the issue-41 cases) says what else is wrong, or None."""
    d = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        argv = argv_of(d)
        # the key the fake endpoint may echo; the case's folder on the path (its user graders)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(d)]), "ORCHESTRACE_API_KEY": SECRET}
        t0 = time.time()
        try:
            p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M", sys.executable, "-m", "orchestrace", *argv],
                               capture_output=True, text=True, timeout=LIMIT_S, env=env, errors="replace")
            out, rc, hung = p.stdout + p.stderr, p.returncode, False
        except subprocess.TimeoutExpired as exc:
            out, rc, hung = str(exc.stdout or "") + str(exc.stderr or ""), None, True
        wall = time.time() - t0
        rss = next((int(ln.split()[1]) for ln in out.splitlines()[::-1] if ln.startswith("MAXRSS ")), 0) / 1024
        text = "\n".join(ln for ln in out.splitlines() if not ln.startswith("MAXRSS "))
        ok = (not hung and "Traceback" not in text and "internal error" not in text and rss <= LIMIT_MB
              and SECRET not in text and "\x1b" not in text and (rc == 0 or "error:" in text))
        first = next((ln for ln in text.splitlines() if ln.startswith(("error:", "warning:"))), text[:120])
        why = None if hung or check is None else check(d, text, rc)
        if why is not None:
            ok, first = False, f"[{why}] {first}"
        return {"case": name, "ok": ok, "rc": rc, "hung": hung, "wall_s": round(wall, 1), "peak_mb": round(rss),
                "first_line": first[:300]}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("-k", default="", help="only the cases whose name contains this")
    a = ap.parse_args()
    # issue 41: graders, endpoints, task files, imports, exports … (benchmarks/hostile_surfaces.py)
    from hostile_surfaces import surface_cases

    every = [(n, f, None) for n, f in cases()] + surface_cases()
    rows = [run_case(n, f, c) for n, f, c in every if a.k in n]
    for r in rows:
        print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['case']:48s} rc={r['rc']!s:4s} {r['wall_s']:5.1f} s "
              f"{r['peak_mb']:4d} MB  {r['first_line'][:150]}", flush=True)
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows)} cases: {len(rows) - len(bad)} ok, {len(bad)} failed; slowest {max(r['wall_s'] for r in rows):.1f} s, "
          f"peak {max(r['peak_mb'] for r in rows)} MB, hangs {sum(r['hung'] for r in rows)}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
