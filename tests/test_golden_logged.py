"""Golden outputs of ``train --from-traces`` and ``eval --traces … --test …`` on the committed corpora.

The learning stack for logged runs is being folded (issue 39: a vote is a team of identical members);
these files pin today's outputs so that the fold shows nothing moved. Each case runs the real CLI in a
fresh interpreter (seed 0, the default settings: the cheapest ones that still walk the whole path —
every model class, the rule family, the claims and the fresh collection) on the packaged vote corpus
``smollm2-v1`` (fresh: ``smollm2-v1-fresh``) and team corpus ``smollm2-team-v1`` (fresh:
``smollm2-team-fresh-v1``).

Normalised before comparing (nothing else): the corpora folder's absolute path → ``<CORPORA>``, the
temporary output folder → ``<OUT>``, ``"eval_seconds"`` (wall clock) → ``0``. Small texts (stdout,
``fit.json``) are kept whole under ``tests/golden/logged/``; the large files (``gate.json``,
``team_policy.json``, ``results.json``, ``summary.md``) as SHA-256 digests of the normalised bytes in
``digests.json``. ``pareto.png`` is not compared (matplotlib metadata). The MLP class is fitted with
torch (the ``learn`` extra) and the vote eval lists ``pareto.png`` only with matplotlib; without
either the output differs by design, so the test skips.

Regenerate (only when an output is meant to change, and say why in the commit):
``ORCHESTRACE_REGEN_GOLDEN=1 python -m pytest tests/test_golden_logged.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import orchestrace

GOLDEN = Path(__file__).parent / "golden" / "logged"
CORPORA = Path(orchestrace.__file__).parent / "data" / "corpora"
REGEN = os.environ.get("ORCHESTRACE_REGEN_GOLDEN") == "1"
CASES = {  # name: (corpus, fresh collection, the policy file train writes)
    "vote": ("smollm2-v1", "smollm2-v1-fresh", "gate.json"),
    "team": ("smollm2-team-v1", "smollm2-team-fresh-v1", "team_policy.json"),
}


def _normalise(text: str, out: Path) -> str:
    text = text.replace(str(CORPORA), "<CORPORA>").replace(str(out), "<OUT>")
    return re.sub(r'"eval_seconds": [0-9.eE+-]+', '"eval_seconds": 0', text)


def _cli(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-m", "orchestrace", *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=1800)  # a loaded 2-core machine: minutes
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def _outputs(name: str, tmp: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(whole texts, digests) of one case, normalised."""
    corpus, fresh, policy = CASES[name]
    run, ev = tmp / "run", tmp / "ev"
    texts = {f"{name}_train.txt": _cli(["train", "--from-traces", str(CORPORA / corpus), "--out", str(run),
                                        "--seed", "0"], tmp)}
    texts[f"{name}_eval.txt"] = _cli(["eval", "--traces", str(CORPORA / corpus), str(run),
                                      "--test", str(CORPORA / fresh), "-o", str(ev)], tmp)
    texts[f"{name}_fit.json"] = (run / "fit.json").read_text()
    texts = {k: _normalise(v, tmp) for k, v in texts.items()}
    big = {policy: run / policy, "results.json": ev / "results.json", "summary.md": ev / "summary.md"}
    digests = {f"{name}/{k}": hashlib.sha256(_normalise(p.read_text(), tmp).encode()).hexdigest()
               for k, p in big.items()}
    return texts, digests


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_train_and_eval_outputs_are_byte_identical_to_the_golden_files(name: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")  # the MLP class: without the learn extra the fit is another one by design
    pytest.importorskip("matplotlib")  # the vote eval lists pareto.png (the plot extra) among what it wrote
    texts, digests = _outputs(name, tmp_path)
    known_path = GOLDEN / "digests.json"
    known = json.loads(known_path.read_text()) if known_path.exists() else {}
    if REGEN:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for k, v in texts.items():
            (GOLDEN / k).write_text(v)
        known_path.write_text(json.dumps({**known, **digests}, indent=1, sort_keys=True) + "\n")
        return
    for k, v in texts.items():
        assert v == (GOLDEN / k).read_text(), f"{k} moved (see the module docstring to regenerate on purpose)"
    assert digests == {k: known[k] for k in digests}
