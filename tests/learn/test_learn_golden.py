"""Golden training trajectories (TRL-style invariant tests): tiny config, fixed seed.

Per-update returns and losses must stay within tolerances of the stored values in
``golden_train_trajectories.json``. After a *deliberate* change of the training maths,
regenerate with::

    python tests/learn/test_learn_golden.py --regenerate
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("golden_train_trajectories.json")
KEYS = ("charts/episodic_return", "charts/success", "charts/tokens", "stop/mean_lambda", "losses/policy",
        "losses/value", "losses/stop_value", "losses/entropy")
# returns/tokens are env-exact given the actions; losses get float32 slack
TOL = {"charts/episodic_return": 1e-6, "charts/success": 1e-9, "charts/tokens": 1e-3}
LOSS_ATOL, LOSS_RTOL = 1e-4, 1e-3


def _trajectory(algo: str, tmp: Path) -> list[dict[str, float]]:
    import torch

    from orchestrace.learn import TrainConfig, train

    torch.set_num_threads(1)
    cfg = TrainConfig(env="small", algo=algo, steps=5, seed=123, warm_start="adaptive", episodes_per_step=16, group_size=4, hidden=32,
                      warm_start_episodes=32, warm_start_steps=20, minibatches=2, ppo_epochs=2, checkpoint_every=100,
                      anneal_updates=10, eval_every=0, stop_cost=0.004, normalize="none", lr=3e-3)
    train(cfg, tmp / algo, progress=False)
    rows = [json.loads(line) for line in (tmp / algo / "metrics.jsonl").read_text().splitlines()][1:]
    return [{k: r[k] for k in KEYS if r.get(k) is not None} for r in rows]


@pytest.mark.parametrize("algo", ["reinforce", "grpo", "ppo"])
def test_training_trajectory_matches_golden(algo: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))[algo]
    got = _trajectory(algo, tmp_path)
    assert len(got) == len(golden)
    for step, (g, w) in enumerate(zip(got, golden, strict=True)):
        assert set(g) == set(w), f"update {step + 1}: keys differ"
        for k, want in w.items():
            tol = TOL.get(k)
            if tol is not None:
                assert g[k] == pytest.approx(want, abs=tol), f"update {step + 1} {k}: {g[k]} vs golden {want}"
            else:
                assert g[k] == pytest.approx(want, abs=LOSS_ATOL, rel=LOSS_RTOL), f"update {step + 1} {k}: {g[k]} vs golden {want}"


def _regenerate() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        data = {algo: _trajectory(algo, Path(d)) for algo in ("reinforce", "grpo", "ppo")}
    GOLDEN.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    if "--regenerate" not in sys.argv:
        sys.exit("usage: python tests/learn/test_learn_golden.py --regenerate   (only after a deliberate change)")
    _regenerate()
