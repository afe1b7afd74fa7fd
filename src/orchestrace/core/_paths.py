"""Which trace files a command line names: the one rule for files, folders, globs and datasets.

Every command that reads traces from paths (``validate``, ``metrics``, ``report`` …) expands
its arguments with :func:`expand_paths`, so a folder means the same thing everywhere:

* a file is itself; a quoted glob (``'runs/*.jsonl'``, ``**`` allowed) is the files it matches;
* a columnar dataset folder (one holding ``traces.parquet``) is one entry, read as a dataset;
* any other folder is the ``.json`` / ``.jsonl`` files (and dataset folders) directly in it,
  and with ``recursive`` (``-r``) every one below it. Files left in
  subfolders without ``-r`` are counted in :attr:`Expansion.skipped`, so a command can say so.

An argument that names no file is kept with the reason (:attr:`Target.problem`): a command
reports it in its own way (a validation report, an error line) instead of dropping it.

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); os.makedirs(os.path.join(d, "sub"))
>>> for name in ("a.json", "notes.txt", os.path.join("sub", "b.jsonl")):
...     _ = open(os.path.join(d, name), "w").write("{}")
>>> got = expand_paths([d])
>>> [os.path.basename(t.path) for t in got.targets], got.skipped
(['a.json'], 1)
>>> [os.path.basename(t.path) for t in expand_paths([d], recursive=True).targets]
['a.json', 'b.jsonl']
>>> expand_paths([os.path.join(d, "nope.json")]).targets[0].problem
'no such file or folder'
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

__all__ = ["TRACE_SUFFIXES", "Expansion", "Target", "expand_paths"]

#: The suffixes of trace files a folder is searched for.
TRACE_SUFFIXES = (".json", ".jsonl")


class Target(NamedTuple):
    """One entry to read: a trace file or a dataset folder, or an argument naming nothing."""

    path: str
    #: why the argument names no file (``None`` for a file or a dataset folder)
    problem: str | None = None


class Expansion(NamedTuple):
    """The entries of a command line and how many trace files in subfolders were left out."""

    targets: list[Target]
    #: trace files below a folder argument that were not taken because ``recursive`` was off
    skipped: int = 0


def _is_dataset(p: Path) -> bool:
    return p.is_dir() and (p / "traces.parquet").is_file()


def _folder(p: Path, recursive: bool, datasets: bool) -> tuple[list[Path], int]:
    if not recursive:
        top = [q for q in p.iterdir() if q.suffix in TRACE_SUFFIXES and q.is_file()]
        if datasets:  # a dataset folder directly in it is an entry, like a file
            top += [q for q in p.iterdir() if _is_dataset(q)]
        top.sort()
        skipped = sum(1 for q in p.rglob("*") if q.suffix in TRACE_SUFFIXES and q.parent != p and q.is_file())
        return top, skipped
    found = [q for q in p.rglob("*") if q.suffix in TRACE_SUFFIXES and q.is_file()]
    if datasets:
        found += [q.parent for q in p.rglob("traces.parquet") if _is_dataset(q.parent)]
    return sorted(found), 0


def expand_paths(args: Iterable[str | os.PathLike[str]], *, recursive: bool = False,
                 datasets: bool = True) -> Expansion:
    """Expand files, folders, quoted globs and dataset folders into entries, in argument order.

    ``datasets=False`` treats a dataset folder as a plain folder (for commands that read only
    JSON files). Duplicates are dropped; an argument that names nothing stays, with its problem.
    """
    out: dict[str, Target] = {}
    skipped = 0
    for raw in args:
        arg = os.fspath(raw)
        p = Path(arg)
        if datasets and _is_dataset(p):
            out.setdefault(arg, Target(arg))
        elif p.is_dir():
            found, n = _folder(p, recursive, datasets)
            skipped += n
            if not found:
                why = "folder holds no .json or .jsonl files"
                why += f" at its top level ({n} below it: pass -r to read them)" if n else ""
                out.setdefault(arg, Target(arg, why))
            for q in found:
                out.setdefault(str(q), Target(str(q)))
        elif p.exists():
            out.setdefault(arg, Target(arg))
        elif any(c in arg for c in "*?["):
            hits = sorted(h for h in glob.glob(arg, recursive=True) if os.path.isfile(h))
            if not hits:
                out.setdefault(arg, Target(arg, "no file matches this glob"))
            for h in hits:
                out.setdefault(h, Target(h))
        else:
            out.setdefault(arg, Target(arg, "no such file or folder"))
    return Expansion(list(out.values()), skipped)
