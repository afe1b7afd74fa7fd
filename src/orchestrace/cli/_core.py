"""Core commands: synth (validate, convert, inspect, schema are added by the validator work)."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import app, console, fail


@app.command()
def synth(
    out: Path = typer.Option(..., "-o", "--out", help="Output file (.json native, .jsonl stream)."),
    events: int = typer.Option(1000, "--events", "-n", help="Number of events (exact)."),
    agents: int = typer.Option(10, "--agents", "-k", help="Number of sub-agents the orchestrator spawns."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same trace)."),
) -> None:
    """Write a realistic synthetic trace (orchestrator, K workers, tools, messages, stop)."""
    from ..errors import ConfigError
    from ..io import dump
    from ..synth import synth as make

    try:
        tr = make(events=events, agents=agents, seed=seed)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    try:
        dump(tr, out)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"wrote {out}: {len(tr.events)} events, {len(tr.edges)} edges, {len(tr.agents)} agents")
