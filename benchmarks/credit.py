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
    w32 = w.astype(np.float32)

    def v(m):  # (B, n) bool masks → (B,): 1 − exp(−w·S), float32 inner product
        return 1.0 - np.exp(-(np.asarray(m).astype(np.float32) @ w32).astype(np.float64))

    return v, w


def shap_model(v):
    """shap feeds masked copies of x = 1 (background 0): the masked input *is* the coalition."""
    return lambda X: v(np.asarray(X) > 0.5)


def shap_exact(v, n):
    import shap

    masker = shap.maskers.Independent(np.zeros((1, n)), max_samples=1)
    ex = shap.explainers.Exact(shap_model(v), masker)
    return ex(np.ones((1, n)), max_evals=(1 << n) + 1).values[0]


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
    v6, _ = game(6)
    shap_exact(v6, 6)  # warm-up: shap compiles its kernels (numba) on the first call
    n = 14 if quick else 20
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
    vrange = float(v(np.ones((1, n), bool))[0] - v(np.zeros((1, n), bool))[0])
    eps, delta, r = 0.01 * vrange, 0.05, float(w.max())
    pairs = hoeffding_samples(n, epsilon=eps, delta=delta, value_range=r)
    t_perm, res = timed(lambda: shapley(batched(v), n, epsilon=eps, delta=delta, value_range=r, seed=0), rep)
    print(f"permutation n={n}: ε target {eps:.3g} (1% of v(N)−v(∅) = {vrange:.4f}), marginals in [0, {r:.3g}] → "
          f"{pairs} antithetic pairs ({res.permutations} orders); achieved ε = {res.epsilon:.3g}")
    rows.append((f"permutation Shapley n={n} to ε=1% (orchestrace, {res.permutations} orders)", t_perm))
    ref = shapley(batched(v), n, samples=2000 if not quick else 400, seed=99).values
    print(f"  max |estimate − reference (many orders)| = {np.max(np.abs(res.values - ref)):.2e} (ε = {eps:.2e})")
    # shap's Permutation explainer at an equal number of orders (its passes are forward +
    # reverse: one antithetic pair). At n = 1000 one pass costs shap ~10 s, so it runs 2 pairs.
    k = 2
    t_sp, phi_sp = timed(lambda: shap_permutation(v, n, k, seed=0), 1)
    t_k, res_k = timed(lambda: shapley(batched(v), n, samples=2 * k, value_range=r, seed=0), rep)
    rows += [(f"permutation Shapley n={n}, {2 * k} orders (orchestrace)", t_k),
             (f"permutation Shapley n={n}, {2 * k} orders (shap Permutation)", t_sp)]
    print(f"  {2 * k} orders: max |orchestrace − reference| = {np.max(np.abs(res_k.values - ref)):.2e}, "
          f"max |shap − reference| = {np.max(np.abs(phi_sp - ref)):.2e}")
    ratios.append(f"permutation n={n}, equal orders ({2 * k}): shap / orchestrace = {t_sp / t_k:.0f}×")
    m2 = 100 if quick else 200
    v2, w2 = game(m2, seed=2)
    p2 = hoeffding_samples(m2, epsilon=0.01 * float(v2(np.ones((1, m2), bool))[0]), delta=delta, value_range=float(w2.max()))
    t_sp2, _ = timed(lambda: shap_permutation(v2, m2, p2, seed=0), 1)
    t_o2, _ = timed(lambda: shapley(batched(v2), m2, samples=2 * p2, value_range=float(w2.max()), seed=0), rep)
    rows += [(f"permutation Shapley n={m2}, {2 * p2} orders (orchestrace)", t_o2),
             (f"permutation Shapley n={m2}, {2 * p2} orders (shap Permutation)", t_sp2)]
    ratios.append(f"permutation n={m2}, equal orders ({2 * p2}): shap / orchestrace = {t_sp2 / t_o2:.0f}×")

    # 3. all 8 units, cheap methods, 1M events vs load ---------------------------------------
    from orchestrace import synth
    from orchestrace.graph import TraceGraph
    from orchestrace.io import dump, load

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
    print()
    print(f"{'benchmark':80s} {'median s':>10s}")
    for name, t in rows:
        print(f"{name:80s} {t:10.3f}")
    print()
    print("ratios (anchors measured in this run):")
    for line in ratios:
        print("  " + line)
    for method, t in per_method.items():
        first = " (includes the one-time unit/role/token derivations)" if method == "broadcast" else ""
        print(f"  8 units × {method} / load = {t / t_load:.2f}  (target < 1){first}")
    print(f"  8 units × all three cheap methods / load = {sum(per_method.values()) / t_load:.2f}")
    print(f"  (TraceGraph build + 8 units × broadcast) / load = {(t_graph + per_method['broadcast']) / t_load:.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
