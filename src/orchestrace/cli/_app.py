"""The shared typer application and CLI helpers (exit codes, error printing, the no-traceback guard).

Every message about bad input has one shape, on stderr, with markup off for the user's
text (so ``pip install 'orchestrace[env]'`` prints whole)::

    error: <where>: <what is wrong>[; how to fix it]
      <severity> <code> at <file:line or JSON path>: <message> (hint: …)

Exit codes: 0 ok · 1 the input is invalid · 2 usage or I/O (a missing file, a bad
option, a missing extra, an unwritable output). :func:`guard` wraps every command so
that nothing escapes as a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from .._problems import Problem

app = typer.Typer(
    name="orchestrace",
    help="Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # `orchestrace -h`, `orchestrace eval -h`
    # Plain help (click's formatter): flags without a ``<bool>`` metavar, choice lists that
    # wrap between words, and no rich/markdown/pygments import just to print --help.
    rich_markup_mode=None,
)

#: Exit codes used by every command.
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

#: Options shared by the dataset commands (validate, metrics, reward, credit), declared once.
RAY_ADDRESS_OPTION: Any = typer.Option(None, "--ray-address", metavar="ADDR", help="Join the Ray cluster at ADDR "
                                       "(host:port, ray://host:port or auto) instead of starting a local one.")


def ray_option(what: str) -> Any:
    """The ``--ray N`` option of every command that can run on Ray, declared once (``what`` it runs there)."""
    return typer.Option(None, "--ray", metavar="N", help=f"{what} on N Ray workers (needs orchestrace[ray]); "
                        "the results are those of one process.")


PARTITION_TRACES_OPTION: Any = typer.Option(1000, "--partition-traces", help="Traces per partition (--ray, --out).")
RAY_MIN_WORK_OPTION: Any = typer.Option(None, "--ray-min-work", metavar="SECONDS", help="Use Ray only above this "
                                        "much estimated one-process work (default: the break-even; 0: always).")
#: ``-r``: the one rule for folders (:mod:`orchestrace.core._paths`), on every command that takes trace paths.
RECURSIVE_OPTION: Any = typer.Option(False, "--recursive", "-r", help="Also read the .json/.jsonl files in "
                                     "subfolders of a folder (without it: the files directly in it).")
#: ``--json`` of every analysing command.
JSON_OPTION: Any = typer.Option(False, "--json", help="One JSON object per line on stdout (machine-readable).")
#: ``--quiet`` of the commands with progress bars.
QUIET_OPTION: Any = typer.Option(False, "--quiet", "-q", help="No progress bars.")
#: ``--ray`` and ``--out`` of the commands whose PATH may be a dataset folder (reward, credit).
DATASET_RAY_OPTION: Any = ray_option("PATH is a dataset folder: compute its partitions")
DATASET_OUT_OPTION: Any = typer.Option(None, "--out", "-o", help="PATH is a dataset folder: also write per-trace "
                                       "results as partitioned Parquet (DIR/part-00000.parquet …).")

#: True when this process ends with :func:`os._exit` right after its command (``cli.main``
#: does that for the read-only commands it runs itself): then :func:`keep` holds on to big
#: objects rather than let them be freed one by one just before the exit.
QUICK_EXIT = False
_KEPT: list[Any] = []


def keep(obj: Any) -> None:
    """Hold ``obj`` until the process exits (only the latest one: memory stays bounded)."""
    if QUICK_EXIT:
        _KEPT[:] = [obj]


class _LazyConsole:
    """A :class:`rich.console.Console` built on first use (rich costs start-up time that
    ``--help`` and ``--version`` do not need).

    Written to a pipe or a file, text is never wrapped (``soft_wrap``): a message with a
    long path stays one line that ``grep`` and a test can find whole. Tables keep their width.
    """

    def __init__(self, **kw: Any) -> None:
        self._kw = kw
        self._console: Console | None = None

    def _get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kw)
            if not self._console.is_terminal:
                self._console.soft_wrap = True
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __enter__(self) -> Console:  # ``with console:`` buffers output, as on a Console
        return self._get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._get().__exit__(*exc)


console: Console = _LazyConsole(highlight=False)  # type: ignore[assignment]
err_console: Console = _LazyConsole(stderr=True, highlight=False)  # type: ignore[assignment]


def escape(text: str) -> str:
    """:func:`rich.markup.escape`, imported on first use."""
    from rich.markup import escape as _escape

    return _escape(text)


def plain_help(typer_app: typer.Typer) -> None:
    """Give a command group, and the groups mounted on it, the plain help of :data:`app`."""
    typer_app.rich_markup_mode = None
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            plain_help(group.typer_instance)


def fail(message: str, *, problems: Iterable[Problem] = (), code: int = EXIT_USAGE) -> typer.Exit:
    """Print ``error: message`` (and its located problems) to stderr; return an Exit to raise.

    The message is printed as plain text: square brackets in it are kept, never read as markup.
    """
    error(message, problems=problems)
    return typer.Exit(code)


def error(message: str, *, problems: Iterable[Problem] = (), limit: int = 20) -> None:
    """Print ``error: message`` and up to ``limit`` located problems (the rest are counted)."""
    from rich.text import Text

    from .._limits import printable, scrub

    # never a key, a bearer token or a terminal control sequence from the input in what is printed
    message = printable(scrub(str(message)), lines=True)
    err_console.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)
    problems = list(problems)
    for p in problems[:limit]:
        err_console.print(f"  {printable(scrub(str(p)), lines=True)}", markup=False, soft_wrap=True)
    if len(problems) > limit:
        err_console.print(f"  … and {len(problems) - limit} more problem(s)", markup=False)


def note(message: str, *, kind: str = "note") -> None:
    """Print ``note: message`` (or ``warning: …``) to stderr, markup off for the message."""
    from rich.text import Text

    from .._limits import printable, scrub

    err_console.print(Text.assemble((f"{kind}:", "yellow"), " ", printable(scrub(str(message)), lines=True)),
                      soft_wrap=True)


#: Click's own errors (typer vendors click: its ClickException is found through BadParameter).
_CLICK_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

#: The extra that provides each optional top-level module (pyproject.toml).
_EXTRA_OF = {"gymnasium": "env", "torch": "learn", "pyarrow": "parquet", "opentelemetry": "otel",
             "matplotlib": "plot", "httpx": "llm", "xllamacpp": "llm", "ray": "ray"}


def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command: an OrchestraceError, an OSError or any bug becomes one ``error:`` line, never a traceback.

    ConfigError / MissingExtraError / OSError → exit 2; a TraceError → 1 (2 when the
    problem is I/O); anything else is reported as an internal error (exit 2).
    """
    from ..errors import ConfigError, MissingExtraError, OrchestraceError, TraceError

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, _CLICK_ERROR, KeyboardInterrupt, SystemExit):
            raise
        except TraceError as exc:
            io = any(p.code.startswith("io.") for p in exc.problems)
            raise fail(str(exc), problems=exc.problems, code=EXIT_USAGE if io else EXIT_INVALID) from None
        except (ConfigError, MissingExtraError) as exc:
            raise fail(str(exc), code=EXIT_USAGE) from None
        except ImportError as exc:  # an optional stack imported without errors.require
            top = (exc.name or "").split(".")[0]
            extra = _EXTRA_OF.get(top)
            if extra is None:
                raise fail(f"internal error: {type(exc).__name__}: {exc} — this is a bug in orchestrace; "
                           "please report it with the command", code=EXIT_USAGE) from None
            raise fail(f"{top} is needed for this; install it with: pip install 'orchestrace[{extra}]'",
                       code=EXIT_USAGE) from None
        except OrchestraceError as exc:
            raise fail(str(exc), code=EXIT_INVALID) from None
        except RecursionError:
            raise fail("the input is nested too deeply to process", code=EXIT_INVALID) from None
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            raise fail(f"{where}{exc.strerror or exc}", code=EXIT_USAGE) from None
        except Exception as exc:  # the CLI's contract: never a traceback
            raise fail(f"internal error: {type(exc).__name__}: {str(exc)[:500]} — this is a bug in orchestrace; "
                       "please report it with the command and the input", code=EXIT_USAGE) from None

    return run


def guard_all(typer_app: typer.Typer) -> None:
    """Apply :func:`guard` to every command and sub-group callback of ``typer_app`` (once)."""
    for info in typer_app.registered_commands:
        if info.callback is not None and not getattr(info.callback, "_guarded", False):
            info.callback = guard(info.callback)
            info.callback._guarded = True  # type: ignore[attr-defined]
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            guard_all(group.typer_instance)


def stdout_to_devnull() -> None:
    """Point stdout at /dev/null after a broken pipe, so that the interpreter's last flush
    cannot fail again (what rich and click do before they exit 1)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@contextlib.contextmanager
def progress(total: int, label: str, *, enabled: bool = True, terminal_only: bool = True) -> Iterator[Any]:
    """The one progress display of the CLI: :func:`orchestrace.trainers.progress.progress_bar`, transient.

    Yields ``advance(n=1)``. ``terminal_only`` (the trace commands): nothing unless stderr is a
    terminal, so piped output stays exactly the command's; else a piped run gets the plain-text
    progress lines of ``progress_bar``.
    """
    if not enabled or (terminal_only and not err_console.is_terminal):
        yield lambda n=1, **kw: None
        return
    from ..trainers.progress import progress_bar

    with progress_bar(total, label, transient=True) as advance:
        yield advance


def is_tty() -> bool:
    return sys.stderr.isatty()


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"orchestrace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces."""
