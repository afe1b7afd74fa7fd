"""``metrics --ray`` / ``validate --ray`` over a Parquet dataset: the same report and the same
partitioned Parquet output as one process; partitions read exactly the traces they name."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from orchestrace import Edge, synth
from orchestrace.cli import app

pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install 'orchestrace[parquet]')")

from orchestrace.core.dataset import read_dataset, write_dataset  # noqa: E402

runner = CliRunner()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traces = [synth(events=30 + 3 * (s % 7), agents=2 + s % 3, seed=s) for s in range(40)]
    bad = traces[11]  # one invalid trace: a dangling edge
    traces[11] = msgspec.structs.replace(bad, edges=bad.edges + (Edge(bad.events[0].id, "nope", "causal"),))
    folder = tmp_path_factory.mktemp("ds") / "ds"
    write_dataset(traces, folder, rows_per_group=97)  # row groups cut through traces
    return folder


def test_partitions_read_exactly_their_traces(dataset: Path) -> None:
    whole = list(read_dataset(dataset))
    rng = random.Random(0)
    for _ in range(20):
        lo = rng.randrange(0, len(whole))
        hi = rng.randrange(lo, len(whole) + 3)
        assert list(read_dataset(dataset, traces=range(lo, hi))) == whole[lo:hi]


def _parts(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(folder.iterdir())]


@pytest.mark.parametrize("command", ["metrics", "validate"])
def test_ray_equals_one_process(ray_cluster: Any, dataset: Path, tmp_path: Path, command: str) -> None:
    extra = ["--json"] if command == "metrics" else ["--format", "json"]
    one = runner.invoke(app, [command, str(dataset), *extra, "--partition-traces", "6", "-o", str(tmp_path / "one")])
    assert one.exit_code == 1  # the invalid trace
    for n in (1, 2):
        got = runner.invoke(app, [command, str(dataset), *extra, "--ray", str(n), "--ray-min-work", "0",
                                  "--partition-traces", "6", "-o", str(tmp_path / f"r{n}")])
        assert got.exit_code == 1
        assert got.stdout == one.stdout
        assert _parts(tmp_path / f"r{n}") == _parts(tmp_path / "one")
    assert len(_parts(tmp_path / "one")) == 7
    if command == "metrics":  # and the per-trace lines are those of the plain one-process command
        plain = runner.invoke(app, ["metrics", str(dataset), "--json"])
        assert plain.stdout == one.stdout
        assert len(one.stdout.splitlines()) == 39
    else:
        lines = [json.loads(x) for x in one.stdout.splitlines()]
        assert [d["valid"] for d in lines].count(False) == 1 and len(lines) == 40


def test_parquet_output_holds_the_measures(dataset: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from orchestrace.analysis.measures import compute

    res = runner.invoke(app, ["metrics", str(dataset), "-s", "e2/speedup", "--partition-traces", "16",
                              "-o", str(tmp_path / "m")])
    assert res.exit_code == 1
    table = pq.read_table(tmp_path / "m")
    assert table.column("trace_index").to_pylist() == list(range(40))
    speed = table.column("e2/speedup").to_pylist()
    for i, tr in enumerate(read_dataset(dataset)):
        if i == 11:
            assert table.column("status")[i].as_py() == "refused" and speed[i] is None
        else:
            assert speed[i] == compute(tr, ["e2/speedup"]).metrics["e2/speedup"]


def test_missing_table_exits_2_and_writes_nothing(dataset: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("traces.parquet", "edges.parquet"):
        (broken / name).write_bytes((dataset / name).read_bytes())
    for command in ("metrics", "validate"):
        res = runner.invoke(app, [command, str(broken), "--ray", "2", "-o", str(tmp_path / "out")])
        assert res.exit_code == 2
        assert "events.parquet is missing" in res.output
        assert not (tmp_path / "out").exists()


def test_not_a_dataset_exits_2(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text("")
    res = runner.invoke(app, ["metrics", str(f), "--ray", "2"])
    assert res.exit_code == 2 and "columnar dataset folders" in res.output


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from orchestrace.core.io import dumps

    traces = [msgspec.structs.replace(synth(events=30, agents=3, seed=s), task_id=f"task{s % 4}") for s in range(16)]
    folder = tmp_path_factory.mktemp("grouped")
    write_dataset(traces, folder / "ds", rows_per_group=150)
    (folder / "t.jsonl").write_bytes(b"".join(dumps(t, format="jsonl") for t in traces))
    return folder / "ds", folder / "t.jsonl"


@pytest.mark.parametrize("args", [["reward"], ["credit", "--unit", "agent", "--method", "shapley", "--baseline", "group"],
                                  ["credit", "--unit", "agent", "--method", "causal"]])
def test_reward_and_credit_on_ray_equal_the_one_process_command(ray_cluster: Any, grouped: tuple[Path, Path],
                                                                 tmp_path: Path, args: list[str]) -> None:
    folder, jsonl = grouped
    one = runner.invoke(app, [*args, str(jsonl), "--json"])
    assert one.exit_code == 0, one.output
    got = runner.invoke(app, [*args, str(folder), "--json", "--ray", "2", "--ray-min-work", "0",
                              "--partition-traces", "5", "-o", str(tmp_path / "p")])
    assert got.exit_code == 0, got.output
    assert got.stdout == one.stdout and len(one.stdout.splitlines()) >= 16
    assert len(_parts(tmp_path / "p")) == 4
