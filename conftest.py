"""Repository-level pytest configuration."""

collect_ignore = ["src/orchestrace/__main__.py"]
# ``--doctest-modules`` would import every ``conftest.py`` again as a module named ``conftest``;
# several directories have one, so collecting them clashes ("import file mismatch") whenever two
# test directories are named on the command line. They hold no doctests: pytest still loads them
# as conftests.
collect_ignore_glob = ["tests/*/conftest.py"]

