"""``orchestrace train`` / ``eval`` / ``demo``: learn to orchestrate with an explicit learned stop.

The ``train`` options are generated from :class:`~orchestrace.learn.TrainConfig` (one option
per field, its help text from the field's metadata). Exit codes: 0 ok; 1 a checkpoint is
corrupted / mismatched or training diverged; 2 usage, config or I/O error.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Any, Optional

import typer

from ._app import EXIT_INVALID, EXIT_USAGE, app, console, fail

__all__: list[str] = []


def _errors() -> tuple[type[BaseException], ...]:
    from ..errors import CheckpointError, ConfigError, MissingExtraError, TrainingError

    return CheckpointError, ConfigError, MissingExtraError, TrainingError


def _fail_from(exc: BaseException) -> typer.Exit:
    from ..errors import CheckpointError, TrainingError

    code = EXIT_INVALID if isinstance(exc, (CheckpointError, TrainingError)) else EXIT_USAGE
    return fail(str(exc), code=code)


def _config_options() -> list[inspect.Parameter]:
    from ..learn.config import TrainConfig

    hints = typing.get_type_hints(TrainConfig)
    params = []
    for f in dataclasses.fields(TrainConfig):
        typ = hints[f.name]
        params.append(inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[typ],  # noqa: UP045 (runtime Optional for typer)
            default=typer.Option(None, f"--{f.name.replace('_', '-')}", show_default=False,
                                 help=f"{f.metadata['help']} (default: {f.default})"),
        ))
    return params


def _train(**kw: Any) -> None:
    """Train an orchestration policy (REINFORCE, GRPO or PPO) into a run directory.

    Every TrainConfig field is an option. With --resume the run's saved config is used and
    only --steps (the new total) and --checkpoint-every may change; training continues
    bit-exactly from the last checkpoint.
    """
    import json

    out: Path = kw.pop("out")
    resume: bool = kw.pop("resume")
    quiet: bool = kw.pop("quiet")
    given = {k: v for k, v in kw.items() if v is not None}
    try:
        from ..learn import train
        from ..learn.config import TrainConfig

        if resume:
            path = out / "config.json"
            if not path.is_file():
                raise fail(f"{out}: no config.json to resume from; run `orchestrace train --out {out}` first")
            try:
                saved = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise fail(f"{path}: unreadable ({exc})", code=EXIT_INVALID) from None
            cfg = TrainConfig.from_dict({**saved, **given})
        else:
            cfg = TrainConfig.from_dict(given)
        result = train(cfg, out, resume=resume, progress=not quiet)
    except _errors() as exc:
        raise _fail_from(exc) from None
    except OSError as exc:
        raise fail(f"cannot write the run to {out}: {exc.strerror or exc}") from None
    row = result.last_row
    console.print(f"trained {cfg.algo} on {cfg.env_id}: {result.updates} updates in {result.seconds:.1f} s; "
                  f"last return {row.get('charts/episodic_return', float('nan')):.3f}, "
                  f"success {row.get('charts/success', float('nan')):.3f}")
    console.print(f"run: {out} (checkpoint.pt, policy.pt, config.json, metrics.jsonl, metrics.csv)")


_train.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    _config_options() + [
        inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, annotation=Path,
                          default=typer.Option(..., "--out", "-o", help="Run directory (runs/NAME).")),
        inspect.Parameter("resume", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=typer.Option(False, "--resume", help="Continue the run in --out bit-exactly.")),
        inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=typer.Option(False, "--quiet", "-q", help="No progress bar.")),
    ]
)
app.command("train")(_train)


@app.command("eval")
def eval_cmd(
    run: Path = typer.Argument(..., metavar="RUN_OR_POLICY", help="A run directory or a policy.pt / checkpoint.pt file."),
    env: str = typer.Option("default", "--env", help="Environment: small | default | industrial, or a gymnasium id."),
    episodes: int = typer.Option(500, "--episodes", "-n", help="Held-out episodes per policy."),
    seeds: str = typer.Option("held-out", "--seeds", help="Seed set: held-out (never used in training)."),
    seed_offset: int = typer.Option(0, "--seed-offset", help="Start this far into the held-out seed range."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write results.json, episodes.npz and traces/ here."),  # noqa: UP045
    traces: int = typer.Option(20, "--traces", help="Episodes traced per key policy (wasted work, E2–E4)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Compare a learned policy with every baseline and the oracle on held-out seeds (95 % CIs)."""
    if seeds != "held-out":
        raise fail(f"--seeds {seeds!r} is not supported; use --seeds held-out (and --seed-offset to shift it)")
    if episodes < 2:
        raise fail(f"--episodes {episodes} is too small for confidence intervals; use 2 or more")
    try:
        from ..learn.demo import render_summary
        from ..learn.evaluate import evaluate

        report = evaluate(run, env=env, episodes=episodes, seed_offset=seed_offset, out=out,
                          sample_traces=max(0, traces), progress=not quiet)
    except _errors() as exc:
        raise _fail_from(exc) from None
    report.pop("_raw", None)
    text = render_summary(report)
    if out is not None:
        (out / "summary.md").write_text(text, encoding="utf-8")
        console.print(f"wrote {out / 'results.json'}, {out / 'summary.md'}, {out / 'traces'}/")
    console.print(text, markup=False, highlight=False)


@app.command("demo")
def demo_cmd(
    out: Path = typer.Option(Path("orchestrace-demo"), "--out", "-o", help="Results folder."),
    steps: int | None = typer.Option(None, "--steps", help="Training updates (default: TrainConfig's)."),  # noqa: UP045
    episodes: int = typer.Option(500, "--episodes", "-n", help="Held-out evaluation episodes per policy (≥ 500 for the evidence)."),
    algo: str = typer.Option("grpo", "--algo", help="reinforce | grpo | ppo."),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """The main job: train on the default env, evaluate on held-out seeds, write a results folder."""
    try:
        from ..learn.demo import run_demo

        run_demo(out, algo=algo, steps=steps, episodes=episodes, seed=seed, progress=not quiet,
                 log=lambda s: console.print(s, markup=False, highlight=False))
    except _errors() as exc:
        raise _fail_from(exc) from None
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
