"""Modules that moved to the folder of their layer keep their old public dotted paths.

``orchestrace._MOVED`` (written by ``tools/relayout.py``) maps each old path to the new home;
``import orchestrace.<old>`` must give the very module object of the new home, with the new
home's name and spec, so pickles, ``isinstance`` checks and monkeypatches agree across both names.
Each old path warns (``DeprecationWarning``, pointed at the importing line) with the new path and
the release and date it is removed (``orchestrace._MOVED_REMOVAL``).
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
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to {new}; import {new} instead .*removed in "
                      r"orchestrace 0\.3, 2027-03-01"):
        assert importlib.import_module(old) is moved
    assert moved.__name__ == new and moved.__spec__ is not None and moved.__spec__.name == new
    parent, _, leaf = old.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is moved  # ``orchestrace.<old>`` as an attribute too


def test_old_paths_work_in_a_fresh_interpreter_with_from_imports() -> None:
    olds = [o for o in sorted(orchestrace._MOVED) if o.count(".") == 1]  # core-only modules: no extras needed
    code = "\n".join(f"import {o} as m{i}; assert m{i}.__name__ == {orchestrace._MOVED[o]!r}"
                     for i, o in enumerate(olds))
    r = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", code or "pass"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_warning_points_at_the_importing_line_and_names_the_new_home(tmp_path) -> None:
    old = sorted(o for o in orchestrace._MOVED if o.count(".") == 1)[0]
    script = tmp_path / "user_code.py"
    script.write_text(f"import sys\nimport {old}\n")
    r = subprocess.run([sys.executable, "-W", "default::DeprecationWarning", str(script)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert f"{script}:2: DeprecationWarning: {old} moved to {orchestrace._MOVED[old]}" in r.stderr
    assert orchestrace._MOVED_REMOVAL == ("0.3", "2027-03-01") and "removed in orchestrace 0.3" in r.stderr
    quiet = subprocess.run([sys.executable, "-c", f"import orchestrace.core.trace, {orchestrace._MOVED[old]}"],
                           capture_output=True, text=True)
    assert quiet.returncode == 0 and "DeprecationWarning" not in quiet.stderr  # the new paths are silent


def test_an_unknown_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("orchestrace.no_such_module")
