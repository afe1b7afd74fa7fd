"""Exact valuation on always-continue paths equals playing the rule in the environment, episode by episode."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace.env import EnvConfig, make_baseline
from orchestrace.env import evaluate as play
from orchestrace.evaluation.exact import collect
from orchestrace.evaluation.simulated import SameHeads
from orchestrace.policies.anchors import family, fit_rule

SEEDS = np.arange(300)
KEYS = ("return", "success", "tokens", "decisions", "rounds", "critical_steps", "difficulty")


class OwnGate:
    """A deterministic stand-in for a learned policy: the adaptive heuristic's heads (not the base
    ones) and a gate of its own (stop once the weakest aggregate's confidence ≥ 0.75)."""

    def __init__(self, cfg: EnvConfig) -> None:
        self.cfg = cfg
        self.heads = make_baseline("adaptive", cfg)
        self.gate = make_baseline("threshold", cfg, threshold=0.75)
        self.o5 = int(np.cumsum((0,) + cfg.head_sizes)[4])

    def act_batch(self, obs, mask, world=None):
        a = self.heads.act_batch(obs, mask, world)
        stop = self.gate.stop_now(world.summary_obs()) | ~mask[:, self.o5 + 1]
        return np.where(world.phase == 4, np.where(stop, self.o5, self.o5 + 1), a)


def _same(got: dict, want: dict, what: str) -> None:
    for k in KEYS:
        np.testing.assert_allclose(got[k], want[k], rtol=0, atol=1e-9, err_msg=f"{what}: {k}")


@pytest.mark.parametrize("cfg", [EnvConfig.small_v1(), EnvConfig.small()], ids=["small-v1", "small-v0"])
def test_every_rule_valued_on_the_paths_equals_the_rule_played(cfg: EnvConfig) -> None:
    heads = OwnGate(cfg)
    fit = collect(cfg, None, np.arange(10_000, 10_400))
    E, R = fit.present.shape
    rules = family(cfg)
    for q in (False, True):
        r = fit_rule(cfg, fit.state.summary.reshape(E, R, -1), fit.payoff, fit.legal, quadratic=q)
        rules[r.name] = r
    # one or two of each kind (the rest of a kind differ only in a parameter)
    keep = ("budget@2", "threshold@0.7", "adaptive-stop", "ac-beta@0.9", "ac-dirichlet@0.8", "esc@2", "vote-share@0.75",
            "fitted-logistic", "fitted-quadratic")
    rules = {n: r for n, r in rules.items() if n in keep}
    for name, h in (("base", None), ("own", heads)):
        paths = collect(cfg, h, SEEDS)
        stopped = set()
        for rn, rule in rules.items():
            exact = paths.value(paths.stops(rule))
            _same(exact, play(cfg, SameHeads(cfg, h, rule, rn), SEEDS), f"{name}+{rn}")
            stopped.add(tuple(exact["rounds"]))
        assert len(stopped) > 3  # the rules do stop at different checks
        _same(paths.clairvoyant(), play(cfg, SameHeads(cfg, h, "clairvoyant"), SEEDS), f"{name}+clairvoyant")
    own = collect(cfg, heads, SEEDS)
    _same(own.value(own.own_stop), play(cfg, heads, SEEDS), "the heads' own gate")
    base = collect(cfg, None, SEEDS)
    _same(base.value(np.zeros(base.present.shape, bool)), play(cfg, make_baseline("always-continue", cfg), SEEDS),
          "always-continue")
