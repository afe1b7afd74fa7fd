"""The team's rules of the one corpus check (:func:`~orchestrace.logged.corpus.check_runs`): :func:`team_rules`.

Every problem is either a located :class:`~orchestrace.errors.ConfigError` (the corpus cannot be
valued exactly) or a counted, stated exclusion (the tasks are dropped, and the returned notes
say how many and why) — never a silently biased fit:

============================================  =====================================================
problem                                       outcome
============================================  =====================================================
no member kinds, a name twice, bad ``sees``   error (``$.members`` / ``$.sees[c]``)
a reviser logged without the answers it saw   error: a member named ``reviser`` with empty ``sees``
members that differ between shards            error: ``meta["members"]`` (the manifest's team) ≠ the
                                              columns' members, or ``meta["shard_members"]`` differ
arrays of the wrong shape, codes below −1     error
a member not called in some round             those tasks excluded, counted (tokens logged as 0 for
                                              that call while the corpus logs tokens)
grades missing (loader exclusions)            counted in the notes (``meta["excluded"]``)
log-probs absent for some calls of a member   those tasks excluded, counted, when the member has
that logs them elsewhere                      log-probs on ≥ 50 % of its calls; a member that never
                                              has them: stated (its value is the corpus mean)
confidence absent in the same way             the same rule
no train / validation / test tasks            error (the fit needs them; not for fresh sets)
============================================  =====================================================

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> runs, notes = team_rules(make_synthetic_team(30, 2, seed=0), "corpus", True)
>>> len(runs.task_ids), notes
(30, [])
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .runs import LoggedRuns

__all__ = ["loader_notes", "team_rules"]


def _ids(runs: LoggedRuns, mask: np.ndarray, n: int = 3) -> str:
    return ", ".join(map(str, runs.task_ids[mask][:n].tolist()))


def _team(runs: LoggedRuns, where: str, allow_vote: bool, W: int) -> list[str]:  # noqa: N803
    """The member columns' names, held to the team's rules (names, ``sees``, the reviser, the manifest, shards);
    a vote corpus (no member kinds) is the team of W identical members ``w0`` … ``w{W-1}``."""
    members = list(runs.members) or [f"w{c}" for c in range(W)]
    if len(members) != W or len(set(members)) != W or not all(isinstance(m, str) and m for m in members):
        raise ConfigError(f"{where}: $.members {members}: expected {W} distinct names, one per attempt column")
    sees = list(runs.sees) if runs.sees else [() for _ in range(W)]
    if len(sees) != W:
        raise ConfigError(f"{where}: $.sees has {len(sees)} entries, expected one per member ({W})")
    for c, s in enumerate(sees):
        if not all(isinstance(x, (int, np.integer)) and 0 <= int(x) < W and int(x) != c for x in s):
            raise ConfigError(f"{where}: $.sees[{c}] = {list(s)}: expected indices of other columns (0..{W - 1})")
    for c, m in enumerate(members):
        if m == "reviser" and not sees[c]:
            raise ConfigError(f"{where}: member {c} ({m!r}) is logged without the answers it saw ($.sees[{c}] is "
                              "empty); its answers cannot be valued under any other configuration. Re-read the corpus "
                              "with a loader that records which columns the reviser was shown")
    man = runs.meta.get("members")
    if man is None and isinstance(runs.meta.get("config"), dict):
        man = runs.meta["config"].get("members")
    if isinstance(man, list):  # names, or the collector's member specs {"name": …, …}
        man = [m.get("name") if isinstance(m, dict) else m for m in man]
    if isinstance(man, list) and runs.members and man != members:
        raise ConfigError(f"{where}: the manifest's team {list(man)} differs from the columns' {members}; shards "
                          "with different teams cannot be one corpus")
    shard = runs.meta.get("shard_members")
    if isinstance(shard, dict):
        odd = {k: v for k, v in shard.items() if list(v) != members}
        if odd:
            k, v = next(iter(odd.items()))
            raise ConfigError(f"{where}: shard {k} has members {list(v)}, the corpus {members} ({len(odd)} shard(s) "
                              "differ); read each team separately")
    return members


def _check_arrays(runs: LoggedRuns, where: str, need_splits: bool, T: int, R: int, W: int) -> None:  # noqa: N803
    """Every array of the right shape, answer codes ≥ −1, and (for a fit) the three splits present."""
    shapes = {"correct": (T, R, W), "prompt_tokens": (T, R, W), "completion_tokens": (T, R, W),
              "logprob_mean": (T, R, W), "round_correct": (T, R), "correct_code": (T,), "split": (T,), "suite": (T,)}
    for n, want in shapes.items():
        got = np.shape(getattr(runs, n))
        if got != want:
            raise ConfigError(f"{where}: {n} has shape {got}, expected {want}")
    if runs.confidence is not None and np.shape(runs.confidence) != (T, R, W):
        raise ConfigError(f"{where}: confidence has shape {np.shape(runs.confidence)}, expected {(T, R, W)}")
    if (runs.answers < -1).any() or (runs.correct_code < -1).any():
        raise ConfigError(f"{where}: answer codes below −1")
    if need_splits:
        for sp in ("train", "validation", "test"):
            if not (runs.split == sp).any():
                raise ConfigError(f"{where}: no {sp!r} tasks; the corpus must be split by task into train, validation, "
                                  "test")


def _exclusions(runs: LoggedRuns, members: list[str], notes: list[str]) -> np.ndarray:
    """The tasks to drop (T,): a member not called in some round, or a log-prob / confidence missing for some calls
    of a member that logs it on most; each reason stated in ``notes``."""
    T = len(runs.task_ids)  # noqa: N806
    drop = np.zeros(T, bool)
    tok = runs.prompt_tokens.astype(np.int64) + runs.completion_tokens
    if (tok > 0).any():  # tokens are logged: a call with none was not made
        miss = tok <= 0
        bad = miss.any((1, 2))
        if bad.any():
            t0 = int(np.flatnonzero(bad)[0])
            r0, c0 = (int(x[0]) for x in np.nonzero(miss[t0]))
            notes.append(f"{int(bad.sum())} task(s) excluded: a member was not called in some round (first: task "
                         f"{runs.task_ids[t0]}, round {r0}, member {members[c0]!r}; all: {_ids(runs, bad)})")
            drop |= bad
    for name, arr in (("log-prob", runs.logprob_mean), ("confidence", runs.confidence)):
        if arr is None:
            continue
        fin = np.isfinite(np.asarray(arr, np.float64))
        for c, m in enumerate(members):
            share = float(fin[:, :, c].mean())
            if share == 0.0:
                if fin.any():
                    notes.append(f"member {m!r} logs no {name}s: its {name} features and weights use the corpus mean")
                continue
            lack = np.asarray(~fin[:, :, c].all(1), bool)
            if share >= 0.5 and lack.any():
                notes.append(f"{int(lack.sum())} task(s) excluded: {name} absent for some calls of member {m!r} "
                             f"(first: {_ids(runs, lack)})")
                drop |= lack
            elif lack.any():
                notes.append(f"member {m!r} logs a {name} on only {share:.0%} of its calls: the rest use the corpus "
                             "mean")
    return drop


def team_rules(runs: LoggedRuns, where: str, need_splits: bool) -> tuple[LoggedRuns, list[str]]:
    """The team's rules of :func:`~orchestrace.logged.corpus.check_runs` (the module docstring): the member
    columns, the arrays, the stated exclusions; the runs kept and the notes."""
    T, R, W = runs.answers.shape  # noqa: N806
    members = _team(runs, where, True, W)
    _check_arrays(runs, where, need_splits, T, R, W)
    notes = loader_notes(runs)
    drop = _exclusions(runs, members, notes)
    if drop.all():
        raise ConfigError(f"{where}: every task is excluded ({'; '.join(notes)})")
    if drop.any():
        runs = runs.subset(~drop)
        if need_splits:
            for sp in ("train", "validation", "test"):
                if not (runs.split == sp).any():
                    raise ConfigError(f"{where}: after the exclusions no {sp!r} tasks are left ({'; '.join(notes)})")
    return runs, notes


def loader_notes(runs: LoggedRuns) -> list[str]:
    """The loader's counted exclusions (``meta["excluded"]``: reason → task ids), one note each."""
    excluded = runs.meta.get("excluded") or {}
    if not isinstance(excluded, dict):
        return []
    return [f"{len(ids)} task(s) excluded by the loader: {reason}" for reason, ids in excluded.items() if ids]
