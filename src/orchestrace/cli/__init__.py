"""The ``orchestrace`` command line. Each command group lives in its own ``_*.py`` module."""

from __future__ import annotations

# The command modules below are imported one per line, in registration order (which is the
# order of ``orchestrace --help``); keep ruff's import sorter from merging and reordering them.
# ruff: noqa: I001

import os
import sys

from . import _app, _fast, _help
from ._app import app, guard_all, plain_help

# Each module registers its commands on ``app`` when imported (heavy imports stay inside
# the command functions, so ``orchestrace --help`` is fast).
from . import _core  # noqa: E402,F401  (validate, convert, inspect, schema, synth)
from ._corpus import corpus_app  # noqa: E402
from . import _metrics  # noqa: E402,F401  (metrics)
from . import _report  # noqa: E402,F401  (report)
from . import _credit  # noqa: E402,F401  (reward, credit)
from . import _blame  # noqa: E402,F401  (blame)
from . import _llm  # noqa: E402,F401  (serve-local, llm run)
from . import _env  # noqa: E402,F401  (env list, env run)
from . import _interop  # noqa: E402,F401  (import, export)
from . import _learn  # noqa: E402,F401  (train, eval, demo)
from . import _collect  # noqa: E402,F401  (collect run, collect fit-sim)
from . import _judge  # noqa: E402,F401  (blame-judge)
from . import _data  # noqa: E402,F401  (data path, data list)

app.add_typer(corpus_app, name="corpus")
plain_help(app)
guard_all(app)  # after every command module registered: no command lets a traceback out

__all__ = ["app", "main"]

#: Commands that only read their inputs and print (``metrics --write`` writes atomically, and
#: has closed its file before the command returns): their process may end with os._exit.
_QUICK_EXIT_COMMANDS = frozenset({"validate", "metrics"})


def main() -> None:
    """Console-script entry point."""
    try:
        # plain command lines skip typer's parser (and its pydantic import); the rest,
        # --help and every malformed line included, go to typer (see ._fast)
        argv = sys.argv[1:]
        _app.QUICK_EXIT = bool(argv) and argv[0] in _QUICK_EXIT_COMMANDS
        code = _help.run(app, argv)  # plain `CMD --help`: click's help text without its parser
        if code is None:
            code = _fast.run(app, argv)
        if code is None:
            _app.QUICK_EXIT = False
            app()
        elif _app.QUICK_EXIT:
            # read-only commands: nothing left to write but stdout/stderr; skip freeing the
            # traces and tearing the interpreter down (0.2 s for a 1M-event trace)
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BrokenPipeError:  # the reader went away: exit 1, as click and rich do
                _app.stdout_to_devnull()
                code = code or 1
            os._exit(code)
        else:
            sys.exit(code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
