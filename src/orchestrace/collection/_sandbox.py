"""User graders run in their own process, under a hard deadline and a memory limit.

A task file's ``module:function`` grader, and a ``regex`` grader's pattern, are code and data the
collector does not control: a grader may raise ``SystemExit`` or ``KeyboardInterrupt``, swallow a
timer's exception, sleep at import, exhaust memory, or a pattern may backtrack for hours. None of
that may take the collector down, so each runs in a worker process
(:mod:`orchestrace.collection._grader_worker`, started with ``subprocess``, its own session) that the
collector kills at the deadline — a signal the grader cannot catch. Every failure comes back as
:class:`GraderFailed` with a message that says what happened; the caller counts it.

One worker per callable (and one for every regex) is kept for the whole run and restarted after
a kill; the interpreter's own start-up is waited for apart from the grader's deadline (it is not
the grader's time), the import of the grader's module is not.

>>> run_grader(None, "the answer is 42", pattern=r"\\b42\\b", timeout_s=10.0)
True
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["GraderFailed", "check_grader", "run_grader", "shutdown"]

#: The interpreter's start-up (not the grader's): waited for before the grader's deadline starts.
STARTUP_S = 60.0
#: Address space of a grader's process (MiB); ``ORCHESTRACE_GRADER_MEMORY_MB`` overrides, 0 = none.
MEMORY_MB = 4096
#: The longest answer line read back from a worker.
_MAX_REPLY = 1 << 20
#: Workers kept alive at once (the least recently used is stopped beyond this).
_MAX_WORKERS = 8
_WORKER = Path(__file__).with_name("_grader_worker.py")


class GraderFailed(Exception):
    """A user grader raised, hung past its deadline, ran out of memory, or its process died."""


class _Worker:
    def __init__(self, func: str | None, timeout_s: float) -> None:
        self.func = func
        self.lock = threading.Lock()
        mem = os.environ.get("ORCHESTRACE_GRADER_MEMORY_MB", str(MEMORY_MB))
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(_WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        self.buf = b""
        init = {"path": [str(p) for p in sys.path], "cwd": os.getcwd(), "func": func,
                "mem_mb": int(mem) if mem.strip().isdigit() else MEMORY_MB}
        self._send(init)
        self._read(STARTUP_S, "start")  # the interpreter, not yet the user's module
        got = self._read(timeout_s, "import")
        if "err" in got:
            self.kill()
            raise GraderFailed(f"cannot be loaded ({got['err']}); is the module on PYTHONPATH?")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _send(self, obj: dict[str, Any]) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.kill()
            raise GraderFailed(f"its process ended ({self._status()})") from None

    def _status(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def _read(self, timeout_s: float, stage: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout_s
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                what = "its module did not import" if stage == "import" else "did not return"
                if stage == "start":
                    what = "its process did not start"
                raise GraderFailed(f"{what} within {timeout_s:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.kill()
                hint = " (over its memory limit?)" if self.proc.returncode not in (0, None) else ""
                raise GraderFailed(f"its process ended ({self._status()}){hint}")
            self.buf += chunk
            if len(self.buf) > _MAX_REPLY:
                self.kill()
                raise GraderFailed(f"answered more than {_MAX_REPLY} bytes")
        # a pipe to our own worker, read with a timeout and a reply cap above: not a file, so not _limits.capped_lines
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            return dict(json.loads(line))
        except ValueError:
            self.kill()
            raise GraderFailed("answered something that is not the worker's protocol") from None

    def call(self, req: dict[str, Any], timeout_s: float) -> Any:
        self._send(req)
        got = self._read(timeout_s, "call")
        if "err" in got:
            raise GraderFailed(f"raised {got['err']}")
        if "type" in got:
            raise GraderFailed(f"returned {got['type']}; expected bool, str or None")
        return got.get("out")

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the grader's own children too
            except OSError:
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL is not refused
            self.proc.wait(5)
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if f is not None:
                    f.close()


_workers: dict[tuple[Any, ...], _Worker] = {}
_guard = threading.Lock()


def _worker(func: str | None, timeout_s: float) -> _Worker:
    key = (func, tuple(sys.path), os.getcwd())
    with _guard:
        w = _workers.pop(key, None)
        if w is None or not w.alive:
            w = _Worker(func, timeout_s)
        _workers[key] = w  # most recently used last
        while len(_workers) > _MAX_WORKERS:
            _workers.pop(next(iter(_workers))).kill()
        return w


def run_grader(func: str | None, text: str, *, reference: str = "", pattern: str = "",
               timeout_s: float) -> Any:
    """Call the grader ``func`` (``module:function``) on ``(text, reference)`` — or, with ``func=None``,
    search ``pattern`` in ``text`` — in its process; raise :class:`GraderFailed` on any failure.

    The deadline ``timeout_s`` covers the call (and the import, when the worker starts).
    """
    req = {"text": text, "ref": reference} if func else {"text": text, "pattern": pattern}
    for _ in range(3):
        w = _worker(func, timeout_s)
        with w.lock:
            if w.alive:  # else killed at another thread's deadline meanwhile: start a fresh one
                return w.call(req, timeout_s)
    raise GraderFailed("its process keeps ending")


def check_grader(func: str, timeout_s: float) -> None:
    """Import ``func`` in its worker (started if needed); :class:`GraderFailed` says why it cannot be loaded."""
    _worker(func, timeout_s)


def shutdown() -> None:
    """Stop every worker (run at exit)."""
    with _guard:
        while _workers:
            _workers.popitem()[1].kill()


atexit.register(shutdown)
