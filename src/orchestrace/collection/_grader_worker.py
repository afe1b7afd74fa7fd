"""The process a user's grader runs in (started by :mod:`orchestrace.collection._sandbox`; never imported).

Run as a script (``python _grader_worker.py``), it imports nothing of orchestrace. The protocol
is one JSON object a line on two private file descriptors (duplicated from stdin and stdout
before fds 0 and 1 are pointed at ``/dev/null``, so a grader that prints or reads cannot
corrupt it):

1. the parent sends ``{"path": [...], "cwd": ..., "mem_mb": ..., "func": "module:function" | null}``;
2. the worker answers ``{"hello": true}`` at once, then imports the function and answers
   ``{"ready": true}`` or ``{"err": "<Type>: <message>"}``;
3. each request ``{"text": ..., "ref": ...}`` (a callable) or ``{"text": ..., "pattern": ...}``
   (a regex search) is answered ``{"out": <bool|str|int|float|null>}``, ``{"type": "<name>"}``
   (the grader returned something else) or ``{"err": ...}``.

Everything the user's code raises — ``SystemExit`` and ``KeyboardInterrupt`` included — is
an ``err`` answer; a hang, a swallowed signal or a crash is the parent's to handle (it kills
the process at the deadline).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from typing import Any

_MSG_CHARS = 500


def _describe(exc: BaseException) -> str:
    msg = str(exc)
    if len(msg) > _MSG_CHARS:
        msg = msg[:_MSG_CHARS] + "…"
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _answer(out: Any) -> dict[str, Any]:
    if out is None or isinstance(out, bool):
        return {"out": out}
    if isinstance(out, str):
        return {"out": str(out)}
    if isinstance(out, (int, float)):
        try:
            return {"out": str(out)}  # a number is compared as its string; a 10**5000 may not convert
        except ValueError as exc:
            return {"err": _describe(exc)}
    return {"type": type(out).__name__}


def _limit_memory(mb: int) -> None:
    if mb <= 0:
        return
    try:
        import resource

        lim = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    except (ImportError, ValueError, OSError):  # not POSIX, or a hard limit already lower
        pass


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when the collector dies (a grader looping for ever is not left behind)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError, TypeError):
        pass


def main() -> None:  # noqa: C901 (one loop, read top to bottom)
    _die_with_parent()
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdout = sys.stderr
    rd = os.fdopen(rfd, "rb")
    wr = os.fdopen(wfd, "wb", buffering=0)

    def send(obj: dict[str, Any]) -> None:
        wr.write(json.dumps(obj).encode() + b"\n")

    try:
        init = json.loads(rd.readline())
        sys.path[:] = [str(p) for p in init.get("path", [])]
        if init.get("cwd"):
            os.chdir(init["cwd"])
        _limit_memory(int(init.get("mem_mb", 0)))
        send({"hello": True})
        fn = None
        if init.get("func"):
            mod, _, name = init["func"].partition(":")
            try:
                fn = getattr(importlib.import_module(mod), name)
            except BaseException as exc:  # noqa: BLE001 (a module's own SystemExit at import is an answer)
                send({"err": _describe(exc)})
                return
            if not callable(fn):
                send({"err": "not callable"})
                return
        send({"ready": True})
        patterns: dict[str, re.Pattern[str]] = {}
        while line := rd.readline():
            req = json.loads(line)
            try:
                if fn is not None:
                    res = _answer(fn(req["text"], req["ref"]))
                else:
                    rx = patterns.get(req["pattern"])
                    if rx is None:
                        rx = patterns[req["pattern"]] = re.compile(req["pattern"])
                    res = {"out": rx.search(req["text"]) is not None}
            except BaseException as exc:  # noqa: BLE001 (SystemExit, KeyboardInterrupt: the grader's error)
                res = {"err": _describe(exc)}
            send(res)
    except BaseException:  # noqa: BLE001 (the parent sees the pipe close and reports it)
        os._exit(3)
    os._exit(0)


if __name__ == "__main__":
    main()
