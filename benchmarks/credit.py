"""Credit-assignment benchmark: Shapley exact / sampled vs shap, and all 8 units on 1M events.

    python benchmarks/credit.py [--quick]

1. exact Shapley, n = 20, cheap vectorised v(S) = 1 − exp(−w·S) (not additive);
   anchor: shap's ExactExplainer on the same v as a masking model.
2. permutation Shapley, n = 1,000, to ε = 1% of the value range v(N) − v(∅) at δ = 0.05
   (Hoeffding, antithetic pairs, marginals bounded by max w); anchor: shap's
   PermutationExplainer (forward + reverse orders, i.e. antithetic too) at an equal number
   of orders, on the same v.
3. credit for all 8 units with the cheap methods (broadcast, causal, discounted) on a
   1M-event synth trace vs the time to load that trace from JSON.

Medians first; ratios against the anchors last. Machine: 2 shared cores (numbers are from a
loaded machine; run with ``nice``).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from orchestrace.credit import assign, batched, hoeffding_samples, shapley


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def game(n, seed=0):
    w = np.random.default_rng(seed).uniform(0.0, 4.0 / n, size=n)

    def v(m):  # (B, n) bool/float masks → (B,)
        return 1.0 - np.exp(-(np.asarray(m, dtype=float) @ w))

    return v, w


def shap_model(v):
    """shap feeds masked copies of x = 1 (background 0): the masked input *is* the coalition."""
    return lambda X: v(np.asarray(X) > 0.5)


def shap_exact(v, n):
    import shap

    masker = shap.maskers.Independent(np.zeros((1, n)), max_samples=1)
    ex = shap.explainers.Exact(shap_model(v), masker)
    return ex(np.ones((1, n))).values[0]


def shap_permutation(v, n, pairs, seed):
    import shap

    np.random.seed(seed)
    masker = shap.maskers.Independent(np.zeros((1, n)), max_samples=1)
    ex = shap.explainers.Permutation(shap_model(v), masker, seed=seed)
    return ex(np.ones((1, n)), max_evals=pairs * (2 * n + 1), silent=True).values[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = ap.parse_args()
    quick = args.quick
    rows: list[tuple[str, float]] = []
    ratios: list[str] = []
    rep = 1 if quick else 3

    # 1. exact Shapley -------------------------------------------------------------------
    n = 12 if quick else 20
    v, w = game(n)
    t_ours, res = timed(lambda: shapley(batched(v), n), rep)
    t_shap, phi_shap = timed(lambda: shap_exact(v, n), 1)
    err = float(np.max(np.abs(res.values - phi_shap)))
    rows += [(f"exact Shapley n={n} (orchestrace)", t_ours), (f"exact Shapley n={n} (shap Exact)", t_shap)]
    print(f"exact n={n}: max |orchestrace − shap| = {err:.2e}; Σφ = {res.values.sum():.6f}")
    ratios.append(f"exact n={n}: shap / orchestrace = {t_shap / t_ours:.1f}×  (values agree to {err:.1e})")

    # 2. permutation Shapley to ε = 1% of the value range ------------------------------------
    n = 200 if quick else 1000
    v, w = game(n, seed=1)
    vrange = float(v(np.ones((1, n)))[0] - v(np.zeros((1, n)))[0])
    eps, delta, r = 0.01 * vrange, 0.05, float(w.max())
    pairs = hoeffding_samples(n, epsilon=eps, delta=delta, value_range=r)
    t_perm, res = timed(lambda: shapley(batched(v), n, epsilon=eps, delta=delta, value_range=r, seed=0), rep)
    print(f"permutation n={n}: ε target {eps:.3g} (1% of {vrange:.4f}), r = {r:.3g} → {pairs} antithetic pairs "
          f"({res.permutations} orders); achieved ε = {res.epsilon:.3g}; mean stderr {res.stderr.mean():.2e}")
    rows.append((f"permutation Shapley n={n}, ε=1% (orchestrace, {res.permutations} orders)", t_perm))
    # reference values: many more orders, to check both estimators
    ref = shapley(batched(v), n, samples=400 if not quick else 200, seed=99).values
    # shap at an equal number of orders (its passes are forward + reverse = one antithetic pair)
    shap_pairs = max(pairs, 1)
    shap_n = n
    t_sp, phi_sp = timed(lambda: shap_permutation(v, shap_n, shap_pairs, seed=0), 1)
    if t_sp > 0:
        rows.append((f"permutation Shapley n={shap_n} (shap Permutation, {2 * shap_pairs} orders)", t_sp))
    e_ours = float(np.max(np.abs(res.values - ref)))
    e_shap = float(np.max(np.abs(phi_sp - ref)))
    print(f"max |estimate − reference(400 pairs)|: orchestrace {e_ours:.2e}, shap {e_shap:.2e} (ε = {eps:.2e})")
    ratios.append(f"permutation n={n}, equal orders: shap / orchestrace = {t_sp / t_perm:.1f}×")

    # 3. all 8 units, cheap methods, 1M events vs load ---------------------------------------
    from orchestrace.graph import TraceGraph
    from orchestrace.io import dump, load
    from orchestrace.synth import synth

    events = 100_000 if quick else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        dump(synth(events=events, agents=100, seed=0), path)
        t_load, tr = timed(lambda: load(path), 1 if not quick else 2)
    rows.append((f"load {events:,}-event trace (JSON)", t_load))
    t_graph, g = timed(lambda: TraceGraph.from_trace(tr), 1)
    rows.append((f"TraceGraph.from_trace ({events:,} events)", t_graph))
    units = ["token", "tool_call", "message", "turn", "agent", "role", "orchestrator", "team"]
    per_method = {}
    for method in ("broadcast", "causal", "discounted"):
        t0 = time.perf_counter()
        for u in units:
            assign(tr, unit=u, method=method, graph=g)
        per_method[method] = time.perf_counter() - t0
        rows.append((f"credit, 8 units, {method} ({events:,} events, graph given)", per_method[method]))
    cheap = per_method["broadcast"] + per_method["causal"]
    allm = sum(per_method.values())

    print()
    print(f"{'benchmark':80s} {'median s':>10s}")
    for name, t in rows:
        print(f"{name:80s} {t:10.3f}")
    print()
    print("ratios (anchors measured in this run):")
    for line in ratios:
        print("  " + line)
    print(f"  8 units × (broadcast + causal) / load = {cheap / t_load:.2f}  (target < 1)")
    print(f"  8 units × (broadcast + causal + discounted) / load = {allm / t_load:.2f}")
    print(f"  (graph build + 8 units × broadcast + causal) / load = {(t_graph + cheap) / t_load:.2f}")
    sys.stdout.flush()
    _ = math


if __name__ == "__main__":
    main()
