"""The env ↔ learner contract (``orchestrace.env.layout``), checked from both sides.

* The observation writer (:mod:`orchestrace.env.observe`) and a reader that goes through the
  layout's names agree on every named feature: a world is put in a known state by hand, the
  writer writes, the test reads each feature *by name* and compares it with the value worked
  out by hand from that state (one test per feature).
* No reading of env → learner by raw numbers: a grep over ``src/`` fails on ``o[4]``-style
  head offsets, observation columns given as numbers and re-derived layouts.
* The layout is derived once per configuration, and every batched env is a ``BatchedEnv``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from orchestrace.env import BatchedEnv, BatchEnv, EnvConfig, local_batch_env
from orchestrace.env.layout import (
    ATTEMPT_FEATURES,
    CONTINUE,
    DECISION,
    DONE,
    GLOBAL_FEATURES,
    O3,
    STOP,
    SUBTASK_FEATURES,
    Agg,
    Att,
    G,
    Heads,
    Layout,
    ObsLayout,
    Phase,
    S,
    Sub,
    due_phase,
    layout_of,
)
from orchestrace.env.world import World

SRC = Path(__file__).resolve().parents[2] / "src" / "orchestrace"

# ----------------------------------------------------------------------------- a known state
R, A = 4, 6  # max_rounds, max_attempts of the test worlds
RND = np.array([1, 3])  # row 0: round 1 of 4; row 1: the last round
TOKENS, CLOCK, NDEC, SAFETY, HINT, PRICE = 1000.0, 30.0, 7, 1, 0.4, 2.0


def _known_world(cfg: EnvConfig) -> World:
    """Two rows, identical but for the round: 3 of N = 4 subtasks, subtask 1 being staffed
    (O3 due: 2 attempts pending on profile 4), method verifier."""
    w = World(cfg, 2)
    w.reset_rows(np.arange(2), np.array([5, 6], dtype=np.uint64))
    w.phase[:] = O3
    w.n[:] = 3
    w.cur[:] = 1
    w.rnd[:] = RND
    w.ndec[:] = NDEC
    w.tokens[:] = TOKENS
    w.clock[:] = CLOCK
    w.safety[:] = SAFETY
    w.hint[:] = HINT
    w.price[:] = PRICE
    w.pf[:] = 2
    w.pk[:] = 4
    w.method[:] = Agg.VERIFIER
    w.typ[:] = [0, 2, 1, 1]
    w.par[:] = -1
    w.par[:, 1, 0] = 0  # subtask 1 depends on subtask 0
    w.nsol[:] = [2, 1, 0, 0]
    w.natt[:] = [3, 1, 0, 0]
    w.top[:] = [2, 1, 0, 0]
    w.sec[:] = [0, 1, 0, 0]
    w.aggc[:] = [0.9, 0.5, 0.0, 0.0]
    w.aacc[:] = [1, 0, 0, 0]
    w.arej[:] = [0, 1, 0, 0]
    w.untr[:] = [True, False, False, False]
    w.rnd_att[:] = [1, 1, -1, -1]
    w.agg[:] = [0, 1, -1, -1]
    # subtask 0's attempts: a solver (answer 0 = the aggregate, conf .8, profile 1, round 1), a
    # verifier accepting the aggregate (profile 5, round 0), a solver (answer 2, conf .3, profile 0, round 1)
    w.att_ans[:] = -1
    w.att_ans[:, 0, :3] = [0, 0, 2]
    w.att_conf[:, 0, :3] = [0.8, 0.0, 0.3]
    w.att_prof[:, 0, :3] = [1, 5, 0]
    w.att_ver[:, 0, :3] = [False, True, False]
    w.att_acc[:, 0, :3] = [False, True, False]
    w.att_rnd[:, 0, :3] = [1, 0, 1]
    w._ver += 1  # the state changed behind the simulation's back: drop its cached statistics
    return w


SUMMARY_CFG = EnvConfig.small().replace(n_subtasks_max=4, max_rounds=R, max_attempts=A, show_price=True,
                                        token_budget=4000.0)
EVIDENCE_CFG = EnvConfig.small_v1().replace(n_subtasks_max=4, max_rounds=R, max_attempts=A, token_budget=4000.0)

# by hand from the state above (margins: subtask 0 → 2, 1 → 0, 2 → not attempted, −1)
_BOTH = lambda v: [v, v]  # noqa: E731
SUMMARY_EXPECTED: dict[S, list[float]] = {
    S.HINT: _BOTH(HINT),
    S.ROUND: list(RND / R),
    S.TOKENS: _BOTH(TOKENS / SUMMARY_CFG.token_scale),
    S.CLOCK: _BOTH(CLOCK / SUMMARY_CFG.time_scale),
    S.N_SUBTASKS: _BOTH(3 / 4),
    S.PROGRESS: _BOTH(1 / 3),
    S.SETTLED: _BOTH(1 / 3),  # subtask 0 (margin 2)
    S.MIN_MARGIN: _BOTH(-1 / 3),
    S.MEAN_CONF: _BOTH((0.9 + 0.5) / 3),
    S.MIN_CONF: _BOTH(0.0),
    S.REJECTS: _BOTH(1 / 3),
    S.ACCEPT_SHARE: _BOTH(1 / 3),
    S.SAFETY: _BOTH(1 / 3),
    S.DECISIONS: _BOTH(NDEC / (12 * R)),
    S.UNTRUSTED: _BOTH(1 / 3),
    S.FOCUS_TYPE: _BOTH(0.0),  # the focus (subtask 1) is a code subtask: FOCUS_TYPE + 2 is set
    S.FOCUS_HAS_PARENTS: _BOTH(1.0),
    S.PARENTS_MIN_MARGIN: _BOTH(2 / 3),
    S.PARENTS_UNTRUSTED: _BOTH(1.0),
    S.FOCUS_ATTEMPTS: _BOTH(1 / A),
    S.FOCUS_TOP: _BOTH(1 / 3),
    S.FOCUS_SECOND: _BOTH(1 / 3),
    S.FOCUS_CONF: _BOTH(0.5),
    S.FOCUS_ACCEPTS: _BOTH(0.0),
    S.FOCUS_REJECTS: _BOTH(0.5),
    S.FOCUS_THIS_ROUND: [1.0, 0.0],
    S.PENDING_FANOUT: _BOTH(2 / 3),
    S.PENDING_PROFILE: _BOTH(0.0),  # profile 4 pending: PENDING_PROFILE + 4 is set
    S.METHOD: _BOTH(0.0),  # verifier: METHOD + 1 is set
    S.LAST_ROUND: [0.0, 1.0],
    S.ROOM: _BOTH(1.0),
    S.LOG_PRICE: _BOTH(math.log2(PRICE) / 2),
    S.BUDGET_LEFT: _BOTH(1 - TOKENS / 4000.0),
    S.ROUNDS_LEFT: list((R - 1 - RND) / R),
}
#: one-hot groups: (first feature, offset that must be set, width)
SUMMARY_ONE_HOT = {S.FOCUS_TYPE: (2, 3), S.PENDING_PROFILE: (4, 6), S.METHOD: (int(Agg.VERIFIER), len(Agg))}

GLOBAL_EXPECTED: dict[G, list[float]] = {
    G.ROUND: list(RND / R), G.TOKENS: _BOTH(TOKENS / EVIDENCE_CFG.token_scale),
    G.CLOCK: _BOTH(CLOCK / EVIDENCE_CFG.time_scale), G.N_SUBTASKS: _BOTH(3 / 4), G.PROGRESS: _BOTH(1 / 3),
    G.DECISIONS: _BOTH(NDEC / (12 * R)), G.SAFETY: _BOTH(1 / 3), G.LAST_ROUND: [0.0, 1.0],
    G.LOG_PRICE: _BOTH(math.log2(PRICE) / 2), G.BUDGET_LEFT: _BOTH(1 - TOKENS / 4000.0),
}
# (N = 4 subtasks) per row; row 1 differs only in THIS_ROUND (round 3: nothing attempted in it)
SUB_EXPECTED: dict[Sub, list[list[float]]] = {
    Sub.VALID: _BOTH([1, 1, 1, 0]),
    Sub.FOCUS: _BOTH([0, 1, 0, 0]),
    Sub.HAS_PARENTS: _BOTH([0, 1, 0, 0]),
    Sub.UNTRUSTED: _BOTH([1, 0, 0, 0]),
    Sub.ATTEMPTS: _BOTH([3 / A, 1 / A, 0, 0]),
    Sub.THIS_ROUND: [[1, 1, 0, 0], [0, 0, 0, 0]],
}
SUB_TYPES = [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]]  # retrieve, code, reason, (invalid)
# subtask 0's first three attempt slots (the rest are empty)
ATT_EXPECTED: dict[Att, list[list[float]]] = {
    Att.PRESENT: _BOTH([1, 1, 1]),
    Att.SOLVER: _BOTH([1, 0, 1]),
    Att.AGREES: _BOTH([1, 1, 0]),
    Att.CONFIDENCE: _BOTH([0.8, 0.0, 0.3]),
    Att.VOTE: _BOTH([0, 1, 0]),
    Att.THIS_ROUND: [[1, 0, 1], [0, 0, 0]],
}


def _close(got: np.ndarray, want: object) -> None:
    assert np.allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), atol=1e-6), (got, want)


@pytest.mark.parametrize("feat", list(S), ids=lambda f: f"S.{f.name}")
def test_summary_writer_and_reader_agree(feat: S) -> None:
    obs = _known_world(SUMMARY_CFG).obs()
    lay = SUMMARY_CFG.layout.obs
    assert lay.mode == "summary"
    _close(obs[:, lay.index(feat)], SUMMARY_EXPECTED[feat])
    if feat in SUMMARY_ONE_HOT:
        k, width = SUMMARY_ONE_HOT[feat]
        hot = obs[:, lay.span(feat, width)]
        _close(hot, [np.eye(width)[k]] * 2)


@pytest.mark.parametrize("g", list(G), ids=lambda g: f"G.{g.name}")
def test_evidence_global_writer_and_reader_agree(g: G) -> None:
    obs = _known_world(EVIDENCE_CFG).obs()
    lay = EVIDENCE_CFG.layout.obs
    assert lay.mode == "evidence"
    _close(obs[:, lay.global_col(g)], GLOBAL_EXPECTED[g])


@pytest.mark.parametrize("part", ["decision", "pending_fanout", "pending_profiles", "methods"])
def test_evidence_header_writer_and_reader_agree(part: str) -> None:
    obs = _known_world(EVIDENCE_CFG).obs()
    lay = EVIDENCE_CFG.layout.obs
    want = {"decision": np.eye(5)[O3], "pending_fanout": 2 / 3, "pending_profiles": np.eye(lay.n_profiles)[4],
            "methods": np.eye(len(Agg))[Agg.VERIFIER]}[part]
    col = {"decision": DECISION, "pending_fanout": lay.pending, "pending_profiles": lay.pending_profiles,
           "methods": lay.methods}[part]
    _close(obs[:, col], [want, want])


@pytest.mark.parametrize("f", list(Sub), ids=lambda f: f"Sub.{f.name}")
def test_evidence_subtask_writer_and_reader_agree(f: Sub) -> None:
    obs = _known_world(EVIDENCE_CFG).obs()
    rows = EVIDENCE_CFG.layout.obs.subtask_rows(obs)  # (B, N, Fs)
    if f is Sub.TYPE:
        _close(rows[..., Sub.TYPE:Sub.TYPE + 3], [SUB_TYPES] * 2)
    else:
        _close(rows[..., f], SUB_EXPECTED[f])


@pytest.mark.parametrize("f", list(Att), ids=lambda f: f"Att.{f.name}")
def test_evidence_attempt_writer_and_reader_agree(f: Att) -> None:
    obs = _known_world(EVIDENCE_CFG).obs()
    rows = EVIDENCE_CFG.layout.obs.attempt_rows(obs)  # (B, N, A, Fa)
    assert not rows[:, 1:].any() and not rows[:, 0, 3:].any()  # only subtask 0's first 3 slots hold attempts
    if f is Att.PROFILE:
        _close(rows[:, 0, :3, Att.PROFILE:], [np.eye(EVIDENCE_CFG.n_profiles)[[1, 5, 0]]] * 2)
    else:
        _close(rows[:, 0, :3, f], ATT_EXPECTED[f])


def test_every_named_feature_has_a_check() -> None:
    assert set(SUMMARY_EXPECTED) == set(S) and set(GLOBAL_EXPECTED) == set(G)
    assert set(SUB_EXPECTED) | {Sub.TYPE} == set(Sub) and set(ATT_EXPECTED) | {Att.PROFILE} == set(Att)
    assert [g.name.lower() for g in G] == list(GLOBAL_FEATURES)
    assert len(SUBTASK_FEATURES) == EVIDENCE_CFG.layout.obs.subtask_shape[1]
    assert len(ATTEMPT_FEATURES) + EVIDENCE_CFG.n_profiles == EVIDENCE_CFG.layout.obs.attempt_shape[2]


def test_a_finished_row_reads_as_done() -> None:
    w = _known_world(EVIDENCE_CFG)
    w.phase[1] = DONE
    obs = w.obs()
    assert due_phase(obs).tolist() == [O3, DONE] and not obs[1].any()


# ----------------------------------------------------------------------------- heads and the layout
def test_heads_are_the_mask_s_layout() -> None:
    cfg = EnvConfig.small()
    h = cfg.layout.heads
    assert h.sizes == cfg.head_sizes and h.n_actions == cfg.n_actions
    assert (h.stop, h.cont) == (h.action(Phase.O5, STOP), h.action(Phase.O5, CONTINUE)) == (h.n_actions - 2, h.n_actions - 1)
    be = BatchEnv(cfg, 8, seed=1)
    obs, mask = be.reset()
    due = due_phase(obs)
    for p in (Phase.O1, Phase.O2, Phase.O3, Phase.O4, Phase.O5):
        lo, hi = h.range(p)
        rows = due == p
        assert not mask[rows][:, :lo].any() and not mask[rows][:, hi:].any()  # a row's legal actions are its head's
    with pytest.raises(ValueError, match="O5 head of 2"):
        Heads.of((4, 6, 3, 4, 3))


def test_layout_is_derived_once_per_config(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = EnvConfig.default_v1()
    assert cfg.layout is cfg.layout and cfg.layout == layout_of(cfg)
    w = World(cfg, 4)
    w.reset_rows(np.arange(4), np.arange(4, dtype=np.uint64))

    def no_replace(*a: object, **k: object) -> None:
        raise AssertionError("an observation re-derived its layout through EnvConfig.replace")

    monkeypatch.setattr(EnvConfig, "replace", no_replace)
    assert w.summary_obs().shape == (4, cfg.layout.summary.dim) and w.obs().shape == (4, cfg.obs_dim)


def test_a_saved_layout_reads_back() -> None:
    lay = EnvConfig.small_v1().layout
    back = Layout.from_spec(lay.obs.dim, [lay.heads.range(h) for h in range(5)], lay.obs.to_dict())
    assert back.obs == lay.obs and back.heads == lay.heads
    assert ObsLayout.from_dict(lay.obs.to_dict()) == lay.obs


def test_every_batched_env_is_a_batched_env() -> None:
    assert isinstance(BatchEnv(EnvConfig.small(), 2), BatchedEnv)
    assert isinstance(local_batch_env(EnvConfig.small(), 2), BatchedEnv)
    from orchestrace.scale import RayBatchEnv

    for verb in ("reset", "step", "stop_values"):
        assert callable(getattr(RayBatchEnv, verb))


# ----------------------------------------------------------------------------- the grep guard
#: where the simulation's own state may be read: the env package itself and the stop rules that
#: are handed the world by the env's evaluator (orchestrace.env.baselines.evaluate)
WORLD_READERS = ("env/", "evaluation/simulated.py")
#: (pattern, what it is, files where it is the definition) — a reading of env → learner by raw numbers
FORBIDDEN: list[tuple[str, str, tuple[str, ...]]] = [
    (r"\b(?:o|o5|off|offsets|starts)\[\s*\d+\s*\]", "a head offset by number (use layout.heads / Heads.action)", ()),
    (r"\b\w*obs\w*\[[^\]\n]*,\s*:?\s*\d+", "an observation column by number (use the layout's names)", ()),
    (r"\[\s*\.\.\.\s*,\s*:?\s*\d+", "a feature column by number (use Sub / Att)", ()),
    (r"\b(?:out|sub|att)\[\s*:\s*,\s*\d+", "an observation column by number (use the layout's names)", ()),
    (r"cumsum\(\(0,\)\s*\+", "head offsets re-derived (use EnvConfig.layout.heads)", ("env/layout.py",)),
    (r"replace\(obs_mode=", "an observation layout re-derived through a new EnvConfig (use EnvConfig.layout)", ()),
    (r"\bworld\.phase\b", "the simulation's phase read around the seam (use layout.due_phase(obs))", WORLD_READERS),
]


def _offences() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pat, what, allowed in FORBIDDEN:
                if allowed and rel.startswith(allowed):
                    continue
                if re.search(pat, line):
                    found.append(f"src/orchestrace/{rel}:{i}: {what}: {line.strip()}")
    return found


def test_no_raw_column_numbers_or_offsets_in_src() -> None:
    offences = _offences()
    assert not offences, "\n".join(offences)


@pytest.mark.parametrize("line", ["a = o[4] + 1", "x = obs[:, 11:17]", "p = present[..., :1]", "out[:, 5] = h",
                                  "o = np.cumsum((0,) + cfg.head_sizes)", "lay = obs_layout(c.replace(obs_mode='summary'))",
                                  "at5 = benv.world.phase == 4", "stop = mask[rows, self.off[4] + 1]"])
def test_the_grep_guard_catches_the_old_forms(line: str) -> None:
    assert any(re.search(pat, line) for pat, _, _ in FORBIDDEN), line
