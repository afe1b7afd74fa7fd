"""Per-decision advantages and the policy / value losses shared by the three trainers.

Advantage normalisation (``TrainConfig.normalize``), over the decisions of one update:

=========  ====================================================================================
none       raw advantages (GRPO: R_i − mean_g R, Dr. GRPO-style without the std)
batch      (A − mean A)/(std A + ε) over the batch
group      GRPO: (R_i − mean_g R)/(std_g R + ε), key = task seed
drmas      Dr. MAS: the same with key (task seed, decision head); for REINFORCE/PPO, where a
           task is played once, the key is the decision head alone (per-head normalisation)
=========  ====================================================================================

GRPO statistics are taken over episodes (each episode counted once per key), as in GRPO
and Dr. MAS, then broadcast to the episode's decisions. The normaliser is
:func:`orchestrace.credit.advantages.group_normalize` (see :func:`normalise`).

O5 checks (``stop_credit`` ≠ ``return``) get the stop head's own advantage (see
:mod:`orchestrace.trainers.rollout`), scaled by the standard deviation of the stop advantages
in the batch (not re-centred: it is already relative to the gate's own baseline). A check
where CONTINUE is illegal (the last round) carries no choice and gets advantage 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..env.layout import Phase
from ..policies.neural import PolicyOutput
from .config import TrainConfig
from .rollout import Rollout, discounted_returns, stop_advantages

__all__ = ["decision_advantages", "normalise", "policy_value_loss"]


def _codes(keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys)
    if keys.ndim == 1:
        return np.unique(keys, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


def normalise(values: np.ndarray, keys: np.ndarray, *, singleton: str = "zero") -> np.ndarray:
    """(x − mean_key)/(std_key + ε) per key (rows of ``keys``).

    Calls :func:`orchestrace.credit.advantages.group_normalize`; the plain
    :func:`~orchestrace.trainers.rollout.group_normalise` is the reference it is tested against.
    ``singleton="identity"`` (Dr. MAS) leaves a group of one at its raw value, ``"zero"``
    (GRPO) gives it 0.

    >>> normalise(np.array([1., 3., 5.]), np.array([0, 0, 1])).round(3).tolist()
    [-1.0, 1.0, 0.0]
    """
    codes = _codes(keys)
    values = np.asarray(values, dtype=np.float64)
    from ..credit.advantages import group_normalize

    return np.asarray(group_normalize(values, codes, singleton=singleton), dtype=np.float64)


def decision_advantages(ro: Rollout, cfg: TrainConfig, *, raw: np.ndarray, group: np.ndarray,
                        group_centred: bool, stop_index: int | None = None) -> tuple[torch.Tensor, dict[str, np.ndarray]]:
    """Advantages (N,) and value targets for the decisions of ``ro``.

    ``raw`` (N,) is the algorithm's raw advantage per decision (GRPO: the episode return;
    REINFORCE: G_t − V(s_t); PPO: GAE), ``group`` (N,) the task-group id of each decision
    (all zeros when each task is played once), ``group_centred`` says the raw values are
    episode returns to be centred per group (GRPO).
    """
    head = ro.head
    returns = discounted_returns(ro.reward, ro.ep, cfg.gamma)  # (N,) G_t
    mode = cfg.normalize
    if group_centred:
        # statistics over (episode, key) pairs, not over decisions
        key_cols = [group] if mode in ("group", "none", "batch") else [group, head]
        if mode == "batch":
            key_cols = [np.zeros_like(group)]
        pairs = np.stack([ro.ep, *key_cols], axis=1)
        uniq, first, inv = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        vals = raw[first]
        keys = uniq[:, 1:]
        if mode == "none":
            _, kinv = np.unique(keys, axis=0, return_inverse=True)
            kinv = kinv.reshape(-1)
            mean = np.bincount(kinv, vals) / np.bincount(kinv)
            adv = (vals - mean[kinv])[inv]
        else:
            adv = normalise(vals, keys, singleton="identity" if mode == "drmas" else "zero")[inv]
    else:
        if mode == "none":
            adv = raw.astype(np.float64)
        elif mode == "drmas":
            adv = normalise(raw, np.stack([group, head], 1), singleton="identity")
        else:  # batch
            adv = normalise(raw, np.zeros(len(raw), dtype=np.int64))
    adv = np.asarray(adv, dtype=np.float64).copy()

    targets: dict[str, np.ndarray] = {"returns": returns}
    stop_rows = np.flatnonzero(head == Phase.O5)
    q_stop_t = np.full(len(raw), np.nan)
    q_cont_t = np.full(len(raw), np.nan)
    if len(stop_rows):
        s_idx = torch.as_tensor(stop_rows)
        act = ro.action[s_idx].numpy()
        if stop_index is None:
            stop_index = int(torch.nonzero(ro.mask[stop_rows[0]])[0, 0])
        is_stop = act == stop_index
        forced = ro.mask[s_idx].sum(1).numpy() < 2
        cf = ro.cf_stop[stop_rows] if ro.cf_stop is not None else np.full(len(stop_rows), np.nan)
        q_s_other = np.where(np.isfinite(cf), cf, ro.q_stop[s_idx].double().numpy())
        cc = ro.cf_cont[stop_rows] if ro.cf_cont is not None else np.full(len(stop_rows), np.nan)
        q_c_other = np.where(np.isfinite(cc), cc, ro.q_cont[s_idx].double().numpy())
        g = returns[stop_rows]
        q_stop_t[stop_rows] = np.where(is_stop, g, cf)
        q_cont_t[stop_rows] = np.where(is_stop, cc, g)
        if cfg.stop_credit != "return" and cfg.stop_update == "regret":
            # both actions' values are known: a regret-weighted classification of the better one
            # (the expected policy-gradient over both actions, in logit space: no sigmoid saturation)
            q_s = np.where(is_stop, g, q_s_other)
            q_c = np.where(is_stop, q_c_other, g) - cfg.stop_cost
            gq_s, gq_c = np.full(len(raw), np.nan), np.full(len(raw), np.nan)
            gq_s[stop_rows] = np.where(forced, np.nan, q_s)
            gq_c[stop_rows] = np.where(forced, np.nan, q_c)
            targets["gate_q_stop"], targets["gate_q_cont"] = gq_s, gq_c
            adv[stop_rows] = 0.0
        elif cfg.stop_credit != "return":
            a_stop = stop_advantages(g, is_stop, ro.stop_prob[s_idx].double().numpy(), q_s_other, q_c_other,
                                     cfg.stop_cost)
            a_stop[forced] = 0.0
            if mode != "none":
                free = ~forced
                sd = a_stop[free].std() if free.sum() > 1 else 0.0
                a_stop = a_stop / (sd + 1e-6) if sd > 1e-9 else a_stop
            adv[stop_rows] = a_stop
    targets["q_stop"] = q_stop_t
    targets["q_cont"] = q_cont_t
    return torch.as_tensor(adv, dtype=torch.float32), targets


def _masked_mse(pred: torch.Tensor, target: np.ndarray) -> torch.Tensor:
    t = torch.as_tensor(target, dtype=pred.dtype, device=pred.device)
    ok = torch.isfinite(t)
    if not bool(ok.any()):
        return pred.sum() * 0.0
    return 0.5 * (pred[ok] - t[ok]).pow(2).mean()


def policy_value_loss(out: PolicyOutput, ro: Rollout, adv: torch.Tensor, targets: dict[str, np.ndarray],
                      cfg: TrainConfig, *, device: Any, rows: torch.Tensor | None = None,
                      old_logp: torch.Tensor | None = None, clip: float | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """loss = policy-gradient term − c_H·entropy + c_V·(V loss + stop-value loss).

    With ``clip`` (PPO) the policy term is the clipped surrogate
    max(−A·ρ, −A·clip(ρ, 1−ε, 1+ε)), ρ = π(a|s)/π_old(a|s). ``rows`` selects a minibatch
    (``out`` is then already the minibatch's output).
    """
    sel = slice(None) if rows is None else rows
    action = ro.action[sel].to(device)
    a = adv[sel].to(device)
    logp_all = torch.log_softmax(out.logits, -1)
    logp = logp_all.gather(1, action[:, None]).squeeze(1)  # (n,)
    entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
    behaviour = (ro.logp[sel] if old_logp is None else old_logp[sel]).to(device)
    log_ratio = logp - behaviour
    ratio = log_ratio.exp()
    if clip is None:
        pg = -(a * logp).mean()
    else:
        pg = torch.max(-a * ratio, -a * ratio.clamp(1.0 - clip, 1.0 + clip)).mean()
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > (clip or 0.2)).float().mean()
    idx = np.arange(len(ro.action))[sel.cpu().numpy() if isinstance(sel, torch.Tensor) else sel]
    v_loss = _masked_mse(out.value, targets["returns"][idx])
    q_loss = _masked_mse(out.q_stop, targets["q_stop"][idx]) + _masked_mse(out.q_cont, targets["q_cont"][idx])
    loss = pg - cfg.entropy_coef * entropy + cfg.value_coef * (v_loss + q_loss)
    gate = torch.zeros((), device=out.logits.device)
    if "gate_q_stop" in targets:
        qs = torch.as_tensor(targets["gate_q_stop"][idx], dtype=out.stop_logit.dtype, device=out.logits.device)
        qc = torch.as_tensor(targets["gate_q_cont"][idx], dtype=out.stop_logit.dtype, device=out.logits.device)
        ok = torch.isfinite(qs) & torch.isfinite(qc)
        if bool(ok.any()):
            d = qs[ok] - qc[ok]  # > 0: stopping is better
            w = d.abs() / (d.abs().mean() + 1e-8)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(out.stop_logit[ok], (d > 0).to(d.dtype), reduction="none")
            gate = (w * bce).mean()
            loss = loss + gate
    parts = {"losses/policy": float(pg.detach()), "losses/value": float(v_loss.detach()), "losses/stop_value": float(q_loss.detach()),
             "losses/entropy": float(entropy.detach()), "losses/approx_kl": float(approx_kl),
             "losses/clipfrac": float(clipfrac), "losses/loss": float(loss.detach()), "losses/stop_gate": float(gate.detach())}
    return loss, parts
