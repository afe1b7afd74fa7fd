"""Hostile and messy input through every CLI entry point: the expected code and exit, never a traceback.

The manifest tests/data/bad_cli/EXPECTED.json (regenerate with
tests/data/bad_cli/_make_cli_corpus.py) gives, per case, the command line, the problem
code that must be printed and the README's exit status (0 ok, 1 invalid input, 2 usage
or I/O). A second test runs every command of ``orchestrace`` on files of both bad-input
corpora; a third runs the fuzz benchmark's kept findings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from orchestrace.cli import app

DATA = Path(__file__).resolve().parents[1] / "data"
CLI = DATA / "bad_cli"
BAD = DATA / "bad"
CASES = json.loads((CLI / "EXPECTED.json").read_text())
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _argv(case: str, argv: list[str], tmp: Path) -> list[str]:
    return [a.replace("{f}", str(CLI / case)).replace("{out}", str(tmp / "out")).replace("{bad}", str(BAD))
            for a in argv]


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    res = runner.invoke(app, argv, env=env or {})
    out = res.stdout + (res.stderr or "")
    assert res.exception is None or isinstance(res.exception, SystemExit), (argv, repr(res.exception))
    assert "Traceback" not in out, (argv, out)
    return res.exit_code, out


def test_manifest_matches_files_and_is_big_enough() -> None:
    files = {p.name for p in CLI.iterdir() if not p.name.startswith("_") and p.name != "EXPECTED.json"}
    named = {k for k, v in CASES.items() if any("{f}" in a for a in v["argv"])}
    assert files == named
    assert len(CASES) >= 100
    imports = [k for k, v in CASES.items() if v["argv"][0] == "import"]
    assert len(imports) >= 60
    assert {v["argv"][1] for k, v in CASES.items() if k in imports} >= {
        "claude-code", "codex", "otlp", "jaeger", "openai-agents", "auto", "reference"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_case(case: str, tmp_path: Path) -> None:
    want = CASES[case]
    code, out = _run(_argv(case, want["argv"], tmp_path), want.get("env"))
    assert code == want["exit"], (case, out)
    if want["code"] is not None:
        assert want["code"] in out, (case, out)
    assert "internal error" not in out, out


def test_import_report_counts_every_sanitisation(tmp_path: Path) -> None:
    code, out = _run(["import", "claude-code", str(CLI / "cc_usage_negative.jsonl"), "-o", str(tmp_path / "o.jsonl"),
                      "--json"])
    rep = json.loads(out[out.index("{"):])
    assert code == 0 and rep["sanitised"] == {"import.bad-usage": 1}
    bad = [p for p in rep["problems"] if p["code"] == "import.bad-usage"]
    assert bad[0]["path"].endswith("cc_usage_negative.jsonl:2") and "-5" in bad[0]["message"]


def test_self_parented_span_keeps_the_trace(tmp_path: Path) -> None:
    from orchestrace.importers import import_traces

    ok = import_traces("otlp", [CLI / "otlp_ok.json"])
    cyc = import_traces("otlp", [CLI / "otlp_self_parent.json"])
    assert len(cyc.traces) == 1 and cyc.report.sanitised == {"import.parent-cycle": 1}
    # the self-parented LLM span becomes a root: every span is still imported
    assert len(cyc.traces[0].events) >= len(ok.traces[0].events) - 1


def test_errors_keep_square_brackets() -> None:
    from orchestrace.cli._app import err_console, fail

    with err_console.capture() as cap:
        fail("install it with: pip install 'orchestrace[env]' [bold]x[/]")
    assert "pip install 'orchestrace[env]' [bold]x[/]" in cap.get()


def test_metrics_write_keeps_a_read_only_mode(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_bytes((DATA / "reference" / "example_trace.json").read_bytes())
    p.chmod(0o444)
    code, _ = _run(["metrics", "--write", str(p)])
    assert code == 0 and (p.stat().st_mode & 0o777) == 0o444
    assert "e2/speedup" in json.loads(p.read_text())["metrics"]
    assert not [q for q in tmp_path.iterdir() if q.name != "t.json"]  # no temporary file left behind


def _leaf_commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        if hasattr(cmd, "commands"):  # a group (typer vendors click: no isinstance check)
            out.extend(_leaf_commands(cmd, (*prefix, name)))
        else:
            out.append((*prefix, name))
    return out


LEAVES = _leaf_commands(typer.main.get_command(app))  # type: ignore[arg-type]
SAMPLE = [BAD / n for n in ("not_json.json", "cycle.json", "invalid_utf8.json", "stream_bad_record.jsonl")] + [
    CLI / n for n in ("otlp_deep.json", "cc_nul_bytes.jsonl", "otlp_self_parent.json")]


def test_every_command_is_covered() -> None:
    names = {" ".join(leaf) for leaf in LEAVES}
    assert {"validate", "convert", "inspect", "metrics", "report", "reward", "credit", "import", "export",
            "serve-local", "corpus check", "env run", "train", "eval", "demo", "llm run"} <= names, names


@pytest.mark.parametrize("leaf", LEAVES, ids=" ".join)
def test_every_command_on_bad_files_never_tracebacks(leaf: tuple[str, ...], tmp_path: Path) -> None:
    heavy = {("train",), ("eval",), ("demo",), ("serve-local",), ("llm", "run"), ("env", "run"), ("synth",)}
    for f in SAMPLE:
        argv = [*leaf, str(f)]
        if leaf in heavy:  # a positional file is a usage error; bad option values must be refused cleanly
            argv = [*leaf, "--out", str(f), "--seed", "-1"] if leaf != ("serve-local",) else [*leaf, "--threads",
                                                                                          str(f)]
        code, out = _run(argv)
        assert code in (1, 2), (argv, code, out)
    code, out = _run([*leaf, "--help"])
    assert code == 0


def test_real_process_on_dev_zero_has_bounded_memory(tmp_path: Path) -> None:
    """``import claude-code|chat|auto /dev/zero`` stop at once; a 200 MB line without a newline stays under the cap + 64 MB."""
    line = tmp_path / "nonl.jsonl"
    with open(line, "wb") as fh:
        fh.write(b'{"type": "user", "x": "')
        for _ in range(200):
            fh.write(b"x" * (1 << 20))
    cap = 16 * 1024 * 1024
    script = ("import sys\n"  # VmHWM: this process's peak RSS (ru_maxrss would include the forking parent's)
              "from orchestrace.cli import main\n"
              "sys.argv = ['orchestrace'] + sys.argv[1:]\n"
              "try:\n    main()\n"
              "except SystemExit as e:\n"
              "    hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
              "    print('RSS_KB', hwm, file=sys.stderr)\n"
              "    raise\n")
    env = dict(os.environ, ORCHESTRACE_MAX_LINE_BYTES=str(cap), PYTHONPATH=str(ROOT / "src"))
    # chat and auto: the chat importer's scalar-document peek once read /dev/zero whole (24 GB, killed)
    for fmt, src in (("claude-code", "/dev/zero"), ("claude-code", str(line)), ("chat", "/dev/zero"), ("auto", "/dev/zero")):
        out = subprocess.run([sys.executable, "-c", script, "import", fmt, src, "-o", str(tmp_path / "o.jsonl")],
                             capture_output=True, text=True, env=env, timeout=120)
        assert "Traceback" not in out.stderr and out.returncode in (1, 2), out.stderr
        rss_kb = int(out.stderr.rsplit("RSS_KB", 1)[1].split()[0])
        assert rss_kb * 1024 < cap + 64 * 1024 * 1024, (src, rss_kb)


CORE_ONLY = ("import sys\n"
             "for m in ('torch', 'gymnasium', 'pyarrow', 'matplotlib', 'httpx', 'xllamacpp'):\n"
             "    sys.modules[m] = None  # as on `pip install orchestrace` without extras\n"
             "from orchestrace.cli import main\n"
             "sys.argv = ['orchestrace'] + sys.argv[1:]\n"
             "main()\n")


@pytest.mark.parametrize(("argv", "extra"), [
    (["demo", "-q", "-o", "{tmp}/demo"], "demo"), (["env", "list"], "env"), (["train", "--out", "{tmp}/t"], "learn"),
    (["convert", str(DATA / "reference" / "example_trace.json"), "--to", "parquet", "-o", "{tmp}/pq"], "parquet"),
])
def test_core_only_install_names_the_extra(argv: list[str], extra: str, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-c", CORE_ONLY, *(a.replace("{tmp}", str(tmp_path)) for a in argv)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert f"pip install 'orchestrace[{extra}]'" in out.stderr, out.stderr


def _fuzz_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("orchestrace_fuzz", ROOT / "benchmarks" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FINDINGS = sorted((DATA / "fuzz").glob("*.bin"))


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda p: p.name)
def test_fuzz_findings_stay_fixed(finding: Path, tmp_path: Path) -> None:
    fuzz = _fuzz_module()
    target = finding.name.rsplit("-", 1)[0]
    assert target in fuzz.TARGETS
    fuzz.run_one(target, finding.read_bytes(), str(tmp_path))  # raises if the contract is broken


def test_fuzz_mutations_of_every_seed_never_crash(tmp_path: Path) -> None:
    import random

    fuzz = _fuzz_module()
    rng = random.Random(16)
    for target, data in fuzz.seeds()[:30]:
        for _ in range(3):
            data = fuzz.mutate(data, rng)
            fuzz.run_one(target, data, str(tmp_path))
