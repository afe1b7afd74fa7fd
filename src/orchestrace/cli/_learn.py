"""``orchestrace train`` / ``eval`` / ``demo``: learn to orchestrate with an explicit learned stop.

The ``train`` options are generated from :class:`~orchestrace.learn.TrainConfig` (one option
per field, its help text from the field's metadata). Exit codes: 0 ok; 1 a checkpoint is
corrupted / mismatched or training diverged; 2 usage, config or I/O error.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import typer

from ._app import (
    EXIT_INVALID,
    EXIT_USAGE,
    QUIET_OPTION,
    RAY_ADDRESS_OPTION,
    app,
    console,
    fail,
    note,
    ray_option,
)

__all__: list[str] = []


def _errors() -> tuple[type[BaseException], ...]:
    from ..errors import CheckpointError, ConfigError, MissingExtraError, TrainingError

    return CheckpointError, ConfigError, MissingExtraError, TrainingError


def _fail_from(exc: BaseException) -> typer.Exit:
    from ..errors import CheckpointError, TrainingError

    code = EXIT_INVALID if isinstance(exc, (CheckpointError, TrainingError)) else EXIT_USAGE
    return fail(str(exc), code=code)


def _config_options() -> list[inspect.Parameter]:
    from ..trainers.config import cli_fields

    params = []
    for name, typ, default, help_ in cli_fields():
        if name == "env_set":
            continue  # the repeatable --set option below
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[typ],  # noqa: UP045 (runtime Optional for typer)
            default=typer.Option(None, f"--{name.replace('_', '-')}", show_default=False,
                                 help=f"{help_} (default: {default})"),
        ))
    return params


def _set_option() -> Any:
    return typer.Option([], "--set", metavar="FIELD=VALUE",
                        help="Change an EnvConfig field of the world (repeatable), e.g. --set token_cost=4.8e-5; "
                             "type- and range-checked; recorded in the results.")


def _train(**kw: Any) -> None:
    """Train an orchestration policy (REINFORCE, GRPO or PPO) into a run directory.

    Every TrainConfig field is an option. With --resume the run's saved config is used and
    only --steps (the new total) and --checkpoint-every may change; training continues
    bit-exactly from the last checkpoint.
    """
    out: Path = kw.pop("out")
    from_traces: Path | None = kw.pop("from_traces")
    sets: list[str] = kw.pop("set_")
    if sets:
        kw["env_set"] = list(sets)
    resume: bool = kw.pop("resume")
    overwrite: bool = kw.pop("overwrite")
    quiet: bool = kw.pop("quiet")
    ray_n: int | None = kw.pop("ray")
    ray_address: str | None = kw.pop("ray_address")
    given = {k: v for k, v in kw.items() if v is not None}
    from ..trainers.rundir import check_run_dir, run_config

    check_run_dir(out, resume=resume, overwrite=overwrite)
    if from_traces is not None:  # the stop learned from logged runs only (cli/_offline.py)
        from ._offline import train_from_traces

        ignored = [f"--{k.replace('_', '-')}" for k in given if k != "seed"] + (["--set"] * bool(sets)) + \
            (["--resume"] * resume) + (["--ray"] * (ray_n is not None or ray_address is not None))
        return train_from_traces(from_traces, out, seed=int(given.get("seed", 0)), ignored=ignored, quiet=quiet)
    try:
        from ..learn import train

        cfg = run_config(out, given, resume=resume)
        with _on_ray(ray_n, ray_address, envs=True) as envs:
            result = train(cfg, out, resume=resume, progress=not quiet, envs=envs)
    except _errors() as exc:
        raise _fail_from(exc) from None
    except OSError as exc:
        raise fail(f"cannot write the run to {out}: {exc.strerror or exc}") from None
    row = result.last_row
    what = ("the fitted stop (O1–O4 from the warm start)" if cfg.stop_update == "fitted"
            else f"{cfg.algo} (stop update: {cfg.stop_update})")
    console.print(f"trained {what} on {cfg.env_id}: {result.updates} updates in {result.seconds:.1f} s; "
                  f"last return {row.get('charts/episodic_return', float('nan')):.3f}, "
                  f"success {row.get('charts/success', float('nan')):.3f}")
    console.print(f"run: {out} (checkpoint.pt, policy.pt, config.json, metrics.jsonl, metrics.csv)")


def _ray_options() -> list[inspect.Parameter]:
    return [
        inspect.Parameter("ray", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[int],  # noqa: UP045
                          default=ray_option("Step the rollout episodes (the learner stays here; the checkpoint is "
                                             "bit-identical to the run without Ray)")),
        inspect.Parameter("ray_address", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],  # noqa: UP045
                          default=RAY_ADDRESS_OPTION),
    ]


@contextlib.contextmanager
def _on_ray(workers: int | None, address: str | None, *, envs: bool) -> Iterator[Any]:
    """Nothing without --ray / --ray-address (yields None); else connect, and yield the run's
    env maker (train: :class:`~orchestrace.scale.RayEnvs`, handed to ``train(envs=…)``) or route
    the evaluation episodes (eval) to the cluster for the duration of the block."""
    if workers is None and address is None:
        yield None
        return
    from ..scale import RayEnvs, connect

    with connect(workers, address) as cluster:
        if envs:
            maker = RayEnvs(cluster)
            try:
                yield maker
            finally:
                maker.close()
        else:
            from ..evaluation.simulated import players
            from ..scale import ray_player

            with players(ray_player(cluster)):
                yield


_train.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    _config_options() + _ray_options() + [
        inspect.Parameter("set_", inspect.Parameter.KEYWORD_ONLY, annotation=list[str], default=_set_option()),
        inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, annotation=Path,
                          default=typer.Option(..., "--out", "-o", help="Run directory (runs/NAME).")),
        inspect.Parameter("resume", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=typer.Option(False, "--resume", help="Continue the run in --out bit-exactly.")),
        inspect.Parameter("overwrite", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=typer.Option(False, "--overwrite", help="Replace the run in --out (a folder that "
                                               "is not empty is refused without --resume or --overwrite).")),
        inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=QUIET_OPTION),
        inspect.Parameter("from_traces", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[Path],  # noqa: UP045
                          default=typer.Option(None, "--from-traces", metavar="CORPUS", help="Learn the stop gate "
                                               "from logged always-continue runs only (a corpus directory or .npz; "
                                               "no simulator): writes RUN/gate.json; only --seed applies.")),
    ]
)
app.command("train")(_train)


@app.command("eval")
def eval_cmd(
    runs: list[Path] = typer.Argument(None, metavar="RUN...", help="Run directories or policy.pt files; 2+ runs of one "
                                      "world are aggregated across training seeds (with --traces CORPUS: gate runs "
                                      "of `train --from-traces`, or none to value the rules alone)."),
    env: str = typer.Option(None, "--env", help="World to evaluate in (default: the one each run was trained on)."),
    set_: list[str] = _set_option(),
    suite: str = typer.Option(None, "--suite", help="Evaluate in every world of a named suite: shift."),
    episodes: int = typer.Option(500, "--episodes", "-n", help="Test episodes per policy (held-out seeds)."),
    validation: int = typer.Option(256, "--validation", help="Validation episodes for choosing budgets and thresholds."),
    seeds: str = typer.Option("held-out", "--seeds", help="Test seed set: held-out (never used in training or validation)."),
    seed_offset: int = typer.Option(0, "--seed-offset", help="Start this far into the held-out seed range."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write results.json (aggregate.json, suite.json), summary.md, traces/."),  # noqa: UP045
    traces: str = typer.Option("20", "--traces", metavar="N|CORPUS", help="A number: episodes traced per key policy "
                               "(wasted work, E2–E4; one run only). A corpus of logged runs (directory or .npz): value "
                               "every stop rule and the RUN gates exactly on its test tasks instead."),
    oracle_all: bool = typer.Option(True, "--oracle-all/--no-oracle-all", help="Include the all-heads oracle (the costliest reference)."),
    test: list[Path] = typer.Option(None, "--test", metavar="FRESH", help="With --traces CORPUS: a separately collected "
                                    "corpus folder (same settings, new tasks) on which every rule and gate, fitted and "
                                    "tuned on CORPUS only, is valued on all its tasks; repeat for several."),
    quiet: bool = QUIET_OPTION,
    ray: int = ray_option("Play the evaluation episodes as shards"),
    ray_address: str = RAY_ADDRESS_OPTION,
) -> None:
    """Evaluate learned stops with the fair protocol: every stop rule on the same heads, tuned on validation seeds,
    claims decided by paired 95 % intervals; several runs are aggregated (k/n runs per claim)."""
    runs = list(runs or [])
    if not (traces.isdigit() and not Path(traces).exists()):  # --traces CORPUS: logged runs (cli/_offline.py)
        from ._offline import eval_traces

        sim_only = {"--env": env is not None, "--set": bool(set_), "--suite": suite is not None,
                    "--episodes": episodes != 500, "--validation": validation != 256, "--seed-offset": seed_offset != 0,
                    "--no-oracle-all": not oracle_all, "--ray": ray is not None, "--ray-address": ray_address is not None}
        given = [k for k, v in sim_only.items() if v]
        if given:
            raise fail(f"--traces CORPUS evaluates on logged runs; {', '.join(given)} only apply to the simulator")

        return eval_traces(Path(traces), runs, out, quiet=quiet, tests=list(test or []))
    _check_sim_eval(runs, test=bool(test), seeds=seeds, episodes=episodes, validation=validation,
                    seed_offset=seed_offset)
    text = _simulated_eval(runs, env=env, set_=set_, suite=suite, episodes=episodes, validation=validation,
                           seed_offset=seed_offset, out=out, n_traces=int(traces), oracle_all=oracle_all, quiet=quiet,
                           ray=ray, ray_address=ray_address)
    text = _provenance(runs, set_, suite) + text
    if out is not None:
        (out / "summary.md").write_text(text, encoding="utf-8")
        console.print(f"wrote {out}/ (summary.md and the JSON results)", markup=False)
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    short = claims_only(text)
    console.print(short, markup=False, highlight=False, soft_wrap=True)
    if short != text:
        note("the claims only; -o DIR writes the whole summary (every rule and policy, summary.md), results.json "
             "and traced samples")


def _simulated_eval(runs: list[Path], *, env: str | None, set_: list[str], suite: str | None, episodes: int,
                    validation: int, seed_offset: int, out: Path | None, n_traces: int, oracle_all: bool, quiet: bool,
                    ray: int | None, ray_address: str | None) -> str:
    """``eval`` in the simulator: one run, several runs of one world, or a suite; the summary text."""
    try:
        from ..env.config import parse_overrides
        from ..evaluation.demo import render_aggregate, render_suite, render_summary
        from ..evaluation.simulated import evaluate, evaluate_runs, evaluate_suite

        parse_overrides(set_)  # fail early, before any evaluation
        stack = contextlib.ExitStack()
        stack.enter_context(_on_ray(ray, ray_address, envs=False))
    except _errors() as exc:
        raise _fail_from(exc) from None
    try:
        with stack:
            if suite is not None:
                if len(runs) < 2:
                    raise fail(f"--suite needs at least 2 runs for its across-seed claims, got {len(runs)}")
                res = evaluate_suite([str(r) for r in runs], suite, env=env, episodes=episodes, validation=validation,
                                     out=out, progress=not quiet)
                text = render_suite(res)
            elif len(runs) > 1:
                res = evaluate_runs([str(r) for r in runs], env=env, env_set=set_, episodes=episodes, validation=validation,
                                    out=out, oracle_all=oracle_all, progress=not quiet)
                text = render_aggregate(res["aggregate"])
            else:
                report = evaluate(runs[0], env=env, env_set=set_, episodes=episodes, validation=validation,
                                  seed_offset=seed_offset, out=out, sample_traces=max(0, n_traces), oracle_all=oracle_all,
                                  progress=not quiet)
                report.pop("_raw", None)
                text = render_summary(report)
    except _errors() as exc:
        raise _fail_from(exc) from None
    except OSError as exc:
        raise fail(f"cannot write the results to {out}: {exc.strerror or exc}") from None
    return text


def _check_sim_eval(runs: list[Path], *, test: bool, seeds: str, episodes: int, validation: int,
                    seed_offset: int) -> None:
    """The options of an evaluation in the simulator (exit 2 with the fix when one does not fit)."""
    if test:
        raise fail("--test FRESH values rules and gates on fresh logged runs; it needs --traces CORPUS")
    if not runs:
        raise fail("give at least one RUN to evaluate (or --traces CORPUS to evaluate on logged runs)")
    if seeds != "held-out":
        raise fail(f"--seeds {seeds!r} is not supported; use --seeds held-out (and --seed-offset to shift it)")
    if episodes < 2 or validation < 2:
        raise fail(f"--episodes {episodes} / --validation {validation} are too small for confidence intervals; use 2 or more")
    if seed_offset < 0:
        raise fail(f"--seed-offset {seed_offset} must be ≥ 0")


def claims_only(text: str) -> str:
    r"""The summary up to and including its ``## Claims`` section (the whole text when it has none).

    >>> claims_only("# t\nhead\n\n## Claims\n| a |\n\n## Tables\nlong")
    '# t\nhead\n\n## Claims\n| a |\n'
    """
    parts = text.split("\n## ")
    for i, part in enumerate(parts):
        if part.startswith("Claims"):
            return "\n## ".join(parts[: i + 1]).rstrip("\n") + "\n"
    return text


def _provenance(runs: list[Path], sets: list[str], suite: str | None) -> str:
    """The head of summary.md: which runs (seed, recipe) were evaluated, in which world overrides."""
    from ..evaluation.simulated import training_of

    lines = ["Runs evaluated:"]
    for r in runs:
        t = training_of(r)
        if t["seed"] is None:
            note(f"{r}: no config.json beside it, so its training seed and recipe are unknown (not checked)",
                 kind="warning")
            lines.append(f"- {r} (training seed and recipe unknown)")
        else:
            lines.append(f"- {r} (seed {t['seed']}, {t['recipe']})")
    over = " ".join(sets) if sets else "none"
    lines.append(f"World overrides (--set): {over}" + (f"; suite: {suite}" if suite else ""))
    return "\n".join(lines) + "\n\n"


@app.command("demo")
def demo_cmd(
    out: Path = typer.Option(Path("orchestrace-demo"), "--out", "-o", help="Results folder."),
    env: str = typer.Option("default-v1", "--env", help="World to train and evaluate on."),
    set_: list[str] = _set_option(),
    steps: int | None = typer.Option(None, "--steps", help="Training updates (default: the demo recipe's)."),  # noqa: UP045
    episodes: int | None = typer.Option(None, "--episodes", "-n", help="Test episodes per policy (default 2000; --full 5000)."),  # noqa: UP045
    validation: int | None = typer.Option(None, "--validation", help="Validation episodes (default 1000; --full 2000)."),  # noqa: UP045
    algo: str = typer.Option("grpo", "--algo", help="reinforce | grpo | ppo."),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
    full: bool = typer.Option(False, "--full", help="The full simulator recipe (60 x 256 training paths, 5,000 test "
                              "seeds; several times longer) instead of the quicker default."),
    quiet: bool = QUIET_OPTION,
) -> None:
    """The main job: the stop learned from real runs, then on the simulator; a results folder that leads with real runs."""
    if steps is not None and steps < 1:
        raise fail(f"--steps {steps} must be ≥ 1")
    if (episodes is not None and episodes < 2) or (validation is not None and validation < 2):
        raise fail(f"--episodes {episodes} / --validation {validation} are too small for confidence intervals; use 2 or more")
    try:
        from ..errors import require

        require("torch", extra="demo")  # the demo's light extra: torch, gymnasium, matplotlib
        require("gymnasium", extra="demo")
        from ..env.config import parse_overrides
        from ..evaluation.demo import run_demo

        parse_overrides(set_)
        run_demo(out, env=env, env_set=tuple(set_), algo=algo, steps=steps, episodes=episodes, validation=validation,
                 seed=seed, progress=not quiet, full=full,
                 log=lambda s: console.print(s, markup=False, highlight=False, soft_wrap=True))
    except _errors() as exc:
        raise _fail_from(exc) from None
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
