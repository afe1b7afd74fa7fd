"""README's tour, run as written from a temporary folder outside the clone.

Every command line of the tour's first ``bash`` block runs with ``orchestrace`` on PATH (this
tree's package) and the working directory a fresh temporary folder, except the lines named in
:data:`SKIP`, each with its reason (placeholders for the user's own files, minutes of training
or LLM calls, extras such as Ray). Lines run in order, so later lines read what earlier wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import orchestrace

ROOT = Path(__file__).resolve().parents[1]

#: Tour lines not run here: a substring of the line → why.
SKIP: dict[str, str] = {
    "~/.claude/": "placeholder: the user's own Claude Code session",
    "export trl session.json": "reads the placeholder session's import",
    "who_and_when/": "placeholder: a file of the Who&When dataset",
    "--base-url URL": "placeholder: an OpenAI-compatible endpoint",
    "collect run ": "minutes of real LLM calls (collect run is tested against a scripted endpoint)",
    "for s in 0 1 2": "minutes of training per seed",
    "--algo grpo": "minutes of training",
    "orchestrace eval runs/": "needs the trained runs of the skipped lines",
    "orchestrace serve-local": "a server that runs until stopped",
    "--ray": "the Ray extra",
    "python examples/": "a script of the clone, not the package",
}


def tour_lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A tour", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [ln.strip() for ln in joined.splitlines() if ln.strip()]


def test_every_skipped_line_has_a_reason_and_the_rest_are_many() -> None:
    lines = tour_lines()
    ran = [ln for ln in lines if not any(k in ln for k in SKIP)]
    assert all(any(k in ln for ln in lines) for k in SKIP), "a SKIP entry matches no tour line: remove it"
    assert len(ran) >= 20 and not any("tests/data" in ln or "src/orchestrace" in ln for ln in lines)


@pytest.mark.slow
def test_the_tour_runs_from_a_folder_outside_the_clone(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "orchestrace"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m orchestrace \"$@\"\n")
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(Path(orchestrace.__file__).parents[1])}
    assert not str(work).startswith(str(ROOT))
    for ln in tour_lines():
        if any(k in ln for k in SKIP):
            continue
        r = subprocess.run(["bash", "-c", "set -o pipefail; " + ln], cwd=work, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"{ln}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr, ln


@pytest.mark.parametrize("name", ["smollm2-v1", "smollm2-samples", "example-tasks", "whowhen-ag27", "survey-papers",
                                  "survey-excluded"])
def test_data_path_names_an_existing_packaged_file(name: str) -> None:
    r = subprocess.run([sys.executable, "-m", "orchestrace", "data", "path", name], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(Path(orchestrace.__file__).parents[1])})
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).exists()
