"""The small-corpus guard: fits and intervals refuse too few tasks per split, naming how many are needed."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from synthetic_runs import structured_runs
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection.collect import CollectConfig, collect
from orchestrace.logged.corpus import MIN_TASKS, SmallCorpusError, require_tasks
from orchestrace.offline import LoggedRuns, save_runs

runner = CliRunner()


def structured(**kw: int) -> LoggedRuns:
    return LoggedRuns(**structured_runs(**kw))


def test_a_four_task_corpus_is_refused_with_the_count_needed(tmp_path: Path) -> None:
    runs = structured(T=240, R=3, W=2, seed=4)
    pick = [i for s, n in (("train", 2), ("validation", 1), ("test", 1)) for i in (runs.split == s).nonzero()[0][:n]]
    path = save_runs(runs.subset(sorted(pick)), tmp_path / "four.npz")  # split 2 / 1 / 1, as in the issue
    r = runner.invoke(app, ["train", "--from-traces", str(path), "-o", str(tmp_path / "run")])
    assert r.exit_code != 0 and "too few tasks to fit a stop" in r.output
    assert "at least 20 train / 10 validation" in r.output and "--resume" in r.output
    assert "nan" not in r.output.lower() and "Traceback" not in r.output
    r = runner.invoke(app, ["eval", "--traces", str(path)])
    assert r.exit_code != 0 and "too few tasks to evaluate with 95 % intervals" in r.output
    assert "-100" not in r.output and "nan" not in r.output.lower()
    lone = save_runs(runs.subset(list(range(3))), tmp_path / "three.npz")  # a split missing altogether
    r = runner.invoke(app, ["train", "--from-traces", str(lone), "-o", str(tmp_path / "run")])
    assert r.exit_code == 1 and "needs at least 20 train / 10 validation tasks" in r.output and "-n 60" in r.output


@pytest.mark.parametrize("purpose", sorted(MIN_TASKS))
def test_the_guard_passes_exactly_at_the_minimum(purpose: str) -> None:
    runs = structured(T=400, R=3, W=2, seed=1)
    need = MIN_TASKS[purpose]
    keep = [i for s, n in need.items() for i in (runs.split == s).nonzero()[0][:n]]
    require_tasks(runs.subset(sorted(keep)), purpose)  # exactly enough: no error
    short = sorted(keep)[1:]
    with pytest.raises(SmallCorpusError, match="about [0-9]+ tasks in all"):
        require_tasks(runs.subset(short), purpose)


def test_train_counts_the_training_split(tmp_path: Path) -> None:
    runs = structured(T=200, R=3, W=2, seed=2)
    path = save_runs(runs, tmp_path / "c.npz")
    r = runner.invoke(app, ["train", "--from-traces", str(path), "-o", str(tmp_path / "run"), "-q"])
    n_tr, n_va = int((runs.split == "train").sum()), int((runs.split == "validation").sum())
    assert r.exit_code == 0, r.output
    assert f"learned the stop from {n_tr} training runs ({n_va} validation runs chose the model; " \
           f"{200 - n_tr - n_va} test runs held out)" in r.output


def test_resume_with_a_larger_n_grows_a_suite_corpus(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        seed = int(json.loads(request.content)["seed"])
        return httpx.Response(200, json={"choices": [{"message": {"content": f"It is {seed % 4}"},
                                                      "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 9, "completion_tokens": 3}, "model": "m"})

    kw = {"base_url": "http://fake/v1", "model": "m",
          "client_kw": {"transport": httpx.MockTransport(handler), "max_retries": 0}}
    cells = (("add", 1), ("mentor", 1))
    collect(CollectConfig(cells=cells, n_tasks=4, rounds=2, width=2), tmp_path / "c", **kw)
    res = collect(CollectConfig(cells=cells, n_tasks=8, rounds=2, width=2), tmp_path / "c", resume=True, **kw)
    assert (res.already, res.written) == (4, 4)
    ids = [json.loads(ln)["header"]["task_id"] for ln in (tmp_path / "c" / "traces.jsonl").read_text().splitlines()
           if ln.startswith('{"header"')]
    assert ids[:4] == [t.id for t in CollectConfig(cells=cells, n_tasks=4).tasks()]
    assert sorted(ids) == sorted(t.id for t in CollectConfig(cells=cells, n_tasks=8).tasks())
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["config"]["n_tasks"] == 8
