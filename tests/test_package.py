"""Package-level contracts: curated public API, light imports, README ⇄ CI agreement."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orchestrace

ROOT = Path(__file__).resolve().parents[1]


#: ``orchestrace.X`` for every X a user may rely on: functions, classes, constants, modules.
EXPORTED = {
    "CONTINUE", "SCHEMA_VERSION", "CreditUnit", "Decision", "DecisionPayload", "Edge", "EdgeType",
    "Event", "EventType", "Measure", "MetricsResult", "OrchestraceError", "Outcome", "Problem",
    "Recorder", "RewardFamily", "Severity", "Signal", "Topology", "Trace", "TraceBuilder",
    "TraceGraph", "TraceWriter", "ValidationReport", "advantages", "compute_metrics", "credit",
    "dump", "dumps", "errors", "import_traces", "iter_traces", "load", "loads", "measures",
    "read_dataset", "record", "rewards", "synth", "to_reference", "validate", "vocab",
    "write_dataset",
}
#: The public modules and packages (``import orchestrace.X``); the rest start with ``_``.
PUBLIC_MODULES = {
    "advantages", "analysis", "blame", "builder", "cli", "collection", "core", "corpus", "credit",
    "dataset", "env", "errors", "evaluation", "evidence", "exporters", "frameworks", "graph",
    "importers", "io", "learn", "llm", "logged", "measures", "offline", "papers", "policies",
    "recorder", "report", "rewards", "scale", "schema", "trace", "trainers", "vocab",
}


def test_public_api_is_exactly_the_curated_set() -> None:
    import importlib
    import types

    assert set(orchestrace.__all__) == EXPORTED
    assert len(orchestrace.__all__) == len(EXPORTED)
    for name in EXPORTED:
        assert getattr(orchestrace, name) is not None
    # nothing else public leaks into the namespace (submodules imported elsewhere aside)
    public = {n for n in dir(orchestrace) if not n.startswith("_") and n != "annotations"}
    leaked = {n for n in public - EXPORTED if not isinstance(getattr(orchestrace, n), types.ModuleType)}
    assert leaked == set()
    # modules are part of the surface: exactly the intended ones are public ...
    src = Path(orchestrace.__file__).parent
    found = {p.stem for p in src.iterdir() if not p.name.startswith("_")
             and (p.suffix == ".py" or (p / "__init__.py").is_file())}
    found |= {old.split(".")[1] for old in orchestrace._MOVED if old.count(".") == 1}  # moved, still importable
    assert found == PUBLIC_MODULES
    # ... and no exported function or class has a module's name, so ``import orchestrace.X``
    # and ``orchestrace.X`` never disagree (``validate`` and ``synth`` once did)
    for name in sorted(EXPORTED & PUBLIC_MODULES):
        assert getattr(orchestrace, name) is importlib.import_module(f"orchestrace.{name}"), name
    for name in sorted(EXPORTED - PUBLIC_MODULES):
        assert not isinstance(getattr(orchestrace, name), types.ModuleType), name
        assert not (src / f"{name}.py").exists() and not (src / name).is_dir(), f"{name} shadows a module"


def test_import_is_light() -> None:
    code = (
        "import sys, orchestrace, orchestrace.cli;"
        "heavy = [m for m in ('torch', 'gymnasium', 'pyarrow', 'networkx', 'matplotlib', 'httpx',"
        " 'opentelemetry', 'ray', 'jsonschema', 'scipy') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported eagerly: {out.stdout.strip()}"


def test_help_and_version_import_only_the_cli() -> None:
    """Start-up (issue 18): ``orchestrace --help`` loads typer and the command modules, not
    numpy, msgspec, rich or the analysis code behind the commands."""
    for flag in ("--help", "--version"):
        code = (
            "import sys\n"
            f"sys.argv = ['orchestrace', '{flag}']\n"
            "from orchestrace.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "mods = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'msgspec', 'rich', 'pydantic')"
            " or m in ('orchestrace.core.trace', 'orchestrace.core.io', 'orchestrace.analysis.graph', 'orchestrace.analysis.measures')]\n"
            "print(','.join(sorted(mods)), file=sys.stderr)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stderr.strip() == "", f"{flag} imported: {out.stderr.strip()}"


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


def test_the_main_job_installs_a_light_extra() -> None:
    """README's first command installs `[demo]`: torch, gymnasium, matplotlib; no verl, Ray, trainers, frameworks."""
    extras = _toml((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0] for d in extras["demo"]}
    assert names == {"torch", "gymnasium", "matplotlib"}
    assert '".[demo]"' in _readme_commands()[0] and "orchestrace demo" in _readme_commands()[0]
    assert "demo" in extras["all"][0]


def _toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)
