"""Hostile cases on the newest surfaces (issue 41), one or more per class, for ``hostile_inputs.py``.

Classes: (1) user graders, (2) secrets, (3) endpoint replies, (4) task files, (5) amplification,
(6) ``collect import``, (7) exports, (8) collector outputs, (9) team policy files, (10) printing
and bounds. Each case is ``(name, argv_of(tmp) -> argv, check(tmp, output, rc) -> problem | None)``;
the collectors talk to a loopback fake endpoint started here (``serve()``), whose behaviour is
picked by the first path segment of the base URL.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrace.llm.fake_endpoint import FakeEndpoint, completion_bytes

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "vote-corpus-tiny"
SECRET = "sk-HOSTILEabcdefghijklmnop0123"
BIG = "9" * 400
Check = Callable[[Path, str, "int | None"], "str | None"]
Case = tuple[str, Callable[[Path], list[str]], Check | None]

_PORT: list[int] = []


def _body(mode: str, auth: str) -> bytes:
    if mode == "deep":
        return b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    echo = mode == "echo"
    return completion_bytes({"echo": f"echo {auth}", "aaa": "a" * 40 + "!"}.get(mode, "The answer is 2."),
                            logprob={"bigint": f"-{BIG}", "nan": "NaN", "tiny": "-1e300"}.get(mode, "-0.5"),
                            finish=json.dumps(auth) if echo else '"stop"', model=json.dumps(auth[7:]) if echo else '"m"',
                            prompt_tokens="3", completion_tokens=BIG if mode == "bigint" else "1")


def serve() -> int:
    """Start the fake endpoint once (the package's loopback fake, a daemon thread); its port. The reply's kind is
    the first path segment of the base URL."""
    if not _PORT:
        srv = FakeEndpoint(raw=lambda path, h: _body(path.strip("/").split("/")[0], h.get("authorization", "")))
        _PORT.append(srv.start().port)
    return _PORT[0]


def _url(mode: str) -> str:
    return f"http://127.0.0.1:{serve()}/{mode}/v1"


def _lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


GRADERS = {
    "g_exit": "import sys\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
              "    sys.exit(0)\n",
    "g_kbd": "def grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
             "    raise KeyboardInterrupt\n",
    "g_swallow": "import time\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
                 "    while True:\n        try:\n            time.sleep(60)\n        except BaseException:\n"
                 "            pass\n",
    "g_osexit": "import os\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
                "    os._exit(0)\n",
    "g_leak": "import os\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
              "    raise ValueError('key ' + os.environ['ORCHESTRACE_API_KEY'])\n",
    "g_import_exit": "raise SystemExit(0)\ndef grade(reply, ref):\n    return True\n",
    "g_import_sleep": "import time\ntime.sleep(3600)\ndef grade(reply, ref):\n    return True\n",
}


def _graders(d: Path) -> None:
    for name, src in GRADERS.items():
        (d / f"{name}.py").write_text(src)


def _task_rows(grader: Any) -> list[dict]:
    return [{"id": f"t{i}", "prompt": "?", "answer": "7", "grader": grader} for i in range(2)]


def _collect(d: Path, mode: str, rows: list[Any] | Path, *extra: str, command: str = "run") -> list[str]:
    _graders(d)
    tasks = rows if isinstance(rows, Path) else _lines(d / "tasks.jsonl", rows)
    argv = ["collect", command, str(d / "c"), "--task-file", str(tasks), "-R", "1", "--base-url", _url(mode),
            "--model", "m", *extra]
    return argv + (["-W", "1"] if command == "run" else [])


def _ran_clean(n_tasks: int, *, grader_errors: bool = False) -> Check:
    def check(d: Path, out: str, rc: int | None) -> str | None:
        if rc != 0:
            return f"exit {rc}"
        recs = [json.loads(x) for x in (d / "c" / "traces.jsonl").read_text().splitlines()]
        n = sum("header" in r for r in recs)
        sess = json.loads((d / "c" / "manifest.json").read_text())["sessions"][-1]
        if n != n_tasks:
            return f"{n} traces, expected {n_tasks}"
        if grader_errors and not sess.get("grader_errors"):
            return "no grader error counted"
        return None
    return check


def _no_secret_in_files(d: Path, out: str, rc: int | None) -> str | None:
    for p in (d / "c").rglob("*"):
        if p.is_file() and SECRET in p.read_text(errors="replace"):
            return f"the key is in {p.name}"
    return None if rc == 0 else f"exit {rc}"


def _failed_recorded(d: Path, out: str, rc: int | None) -> str | None:
    sess = json.loads((d / "c" / "manifest.json").read_text())["sessions"][-1]
    return None if rc != 0 and sess.get("failed") else "the manifest does not record the failure"


def _refused(code: int, *, keep: Callable[[Path], bool] | None = None) -> Check:
    def check(d: Path, out: str, rc: int | None) -> str | None:
        if rc != code:
            return f"exit {rc}, expected {code}"
        if keep is not None and not keep(d):
            return "the target was changed"
        return None
    return check


def _padded_corpus(d: Path) -> Path:
    c = d / "pad"
    c.mkdir()
    shutil.copy(TINY / "manifest.json", c)
    with gzip.open(c / "traces.jsonl.gz", "wb", compresslevel=9) as fh:
        fh.write(gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()))
        for _ in range(200):
            fh.write(b"\n" * (1 << 20))  # 200 MiB of blank lines, ~0.2 MB on disk
    return c


def _team_policy(d: Path, field: str, raw: str) -> tuple[Path, Path]:
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.offline import fit_team_policy, make_synthetic_team, save_runs

    team = make_synthetic_team(240, 3, seed=3)
    pol, _ = fit_team_policy(team, classes=("linear",), seed=0, histories=1)
    doc = {**pol.document(), field: "@@"}
    (d / "run").mkdir()
    (d / "run" / "team_policy.json").write_text(json.dumps(doc).replace('"@@"', raw))
    return save_runs(team, d / "team.npz"), d / "run"


def _escape_team(d: Path) -> Path:
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.offline import make_synthetic_team, save_runs

    t = make_synthetic_team(240, 3, seed=3)
    names = tuple(f"\x1b[31m{m}\x1b]0;pwn\x07" for m in t.members)
    return save_runs(dataclasses.replace(t, members=names, meta={**t.meta, "members": list(names)}), d / "t.npz")


def _samples(i: int) -> str:
    return json.dumps({"id": f"q{i}", "answer": "4", "samples": ["4", "5", "4", "so 4"]})


def surface_cases() -> list[Case]:  # noqa: PLR0915 (a flat list of cases)
    out: list[Case] = []
    g = {"timeout_s": 1}
    # (1) user graders
    for name in ("g_exit", "g_kbd", "g_swallow", "g_osexit"):
        out.append((f"1 graders: {name} on replies", lambda d, n=name: _collect(
            d, "ok", _task_rows({"type": f"{n}:grade", **g})), _ran_clean(2, grader_errors=True)))
    out.append(("1 graders: catastrophic regex", lambda d: _collect(d, "aaa", _task_rows(
        {"type": "regex", "pattern": r"answer is 7\.|^(a+)+$", **g})), _ran_clean(2, grader_errors=True)))
    for name in ("g_import_exit", "g_import_sleep"):
        out.append((f"1 graders: {name}", lambda d, n=name: _collect(d, "ok", _task_rows({"type": f"{n}:grade", **g})),
                    _refused(1)))  # located problems of the task file: invalid input
    out.append(("1 graders: team, SystemExit", lambda d: _collect(
        d, "ok", _task_rows({"type": "g_exit:grade", **g}), command="team"), _ran_clean(2, grader_errors=True)))
    # (2) secrets
    out.append(("2 secrets: echoed in finish_reason/model", lambda d: _collect(d, "echo", _task_rows("numeric")),
                _no_secret_in_files))
    out.append(("2 secrets: in a grader's error", lambda d: _collect(
        d, "ok", _task_rows({"type": "g_leak:grade", **g}), command="team"), _no_secret_in_files))
    # (3) endpoint replies
    for mode in ("bigint", "nan", "tiny"):
        out.append((f"3 replies: log-prob {mode}", lambda d, m=mode: _collect(
            d, m, _task_rows("numeric"), "--top-logprobs", "2", command="team"), _ran_clean(2)))
    out.append(("3 replies: nested 100,000 deep", lambda d: _collect(d, "deep", _task_rows("numeric")),
                _failed_recorded))

    # (4) task files
    def sparse_tasks(d: Path) -> Path:
        p = d / "sparse.jsonl"
        with open(p, "wb") as fh:
            fh.truncate(1 << 30)
        return p

    def big_tasks(d: Path) -> Path:
        line = json.dumps({"id": "x", "prompt": "p" * 1000, "answer": "1"}) + "\n"
        p = d / "big.jsonl"
        p.write_text(line * (20_000_000 // len(line) + 1))
        return p

    def loop_tasks(d: Path) -> Path:
        p = d / "loop.jsonl"
        os.symlink(p, p)
        return p

    def fifo_tasks(d: Path) -> Path:
        p = d / "fifo.jsonl"
        os.mkfifo(p)
        return p

    for name, build in [("1 GiB sparse", sparse_tasks), ("20 MB", big_tasks), ("symlink loop", loop_tasks),
                        ("FIFO", fifo_tasks)]:
        out.append((f"4 task file: {name}", lambda d, b=build: _collect(d, "ok", b(d)), _refused(2)))
    out.append(("4 task file: NaN answer", lambda d: _collect(d, "ok", [
        '{"id": "a", "prompt": "?", "answer": NaN}']), _refused(1)))
    out.append(("4 task file: U+2028 in a prompt", lambda d: _collect(d, "ok", [
        {"id": "a", "prompt": "2\u2028?", "answer": "2", "grader": "numeric"}]), _ran_clean(1)))
    # (5) amplification
    out.append(("5 amplification: train, 200 MiB of blank lines", lambda d: [
        "train", "--from-traces", str(_padded_corpus(d)), "-o", str(d / "run")], _refused(1)))
    out.append(("5 amplification: export, 200 MiB of blank lines", lambda d: [
        "export", "trl", str(_padded_corpus(d)), "--decisions", "exact", "-o", str(d / "x.jsonl")], _refused(1)))

    # (6) collect import
    def import_bad_lines(d: Path) -> list[str]:
        bad = ['{"id": "n", "answer": "4", "samples": [{"text": "4", "logprob_mean": NaN}, "4", "4", "4"]}',
               '{"id": "i", "answer": "4", "samples": [{"text": "4", "logprob_mean": 1e999}, "4", "4", "4"]}',
               '{"id": "b", "answer": "4", "samples": [{"text": "4", "tokens": ' + BIG + '}, "4", "4", "4"]}',
               '{"samples": ' + "[" * 100_000 + "]" * 100_000 + "}"]
        return ["collect", "import", str(_lines(d / "s.jsonl", [_samples(0), *bad, _samples(1)])), "-o",
                str(d / "c")]

    def import_junk_first(d: Path) -> list[str]:
        return ["collect", "import", str(_lines(d / "s.jsonl", ["{torn", _samples(0), _samples(1)])), "-o",
                str(d / "c")]

    def import_bomb(d: Path) -> list[str]:
        p = d / "bomb.jsonl.gz"
        with gzip.open(p, "wb", compresslevel=9) as fh:
            fh.write((_samples(0) + "\n").encode())
            for _ in range(1024):
                fh.write(b" " * (1 << 20))
        return ["collect", "import", str(p), "-o", str(d / "c")]

    out.append(("6 import: NaN, 1e999, 400 digits, nesting", import_bad_lines, _refused(0)))
    out.append(("6 import: a torn first line (auto-detect)", import_junk_first, _refused(0)))
    out.append(("6 import: 1 GiB sparse log", lambda d: ["collect", "import", str(sparse_tasks(d)), "-o",
                                                          str(d / "c")], _refused(2)))
    out.append(("6 import: 1 GiB gzip bomb", import_bomb, _refused(1, keep=lambda d: not (d / "c").exists())))

    # (7) exports
    def fifo(d: Path) -> Path:
        os.mkfifo(d / "out")
        return d / "out"

    def device(d: Path) -> Path:
        if os.geteuid() != 0:
            return fifo(d)
        os.mknod(d / "out", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return d / "out"

    def still_special(d: Path) -> bool:
        m = (d / "out").lstat().st_mode
        return stat.S_ISFIFO(m) or stat.S_ISCHR(m)

    for name, build in [("FIFO", fifo), ("device node", device)]:
        out.append((f"7 export: -o {name}", lambda d, b=build: [
            "export", "verl", str(TINY), "--decisions", "exact", "-o", str(b(d))], _refused(2, keep=still_special)))
    out.append(("7 export: a corpus train refuses", lambda d: [
        "export", "trl", str(TINY), "--decisions", "exact", "-o", str(d / "x.jsonl")], _refused(1)))

    # (8) collector outputs
    def fifo_traces(d: Path) -> list[str]:
        (d / "c").mkdir()
        os.mkfifo(d / "c" / "traces.jsonl")
        return [*_collect(d, "ok", _task_rows("numeric")), "--resume"]

    out.append(("8 outputs: FIFO traces.jsonl", fifo_traces, _refused(2)))
    # (9) team policy files
    for name, field, raw in [("lp_fill 1e308", "lp_fill", "1e308"), ("token_scale 400 digits", "token_scale", BIG)]:
        out.append((f"9 policy: {name}", lambda d, f=field, r=raw: [
            "eval", "--traces", *map(str, _team_policy(d, f, r))], _refused(1)))
    # (10) printing and bounds
    out.append(("10 printing: escape sequences in member names", lambda d: [
        "train", "--from-traces", str(_escape_team(d)), "-o", str(d / "run"), "-q"], _refused(0)))
    out.append(("10 bounds: env run --episodes 10**12", lambda d: [
        "env", "run", "orchestrace/Orchestrate-small-v0", "--episodes", str(10**12), "-o", str(d / "e.jsonl")],
        _refused(2)))
    return out
