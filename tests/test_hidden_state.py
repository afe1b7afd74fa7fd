"""No hidden mutable state at module level (issue 35, part 7).

A module-level dict, list or set that the module fills as it runs is a cache or a registry
nobody sees: unbounded, shared by every caller, kept across tests. Caches are
``functools.lru_cache`` with a documented ``maxsize``; ids come from the object that issues
them (the recorder, a transport), never from a module-level ``itertools.count``. This test
reads every module of ``src/orchestrace`` and names each module-level container that is
mutated (``NAME[k] = …``, ``NAME.append/update/setdefault/…``, ``global NAME``) and each
module-level counter.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "orchestrace"

#: Module-level state that is there on purpose, with the reason (each entry is a decision).
ALLOWED = {
    ("cli/_app.py", "_KEPT"): "holds at most one object until os._exit (cli._app.keep): bounded to 1",
    ("collection/_sandbox.py", "_workers"): "the grader worker processes, keyed by grader and import path: "
                                            "bounded to _MAX_WORKERS (least recently used killed), locked, "
                                            "all killed at exit",
}
_MUTATORS = {"append", "extend", "update", "setdefault", "pop", "popitem", "clear", "add", "insert", "remove",
             "discard", "appendleft"}
_CONTAINERS = {"dict", "list", "set", "defaultdict", "Counter", "deque", "OrderedDict"}


def _module_containers(tree: ast.Module) -> dict[str, int]:
    names: dict[str, int] = {}
    for n in tree.body:
        target, value = None, None
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            target, value = n.targets[0].id, n.value
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            target, value = n.target.id, n.value
        if target is None or value is None or target == "__all__":
            continue
        call = value.func if isinstance(value, ast.Call) else None
        called = getattr(call, "id", None) or getattr(call, "attr", None)
        # a container, or itertools.count(): a process-wide id counter
        if isinstance(value, (ast.Dict, ast.List, ast.Set)) or called in _CONTAINERS or called == "count":
            names[target] = n.lineno
    return names


def hidden_state(source: str) -> list[tuple[str, int]]:
    """(name, line) of each module-level container the module mutates, and each module-level counter.

    >>> hidden_state("CACHE = {}\\ndef f(k):\\n    CACHE[k] = 1\\n")
    [('CACHE', 3)]
    >>> hidden_state("TABLE = {'a': 1}\\ndef f(k):\\n    return TABLE[k]\\n")
    []
    """
    tree = ast.parse(source)
    names = _module_containers(tree)
    found: set[tuple[str, int]] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id in names and n.func.attr in _MUTATORS:
            found.add((n.func.value.id, n.lineno))
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                    found.add((t.value.id, n.lineno))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "next" and n.args \
                and isinstance(n.args[0], ast.Name) and n.args[0].id in names:
            found.add((n.args[0].id, n.lineno))
        elif isinstance(n, ast.Global):
            found.update((g, n.lineno) for g in n.names)
    return sorted(found)


def test_no_hidden_module_state() -> None:
    bad = []
    for f in sorted(SRC.rglob("*.py")):
        rel = f.relative_to(SRC).as_posix()
        for name, line in hidden_state(f.read_text(encoding="utf-8")):
            if (rel, name) not in ALLOWED:
                bad.append(f"{rel}:{line} {name}")
    assert not bad, ("module-level state mutated at run time (make it a bounded functools.lru_cache with a documented "
                     f"size, or state of the object that needs it): {bad}")


def test_the_check_sees_a_counter_and_a_global() -> None:
    src = "import itertools\n_IDS = itertools.count()\nN = 0\ndef f():\n    global N\n    N += 1\n    return next(_IDS)\n"
    assert {name for name, _ in hidden_state(src)} == {"_IDS", "N"}
