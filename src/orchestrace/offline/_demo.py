"""The demo's learned-from-traces section: the committed real corpus, no model needed.

:func:`demo_section` fits the stop gate on the committed ``smollm2-v1`` corpus (1,509 logged
SmolLM2-135M vote loops) exactly as ``orchestrace train --from-traces`` does, values it and the
whole rule family on the corpus's test tasks as ``orchestrace eval --traces`` does, writes both
under ``OUT/real/`` and returns the Markdown section whose first line is its headline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

__all__ = ["DEFAULT_CORPUS", "demo_section"]

#: The committed corpus of real runs (package data).
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpora" / "smollm2-v1"


def demo_section(out: str | Path, *, corpus: str | Path = DEFAULT_CORPUS, seed: int = 0,
                 log: Callable[[str], None] = lambda s: None) -> str:
    """Fit and evaluate the stop on the real corpus; write ``OUT/real/``; return Markdown.

    The first line is a one-sentence headline (the demo prints it); the rest is the
    ``eval --traces`` summary with its claims and their rules.

    >>> from orchestrace.offline._demo import DEFAULT_CORPUS
    >>> (DEFAULT_CORPUS / "manifest.json").exists()
    True
    """
    from ..errors import ConfigError
    from ._eval import evaluate_traces
    from ._fit import fit_gate
    from ._io import check_runs, read_corpus
    from ._report import render, write_pareto

    corpus = Path(corpus)
    if not corpus.exists():
        raise ConfigError(f"{corpus}: the committed corpus of real runs is missing from this installation")
    runs, notes = check_runs(read_corpus(corpus), where=str(corpus))
    gate, fit = fit_gate(runs, seed=seed, log=log)
    real = Path(out) / "real"
    gate.save(real / "run")
    (real / "run" / "fit.json").write_text(json.dumps({**fit, "exclusions": notes, "seed": seed,
                                                       "corpus": str(corpus)}, indent=1, default=float),
                                           encoding="utf-8")
    res = evaluate_traces(runs, [gate], names=["learned"], log=log)
    text = render(res)
    (real / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    (real / "summary.md").write_text(text, encoding="utf-8")
    write_pareto(res, real / "pareto.png")
    g = res["gates"]["learned"]
    d = g["claims"]["beats_best_rule"]["return_diff"]
    sv = g["claims"]["fewer_calls_at_equal_accuracy"]["call_saving"]
    verdict = "beats" if d["lo"] > 0 else ("ties" if d["hi"] >= 0 else "is below")
    head = (f"**Learned from real traces** ({corpus.name}: {res['corpus']['tasks']['test']} test tasks of "
            f"SmolLM2-135M): the gate fitted from the logs alone ({g['model_class']}) {verdict} the best "
            f"validation-tuned rule of the whole family ({res['best_rule']}) by {d['mean']:+.4f} "
            f"[{d['lo']:+.4f}, {d['hi']:+.4f}] return, with {sv['mean']:.0%} fewer LLM calls than "
            f"{g['claims']['fewer_calls_at_equal_accuracy']['baseline']}.")
    body = text.replace("# Stop rules on logged runs (exact offline evaluation)",
                        "## Learned from real LLM traces (exact offline evaluation)", 1)
    return head + "\n\n" + body + "\n\nFiles: `real/` (results.json, summary.md, pareto.png, run/gate.json).\n"
