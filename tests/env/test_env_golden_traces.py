"""Golden traces: v0 episodes stay byte-identical across releases (v1 is a new id, not a change).

The v0 episodes equal those of the release before the v1 world (commit ca21c9b): the v1 fields
are off in every v0 configuration and v1 draws its random numbers from new field ids. After a
*deliberate* change of the v1 world, update its digest and say so.

The digest is over the trace with every float rounded to 9 significant digits: numpy picks its
SIMD kernels for ``exp``/``log``/``cos`` by CPU (AVX-512 or not), and those differ in the last
unit in the last place, so byte-identical traces hold on one machine, not across machines
(``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_SPR AVX512_ICL"`` shows it on an AVX-512 CPU). A
change in the world, the trace layout or a decision changes the digest on every machine.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from orchestrace.core.io import dumps
from orchestrace.env import EnvConfig, OrchestrationEnv, make_baseline

GOLDEN = {
    ("default", "adaptive"): "34d81bcdbddb5b50",
    ("default", "oracle"): "fbadfd6709629df6",
    ("default", "random"): "ece306a0955c7d4f",
    ("default", "threshold"): "167434c9ae0d8623",
    ("small", "adaptive"): "2ad9c531c6b913bb",
    ("small", "oracle"): "5ae461ddfd024b91",
    ("small", "random"): "408bba1a8ff2f0bd",
    ("small", "threshold"): "5ae461ddfd024b91",
    ("small_v1", "adaptive"): "bb4357c832153f4e",
}


_FLOAT = re.compile(rb"-?\d+\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def _canonical(text: bytes) -> bytes:
    """``text`` with every float literal rounded to 9 significant digits (see the module doc)."""
    return _FLOAT.sub(lambda m: b"%.9g" % float(m.group()), text)


def _digest(cfg: EnvConfig, env_id: str, policy: str) -> str:
    h = hashlib.sha256()
    for seed in range(5):
        env = OrchestrationEnv(cfg, env_id=env_id, record_trace=True)
        pol = make_baseline(policy, cfg).bind(env)
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
        h.update(_canonical(dumps(info["trace"], format="jsonl")))
        h.update(b"%.9g" % info["return"])
    return h.hexdigest()[:16]


@pytest.mark.parametrize(("config", "policy"), sorted(GOLDEN))
def test_traces_match_their_golden_digest(config: str, policy: str) -> None:
    cfg = getattr(EnvConfig, config)()
    env_id = f"orchestrace/{config.replace('_v1', '-v1')}"
    assert _digest(cfg, env_id, policy) == GOLDEN[(config, policy)]
