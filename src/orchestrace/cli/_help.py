"""``--help`` without typer's parser (start-up, issue 43).

``orchestrace CMD --help`` went through click's full parse: typer coerces the help flag
through a pydantic ``TypeAdapter`` (importing pydantic, ~60–130 ms) and builds the click
commands of all ~30 commands (~30–80 ms) before it prints the help of one. :func:`run`
answers the plain help requests — command names followed by ``--help`` or ``-h`` — by building
only the click command asked for, from the very same typer declarations, and printing what
click's own help option prints (``ctx.get_help()``, same program name, same context
settings, the group callback called first as click calls it). Anything else (an option
before ``--help``, an unknown command, a command line that is not a help request) is left to
typer. A test checks that the text is typer's own, byte for byte, for every command.

>>> import typer
>>> demo = typer.Typer(add_completion=False, rich_markup_mode=None)
>>> @demo.command()
... def hello(name: str = typer.Argument(..., help="Who.")) -> None:
...     "Say hello."
>>> @demo.command()
... def bye() -> None:
...     "Say bye."
>>> print(help_text(demo, ["hello", "--help"], "prog"))
Usage: prog hello [OPTIONS] {name}
<BLANKLINE>
  Say hello.
<BLANKLINE>
Arguments:
  name <str>  Who.  [required]
<BLANKLINE>
Options:
  --help  Show this message and exit.
>>> help_text(demo, ["hello", "x", "--help"], "prog") is None  # not a plain help request
True
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import typer

__all__ = ["help_text", "run"]


def _name_of_command(info: Any) -> str | None:
    if info.name:
        return str(info.name)
    cb = info.callback
    return cb.__name__.lower().replace("_", "-") if cb is not None else None


def _name_of_group(info: Any) -> str | None:
    if info.name:
        return str(info.name)
    inner = info.typer_instance.info.name if info.typer_instance is not None else None
    return str(inner) if inner else None


def _pruned(app: typer.Typer, names: Sequence[str]) -> typer.Typer | None:
    """A shallow copy of ``app`` holding only the branch that ``names`` walk down (or None); a group
    at the end of the walk is :func:`_listing_only`."""
    if not names:
        return _listing_only(app)
    name, rest = names[0], names[1:]
    cmds = [c for c in app.registered_commands if _name_of_command(c) == name]
    groups = [g for g in app.registered_groups if _name_of_group(g) == name and g.typer_instance is not None]
    if len(cmds) + len(groups) != 1 or (cmds and rest):
        return None
    out = copy.copy(app)
    out.registered_commands = cmds
    out.registered_groups = []
    if groups:
        group_app = groups[0].typer_instance
        if group_app is None or group_app.registered_callback is not None:
            return None  # click would call that group's callback too: typer's job
        inner = _pruned(group_app, rest)
        if inner is None:
            return None
        out.registered_groups = [copy.copy(groups[0])]
        out.registered_groups[0].typer_instance = inner
    return out


def _listing_only(app: typer.Typer) -> typer.Typer:
    """A copy of ``app`` whose commands take no parameters (same names, docs and flags): a group's
    help lists each command by name and short help only, so their parameters need not be built."""
    out = copy.copy(app)
    out.registered_commands = []
    for info in app.registered_commands:
        light = copy.copy(info)
        light.name, light.callback = _name_of_command(info), _stub(info.callback)
        out.registered_commands.append(light)
    out.registered_groups = []
    for group in app.registered_groups:
        light_group = copy.copy(group)
        if group.typer_instance is not None:
            light_group.typer_instance = _listing_only(group.typer_instance)
        out.registered_groups.append(light_group)
    return out


def _stub(callback: Any) -> Any:
    def stub() -> None:  # pragma: no cover - never called: only listed
        return None

    stub.__doc__ = getattr(callback, "__doc__", None)
    return stub if callback is not None else None


def _help_names(app: typer.Typer) -> tuple[str, ...]:
    settings = app.info.context_settings or {}
    return tuple(settings.get("help_option_names", ("--help",)))


def help_text(app: typer.Typer, argv: Sequence[str], prog_name: str) -> str | None:
    """The text ``prog_name ARGV`` prints for a plain help request, or None (not one: typer's job)."""
    if not argv or argv[-1] not in _help_names(app) or any(a.startswith("-") for a in argv[:-1]):
        return None
    import typer.main

    # without a group callback, typer turns an app of one command into that command: prune only with one
    pruned = _pruned(app, argv[:-1]) if app.registered_callback is not None else app
    if pruned is None:
        return None
    cmd: Any = typer.main.get_command(pruned)
    ctx = cmd.context_class(cmd, info_name=prog_name, **(cmd.context_settings or {}))
    for name in argv[:-1]:
        sub = getattr(cmd, "commands", {}).get(name)
        if sub is None:
            return None
        cmd = sub
        ctx = cmd.context_class(cmd, info_name=name, parent=ctx, **(cmd.context_settings or {}))
    return str(ctx.get_help())


def run(app: typer.Typer, argv: Sequence[str]) -> int | None:
    """Print the help of a plain help request and return 0, or None (let typer read the line).

    The group callback runs first with its defaults, as click runs it before a command's help.
    """
    from typer._click.utils import _detect_program_name

    from ._fast import _root_defaults

    if not argv or argv[-1] not in _help_names(app):
        return None
    root = app.registered_callback.callback if app.registered_callback else None
    root_kwargs = _root_defaults(root)
    if root_kwargs is None:
        return None
    text = help_text(app, argv, _detect_program_name())
    if text is None:
        return None
    if root is not None and len(argv) > 1:  # click calls the group callback only on the way to a command
        root(**root_kwargs)
    typer.echo(text)
    return 0
