"""``orchestrace env``: list the environment ids and run a policy to a JSONL file of traces.

Exit codes: 0 ok; 2 usage or I/O error (unknown env id or policy, bad parameters, unwritable file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ._app import (
    RAY_ADDRESS_OPTION,
    app,
    console,
    err_console,
    fail,
    note,
    ray_option,
)

__all__ = ["env_app"]

#: `env run --episodes` upper bound: each episode is simulated and written; more is a typo or a hang.
MAX_EPISODES = 1_000_000

env_app = typer.Typer(help="Orchestration environments: list ids, run a policy and write traces.", no_args_is_help=True)
app.add_typer(env_app, name="env")


@env_app.command("list")
def env_list() -> None:
    """Print the versioned environment ids and their sizes."""
    try:
        from ..env import ENV_IDS, config_for
    except ImportError as exc:
        raise fail(str(exc)) from None
    for env_id in ENV_IDS:
        c = config_for(env_id)
        console.print(f"{env_id}  [dim]subtasks {c.n_subtasks_min}–{c.n_subtasks_max}, ≤ {c.max_rounds} rounds, "
                      f"obs {c.obs_dim}, actions {c.n_actions}[/]")


@env_app.command("run")
def env_run(
    env_id: str = typer.Argument(..., help="Environment id (see `orchestrace env list`)."),
    policy: str = typer.Option("random", "--policy", "-p", help="Baseline name (random, fixed-fanout, greedy, fixed-budget, "
                               "threshold, always-continue, oracle, adaptive) or a path to a trained policy."),
    episodes: int = typer.Option(10, "--episodes", "-n", help="Number of episodes."),
    seed: int = typer.Option(0, "--seed", help="First episode seed (episode k uses seed + k)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output JSONL file (one trace per episode)."),
    param: list[str] = typer.Option([], "--param", help="Baseline parameter name=value (repeatable), e.g. rounds=2."),
    set_: list[str] = typer.Option([], "--set", metavar="FIELD=VALUE", help="Change an EnvConfig field of the world "
                                   "(repeatable), e.g. --set token_cost=4.8e-5; recorded in every trace's meta."),
    workers: str = typer.Option("sim", "--workers", help="Who performs attempts: sim (simulated) or llm (a chat endpoint)."),
    base_url: str = typer.Option(None, "--base-url", help="--workers llm: OpenAI-compatible API root ending in /v1."),
    model: str = typer.Option(None, "--model", help="--workers llm: model name."),
    suite: str = typer.Option("arith", "--suite", help="--workers llm: task suite (arith, lookup, list)."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="--workers llm: env var holding the API key "
                                    "(default ORCHESTRACE_API_KEY, then OPENAI_API_KEY)."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="--workers llm: cap on tokens per reply."),
    ray: int = ray_option("Shard the seeds (the file is byte-identical to the one-process run)"),
    ray_address: str = RAY_ADDRESS_OPTION,
    ray_min_work: float = typer.Option(None, "--ray-min-work", metavar="SECONDS", help="Use Ray only when the "
                                       "estimated one-process work is at least this long (default: the measured "
                                       "break-even; 0 always uses Ray)."),
) -> None:
    """Run a policy for N episodes and write every episode's trace to a JSONL file."""
    from ..errors import ConfigError, MissingExtraError, OrchestraceError

    try:
        from ..env import config_for  # noqa: F401  (a missing extra is said first)
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    if not 1 <= episodes <= MAX_EPISODES:
        raise fail(f"--episodes {episodes} must be in [1, {MAX_EPISODES}] (run more as several files with other "
                   "--seed values)")
    if not 0 <= seed <= 2**63 - 1 - episodes:
        raise fail(f"--seed {seed} is out of range; use an integer in [0, 2**63 - 1 - episodes]")
    try:
        env_id, pol, name = _policy(env_id, policy, param, set_)
    except (ConfigError, MissingExtraError) as exc:
        raise fail(str(exc)) from None
    if workers not in ("sim", "llm"):
        raise fail(f"--workers {workers!r} must be sim or llm")
    if workers == "llm" and (not base_url or not model):
        raise fail("--workers llm needs --base-url (e.g. http://127.0.0.1:8080/v1; `orchestrace serve-local` "
                   "prints one) and --model")
    from ..evaluation.play import play_to_file
    from ..scale import EpisodeJob

    llm = _llm_workers(base_url or "", model or "", suite=suite, api_key_env=api_key_env, max_tokens=max_tokens) \
        if workers == "llm" else None
    job = EpisodeJob(env_id, tuple(set_), pol, name, llm=llm)
    try:
        if ray is not None or ray_address is not None:
            from ..scale import check_request

            check_request(ray, ray_address)
    except (ConfigError, MissingExtraError) as exc:
        raise fail(str(exc)) from None
    try:
        summary = play_to_file(job, seed, episodes, out, label=f"{name} on {env_id}", ray=ray,
                               ray_address=ray_address, min_work_s=ray_min_work, note=note)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    except OrchestraceError as exc:
        raise fail(str(exc)) from None
    _print_summary(summary, episodes, out, llm=llm is not None)


def _policy(env_id: str, policy: str, param: list[str], sets: list[str]) -> tuple[str, Any, str]:
    """The world id, the policy and the name its traces record (:func:`orchestrace.evaluation.play.policy_for`)."""
    from ..env import config_for
    from ..evaluation.play import parse_params, policy_for
    from ..trainers.config import resolve_env_id

    env_id = resolve_env_id(env_id)
    cfg = config_for(env_id).with_overrides(sets)
    params = parse_params(param)
    pol, name = policy_for(policy, cfg, params, env_id)
    return env_id, pol, name


def _llm_workers(base_url: str, model: str, **kw: Any) -> Any:
    """``--workers llm``: the backend maker each episode shard calls (a partial of ``make_llm_workers``)."""
    import functools

    from ..llm.envbackend import make_llm_workers

    return functools.partial(make_llm_workers, base_url, model, **kw)


def _print_summary(summary: Any, episodes: int, out: Path, *, llm: bool) -> None:
    n_ok, ret = sum(summary.success), sum(summary.returns)
    if llm:
        failed = summary.failures
        causes = ", ".join(f"{c}×{n}" for c, n in sorted(failed.items()))
        if summary.llm_calls_all_failed:
            raise fail(f"every LLM call failed ({causes}); the traces in {out} carry no worker answer — check "
                       "--base-url, --model and the server")
        if failed:
            err_console.print("warning: LLM calls failed: " + causes, markup=False)
    console.print(f"wrote {out}: {episodes} traces; success {n_ok / episodes:.3f}, mean return {ret / episodes:.4f}")
