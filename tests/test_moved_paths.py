"""Modules that moved to the folder of their layer keep their old public dotted paths.

``orchestrace._MOVED`` (written by ``tools/relayout.py``) maps each old path to the new home;
``import orchestrace.<old>`` must give the very module object of the new home, with the new
home's name and spec, so pickles, ``isinstance`` checks and monkeypatches agree across both names.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import orchestrace
from orchestrace.errors import MissingExtraError


@pytest.mark.parametrize("old", sorted(orchestrace._MOVED))
def test_an_old_path_imports_the_module_at_its_new_home(old: str) -> None:
    new = orchestrace._MOVED[old]
    try:
        moved = importlib.import_module(new)
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    assert importlib.import_module(old) is moved
    assert moved.__name__ == new and moved.__spec__ is not None and moved.__spec__.name == new
    parent, _, leaf = old.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is moved  # ``orchestrace.<old>`` as an attribute too


def test_old_paths_work_in_a_fresh_interpreter_with_from_imports() -> None:
    olds = [o for o in sorted(orchestrace._MOVED) if o.count(".") == 1]  # core-only modules: no extras needed
    code = "\n".join(f"import {o} as m{i}; assert m{i}.__name__ == {orchestrace._MOVED[o]!r}"
                     for i, o in enumerate(olds))
    r = subprocess.run([sys.executable, "-c", code or "pass"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_an_unknown_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("orchestrace.no_such_module")
