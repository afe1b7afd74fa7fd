"""Repository-level pytest configuration."""

import sys

import orchestrace._validate

collect_ignore = ["src/orchestrace/__main__.py"]
# ``--doctest-modules`` would import every ``conftest.py`` again as a module named ``conftest``;
# several directories have one, so collecting them clashes ("import file mismatch") whenever two
# test directories are named on the command line. They hold no doctests: pytest still loads them
# as conftests.
collect_ignore_glob = ["tests/*/conftest.py"]

# Transitional: ``orchestrace.validate`` is the function (the module is ``orchestrace._validate``
# since issue 19). tests/env still say ``from orchestrace.validate import validate``; this alias
# keeps them running until they import ``from orchestrace import validate``. Delete it then.
sys.modules.setdefault("orchestrace.validate", orchestrace._validate)
