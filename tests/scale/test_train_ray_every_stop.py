"""``train --ray N`` with every stop update steps the Ray env — the fitted stop's path collection
included (it used to build its own local env and leave the Ray one at 0 steps) — and gives the
one-process run's checkpoint and metrics, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

pytest.importorskip("torch", reason="torch is not installed (pip install 'orchestrace[learn]')")

runner = CliRunner()
TINY = ["--env", "small", "--steps", "2", "--episodes-per-step", "8", "--group-size", "4",
        "--warm-start-episodes", "16", "--warm-start-steps", "3", "--eval-every", "0", "--eval-episodes", "4",
        "--num-threads", "1", "-q"]


def _rows(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]


@pytest.mark.parametrize("stop_update", ["pg", "regret", "fitted"])
def test_train_on_ray_steps_the_ray_env_with_every_stop_update(ray_cluster: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, stop_update: str) -> None:
    from orchestrace.scale import RayEnvs

    made: list[Any] = []
    call = RayEnvs.__call__

    def spy(self: Any, config: Any, batch_size: int) -> Any:
        env = call(self, config, batch_size)
        made.append(env)
        return env

    monkeypatch.setattr(RayEnvs, "__call__", spy)
    args = ["train", *TINY, "--stop-update", stop_update]
    ref, out = tmp_path / "plain", tmp_path / "ray"
    one = runner.invoke(app, [*args, "--out", str(ref)])
    assert one.exit_code == 0, one.output
    assert not made  # the plain run made no Ray env
    two = runner.invoke(app, [*args, "--ray", "2", "--out", str(out)])
    assert two.exit_code == 0, two.output
    assert len(made) == 1 and made[0].steps > 0 and made[0].resets > 0, [(e.steps, e.resets) for e in made]
    for name in ("checkpoint.pt", "policy.pt", "config.json"):
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    assert _rows(out) == _rows(ref)


def test_the_fitted_stop_validates_once_when_steps_divide_by_eval_every(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrace.trainers._run import Run

    calls: list[int] = []
    validate = Run.validate

    def counting(self: Any, update: int) -> dict[str, float]:
        calls.append(update)
        return validate(self, update)

    monkeypatch.setattr(Run, "validate", counting)
    args = list(TINY)
    args[args.index("--eval-every") + 1] = "2"  # steps (2) divide by eval_every (2)
    res = runner.invoke(app, ["train", *args, "--stop-update", "fitted", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert calls == [1]
    last = _rows(tmp_path / "r")[-1]
    assert last["step"] == 2 and "val/return" in last
