"""Fixtures for the report tests: reference trace path, a headless-Chromium runner."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "report"
CHROMIUM = os.environ.get("ORCHESTRACE_CHROMIUM", "/usr/bin/chromium")
_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
    "--hide-scrollbars", "--mute-audio", "--enable-logging=stderr", "--v=0",
]


@pytest.fixture(scope="session")
def reference_trace() -> Path:
    p = ROOT / "tests" / "data" / "reference" / "example_trace.json"
    assert p.is_file(), f"test data missing: {p}"
    return p


@pytest.fixture(scope="session")
def claude_fixture():
    """Path of a Claude Code fixture file by name (in tests/data/fixtures)."""

    def find(name: str) -> Path:
        p = ROOT / "tests" / "data" / "fixtures" / "claude-code" / name
        assert p.is_file(), f"test data missing: {p}"
        return p

    return find


class Chromium:
    """Runs headless Chromium on local files: the self-check (``--dump-dom``) and a screenshot."""

    def __init__(self, exe: str) -> None:
        self.exe = exe

    def _cmd(self, profile: str, *extra: str) -> list[str]:
        return [self.exe, *_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000", *extra]

    def start(self, page: Path, screenshot: Path | None = None) -> list[subprocess.Popen]:
        """Launch the DOM dump (and the screenshot) without waiting; see :meth:`finish`."""
        url = page.resolve().as_uri()
        procs = []
        for extra in ([["--dump-dom", url]] + ([[f"--screenshot={screenshot}", "--window-size=1400,900", url]]
                                                if screenshot else [])):
            profile = tempfile.mkdtemp(prefix="orchestrace-chromium-")
            p = subprocess.Popen(self._cmd(profile, *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            p.profile = profile  # type: ignore[attr-defined]
            procs.append(p)
        return procs

    @staticmethod
    def finish(procs: list[subprocess.Popen]) -> dict:
        """Wait; return the page's self-check dict plus ``console_errors`` from Chromium's log."""
        out = {}
        for k, p in enumerate(procs):
            try:
                stdout, stderr = p.communicate(timeout=60)
            finally:
                shutil.rmtree(p.profile, ignore_errors=True)  # type: ignore[attr-defined]
            if k == 0:
                dom = stdout.decode("utf-8", "replace")
                m = re.search(r'<pre id="selfcheck">([^<]*)</pre>', dom)
                assert m, f"no self-check in the DOM (chromium exit {p.returncode}): {stderr.decode()[-2000:]}"
                out = json.loads(html.unescape(m.group(1)))
                log = stderr.decode("utf-8", "replace")
                out["console_errors"] = [ln for ln in log.splitlines()
                                         if "CONSOLE" in ln and ("ERROR" in ln.split("CONSOLE")[0] or "error" in ln.lower())]
                out["blocked"] = [ln for ln in log.splitlines() if "Refused to" in ln or "net::ERR" in ln]
        return out


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"Chromium not found at {CHROMIUM} (Debian: apt-get install chromium); browser test skipped")
    return Chromium(CHROMIUM)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
