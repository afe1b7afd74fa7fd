"""``orchestrace env run --ray N``: the traces file is byte-identical to the one-process run,
whatever N; bad requests exit 2 and leave no file behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

runner = CliRunner()
ENV = "orchestrace/Orchestrate-small-v0"


def _run(out: Path, *extra: str, policy: str = "random", n: int = 12, seed: int = 5) -> Any:
    return runner.invoke(app, ["env", "run", ENV, "-p", policy, "-n", str(n), "--seed", str(seed), "-o", str(out),
                               *extra])


def test_workers_import_this_checkout(ray_cluster: Any) -> None:
    import orchestrace

    @ray_cluster.remote
    def where() -> str:
        import orchestrace

        return orchestrace.__file__

    assert ray_cluster.get(where.remote()) == orchestrace.__file__


@pytest.mark.parametrize("policy", ["random", "threshold", "oracle"])
def test_ray_output_is_byte_identical_for_any_worker_count(ray_cluster: Any, tmp_path: Path, policy: str) -> None:
    ref = tmp_path / "one.jsonl"
    assert _run(ref, policy=policy).exit_code == 0
    for n in (1, 2):
        out = tmp_path / f"ray{n}.jsonl"
        res = _run(out, "--ray", str(n), "--ray-min-work", "0", policy=policy)
        assert res.exit_code == 0, res.output
        assert out.read_bytes() == ref.read_bytes()
    assert ref.read_bytes().count(b'{"header"') == 12


def test_episode_depends_on_its_seed_alone(tmp_path: Path) -> None:
    """Episode k of a run from seed s equals the first episode of a run from seed s + k."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    res = _run(a, n=4, seed=10)
    assert res.exit_code == 0, res.output
    assert _run(b, n=1, seed=13).exit_code == 0
    lines_a = a.read_bytes().split(b'{"header"')
    assert lines_a[-1] == b.read_bytes().split(b'{"header"')[-1]


def test_small_work_runs_in_one_process(ray_cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    res = _run(out, "--ray", "1", n=3)  # one worker can never beat one process
    assert res.exit_code == 0
    assert "running in one process" in res.output
    ref = tmp_path / "ref.jsonl"
    _run(ref, n=3)
    assert out.read_bytes() == ref.read_bytes()


def test_more_workers_than_cpus_exits_2(ray_cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    res = _run(out, "--ray", "3", "--ray-min-work", "0")
    assert res.exit_code == 2
    assert "has 2 CPU(s); use --ray 2 or fewer" in res.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_dead_address_exits_2_quickly(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'orchestrace[ray]')")
    import socket
    import time

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "x.jsonl"
    t0 = time.perf_counter()
    res = _run(out, "--ray-address", f"127.0.0.1:{port}")
    assert res.exit_code == 2
    assert "no Ray cluster answers there" in res.output
    assert time.perf_counter() - t0 < 15
    assert list(tmp_path.iterdir()) == []
    res = _run(out, "--ray-address", "nonsense")
    assert res.exit_code == 2 and "expected host:port" in res.output


def test_zero_workers_exits_2(tmp_path: Path) -> None:
    res = _run(tmp_path / "x.jsonl", "--ray", "0")
    assert res.exit_code == 2 and "must be ≥ 1" in res.output


def test_without_ray_the_error_names_the_extra(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    code = ("import sys; sys.modules['ray'] = None\n"
            "from orchestrace.cli import main\n"
            f"sys.argv = ['orchestrace', 'env', 'run', {ENV!r}, '-n', '2', '-o', {str(out)!r}, '--ray', '2']\n"
            "main()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "pip install 'orchestrace[ray]'" in res.stderr
    assert list(tmp_path.iterdir()) == []
