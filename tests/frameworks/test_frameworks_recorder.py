"""Recorder SDK: valid traces from threads and asyncio, and nothing lost on SIGKILL."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from interop_helpers import assert_valid

from orchestrace import load
from orchestrace.errors import ConfigError
from orchestrace.frameworks.recorder import Recorder


def test_spawn_tool_message_return_aggregate_stop(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    with Recorder(p, trace_id="t1", task_id="demo", topology="centralized") as rec, \
            rec.agent("lead", role="orchestrator") as lead:
            lead.decide("spawn", action="spawn:2", alternatives=["spawn:1", "spawn:2"])
            with lead.spawn("a", role="coder") as a:
                @rec.tool("search", trusted=False)
                def search(q: str) -> str:
                    return q * 2

                assert search("x") == "xx"
                a.message("lead", content="partial")
            with lead.spawn("b", role="critic") as b:
                with pytest.raises(ZeroDivisionError):
                    rec.tool("calc")(lambda: 1 / 0)()
                assert rec.current() is b
            lead.aggregate()
            lead.stop()
            with pytest.raises(ConfigError):
                lead.stop()
    tr = load(p)
    assert_valid(tr)
    assert tr.trace_id == "t1" and tr.agents == ["lead", "a", "b"]
    kinds = [e.type.value for e in tr.events]
    assert kinds.count("return") == 2 and kinds.count("tool_call") == 2 and tr.stop_event is not None
    err = [e for e in tr.events if e.type.value == "tool_result" and e.tool == "calc"]
    assert err[0].error is True
    assert tr.costs["tool_calls"] == 2


def test_threads_and_asyncio_are_safe(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    n_workers, n_calls = 8, 50
    with Recorder(p) as rec, rec.agent("lead", role="orchestrator") as lead:
        handles = []

        def work(i: int) -> None:
            with lead.spawn(f"t{i}") as h:
                handles.append(h)
                for _ in range(n_calls):
                    c = h.tool_call("x")
                    h.tool_result("x", after=c)

        ths = [threading.Thread(target=work, args=(i,)) for i in range(n_workers)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()

        async def awork(i: int) -> None:
            with lead.spawn(f"a{i}") as h:
                for _ in range(n_calls):
                    assert rec.current() is h  # contextvars: each task sees its own agent
                    h.tool_call("y")
                    await asyncio.sleep(0)

        async def main() -> None:
            await asyncio.gather(*(awork(i) for i in range(n_workers)))

        asyncio.run(main())
        lead.aggregate()
    tr = load(p)
    assert_valid(tr)
    assert len({e.id for e in tr.events}) == len(tr.events)
    assert sum(e.type.value == "tool_call" for e in tr.events) == 2 * n_workers * n_calls
    assert sum(e.type.value == "return" for e in tr.events) == 2 * n_workers


_CHILD = r"""
import os, signal, sys
from orchestrace.frameworks.recorder import Recorder
path, kill_at = sys.argv[1], int(sys.argv[2])
rec = Recorder(path, trace_id="crash")
n = 0
with rec.agent("lead", role="orchestrator") as lead:
    with lead.spawn("w") as w:
        while True:
            eid = w.tool_call("t", content="x" * (n % 500))
            print(eid, flush=True)   # the call has returned
            n += 1
            if n == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("kill_at", [1, 37, 400])
def test_nothing_lost_on_sigkill(tmp_path: Path, kill_at: int) -> None:
    p = tmp_path / "k.jsonl"
    out = subprocess.run([sys.executable, "-c", _CHILD, str(p), str(kill_at)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == -signal.SIGKILL
    returned = out.stdout.split()
    assert len(returned) == kill_at
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no end record: the run crashed
        tr = load(p)
    ids = {e.id for e in tr.events}
    assert set(returned) <= ids
    assert_valid(tr)


def test_truncated_last_line_is_tolerated(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    rec = Recorder(p)
    with rec.agent("lead") as lead:
        ids = [lead.tool_call("x") for _ in range(5)]
    data = p.read_bytes()
    p.write_bytes(data + b'{"event": {"id": "e9", "t": 1.0, "ty')  # a crash mid-write
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = load(p)
    assert [e.id for e in tr.events] == ids
