#!/usr/bin/env python3
"""Move orchestrace's modules and tests into the folders of their layers — mechanically, re-runnably.

    python tools/relayout.py              # plan, move, rewrite, verify; prints a summary
    python tools/relayout.py --dry-run    # the plan only: what would move, what is not mapped
    python tools/relayout.py --no-verify  # skip the import / collection / ruff checks

The table :data:`MOVES` maps old paths to new ones, by file and by folder: a file that is not
named itself goes where its folder goes, so files added later inside a moved folder move with it.
Then, in ``src/``, ``tests/``, ``benchmarks/``, ``examples/``, ``docs/``, ``README.md``, the
root ``conftest.py``, ``pyproject.toml`` and ``.ci/``:

1. relative imports in ``src/orchestrace`` are resolved against each file's OLD place and
   written again from its NEW place (only those whose target or whose file moved);
2. absolute dotted paths (``orchestrace.x.y`` in code, strings such as ``mock.patch(...)``,
   doctests and prose) and file paths (``src/orchestrace/x.py``, ``tests/a/b.py``) are rewritten,
   longest match first; a few literals that are data, not module names, are kept (:data:`PROTECT`);
3. ``Path(__file__).parents[N]`` is adjusted in files whose depth changed; :data:`TEXT_EDITS`
   apply; the facade's ``_MOVED`` alias table (old public dotted path → new home) and the layer
   test's ``LAYERS`` are written from this file;
4. ``ruff check --fix --select I`` re-sorts the import blocks of the files it changed.

It is idempotent: a second run finds nothing to move and nothing to rewrite. Flat top-level
modules of ``src/orchestrace`` that the table does not place are reported, never left silently.
Verification: every module imports (a missing optional extra counts as skipped), ``pytest
--collect-only`` has no errors, ``ruff check`` passes.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "src/orchestrace"

#: old path → new path (None: delete, see :data:`DELETE_IF_ONLY`). A folder entry moves every
#: file below it that has no entry of its own; the longest matching entry wins.
MOVES: list[tuple[str, str | None]] = [
    # -- the trace core: structs, IO, validation, schema, dataset, synth, path expansion
    (f"{PKG}/trace.py", f"{PKG}/core/trace.py"),
    (f"{PKG}/builder.py", f"{PKG}/core/builder.py"),
    (f"{PKG}/io.py", f"{PKG}/core/io.py"),
    (f"{PKG}/schema.py", f"{PKG}/core/schema.py"),
    (f"{PKG}/dataset.py", f"{PKG}/core/dataset.py"),
    (f"{PKG}/_synth.py", f"{PKG}/core/_synth.py"),
    (f"{PKG}/_validate.py", f"{PKG}/core/_validate.py"),
    (f"{PKG}/_structural.py", f"{PKG}/core/_structural.py"),
    (f"{PKG}/_dag.py", f"{PKG}/core/_dag.py"),
    (f"{PKG}/_paths.py", f"{PKG}/core/_paths.py"),
    # -- analysis
    (f"{PKG}/graph.py", f"{PKG}/analysis/graph.py"),
    (f"{PKG}/measures.py", f"{PKG}/analysis/measures.py"),
    # -- credit and rewards: units, methods, advantages
    (f"{PKG}/advantages.py", f"{PKG}/credit/advantages.py"),
    # -- offline/ by job: collection with the LLM code, simulator fitting with the environment
    (f"{PKG}/offline/collect.py", f"{PKG}/collection/collect.py"),
    (f"{PKG}/offline/team.py", f"{PKG}/collection/team.py"),  # the team collector, beside the vote collector
    (f"{PKG}/offline/logimport.py", f"{PKG}/collection/logimport.py"),  # your sampling logs -> a corpus
    (f"{PKG}/learn/llm_policy.py", f"{PKG}/llm/llm_policy.py"),  # the LLM orchestrator (it loads the LLM)
    (f"{PKG}/learn/llm_grpo.py", f"{PKG}/llm/llm_grpo.py"),
    ("tests/offline/test_team_corpus.py", "tests/llm/test_llm_team.py"),
    (f"{PKG}/offline/_synthetic.py", "tests/support/synthetic_runs.py"),  # a test-only generator
    # -- integrations: the recorder SDK with the framework capture built on it
    (f"{PKG}/recorder.py", f"{PKG}/frameworks/recorder.py"),
    # -- tests mirror src; the phase-named folders dissolve
    ("tests/foundation", "tests/core"),
    ("tests/foundation/conftest.py", None),
    ("tests/foundation/foundation_strategies.py", "tests/support/foundation_strategies.py"),
    ("tests/foundation/test_cli_bad_input.py", "tests/cli/test_cli_bad_input.py"),
    ("tests/foundation/test_foundation_cli.py", "tests/cli/test_cli_trace_commands.py"),
    ("tests/foundation/test_foundation_corpus.py", "tests/cli/test_cli_bad_corpus.py"),
    ("tests/foundation/test_safety_defects.py", "tests/cli/test_cli_safety_defects.py"),
    ("tests/foundation/test_safety_traps.py", "tests/cli/test_cli_safety_traps.py"),
    ("tests/foundation/test_foundation_fast_sorts.py", "tests/core/test_core_fast_sorts.py"),
    ("tests/foundation/test_foundation_one_core.py", "tests/core/test_core_one_core.py"),
    ("tests/foundation/test_foundation_roundtrip.py", "tests/core/test_core_roundtrip.py"),
    ("tests/foundation/test_foundation_semantic.py", "tests/core/test_core_semantic.py"),
    ("tests/foundation/test_foundation_synth.py", "tests/core/test_core_synth.py"),
    ("tests/dataset", "tests/core"),
    ("tests/measures", "tests/analysis"),
    ("tests/interop", "tests/importers"),
    ("tests/interop/interop_helpers.py", "tests/support/interop_helpers.py"),
    ("tests/interop/test_interop_agentlightning.py", "tests/importers/test_importers_agentlightning.py"),
    ("tests/interop/test_interop_chat.py", "tests/importers/test_importers_chat.py"),
    ("tests/interop/test_interop_claude_code.py", "tests/importers/test_importers_claude_code.py"),
    ("tests/interop/test_interop_codex.py", "tests/importers/test_importers_codex.py"),
    ("tests/interop/test_interop_otel.py", "tests/importers/test_importers_otel.py"),
    ("tests/interop/test_interop_reading.py", "tests/importers/test_importers_reading.py"),
    ("tests/interop/test_interop_trust.py", "tests/importers/test_importers_trust.py"),
    ("tests/interop/test_interop_cli.py", "tests/cli/test_cli_interop.py"),
    ("tests/interop/test_interop_export.py", "tests/exporters/test_exporters_export.py"),
    ("tests/interop/test_interop_recorder.py", "tests/frameworks/test_frameworks_recorder.py"),
    ("tests/trainers", "tests/exporters"),  # the trainer checks read what the exporters write
    ("tests/trainers/trainer_helpers.py", "tests/support/trainer_helpers.py"),
    ("tests/llm/llm_fakes.py", "tests/support/llm_fakes.py"),
    ("tests/offline/test_vote_corpus.py", "tests/llm/test_llm_collect.py"),
    ("tests/offline/test_simfit.py", "tests/env/test_env_simfit.py"),
    ("tests/package", "tests"),  # whole-package checks: layers, lint, docs, public API
    ("tests/package/test_cli_fast.py", "tests/cli/test_cli_fast.py"),
    ("tests/package/test_cli_surface.py", "tests/cli/test_cli_surface.py"),
    # -- issue 39: folders by concept. The survey's paper pool is named for what it is ("corpus" is logged runs)
    (f"{PKG}/corpus", f"{PKG}/papers"),
    ("tests/corpus", "tests/papers"),
    # -- issue 39: rewards < blame < credit, honest layers. The eight units partition a trace's events (analysis);
    # the credit methods' names and options are what a reward spec's [credit] table is checked against (rewards)
    (f"{PKG}/credit/units.py", f"{PKG}/analysis/units.py"),
    (f"{PKG}/_units.py", f"{PKG}/analysis/units.py"),
    (f"{PKG}/credit/methods.py", f"{PKG}/rewards/credit_methods.py"),
    (f"{PKG}/_methods.py", f"{PKG}/rewards/credit_methods.py"),
    # -- issue 39: the learning half by concept. Worlds: the logged runs beside the simulator (env/) and its Ray
    # fan-out (scale/); policies: stop rules, fitted gate and team policy, the neural policy; trainers: the
    # policy-gradient trainers and the fitted-Q fits; evaluation: the simulator's protocol and the log's.
    # learn/ and offline/ keep only their __init__ (the public facades, above evaluation).
    *[(f"{PKG}/offline/{a}.py", f"{PKG}/logged/{b}.py") for a, b in [
        ("_readers", "readers"), ("_logged", "runs"), ("_value", "value"), ("_io", "corpus"),
        ("_team_check", "team_check"), ("_team_synth", "team_synth"), ("logged_env", "logged_env"),
        ("simfit", "simfit")]],
    *[(f"{PKG}/offline/{a}.py", f"{PKG}/policies/{b}.py") for a, b in [
        ("rules", "rules"), ("gate", "gate"), ("team_policy", "team_policy"), ("_features", "features"),
        ("_team", "team")]],
    (f"{PKG}/learn/anchors.py", f"{PKG}/policies/anchors.py"),
    (f"{PKG}/learn/policy.py", f"{PKG}/policies/neural.py"),
    (f"{PKG}/learn/checkpoint.py", f"{PKG}/policies/checkpoint.py"),
    *[(f"{PKG}/learn/{a}.py", f"{PKG}/trainers/{b}.py") for a, b in [
        ("_run", "_run"), ("_common", "common"), ("config", "config"), ("envs", "envs"), ("grpo", "grpo"),
        ("ppo", "ppo"), ("reinforce", "reinforce"), ("losses", "losses"), ("rollout", "rollout"),
        ("warmstart", "warmstart"), ("fitted_stop", "fitted_stop"), ("progress", "progress"),
        ("rundir", "rundir")]],
    (f"{PKG}/offline/_fit.py", f"{PKG}/trainers/fitted_q.py"),
    (f"{PKG}/offline/_team_fit.py", f"{PKG}/trainers/team_fitted_q.py"),
    *[(f"{PKG}/learn/{a}.py", f"{PKG}/evaluation/{b}.py") for a, b in [
        ("evaluate", "simulated"), ("exact", "exact"), ("demo", "demo"), ("play", "play")]],
    *[(f"{PKG}/offline/{a}.py", f"{PKG}/evaluation/{b}.py") for a, b in [
        ("_eval", "logged"), ("_team_eval", "logged_team"), ("_family", "family"), ("_report", "summary"),
        ("_demo", "logged_demo"), ("runfiles", "runfiles")]],
    # -- issue 39: collection (vote and team collectors, task files, your logs → a corpus) beside the LLM code
    *[(f"{PKG}/llm/{a}.py", f"{PKG}/collection/{a}.py") for a in ("collect", "team", "taskfile", "logimport")],
]

#: Files deleted only while their code is nothing but these lines (else moved with their folder).
DELETE_IF_ONLY = {
    "tests/foundation/conftest.py": {"from __future__ import annotations", "import sys",
                                     "from pathlib import Path",
                                     "sys.path.insert(0, str(Path(__file__).parent))  # foundation_strategies.py"},
}

#: Flat modules that stay at the package root: the words, the root exception, the problem record.
KEEP_AT_ROOT = {"__init__.py", "__main__.py", "errors.py", "vocab.py", "_problems.py", "_limits.py", "_stats.py", "_vote.py", "evidence.py"}

#: New packages and their docstrings (written only when the ``__init__.py`` is missing).
NEW_PACKAGES = {
    f"{PKG}/core": "The trace core: the structs, reading and writing, validation, the schema, the columnar "
                   "dataset,\nsynthetic traces and which files a path names. Every layer above builds on it.\n",
    f"{PKG}/analysis": "Analysis of one trace: the graph core (:mod:`orchestrace.analysis.graph`) and the "
                       "namespaced\nmeasures computed on it (:mod:`orchestrace.analysis.measures`).\n",
    f"{PKG}/papers": "",  # issue 39: the survey's paper pool (was corpus/); its __init__ moves with it
    f"{PKG}/logged": "Logged runs as a world: the reader and its checks, the exact valuation of every path, the "
                     "environment\nover logs and the simulator fitted to them. A vote is a team of identical "
                     "members.\n",
    f"{PKG}/policies": "Policies: the stop rules (one definition each), the fitted stop gate and team policy, "
                       "the neural\npolicy of the simulator and its checkpoints.\n",
    f"{PKG}/trainers": "Trainers: REINFORCE / GRPO / PPO on the simulator (cleanrl-style, one file each), the "
                       "fitted stop,\nand the fitted-Q fits of the gate and the team policy from logged runs.\n",
    f"{PKG}/collection": "Collection: always-continue vote and team loops against an LLM endpoint, task files, and "
                         "your own\nsampling logs turned into a corpus of logged runs.\n",
    f"{PKG}/evaluation": "Evaluation: the simulator's fair protocol, the exact evaluation on logged runs, the rule "
                         "family,\nthe claims and the summaries.\n",
}

#: Literals that look like a moved module's name but are data, kept as they are: the OTel resource
#: attribute that carries a trace's header, and the recorder's default ``system``.
PROTECT: list[tuple[str, str]] = [
    (f"{PKG}/exporters/otlp.py", r'"orchestrace\.trace":'),
    (f"{PKG}/importers/otel.py", r'\.get\("orchestrace\.trace"\)'),
    ("benchmarks/vs_agentlightning.py", r'"orchestrace\.trace":'),
    (f"{PKG}/", r'system: str \| None = "orchestrace\.recorder"'),
    (f"{PKG}/__init__.py", r"(?s)_MOVED: dict\[str, str\] = \{.*?\n\}"),  # the alias table: old names on purpose
]

#: (path prefix, regex, replacement, skip the file when it holds this already): edits the moves
#: make necessary that no table can express.
TEXT_EDITS: list[tuple[str, str, str, str]] = [
    # helpers now live in tests/support (on sys.path from the root conftest)
    ("tests/", r'(?m)^sys\.path\.insert\(0, str\(Path\(__file__\)\.resolve\(\)\.parents\[1\] / "(foundation|llm)"\)\)\n',
     "", ""),
    ("tests/", r"(?m)^(from foundation_strategies import [^\n]*?)  # noqa: E402\n", r"\1\n", ""),
    ("benchmarks/offline_stop.py", r"(?m)^(\s+)from synthetic_runs import structured_runs\n",
     r'\1sys.path.insert(0, str(ROOT / "tests" / "support"))  # the test-only generator\n'
     r"\1from synthetic_runs import structured_runs\n", "# the test-only generator"),
    ("tests/test_exported_names.py", r'(?m)^    "corpus": \{', '    "papers": {', '"papers": {'),  # issue 39
    # issue 39: the learning folders import the module that defines a name, not the facades above them
    (f"{PKG}/policies/anchors.py", r"from \.\.offline import continuation_values",
     "from ..logged.value import continuation_values", ""),
    (f"{PKG}/trainers/fitted_stop.py", r"from \.\.offline import continuation_values",
     "from ..logged.value import continuation_values", ""),
    (f"{PKG}/evaluation/demo.py", r"from \.\.offline import demo_ci_text as _ci", "from .logged_demo import ci_text as _ci",
     ""),
    (f"{PKG}/evaluation/demo.py", r"from \.\.offline import demo_verdict as _verdict",
     "from .logged_demo import verdict as _verdict", ""),
    (f"{PKG}/evaluation/demo.py", r"from \.\.offline import team_claims", "from .logged_demo import team_claims", ""),
]

SCAN_DIRS = ["src", "tests", "benchmarks", "examples", "docs", ".ci"]
SCAN_FILES = ["README.md", "conftest.py", "pyproject.toml"]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".rst", ""}
SKIP_PREFIXES = ("tools/relayout.py", "docs/architecture.md")  # the map is written for the new layout
DATA_PREFIX, DATA_TEXT = "tests/data/", {".md", ".py"}  # test data: only its notes and generators are rewritten

LAYERS_SOURCE = '''LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"vocab", "errors", "_problems", "_limits", "_stats", "_vote", "evidence"}),
    ("core", {"core", "importers", "papers"}),
    ("analysis", {"analysis"}),
    ("rewards", {"rewards"}),
    ("blame", {"blame"}),
    ("credit", {"credit"}),
    ("worlds", {"env", "logged", "scale"}),
    ("policies", {"policies"}),
    ("trainers", {"trainers"}),
    ("evaluation", {"evaluation", "learn", "offline"}),
    ("llm", {"llm", "collection"}),
    ("integrations", {"exporters", "frameworks"}),
    ("report", {"report"}),
    ("cli", {"cli", "__main__"}),
]'''

LAYERS_DOC = '''"""The package's layer order and its absence of import circles, checked statically.

Every ``import`` in ``src/orchestrace`` counts — module-level, inside functions (lazy) and
under ``TYPE_CHECKING`` — because a lazy import still ties two modules together. The layers are
the folders of ``src/orchestrace`` (``docs/architecture.md``), bottom to top; a module may import
from its own layer and the layers below it, never above::

    cli  >  report  >  exporters / frameworks  >  llm / collection  >  evaluation / learn / offline  >  trainers
         >  policies  >  env / logged / scale  >  credit  >  blame  >  rewards  >  analysis  >  core / importers / papers  >  vocab / errors / _problems

``orchestrace/__init__.py`` is the facade above all of them; ``__main__`` runs the CLI.
"""'''


@dataclass
class Summary:
    moved: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    rewritten: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)

    def count(self, path: str, n: int = 1) -> None:
        self.rewritten[path] = self.rewritten.get(path, 0) + n


def git(*args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=check, capture_output=True, text=True).stdout


def repo_files() -> list[str]:
    tracked = git("ls-files").splitlines()
    others = git("ls-files", "--others", "--exclude-standard").splitlines()
    return sorted({f for f in tracked + others if (ROOT / f).is_file()})


def destination(path: str) -> tuple[bool, str | None]:
    """(matched, new path) for ``path`` by the longest entry of :data:`MOVES` that covers it."""
    best: tuple[int, str | None] | None = None
    for old, new in MOVES:
        if (path == old or path.startswith(old + "/")) and (best is None or len(old) > best[0]):
            best = (len(old), None if new is None else new + path[len(old):])
    if best is None:
        return False, None
    return True, best[1]


def dotted(path: str) -> str | None:
    """``src/orchestrace/a/b.py`` → ``orchestrace.a.b``; ``tests/support/m.py`` → ``m``; else None."""
    if path.startswith("src/") and path.endswith(".py"):
        parts = path[4:-3].split("/")
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    if path.startswith("tests/support/") and path.endswith(".py"):
        return path[len("tests/support/"):-3]
    return None


def module_map() -> dict[str, str]:
    """Old dotted module/package → new, from the table alone (so a re-run still knows them)."""
    out = {}
    for old, new in MOVES:
        if new is None or not old.startswith(PKG):
            continue
        o = dotted(old if old.endswith(".py") else old + "/__init__.py")
        n = dotted(new if new.endswith(".py") else new + "/__init__.py")
        if o and n and o != n:
            out[o] = n
    for o in out:  # a new name inside an old one would be rewritten again by a second run
        for n in out.values():
            assert not (n == o or n.startswith(o + ".")), f"table: new name {n} lies under old name {o}"
    return out


def path_map() -> dict[str, str]:
    """Old path → new path, as written in text (``src/`` dropped: ``orchestrace/x.py`` matches both)."""
    out = {}
    for old, new in MOVES:
        if new is None:
            continue
        strip = (lambda p: p[4:]) if old.startswith("src/") else (lambda p: p)
        new_text = new[4:] if new.startswith("src/") else new
        if strip(old) != new_text:
            out[strip(old)] = new_text
    return out


def alternation(keys: list[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


# ----------------------------------------------------------------------------------------- plan
def plan(summary: Summary) -> list[tuple[str, str | None]]:
    steps: list[tuple[str, str | None]] = []
    for f in repo_files():
        matched, new = destination(f)
        if not matched or new == f:
            continue
        if "/__pycache__/" in f:
            continue
        if new is None:
            only = DELETE_IF_ONLY.get(f)
            code = {ln.strip() for ln in _code_lines(ROOT / f)}
            if only is not None and code <= only:
                steps.append((f, None))
                continue
            summary.warnings.append(f"{f}: not deleted (it holds more than the table expects); kept in place")
            continue
        steps.append((f, new))
    targets = [n for _, n in steps if n]
    dup = {t for t in targets if targets.count(t) > 1}
    if dup:
        raise SystemExit(f"relayout: two files would move to the same place: {sorted(dup)}")
    for old, new in steps:
        if new and (ROOT / new).exists():
            raise SystemExit(f"relayout: {old} → {new}: the destination exists already; resolve by hand")
    # pytest imports test files by basename (no __init__.py in tests/): names must stay unique
    final = {f for f in repo_files()} - {o for o, _ in steps} | set(targets)
    names = [Path(f).name for f in final if f.startswith("tests/") and Path(f).name.startswith("test_")
             and f.endswith(".py") and not f.startswith("tests/data/")]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise SystemExit(f"relayout: test files would share a basename: {clash}")
    return steps


def _code_lines(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ln for node in body for ln in lines[node.lineno - 1: node.end_lineno] if ln.strip()]


def unmapped_modules() -> list[str]:
    """Flat top-level modules the table does not place, and packages that no layer names."""
    root = ROOT / PKG
    flat = [p.name for p in root.glob("*.py") if p.name not in KEEP_AT_ROOT and not destination(
        f"{PKG}/{p.name}")[0]]
    layered = set(re.findall(r'"(\w+)"', LAYERS_SOURCE))
    packages = [p.name + "/" for p in root.iterdir() if (p / "__init__.py").exists() and p.name not in layered]
    return sorted(flat + packages)


# ------------------------------------------------------------------------------ relative imports
@dataclass
class RelImport:
    lineno: int
    col: int
    level: int
    module: str | None
    target: str  # absolute, at the file's old place
    names: list[str]


def package_of(path: str) -> str:
    name = dotted(path) or ""
    return name if path.endswith("__init__.py") else name.rpartition(".")[0]


def relative_imports(path: str) -> list[RelImport]:
    pkg = package_of(path).split(".")
    out = []
    for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg[: len(pkg) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            out.append(RelImport(node.lineno, node.col_offset, node.level, node.module, target,
                                 [a.name for a in node.names]))
    return out


def remap(name: str, mods: dict[str, str]) -> str:
    for old in sorted(mods, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return mods[old] + name[len(old):]
    return name


def relative_text(from_pkg: str, target: str) -> str:
    a, b = from_pkg.split("."), target.split(".")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return "." * (len(a) - common + 1) + ".".join(b[common:])


def rewrite_relative(path: str, old_path: str, imports: list[RelImport], mods: dict[str, str],
                     summary: Summary) -> None:
    file = ROOT / path
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    new_pkg = package_of(path)
    moved = path != old_path
    changed = 0
    for ri in imports:
        new_target = remap(ri.target, mods)
        if ri.module is None and any(f"{ri.target}.{n}" in mods for n in ri.names):
            summary.warnings.append(f"{path}:{ri.lineno}: `from {'.' * ri.level} import "
                                    f"{', '.join(ri.names)}` names a moved module: rewrite by hand")
            continue
        if not moved and new_target == ri.target:
            continue
        text = relative_text(new_pkg, new_target) if new_target.startswith("orchestrace") else None
        if text is None:
            summary.warnings.append(f"{path}:{ri.lineno}: relative import of {ri.target}, now outside the "
                                    f"package ({new_target}): rewrite by hand")
            continue
        if ri.module is None:
            text = relative_text(new_pkg, new_target)
            if new_target == new_pkg or new_pkg.startswith(new_target + "."):
                text = "." * (len(new_pkg.split(".")) - len(new_target.split(".")) + 1)
        line = lines[ri.lineno - 1]
        head = re.compile(r"from\s+\.+[\w.]*\s+import")
        m = head.match(line, ri.col)
        if not m:
            summary.warnings.append(f"{path}:{ri.lineno}: could not read the relative import")
            continue
        new_head = f"from {text} import"
        if m.group(0) != new_head:
            lines[ri.lineno - 1] = line[: m.start()] + new_head + line[m.end():]
            changed += 1
    if changed:
        file.write_text("".join(lines), encoding="utf-8")
        summary.count(path, changed)


# ---------------------------------------------------------------------------------- text rewrites
def scanned_files() -> list[str]:
    out = []
    for f in repo_files():
        if f.startswith(SKIP_PREFIXES) or Path(f).suffix not in TEXT_SUFFIXES:
            continue
        if f.startswith(DATA_PREFIX) and Path(f).suffix not in DATA_TEXT:
            continue
        if f in SCAN_FILES or any(f.startswith(d + "/") for d in SCAN_DIRS):
            out.append(f)
    return out


def protected(path: str, text: str) -> tuple[str, list[str]]:
    """``text`` with the :data:`PROTECT` literals of ``path`` masked, and the masked strings."""
    masks: list[str] = []

    def mask(m: re.Match[str]) -> str:
        masks.append(m.group(0))
        return f"\x00{len(masks) - 1}\x00"

    for prefix, pattern in PROTECT:
        if path.startswith(prefix):
            text = re.sub(pattern, mask, text)
    return text, masks


def rewrite_text(path: str, mods: dict[str, str], paths: dict[str, str], summary: Summary) -> None:
    file = ROOT / path
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return
    original = text
    text, masks = protected(path, text)
    if mods:
        dotted_re = re.compile(rf"(?<![\w.])({alternation(list(mods))})(?!\w)")
        text = dotted_re.sub(lambda m: mods[m.group(1)], text)
    if paths:
        path_re = re.compile(rf"(?<![\w.-])({alternation(list(paths))})(?![\w-])")
        text = path_re.sub(lambda m: paths[m.group(1)], text)
    for prefix, pattern, repl, unless in TEXT_EDITS:
        if path.startswith(prefix) and not (unless and unless in text):
            text = re.sub(pattern, repl, text)
    text = re.sub("\x00(\\d+)\x00", lambda m: masks[int(m.group(1))], text)
    if text != original:
        file.write_text(text, encoding="utf-8")
        summary.count(path)


def fix_depth(path: str, old_path: str, summary: Summary) -> None:
    delta = path.count("/") - old_path.count("/")
    if not delta or not path.endswith(".py"):
        return
    file = ROOT / path
    text = file.read_text(encoding="utf-8")

    def shift(m: re.Match[str]) -> str:
        n = int(m.group(2)) + delta
        if n < 0:
            summary.warnings.append(f"{path}: Path(__file__).parents[{m.group(2)}] has no equivalent")
            return m.group(0)
        return f"Path(__file__){m.group(1)}.parents[{n}]"

    new = re.sub(r"Path\(__file__\)((?:\.resolve\(\))?)\.parents\[(\d+)\]", shift, text)
    if re.search(r"__file__\)(?:\.resolve\(\))?\.parent\.parent", new):
        summary.warnings.append(f"{path}: `.parent.parent` of __file__ and a depth change: check by hand")
    if new != text:
        file.write_text(new, encoding="utf-8")
        summary.count(path)


def replace_assignment(path: Path, name: str, source: str, summary: Summary) -> None:
    """Replace the top-level assignment of ``name`` in ``path`` by ``source`` (found by the AST)."""
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            lines = text.splitlines(keepends=True)
            new = "".join(lines[: node.lineno - 1]) + source + "\n" + "".join(lines[node.end_lineno:])
            if new != text:
                path.write_text(new, encoding="utf-8")
                summary.count(str(path.relative_to(ROOT)))
            return
    summary.warnings.append(f"{path.relative_to(ROOT)}: no `{name}` assignment to update")


def write_moved_table(mods: dict[str, str], summary: Summary) -> None:
    public = {o: n for o, n in sorted(mods.items())
              if n.startswith("orchestrace.") and not any(p.startswith("_") for p in o.split(".")[1:])}
    body = "".join(f'    "{o}": "{n}",\n' for o, n in public.items())
    replace_assignment(ROOT / PKG / "__init__.py", "_MOVED", "_MOVED: dict[str, str] = {\n" + body + "}",
                       summary)


def add_public_packages(summary: Summary) -> None:
    """The new packages join ``PUBLIC_MODULES`` of the package test (its other names are kept)."""
    test = ROOT / "tests" / "test_package.py"
    if not test.exists():
        summary.warnings.append("tests/test_package.py not found: PUBLIC_MODULES not updated")
        return
    for node in ast.parse(test.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PUBLIC_MODULES"
                                                for t in node.targets):
            names = set(ast.literal_eval(node.value)) | {Path(p).name for p in NEW_PACKAGES}
            body, line = [], "   "
            for n in sorted(names):
                if len(line) + len(n) + 4 > 100:
                    body.append(line)
                    line = "   "
                line += f' "{n}",'
            body.append(line)
            replace_assignment(test, "PUBLIC_MODULES", "PUBLIC_MODULES = {\n" + "\n".join(body) + "\n}", summary)
            return
    summary.warnings.append("tests/test_package.py: no PUBLIC_MODULES to update")


def write_layers(summary: Summary) -> None:
    test = ROOT / "tests" / "test_layers.py"
    if not test.exists():
        summary.warnings.append("tests/test_layers.py not found: LAYERS not updated")
        return
    replace_assignment(test, "LAYERS", LAYERS_SOURCE, summary)
    text = test.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text), clean=False)
    if doc is not None and text.startswith('"""'):
        end = text.index('"""', 3) + 3
        if text[:end] != LAYERS_DOC:
            test.write_text(LAYERS_DOC + text[end:], encoding="utf-8")
            summary.count("tests/test_layers.py")


# ------------------------------------------------------------------------------------- verification
def verify(summary: Summary) -> bool:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = (
        "import importlib, pathlib, sys\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "bad = []; skipped = []\n"
        "for f in sorted(root.rglob('*.py')):\n"
        "    parts = f.relative_to(root.parent).with_suffix('').parts\n"
        "    name = '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)\n"
        "    if name.endswith('__main__'): continue\n"
        "    try: importlib.import_module(name)\n"
        "    except ModuleNotFoundError as e:\n"
        "        (bad if (e.name or '').startswith('orchestrace') else skipped).append(f'{name}: {e}')\n"
        "    except Exception as e: bad.append(f'{name}: {type(e).__name__}: {e}')\n"
        "print(len(list(root.rglob('*.py'))), len(bad), len(skipped))\n"
        "print('\\n'.join(bad + ['skipped (extra missing): ' + s for s in skipped]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / PKG)], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    head = (r.stdout.splitlines() or ["? ? ?"])[0].split()
    ok_imports = r.returncode == 0 and len(head) == 3 and head[1] == "0"
    print(f"imports: {head[0]} modules, {head[1]} failed, {head[2]} skipped for a missing extra")
    for line in r.stdout.splitlines()[1:]:
        if line.strip():
            print(f"  {line}")
    if r.returncode:
        print(r.stderr[-2000:])
    c = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    found = re.findall(r"^=*\s*(\d+ tests? collected.*?|.*\d+ errors?.*?)\s*=*$", c.stdout, re.M)
    tail = found[-1] if found else "no summary line"
    ok_collect = c.returncode == 0 and " error" not in tail
    print(f"pytest --collect-only: {tail} (exit {c.returncode})")
    if not ok_collect:
        print("\n".join(ln for ln in c.stdout.splitlines() if "ERROR" in ln or "Error" in ln)[:4000])
    f = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                       text=True)
    print(f"ruff check: {'clean' if f.returncode == 0 else 'FAILED'}")
    if f.returncode:
        print(f.stdout[-4000:])
    return ok_imports and ok_collect and f.returncode == 0


# ------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    ap.add_argument("--no-verify", action="store_true", help="skip the import / collection / ruff checks")
    args = ap.parse_args(argv)
    summary = Summary()
    mods, paths = module_map(), path_map()
    steps = plan(summary)
    summary.unmapped = unmapped_modules()
    if args.dry_run:
        for old, new in steps:
            print(f"{old} → {new or '(deleted)'}")
        print(f"{len(steps)} moves planned; unmapped top-level modules: {summary.unmapped or 'none'}")
        for w in summary.warnings:
            print(f"warning: {w}")
        return 0
    # 1. relative imports, read at the old places
    src_files = [f for f in repo_files() if f.startswith(PKG + "/") and f.endswith(".py")]
    rel = {f: relative_imports(f) for f in src_files}
    # 2. move
    tracked = set(git("ls-files").splitlines())
    new_of: dict[str, str] = {f: f for f in src_files}
    vacated: set[Path] = set()
    for old, new in steps:
        vacated.add((ROOT / old).parent)
        if new is None:
            git("rm", "-q", old) if old in tracked else (ROOT / old).unlink()
            summary.deleted.append(old)
            continue
        (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
        if old in tracked:
            git("mv", old, new)
        else:
            (ROOT / old).rename(ROOT / new)
        summary.moved.append((old, new))
        if old in new_of:
            new_of[old] = new
    for d in sorted(vacated, key=lambda p: len(p.parts), reverse=True):
        if d.is_dir() and all(p.name == "__pycache__" for p in d.iterdir()):
            shutil.rmtree(d)
    for pkg, doc in NEW_PACKAGES.items():
        init = ROOT / pkg / "__init__.py"
        if (ROOT / pkg).is_dir() and not init.exists():
            init.write_text(f'"""{doc}"""\n\n__all__: list[str] = []\n', encoding="utf-8")
            git("add", str(init.relative_to(ROOT)))
            summary.created.append(str(init.relative_to(ROOT)))
    # 3. rewrite
    for old, new in new_of.items():
        if new.startswith(PKG + "/"):
            rewrite_relative(new, old, rel[old], mods, summary)
    for f in scanned_files():
        rewrite_text(f, mods, paths, summary)
    for old, new in summary.moved:
        fix_depth(new, old, summary)
    if (ROOT / PKG / "__init__.py").exists():
        write_moved_table(mods, summary)
    write_layers(summary)
    add_public_packages(summary)
    changed_py = [f for f in summary.rewritten if f.endswith(".py") and (ROOT / f).exists()]
    if changed_py:
        subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--fix", "--select", "I",
                        "--quiet", *changed_py], cwd=ROOT, capture_output=True, text=True)
        tests_py = [f for f in changed_py if f.startswith(("tests/", "benchmarks/"))]
        if tests_py:  # imports left unused by the TEXT_EDITS (sys, Path of a removed sys.path line)
            subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--fix", "--select", "F401",
                            "--quiet", *tests_py], cwd=ROOT, capture_output=True, text=True)
    git("add", "-A", "--", *[p for p in (*SCAN_DIRS, *SCAN_FILES) if (ROOT / p).exists()])
    # 4. report
    print(f"relayout: {len(summary.moved)} files moved, {len(summary.deleted)} deleted, "
          f"{len(summary.created)} created, {len(summary.rewritten)} files rewritten "
          f"({sum(summary.rewritten.values())} edits)")
    for old, new in summary.moved:
        print(f"  mv {old} → {new}")
    for f in summary.deleted:
        print(f"  rm {f}")
    for f in summary.created:
        print(f"  new {f}")
    for f, n in sorted(summary.rewritten.items()):
        print(f"  edited {f} ({n})")
    leftover = [f for f in scanned_files() if mods and f != f"{PKG}/__init__.py" and re.search(
        rf"(?<![\w.])({alternation(list(mods))})(?!\w)", protected(f, (ROOT / f).read_text("utf-8", "replace"))[0])]
    if leftover:
        summary.warnings.append(f"old module names still written in: {leftover}")
    if summary.unmapped:
        print(f"NOT MAPPED (flat top-level modules, add them to MOVES or KEEP_AT_ROOT): {summary.unmapped}")
    for w in summary.warnings:
        print(f"warning: {w}")
    if args.no_verify:
        return 0 if not summary.unmapped else 1
    ok = verify(summary)
    return 0 if ok and not summary.unmapped else 1


if __name__ == "__main__":
    sys.exit(main())
