"""The anchors in the simulator: the learned gate against every stop rule of the family (docs/sim-anchors.md).

    python benchmarks/sim_anchors.py DIR [DIR …]

``DIR`` is an evaluation folder with ``results.json`` and ``episodes.npz`` (``orchestrace demo
--out DIR`` or ``orchestrace eval RUN --out DIR``). Printed per folder: the claims with their
rules, then every rule on the learned heads — its validation mean return (what tuning saw), its
test mean, and the paired test difference learned − rule with its 95 % interval (n = the test
episodes; every rule valued exactly on the same always-continue paths) — best first on
validation, the chosen ones marked.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from orchestrace._stats import Z975_ROUNDED


def _ci(d: np.ndarray) -> str:
    m = float(d.mean())
    h = Z975_ROUNDED * float(d.std(ddof=1)) / math.sqrt(len(d))
    return f"{m:+.4f} [{m - h:+.4f}, {m + h:+.4f}]"


def table(folder: Path) -> str:
    """The claims and the per-rule table of one evaluation folder, as Markdown."""
    rep = json.loads((folder / "results.json").read_text())
    ep = np.load(folder / "episodes.npz")
    learned = ep["learned/return"]
    lines = [f"### `{folder}`: {rep['env']}, n = {len(learned):,} test episodes", "",
             f"Learned gate: return {learned.mean():.4f}; validation {rep.get('valuation', {}).get('learned_validation_return', float('nan')):.4f}.",
             "", "| verdict | claim | baseline | number |", "|---|---|---|---|"]
    for k, c in rep["claims"].items():
        v = "ref" if c["met"] is None else ("PASS" if c["met"] else "MISS")
        num = c.get("return_diff") or c.get("gap") or c.get("tokens_diff") or c.get("hard_minus_easy")
        txt = f"{num['mean']:+.4f} [{num['lo']:+.4f}, {num['hi']:+.4f}]" if isinstance(num, dict) else ""
        lines.append(f"| {v} | {k} | `{c.get('baseline', '')}` | {txt} |")
    for heads in ("learned", "base"):
        sh = rep["same_heads"][heads]
        picks: dict[str, list[str]] = {}
        for role, r in sh["chosen"].items():
            picks.setdefault(r, []).append(role)
        lines += ["", f"**Stop rules on the {heads} heads** (learned − rule: paired over the same test episodes)", "",
                  "| rule | validation return | test return | learned − rule (95 % CI) | chosen as |", "|---|---|---|---|---|"]
        order = sorted(sh["validation"], key=lambda r: -sh["validation"][r]["return"]) + ["clairvoyant"]
        for r in order:
            ret = ep[f"{heads}+{r}/return"]
            val = sh["validation"].get(r, {}).get("return")
            lines.append(f"| {r} | {'' if val is None else f'{val:.4f}'} | {ret.mean():.4f} | {_ci(learned - ret)} | "
                         f"{', '.join(picks.get(r, []))} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    a = ap.parse_args()
    for d in a.dirs:
        print(table(d))


if __name__ == "__main__":
    main()
