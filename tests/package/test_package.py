"""Package-level contracts: curated public API, light imports, README ⇄ CI agreement."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orchestrace

ROOT = Path(__file__).resolve().parents[2]


def test_public_api_is_exactly_the_curated_set() -> None:
    import types

    public = {n for n in dir(orchestrace) if not n.startswith("_") and n != "annotations"}
    non_modules = {n for n in public if not isinstance(getattr(orchestrace, n), types.ModuleType)}
    exported_non_modules = {n for n in orchestrace.__all__ if not isinstance(getattr(orchestrace, n), types.ModuleType)}
    assert non_modules == exported_non_modules


def test_import_is_light() -> None:
    code = (
        "import sys, orchestrace, orchestrace.cli;"
        "heavy = [m for m in ('torch', 'gymnasium', 'pyarrow', 'networkx', 'matplotlib', 'httpx',"
        " 'opentelemetry', 'ray', 'jsonschema', 'scipy') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported eagerly: {out.stdout.strip()}"


def test_py_typed_marker_ships() -> None:
    assert (ROOT / "src" / "orchestrace" / "py.typed").is_file()


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- commands -->\s*```(?:bash|sh)?\n(.*?)```", text, re.S)
    assert block, "README must hold the two set-up commands in a fenced block after <!-- commands -->"
    return [ln.strip() for ln in block.group(1).splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_readme_has_two_commands_and_ci_runs_the_test_one_verbatim() -> None:
    cmds = _readme_commands()
    assert len(cmds) == 2, cmds
    main, tests = cmds
    assert "orchestrace demo" in main
    assert "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines(), ".ci/run must call the README's test command verbatim"


def test_cli_help_runs_and_lists_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "orchestrace", "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for cmd in ("validate", "convert", "inspect", "schema", "synth"):
        assert cmd in out.stdout
