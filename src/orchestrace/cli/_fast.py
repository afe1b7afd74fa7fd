"""A light argv reader for the plain invocations of the commands (start-up, issue 18).

typer coerces every parameter through a pydantic ``TypeAdapter``: importing pydantic and
building the adapters costs ~80 ms on every command run — more than the whole of
``orchestrace validate`` on a small file. :func:`parse` reads the *plain* forms of a
command line from the very same typer declarations (``typer.Argument`` / ``typer.Option``
defaults and the annotations) — long and short options, ``--opt=value``, repeated list
options, variadic arguments, ``--`` — and gives up (``None``) on everything else: ``--help``,
an unknown or malformed option, a missing argument, a value that is not plainly of its type,
a parameter with a callback, envvar, prompt, bounds or path checks. Then typer parses the
line itself, so every message about a bad command line is typer's own. Tests check that
whenever :func:`parse` answers, typer would pass the command exactly the same values.

>>> import typer
>>> from enum import Enum
>>> class Color(str, Enum):
...     red = "red"
>>> def paint(paths: list[str] = typer.Argument(...), color: Color = typer.Option(Color.red, "--color", "-c"),
...           dry: bool = typer.Option(False, "--dry")) -> None: ...
>>> got = parse(paint, ["a", "-c", "red", "b", "--dry"])
>>> got["paths"], got["color"] is Color.red, got["dry"]
(['a', 'b'], True, True)
>>> parse(paint, ["a", "--help"]) is None
True
"""

from __future__ import annotations

import errno
import functools
import re
import sys
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from types import NoneType, UnionType
from typing import Any

import typer
from typer.models import ArgumentInfo, OptionInfo

__all__ = ["parse", "run"]

#: ParameterInfo attributes that only change help, display or completion — not parsing.
_COSMETIC = frozenset({"param_decls", "default", "help", "metavar", "show_default", "show_choices",
                       "show_envvar", "rich_help_panel", "hidden", "autocompletion", "shell_complete"})
_PLAIN_OPTION = {k: v for k, v in vars(typer.Option()).items() if k not in _COSMETIC}
_PLAIN_ARGUMENT = {k: v for k, v in vars(typer.Argument()).items() if k not in _COSMETIC}
_INT = re.compile(r"-?[0-9]+\Z")
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_GIVE_UP = object()


class _Param:
    """One parameter of a command, as the light reader sees it."""

    def __init__(self, name: str, info: Any, annotation: Any) -> None:
        self.name = name
        self.info = info
        self.is_list = typing.get_origin(annotation) is list
        leaf = typing.get_args(annotation)[0] if self.is_list else annotation
        self.leaf = leaf
        self.default = None if info.default is ... else info.default
        self.required = info.default is ...


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, UnionType):
        args = [a for a in typing.get_args(annotation) if a is not NoneType]
        return args[0] if len(args) == 1 else _GIVE_UP
    return annotation


def _supported_leaf(leaf: Any) -> bool:
    if leaf in (str, int, float, bool, Path):
        return True
    return isinstance(leaf, type) and issubclass(leaf, Enum) and all(isinstance(e.value, str) for e in leaf)


@functools.lru_cache(maxsize=64)
def _spec(fn: Callable[..., Any]) -> tuple[list[_Param], dict[str, _Param], list[_Param]] | None:
    """(positional params, option name → param, all params), or None when not plain enough.

    Cached per command function: the CLI has about 40 commands, so 64 entries hold them all."""
    return _build_spec(fn)


def _build_spec(fn: Callable[..., Any]) -> tuple[list[_Param], dict[str, _Param], list[_Param]] | None:
    import inspect

    try:
        sig = inspect.signature(fn)  # a command may declare its signature (``__signature__``)
        hints = typing.get_type_hints(fn) if any(isinstance(p.annotation, str) for p in sig.parameters.values()) else {}
    except Exception:  # an annotation that does not resolve: leave it to typer
        return None
    positional: list[_Param] = []
    options: dict[str, _Param] = {}
    params: list[_Param] = []
    for name, p in sig.parameters.items():
        info = p.default
        plain = _PLAIN_ARGUMENT if isinstance(info, ArgumentInfo) else _PLAIN_OPTION
        if not isinstance(info, (ArgumentInfo, OptionInfo)) or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return None
        if any(getattr(info, k, v) != v for k, v in plain.items()):
            return None  # a callback, an envvar, bounds, path checks …: typer's job
        raw = p.annotation
        if raw is p.empty:
            return None
        annotation = _unwrap_optional(hints.get(name) if isinstance(raw, str) else raw)
        if annotation is _GIVE_UP:
            return None
        param = _Param(name, info, annotation)
        if not _supported_leaf(param.leaf) or (param.is_list and param.leaf is bool):
            return None
        if param.is_list and isinstance(info, OptionInfo) and info.default is not None:
            return None  # typer's handling of a non-empty list default is its own
        if param.leaf is bool and not isinstance(info.default, bool) or (
                param.leaf is bool and info.param_decls and info.default is not False):
            return None  # a flag that defaults to True or None: click's flag_value rules
        params.append(param)
        if isinstance(info, ArgumentInfo):
            if param.leaf is bool or (positional and positional[-1].is_list):
                return None  # bool arguments, or an argument after a variadic one
            positional.append(param)
            continue
        decls = info.param_decls or (f"--{name.replace('_', '-')}",)
        for decl in decls:
            if "/" in decl or not decl.startswith("-") or decl in ("--help", "--"):
                return None
            if not info.param_decls and param.leaf is bool:
                options[f"--no-{name.replace('_', '-')}"] = param  # typer's --x/--no-x pair
            options[decl] = param
    return positional, options, params


def _convert(param: _Param, text: str) -> Any:
    leaf = param.leaf
    if leaf is str:
        return text
    if leaf is Path:
        return Path(text) if text else _GIVE_UP
    if leaf is int:
        return int(text) if _INT.match(text) else _GIVE_UP
    if leaf is float:
        return float(text) if _FLOAT.match(text) else _GIVE_UP
    for member in leaf:  # a str Enum, matched by value exactly (typer is case-sensitive here)
        if member.value == text:
            return member
    return _GIVE_UP


def parse(fn: Callable[..., Any], argv: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call ``fn`` with for ``argv``, or None (let typer read it).

    ``fn`` is a command function declared with ``typer.Argument`` / ``typer.Option``
    defaults; ``argv`` is what follows the command name.
    """
    spec = _spec(fn)
    if spec is None:
        return None
    positional, options, params = spec
    values: dict[str, Any] = {}
    given: set[str] = set()
    free: list[str] = []
    tokens = list(argv)
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        k += 1
        if tok == "--":
            free.extend(tokens[k:])
            break
        if not tok.startswith("-") or tok == "-":
            if tok == "-":
                return None
            free.append(tok)
            continue
        name, eq, attached = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        param = options.get(name)
        if param is None:
            return None  # --help, an unknown option, -abc bundles: typer's job
        if param.leaf is bool:
            if eq:
                return None
            values[param.name] = not name.startswith("--no-") or name in (param.info.param_decls or ())
            given.add(param.name)
            continue
        if eq:
            text = attached
        elif k < len(tokens):
            text = tokens[k]
            k += 1
            if text.startswith("-") and text in options or text == "--help":
                return None
        else:
            return None  # an option without its value
        got = _convert(param, text)
        if got is _GIVE_UP:
            return None
        if param.is_list:
            values.setdefault(param.name, []).append(got)
        else:
            values[param.name] = got
        given.add(param.name)
    if not _positional(positional, free, values):
        return None
    for param in params:
        if param.name not in values:
            if param.required:
                return None
            values[param.name] = () if param.is_list else param.default  # typer: () for an absent list
    return values


def _positional(positional: list[_Param], free: list[str], values: dict[str, Any]) -> bool:
    """Fill ``values`` with the positional arguments, in order (a list argument takes all that is
    left); False when typer must read the line (a value it converts differently, too few or too many)."""
    for param in positional:
        if param.is_list:
            got_list = [_convert(param, x) for x in free]
            free = []
            if any(x is _GIVE_UP for x in got_list) or (param.required and not got_list):
                return False
            values[param.name] = got_list if got_list else param.default
            continue
        if not free:
            if param.required:
                return False
            values[param.name] = param.default
            continue
        got = _convert(param, free.pop(0))
        if got is _GIVE_UP:
            return False
        values[param.name] = got
    return not free  # more arguments than the command takes: typer's message


def run(app: typer.Typer, argv: Sequence[str]) -> int | None:
    """Run a plain command line without typer's parser; its exit code, or None (use typer).

    The command is the registered (guarded) callback of one of ``app``'s own commands;
    exits, aborts and click errors raised inside it end the process as typer would end it.
    """
    if not argv or argv[0].startswith("-"):
        return None
    found = [c for c in app.registered_commands
             if (c.name or (c.callback.__name__.replace("_", "-") if c.callback else None)) == argv[0]]
    if len(found) != 1 or found[0].callback is None:
        return None
    callback = found[0].callback
    target = getattr(callback, "__wrapped__", callback)  # the guard keeps the declared signature
    kwargs = parse(target, argv[1:])
    if kwargs is None:
        return None
    root = app.registered_callback.callback if app.registered_callback else None
    root_kwargs = _root_defaults(root)
    if root_kwargs is None:
        return None
    from ._app import _CLICK_ERROR, stdout_to_devnull

    try:
        if root is not None:
            root(**root_kwargs)
        callback(**kwargs)
    # the endings of typer's standalone mode (typer.core._main), one for one
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except KeyboardInterrupt:
        return 130
    except (typer.Abort, EOFError) as exc:
        if isinstance(exc, EOFError):
            print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        return 1
    except _CLICK_ERROR as exc:
        exc.show()  # type: ignore[attr-defined]
        return int(exc.exit_code)  # type: ignore[attr-defined]
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        stdout_to_devnull()
        return 1  # the reader of stdout went away
    return 0


def _root_defaults(root: Callable[..., Any] | None) -> dict[str, Any] | None:
    """The group callback's arguments when no root option is given, or None.

    Only eager boolean flags that default to False (``--version``) may carry a callback:
    click calls it with False, which does nothing.
    """
    if root is None:
        return {}
    import inspect

    out = {}
    for name, p in inspect.signature(root).parameters.items():
        info = p.default
        if not isinstance(info, OptionInfo):
            return None
        if info.callback is not None and not (info.is_eager and info.default is False):
            return None
        out[name] = info.default
    return out
