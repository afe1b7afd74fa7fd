"""The joint team policy against every fixed team × stop rule, per fitting seed, on the test split and fresh sets.

Fits the joint policy (:func:`~orchestrace.offline.fit_team_policy`; linear → quadratic → MLP
chosen on validation) once per fitting seed on the corpus's train tasks, then values it, every
fixed configuration (member subset × aggregation) × every stop rule of the family (tuned on
validation), the fitted stop-only policy on the best fixed team, a single cold call and the
defaults people run (an always-continue vote at T 0.7; a fixed three-round debate) on the
corpus's test split and on every ``--test`` collection — paired 95 % CIs, ties written as ties,
every seed reported (never only the best)::

    nice -n 5 python benchmarks/team_policy.py --corpus src/orchestrace/data/corpora/smollm2-team-v1 \\
        --test /work/fresh/team-fresh --seeds 0,1,2 --json runs/team_policy.json
    nice -n 5 python benchmarks/team_policy.py --synthetic 6000      # no corpus: the synthetic team
    nice -n 5 python benchmarks/team_policy.py --corpus src/orchestrace/data/corpora/smollm2-v1   # one kind: a vote
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from orchestrace.errors import ConfigError, OrchestraceError  # noqa: E402
from orchestrace.offline import (  # noqa: E402
    LoggedRuns,
    check_team_runs,
    evaluate_team,
    fit_team_policy,
    load_logged_runs,
    make_synthetic_team,
    read_corpus,
    render_team,
)


def read_team(path: Path) -> LoggedRuns:
    """A corpus folder or .npz; a team corpus folder read before the library's team reader existed gets its member
    kinds, who-sees-whom and confidences from the trace headers and returns (torn or truncated runs excluded, counted)."""
    if path.suffix == ".npz":
        return read_corpus(path)
    runs = load_logged_runs(path, exclude=True)
    if runs.members or json.loads((path / "manifest.json").read_text()).get("format") != "orchestrace-team-corpus-v1":
        return runs
    import gzip

    heads: dict[str, dict] = {}
    conf: dict[tuple[str, int, int], float] = {}
    for f in sorted(path.glob("traces*.jsonl*")):
        with (gzip.open(f, "rt") if f.suffix == ".gz" else open(f)) as fh:  # noqa: SIM115
            tid = None
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "header" in rec:
                    tid = rec["header"]["task_id"]
                    heads[tid] = rec["header"]["meta"]
                elif "event" in rec and rec["event"].get("type") == "return" and tid is not None:
                    a = rec["event"].get("attrs") or {}
                    if isinstance(a.get("confidence"), (int, float)):
                        conf[(tid, a["round"], a["worker"])] = float(a["confidence"])
    kept = [heads[t] for t in runs.task_ids.tolist()]
    teams = {(tuple(h["members"]), tuple(tuple(s) for s in h["sees"])) for h in kept}
    if len(teams) != 1:
        raise ConfigError(f"{path}: runs of {len(teams)} different teams: {sorted(teams)[:3]}")
    (members, sees), = teams
    T, R, W = runs.answers.shape
    c = np.full((T, R, W), np.nan, np.float32)
    for i, t in enumerate(runs.task_ids.tolist()):
        for r in range(R):
            for w in range(W):
                c[i, r, w] = conf.get((t, r, w), np.nan)
    return dataclasses.replace(runs, members=members, sees=sees, confidence=c)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--corpus", type=Path, help="team corpus folder or .npz")
    ap.add_argument("--synthetic", type=int, default=0, help="no corpus: a synthetic team of this many tasks")
    ap.add_argument("--test", type=Path, action="append", default=[], help="fresh collection (repeatable)")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--classes", default="linear,quadratic,mlp")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    try:
        if a.corpus is not None:
            runs, notes = check_team_runs(read_team(a.corpus), where=str(a.corpus), allow_vote=True)
            fresh = [(str(t), read_team(t)) for t in a.test]  # torn or truncated runs: excluded, counted, warned
        else:
            runs, notes = make_synthetic_team(a.synthetic or 6000, 4, seed=0), []
            fresh = [("synthetic-fresh", make_synthetic_team(max(600, (a.synthetic or 6000) // 5), 4, seed=99))]
    except OrchestraceError as exc:
        sys.exit(f"error: {exc}")
    for n in notes:
        print(f"note: {n}")
    pols, names, fits = [], [], {}
    for s in (int(x) for x in a.seeds.split(",")):
        t = time.perf_counter()
        pol, rep = fit_team_policy(runs, classes=tuple(a.classes.split(",")), seed=s,
                                   log=lambda m, s=s: print(f"[seed {s}] {m}", flush=True))
        fits[f"seed{s}"] = {**rep, "seconds": time.perf_counter() - t}
        print(f"[seed {s}] chosen {pol.model_class} (validation return {pol.meta['validation_return']:.4f}) in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
        pols.append(pol)
        names.append(f"seed{s}")
    res = evaluate_team(runs, pols, names=names, tests=fresh, log=print)
    res["fits"] = fits
    print(render_team(res))
    for sn, st in res["sets"].items():
        if "across_seeds" in st:
            print(f"{sn}: across seeds (mean ± t-interval of the return difference):")
            for k, v in st["across_seeds"].items():
                print(f"  {k}: {v['mean']:+.4f} [{v['lo']:+.4f}, {v['hi']:+.4f}] (n={v['n']})")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
