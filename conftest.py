"""Repository-level pytest configuration."""

collect_ignore = ["src/orchestrace/__main__.py"]
# ``--doctest-modules`` would import every ``conftest.py`` again as a module named ``conftest``;
# several directories have one, so collecting them clashes ("import file mismatch") whenever two
# test directories are named on the command line. They hold no doctests: pytest still loads them
# as conftests.
collect_ignore_glob = ["tests/*/conftest.py"]


# The framework capture modules import their framework at import time (an optional extra):
# without it, their doctests are not collected (the live tests skip with the reason).
import importlib.util as _util  # noqa: E402

collect_ignore += [f"src/orchestrace/frameworks/{name}.py"
                   for module, name in [("agents", "openai_agents"), ("langchain_core", "langgraph"), ("autogen", "ag2")]
                   if _util.find_spec(module) is None]
