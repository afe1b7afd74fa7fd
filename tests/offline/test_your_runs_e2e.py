"""docs/your-runs.md's worked example, run as written from a folder outside the clone.

The three commands (logs → corpus → fitted stop → exact evaluation) are read from the doc's
first ``bash`` block, so the doc and this test cannot drift apart.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import orchestrace

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-runs.md"


def _orchestrace(args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run one ``orchestrace …`` line (``$(orchestrace …)`` substitutions expanded first) in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(Path(orchestrace.__file__).parents[1])}

    def sub(m: re.Match[str]) -> str:
        out = _orchestrace(m.group(1), cwd)
        assert out.returncode == 0, out.stderr
        return shlex.quote(out.stdout.strip())

    line = re.sub(r'"?\$\(orchestrace ([^)]*)\)"?', sub, args)
    return subprocess.run([sys.executable, "-m", "orchestrace", *shlex.split(line)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def test_the_worked_example_runs_as_written_from_another_folder(tmp_path: Path) -> None:
    block = re.search(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    lines = [ln.strip() for ln in block.group(1).splitlines() if ln.strip()]
    assert len(lines) == 3 and all(ln.startswith("orchestrace ") for ln in lines)
    for ln in lines:
        r = _orchestrace(ln[len("orchestrace "):], tmp_path)
        assert r.returncode == 0, (ln, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
    res = json.loads((tmp_path / "report" / "results.json").read_text())
    tasks = res["corpus"]["tasks"]
    assert sum(tasks.values()) == 240 and min(tasks.values()) >= 10
    gate = res["gates"]["run"]
    assert gate["summary"]["return"]["lo"] <= gate["summary"]["return"]["mean"] <= gate["summary"]["return"]["hi"]
    assert (tmp_path / "report" / "pareto.png").stat().st_size > 1000
    man = json.loads((tmp_path / "corpus" / "manifest.json").read_text())
    assert man["import"]["replies"] == 240 * 8 and man["model"] == "SmolLM2-135M-Instruct"
