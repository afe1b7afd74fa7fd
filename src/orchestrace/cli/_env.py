"""``orchestrace env``: list the environment ids and run a policy to a JSONL file of traces.

Exit codes: 0 ok; 2 usage or I/O error (unknown env id or policy, bad parameters, unwritable file).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import (
    RAY_ADDRESS_OPTION,
    app,
    console,
    err_console,
    fail,
    ray_option,
)

__all__ = ["env_app"]

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


def _parse_params(items: list[str]) -> dict[str, float | int | str]:
    out: dict[str, float | int | str] = {}
    for it in items:
        if "=" not in it:
            raise fail(f"--param {it!r} must look like name=value (e.g. rounds=2, threshold=0.8)")
        k, v = it.split("=", 1)
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


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
    from ..errors import CheckpointError, ConfigError, MissingExtraError, OrchestraceError

    try:
        from ..env import config_for, make_baseline
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    if episodes < 1:
        raise fail(f"--episodes {episodes} must be ≥ 1")
    if not 0 <= seed <= 2**63 - 1 - episodes:
        raise fail(f"--seed {seed} is out of range; use an integer in [0, 2**63 - 1 - episodes]")
    try:
        from ..learn.config import resolve_env_id

        env_id = resolve_env_id(env_id)
        cfg = config_for(env_id).with_overrides(set_)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    params = _parse_params(param)
    if Path(policy).exists() or "/" in policy or policy.endswith(".pt"):
        if Path(policy).exists() and not (Path(policy).is_dir() or policy.endswith(".pt")):
            raise fail(f"--policy {policy!r} is neither a baseline name nor a run directory / .pt policy file")
        try:
            import importlib

            learn = importlib.import_module("orchestrace.learn")
            pol = learn.load_policy(policy)
        except ModuleNotFoundError:
            raise fail("loading a trained policy needs orchestrace.learn (pip install 'orchestrace[learn]')") from None
        except (CheckpointError, MissingExtraError, OSError) as exc:
            raise fail(f"cannot load policy {policy!r}: {exc}") from None
        name = Path(policy).name
        net = getattr(pol, "policy", None)
        if net is not None and getattr(net, "layout", None) is None and net.obs_dim != cfg.obs_dim:
            raise fail(f"policy {policy!r} was trained on observations {net.obs_dim} wide (world {pol.env_id or '?'}); "
                       f"{env_id} gives {cfg.obs_dim}: run it on the world it was trained on")
    else:
        try:
            pol = make_baseline(policy, cfg, **params)
        except ConfigError as exc:
            raise fail(str(exc)) from None
        name = policy
    if workers not in ("sim", "llm"):
        raise fail(f"--workers {workers!r} must be sim or llm")
    llm = None
    if workers == "llm":
        if not base_url or not model:
            raise fail("--workers llm needs --base-url (e.g. http://127.0.0.1:8080/v1; `orchestrace serve-local` "
                       "prints one) and --model")
        import functools

        from ._llm import make_llm_workers

        llm = functools.partial(make_llm_workers, base_url, model, suite=suite, api_key_env=api_key_env,
                                max_tokens=max_tokens)
    from ..scale import EpisodeJob

    job = EpisodeJob(env_id, tuple(set_), pol, name, llm=llm)
    use_ray = ray is not None or ray_address is not None
    if use_ray:
        from ..scale import check_request

        try:
            check_request(ray, ray_address)
        except (ConfigError, MissingExtraError) as exc:
            raise fail(str(exc)) from None
    try:
        summary = _play(job, seed, episodes, out, label=f"{name} on {env_id}", ray=ray, ray_address=ray_address,
                        min_work_s=ray_min_work, use_ray=use_ray)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    except OrchestraceError as exc:
        raise fail(str(exc)) from None
    n_ok, ret = sum(summary.success), sum(summary.returns)
    if llm is not None:
        failed = summary.failures
        causes = ", ".join(f"{c}×{n}" for c, n in sorted(failed.items()))
        if summary.llm_calls_all_failed:
            raise fail(f"every LLM call failed ({causes}); the traces in {out} carry no worker answer — check "
                       "--base-url, --model and the server")
        if failed:
            err_console.print("warning: LLM calls failed: " + causes, markup=False)
    console.print(f"wrote {out}: {episodes} traces; success {n_ok / episodes:.3f}, mean return {ret / episodes:.4f}")


def _play(job, seed: int, episodes: int, out: Path, *, label: str, ray: int | None, ray_address: str | None,  # noqa: ANN001
          min_work_s: float | None, use_ray: bool):  # noqa: ANN202
    """Play ``episodes`` episodes into ``out`` atomically: the first one here (it also times the
    work), the rest here or, when asked and worth it, as shards on Ray. Returns a ShardResult."""
    import os
    import time

    from ..learn.progress import progress_bar
    from ..scale import ShardResult, connect, ray_decision, run_item, run_shard, shards

    tmp = out.with_name(f".{out.name}.orchestrace-tmp")
    total = ShardResult(llm_calls_all_failed=True)

    def add(part: ShardResult, fh) -> None:  # noqa: ANN001
        for blob in part.blobs:
            fh.write(blob)
        total.blobs.append(b"")  # count only; the bytes are on disk
        total.success.extend(part.success)
        total.returns.extend(part.returns)
        for k, v in part.failures.items():
            total.failures[k] = total.failures.get(k, 0) + v
        total.llm_calls_all_failed &= part.llm_calls_all_failed

    ok = False
    try:
        with open(tmp, "wb") as fh, progress_bar(episodes, label, transient=True) as advance:
            t0 = time.perf_counter()
            add(run_shard(job, [seed]), fh)
            advance(1)
            rest = list(range(seed + 1, seed + episodes))
            work = (time.perf_counter() - t0) * len(rest)
            distribute = False
            if use_ray and rest:
                distribute, why = ray_decision(work, ray or 2, address_given=ray_address is not None,
                                               min_work_s=min_work_s)
                if not distribute:
                    from ._app import note

                    note(why)
            if distribute:
                with connect(ray, ray_address) as cluster:
                    parts = [(job, [rest[i] for i in r]) for r in shards(len(rest), 4 * cluster.workers)]
                    for part in cluster.imap(run_item, parts):
                        add(part, fh)
                        advance(len(part.blobs))
            elif rest:
                add(run_shard(job, rest, progress=lambda: advance(1)), fh)
        os.replace(tmp, out)
        ok = True
    finally:
        if not ok:
            tmp.unlink(missing_ok=True)
    return total
