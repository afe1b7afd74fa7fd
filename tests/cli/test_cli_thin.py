"""The command line stays thin: commands parse arguments and call the library, which holds the logic.

Three static checks on ``src/orchestrace/cli`` (their failure names the function or import):

* no function body longer than :data:`MAX_BODY` lines (its docstring not counted): a command
  that grows past that is computing something a Python user should be able to call too;
* no numerical stack imported (numpy, scipy, torch, statistics): numbers are computed in the
  library, the CLI only formats them;
* no private name imported from the library (``from ..x import _helper``): what the CLI calls is
  public API.

And one check that the options of ``collect run`` / ``collect team`` default to what
:class:`~orchestrace.collection.collect.CollectConfig` / :class:`~orchestrace.collection.team.TeamConfig` say,
so a Python user and a CLI user collect the same corpus by default.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "src" / "orchestrace" / "cli"
MAX_BODY = 60
NUMERIC = {"numpy", "scipy", "torch", "statistics", "pandas"}


def _trees() -> list[tuple[Path, ast.Module]]:
    return [(f, ast.parse(f.read_text(encoding="utf-8"))) for f in sorted(CLI.glob("*.py"))]


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return 0 if not body else (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1


def test_no_long_function_in_cli() -> None:
    long = [f"{f.name}:{n.lineno} {n.name} ({_body_lines(n)} lines)" for f, tree in _trees() for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _body_lines(n) > MAX_BODY]
    assert not long, f"CLI functions over {MAX_BODY} lines (move the logic into the library): {long}"


def test_cli_computes_nothing_numerical() -> None:
    found = []
    for f, tree in _trees():
        for n in ast.walk(tree):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level else []
            found += [f"{f.name}:{n.lineno} {m}" for m in mods if m.split(".")[0] in NUMERIC]
    assert not found, f"the CLI imports a numerical stack (compute in the library): {found}"


def test_cli_imports_only_public_library_names() -> None:
    private = []
    for f, tree in _trees():
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.level >= 2:  # from ..x import y: the library
                private += [f"{f.name}:{n.lineno} {n.module}.{a.name}" for a in n.names
                            if a.name.startswith("_") and a.name != "__version__"]
    assert not private, f"the CLI imports private library names: {private}"


def test_the_guards_catch_what_they_forbid(tmp_path: Path) -> None:
    """The checks are not vacuous: a long body and a numpy import are seen."""
    src = "import numpy\n\ndef f():\n    '''doc'''\n" + "    x = 1\n" * (MAX_BODY + 1)
    tree = ast.parse(src)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    assert _body_lines(fn) == MAX_BODY + 1
    assert any(isinstance(n, ast.Import) and n.names[0].name in NUMERIC for n in ast.walk(tree))


def _defaults(command: object) -> dict[str, object]:
    """Parameter name → the typer option's default, of a registered command function."""
    out = {}
    for name, p in inspect.signature(command).parameters.items():  # type: ignore[arg-type]
        default = getattr(p.default, "default", p.default)
        out[name] = default
    return out


@pytest.mark.parametrize("command, config, rename", [
    ("collect_run", "CollectConfig", {"tasks": None, "task_file": None}),  # None ≡ "" (no file)
    ("collect_team", "TeamConfig", {"tasks": None, "task_file": None}),  # -n: 1000 or all of the file
])
def test_collect_options_default_to_the_config(command: str, config: str, rename: dict[str, str | None]) -> None:
    from orchestrace.cli import _collect
    from orchestrace.llm import collect, team

    cls = getattr(collect, config, None) or getattr(team, config)
    fields = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
    opts = _defaults(getattr(_collect, command))
    checked = 0
    for name, default in opts.items():
        field = rename.get(name, name)
        if field in fields:
            assert default == fields[field], f"{command} --{name.replace('_', '-')} defaults to {default!r}, " \
                                             f"{config}.{field} to {fields[field]!r}"
            checked += 1
    if "no_logprobs" in opts and "logprobs" in fields:
        assert opts["no_logprobs"] is (not fields["logprobs"])
        checked += 1
    assert checked >= 4, f"only {checked} options of {command} matched {config} fields"


def test_one_trace_loader() -> None:
    """The CLI reads traces through :func:`orchestrace.core.load.read_any` only (``validate`` reads bytes
    through the validator, which locates every problem in them)."""
    readers = {"iter_traces", "read_traces", "read_dataset", "load", "loads"}
    found = [f"{f.name}:{n.lineno} {a.name}" for f, tree in _trees() for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) and n.level >= 2 and (n.module or "").startswith("core")
             for a in n.names if a.name in readers]
    assert not found, f"the CLI reads traces around core.load.read_any: {found}"
