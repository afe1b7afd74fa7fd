"""The package's layer order and its absence of import circles, checked statically.

Every ``import`` in ``src/orchestrace`` counts — module-level, inside functions (lazy) and
under ``TYPE_CHECKING`` — because a lazy import still ties two modules together. The layers are
the folders of ``src/orchestrace`` (``docs/architecture.md`` draws this table), bottom to top; a module may
import from its own layer and the layers below it, never above; folders on one floor may import each other
one way, never in a circle::

    cli  >  integrations (exporters / frameworks / report)  >  llm / collection  >  evaluation / learn / offline
         >  trainers  >  policies  >  env / logged / scale  >  credit  >  blame  >  rewards
         >  trace (core / importers / papers / analysis)  >  base (vocab / errors / _problems / _limits / _stats / _vote / evidence)

``orchestrace/__init__.py`` is the facade above all of them; ``__main__`` runs the CLI.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "orchestrace"

#: Top-level units of the package (a module or a subpackage) by layer, lowest first.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"vocab", "errors", "_problems", "_limits", "_stats", "_vote", "evidence"}),
    ("trace", {"core", "importers", "papers", "analysis"}),
    ("rewards", {"rewards"}),
    ("blame", {"blame"}),
    ("credit", {"credit"}),
    ("worlds", {"env", "logged", "scale"}),
    ("policies", {"policies"}),
    ("trainers", {"trainers"}),
    ("evaluation", {"evaluation", "learn", "offline"}),
    ("llm", {"llm", "collection"}),
    ("integrations", {"exporters", "frameworks", "report"}),
    ("cli", {"cli", "__main__"}),
]
#: Packages whose private modules every layer may import: the trace core (``orchestrace.core._x``
#: is what ``orchestrace._x`` was before the folders showed the layers).
OPEN_PACKAGES = {"core"}
RANK = {unit: k for k, (_, units) in enumerate(LAYERS) for unit in units}

#: Known import circles between modules, to be broken (issue 19 item 3). Each entry is one
#: circle as a sorted tuple of module names. All are in env/ and learn/, owned by the
#: env-learner contract rewrite (issue 19 items 1-2): the policy base moves to its own
#: module, so baselines and the oracle stop importing each other; the named layouts and the
#: config stop importing each other; learn's config and batched env likewise.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()  # none left; a new circle must be broken, not listed


def _modules() -> dict[str, Path]:
    out = {}
    for f in SRC.rglob("*.py"):
        parts = f.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports (anywhere in the file)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def resolve(target: str) -> None:
        while target and target not in known:  # an attribute: the module that defines it
            target = target.rpartition(".")[0]
        if target.startswith("orchestrace"):
            found.add(target)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                resolve(f"{module}.{alias.name}")
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "orchestrace"


def test_every_unit_has_a_layer() -> None:
    units = {_unit(m) for m in _modules()} - {"orchestrace"}
    assert units - set(RANK) == set(), "place new modules in LAYERS"
    assert set(RANK) - units == set(), "LAYERS names modules that no longer exist"


def test_no_module_imports_from_a_higher_layer() -> None:
    bad = []
    for src, targets in sorted(_graph().items()):
        if src == "orchestrace":
            continue  # the facade re-exports every layer
        for dst in sorted(targets):
            if dst == "orchestrace":
                if _unit(src) not in ("report", "cli"):  # they read __version__
                    bad.append(f"{src} imports the package facade")
                continue
            a, b = RANK[_unit(src)], RANK[_unit(dst)]
            if b > a:
                bad.append(f"{src} ({LAYERS[a][0]}) imports {dst} ({LAYERS[b][0]})")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def _circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(tuple(sorted(comp)))
    return out


def test_no_import_circles_between_modules() -> None:
    # A package's __init__ importing its own submodules (to re-export them) is not a circle:
    # drop submodule → own-package edges before looking for cycles.
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in _graph().items()}
    circles = set(_circles(graph))
    assert circles - KNOWN_CIRCLES == set(), f"import circles: {sorted(circles - KNOWN_CIRCLES)}"
    assert KNOWN_CIRCLES - circles == set(), "a known circle is gone: remove it from KNOWN_CIRCLES"


def test_the_checker_sees_lazy_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from ..credit import assign\n    import orchestrace.env.world\n")
    assert _imports("orchestrace.rewards.m", f, {"orchestrace.credit", "orchestrace.env.world"}) == {
        "orchestrace.credit", "orchestrace.env.world"}
    graph: dict[str, set[str]] = defaultdict(set, {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert _circles(graph) == [("a", "b", "c")]


def _private_crossings() -> list[tuple[str, str]]:
    """(importer, imported) pairs where a module imports another subpackage's private module."""
    modules = _modules()
    bad = []
    for name, path in modules.items():
        parts = name.split(".")
        home = parts[1] if len(parts) > 2 or path.name == "__init__.py" and len(parts) > 1 else None
        for target in _imports(name, path, set(modules)):
            tparts = target.split(".")
            if len(tparts) < 3 or tparts[1] in OPEN_PACKAGES:
                continue  # orchestrace.x, orchestrace._x, orchestrace.core._x: the package core, open to every layer
            owner = tparts[1]
            if owner != home and any(p.startswith("_") and p != "__init__" for p in tparts[2:]):
                bad.append((name, target))
    return sorted(bad)


def test_no_module_imports_another_packages_private_modules() -> None:
    """cli must not reach into ``scale._cluster`` (issue 27): a package's private modules are its own;
    what others need is re-exported by the package (``orchestrace.scale``)."""
    assert _private_crossings() == []


def test_no_library_module_imports_the_cli() -> None:
    modules = _modules()
    bad = sorted((n, t) for n, p in modules.items() if not n.startswith(("orchestrace.cli", "orchestrace.__main__"))
                 for t in _imports(n, p, set(modules)) if t.startswith("orchestrace.cli"))
    assert bad == []


def test_no_circle_between_folders_on_one_floor() -> None:
    """Folders that share a floor (``env`` / ``logged`` / ``scale``; ``evaluation`` and the facades) may import
    each other, but never in a circle: the floor is a convenience, not a hiding place for an arrow back up."""
    folders: dict[str, set[str]] = defaultdict(set)
    for src, targets in _graph().items():
        a = _unit(src)
        folders[a] |= {_unit(t) for t in targets} - {a, "orchestrace"}
    assert _circles(folders) == []


def test_the_architecture_page_draws_these_floors() -> None:
    """``docs/architecture.md``'s floor table lists the folders of :data:`LAYERS`, floor by floor, bottom first."""
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc[doc.index("| floor | folders | holds |"):].split("\n\n", 1)[0].splitlines()[2:]
    drawn = [{n.strip(" `/").removesuffix(".py") for n in row.split("|")[2].split(", ")} for row in table]
    expected = [units - {"__main__"} for _, units in LAYERS]
    assert drawn == expected
