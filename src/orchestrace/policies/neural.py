"""The orchestration policy: a shared encoder, one head per sub-decision O1–O5, an explicit stop gate.

Shapes: ``B`` decisions in a batch, ``D`` observation size, ``A`` actions, ``H`` hidden width.

::

    obs (B, D) ──► RunningNorm ──► MLP encoder ──► h (B, H)
                                                  ├─► head O1 logits  (B, n_O1)  ┐
                                                  ├─► head O2 logits  (B, n_O2)  │ placed at each head's
                                                  ├─► head O3 logits  (B, n_O3)  │ [start, stop) range of
                                                  ├─► head O4 logits  (B, n_O4)  │ the flat action space,
                                                  ├─► stop gate z     (B,)       ┘ then masked → (B, A)
                                                  ├─► V(s)            (B,)   state value (baseline / critic)
                                                  └─► Q_stop, Q_cont  (B, 2) the stop head's own values

The **stop head** is a Bernoulli halting gate: λ = σ(w·h + b) is the probability of STOP,
so the O5 head's two logits are ``(log λ, log(1−λ))``. Over the O5 checks n = 1, 2, … of one
episode the gate defines PonderNet's halting distribution
p_n = λ_n · Π_{j<n} (1 − λ_j) (:func:`halting_distribution`), which gives the expected
number of decisions reported in ``stop/expected_decisions``.

The stop head's baseline is the gate's own value V_gate = λ·Q_stop + (1−λ)·Q_cont: the value of
stopping at decision k versus continuing (trained from replay counterfactuals where the
environment offers them, else from returns; see :mod:`orchestrace.trainers.rollout`).

The policy receives the environment's typed :class:`~orchestrace.env.layout.Layout` (its heads
and observation; ``EnvConfig.layout``) and reads every observation column through it. With
the ``evidence`` observation the encoder is a set encoder that respects its structure (DeepSets; shapes per decision)::

    attempts (N, A, Fa) ──► φ MLP ──► masked sum/A and max over A ──┐
    subtasks (N, Fs)    ────────────────────────────────────────────┴► ψ MLP (N, E) ──► masked mean, min, max over N
                                                                                         + the focus row (O1–O3)
    header (H0) ──► RunningNorm ───────────────────────────────────────────────────────────┴► MLP ──► h (B, H)

so the policy can weigh individual votes and confidences (and the weakest subtask) without
hand-summarised statistics, whatever the order of attempts and subtasks — and whatever their
number N: the encoder reads N from the observation's width, so a policy trained on 2–4
subtasks runs on a world of 4–7.

torch is imported by this module: import it lazily (``orchestrace.learn`` does).

>>> import torch
>>> from orchestrace.env.layout import DECISION, Phase
>>> from orchestrace.vocab import Decision
>>> heads = {Decision.O1: (0, 2), Decision.O2: (2, 5), Decision.O3: (5, 6), Decision.O4: (6, 8), Decision.O5: (8, 10)}
>>> pol = OrchestrationPolicy(obs_dim=7, heads=heads, hidden=16, layers=1)
>>> obs = torch.zeros(3, 7); obs[:, DECISION.start + Phase.O5] = 1.0   # the O5 decision is due
>>> mask = torch.zeros(3, 10, dtype=torch.bool); mask[:, 8:10] = True
>>> out = pol(obs, mask)
>>> out.logits.shape, bool(torch.allclose(out.logits.softmax(-1)[:, 8], out.stop_prob))
(torch.Size([3, 10]), True)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..env.layout import DECISIONS, Att, Layout, ObsLayout, Sub
from ..vocab import Decision

__all__ = [
    "DECISION_ORDER",
    "EvidenceEncoder",
    "OrchestrationPolicy",
    "PolicyOutput",
    "RunningNorm",
    "StopCritic",
    "expected_decisions",
    "halting_distribution",
]

#: Head order: O1 spawn, O2 delegate, O3 communicate, O4 aggregate, O5 stop (the layout's).
DECISION_ORDER = DECISIONS

_MASKED = -1e8  # finite "minus infinity": keeps entropy and log-probs free of NaN


@dataclass
class PolicyOutput:
    """One forward pass. ``logits`` are already masked (illegal actions ≈ −1e8)."""

    logits: torch.Tensor  # (B, A)
    value: torch.Tensor  # (B,)  V(s)
    stop_logit: torch.Tensor  # (B,)  z, λ = σ(z)
    q_stop: torch.Tensor  # (B,)  value of stopping now
    q_cont: torch.Tensor  # (B,)  value of continuing

    @property
    def stop_prob(self) -> torch.Tensor:
        """λ = σ(z), the halting gate's STOP probability, (B,)."""
        return torch.sigmoid(self.stop_logit)

    def dist(self) -> torch.distributions.Categorical:
        """The masked categorical over the flat action space."""
        return torch.distributions.Categorical(logits=self.logits)


class RunningNorm(nn.Module):
    """Observation normaliser with running mean/variance kept in buffers (saved in checkpoints).

    ``update(x)`` merges a batch with Chan's parallel formula; ``forward`` returns
    clip((x − μ)/√(σ² + ε), −10, 10).

    >>> n = RunningNorm(2); n.update(torch.tensor([[0., 10.], [2., 30.]]))
    >>> n.mean.tolist(), n(torch.tensor([[1., 20.]])).abs().max().item() < 1e-3
    ([1.0, 20.0], True)
    """

    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(dim, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        x = x.reshape(-1, x.shape[-1]).to(torch.float64)
        n = float(x.shape[0])
        if n == 0:
            return
        b_mean, b_var = x.mean(0), x.var(0, unbiased=False)
        tot = self.count + n
        delta = b_mean - self.mean
        self.mean += delta * n / tot
        m2 = self.var * self.count + b_var * n + delta.pow(2) * self.count * n / tot
        self.var.copy_(m2 / tot)
        self.count.copy_(tot)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self.mean.to(x.dtype), (self.var + self.eps).sqrt().to(x.dtype)
        return ((x - mean) / std).clamp(-10.0, 10.0)


class EvidenceEncoder(nn.Module):
    """The set encoder of the ``evidence`` observation (see the module docstring).

    ``layout`` is the ``evidence`` :class:`~orchestrace.env.layout.ObsLayout` (``Layout.obs``).

    >>> from orchestrace.env.config import EnvConfig
    >>> lay = EnvConfig.small_v1().layout.obs            # header 26; N = 3 rows of Fs + A·Fa = 9 + 8·12 = 105
    >>> lay.header.stop, lay.subtask_shape, lay.attempt_shape
    (26, (3, 9), (3, 8, 12))
    >>> enc = EvidenceEncoder(lay, hidden=8, embed=4)
    >>> enc(torch.zeros(5, 26), torch.zeros(5, lay.dim)).shape, enc(torch.zeros(5, 26), torch.zeros(5, 26 + 5 * 105)).shape
    (torch.Size([5, 8]), torch.Size([5, 8]))
    """

    def __init__(self, layout: ObsLayout, hidden: int, embed: int = 32) -> None:
        super().__init__()
        self.h0 = layout.header.stop
        _, self.Fs = layout.subtask_shape
        _, self.A, self.Fa = layout.attempt_shape
        self.per_subtask = self.Fs + self.A * self.Fa
        self.phi = nn.Sequential(nn.Linear(self.Fa, embed), nn.Tanh(), nn.Linear(embed, embed), nn.Tanh())
        self.psi = nn.Sequential(nn.Linear(self.Fs + 2 * embed, embed), nn.Tanh())
        self.out = nn.Sequential(nn.Linear(self.h0 + 4 * embed + self.Fs, hidden), nn.Tanh(),
                                 nn.Linear(hidden, hidden), nn.Tanh())

    def n_subtasks(self, width: int) -> int:
        """N of an observation ``width`` wide (ValueError when no N fits)."""
        n, rest = divmod(width - self.h0, self.per_subtask)
        if rest or n < 1:
            raise ValueError(f"an observation {width} wide does not fit this policy's evidence layout "
                             f"(header {self.h0} + N × {self.per_subtask}); was it trained with another max_attempts "
                             "or number of profiles?")
        return n

    def forward(self, header_norm: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        b, n = x.shape[0], self.n_subtasks(x.shape[1])
        att_start = self.h0 + n * self.Fs
        sub = x[:, self.h0:att_start].reshape(b, n, self.Fs)  # (B, N, Fs)
        att = x[:, att_start:].reshape(b, n, self.A, self.Fa)  # (B, N, A, Fa)
        present = att[..., Att.PRESENT, None] > 0.5  # (B, N, A, 1)
        e = self.phi(att) * present  # (B, N, A, E)
        e_sum = e.sum(2) / self.A  # (B, N, E)
        e_max = e.masked_fill(~present, -2.0).amax(2)
        e_max = torch.where(present.any(2), e_max, torch.zeros_like(e_max))
        valid = sub[..., Sub.VALID, None] > 0.5  # (B, N, 1)
        z = self.psi(torch.cat([sub, e_sum, e_max], -1))  # (B, N, E)
        nv = valid.sum(1).clamp_min(1)
        z_mean = (z * valid).sum(1) / nv
        z_min = z.masked_fill(~valid, 2.0).amin(1)
        z_max = z.masked_fill(~valid, -2.0).amax(1)
        anyv = valid.any(1)
        z_min = torch.where(anyv, z_min, torch.zeros_like(z_min))
        z_max = torch.where(anyv, z_max, torch.zeros_like(z_max))
        focus = sub[..., Sub.FOCUS, None]  # (B, N, 1): the subtask being staffed
        z_focus = (z * focus).sum(1)  # (B, E)
        s_focus = (sub * focus).sum(1)  # (B, Fs)
        return self.out(torch.cat([header_norm, z_mean, z_min, z_max, z_focus, s_focus], -1))  # (B, H)


class StopCritic(nn.Module):
    """A dedicated stop network: Â(s) ≈ Q_continue(s) − Q_stop(s), in return units, (B, D) → (B,).

    Trained by regression (:mod:`orchestrace.trainers.fitted_stop`); it reads the same observation
    as the policy (its own header normaliser and set encoder, so fitting it never moves the
    O1–O4 heads). As the policy's halting gate it stops when the predicted gain of continuing
    is at most ``margin``: z = (margin − Â(s)) / temperature, λ = σ(z).

    ``layout`` is the policy's :class:`~orchestrace.env.layout.Layout` (None: a flat observation).

    >>> c = StopCritic(7, None, hidden=8)
    >>> c(torch.zeros(3, 7)).shape, c.gate_logit(torch.zeros(3, 7)).shape
    (torch.Size([3]), torch.Size([3]))
    """

    margin: torch.Tensor
    temperature: torch.Tensor
    y_scale: torch.Tensor

    def __init__(self, obs_dim: int, layout: Layout | None, hidden: int = 64) -> None:
        super().__init__()
        self.layout = layout
        self.evidence = layout is not None and layout.evidence
        if layout is not None and self.evidence:
            self.n_header = layout.obs.header.stop
            self.norm = RunningNorm(self.n_header)
            self.encoder: nn.Module = EvidenceEncoder(layout.obs, hidden)
        else:
            self.n_header = int(obs_dim)
            self.norm = RunningNorm(obs_dim)
            self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.out = nn.Linear(hidden, 1)
        self.register_buffer("margin", torch.zeros((), dtype=torch.float32))
        self.register_buffer("temperature", torch.full((), 0.01, dtype=torch.float32))
        self.register_buffer("y_scale", torch.ones((), dtype=torch.float32))  # regression targets are / y_scale

    def update_norm(self, obs: torch.Tensor) -> None:
        """Merge observations (B, D) into the header normaliser."""
        self.norm.update(obs[:, :self.n_header])

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Predicted advantage of continuing, in return units, (B,)."""
        if self.evidence:
            h = self.encoder(self.norm(obs[:, :self.n_header]), obs)  # (B, H)
        else:
            h = self.encoder(self.norm(obs))
        return self.out(h).squeeze(-1) * self.y_scale  # (B,)

    def gate_logit(self, obs: torch.Tensor) -> torch.Tensor:
        """z of the halting gate, (B,): positive (STOP) when Â(s) ≤ margin."""
        return (self.margin - self(obs)) / self.temperature


class OrchestrationPolicy(nn.Module):
    """Shared MLP encoder + one masked head per sub-decision + explicit halting gate (O5).

    ``heads`` maps each :class:`~orchestrace.vocab.Decision` to its ``[start, stop)`` range in
    the flat action space (``env.unwrapped.heads``); the O5 range must hold exactly two
    actions, STOP then CONTINUE. ``layout`` is the environment's
    :class:`~orchestrace.env.layout.Layout` (``EnvConfig.layout``; its heads must be ``heads``):
    with an ``evidence`` observation the encoder is the set encoder; without a layout (or with
    a ``summary`` one) the observation is one flat vector.
    """

    def __init__(self, obs_dim: int, heads: dict[Decision, tuple[int, int]], hidden: int = 64, layers: int = 2,
                 layout: Layout | None = None, stop_critic: dict | None = None) -> None:
        super().__init__()
        ranges = {Decision(k): (int(a), int(b)) for k, (a, b) in heads.items()}
        if set(ranges) != set(DECISION_ORDER):
            raise ValueError(f"heads must give a range for each of O1..O5, got {sorted(str(k) for k in ranges)}")
        s5, e5 = ranges[Decision.O5]
        if e5 - s5 != 2:
            raise ValueError(f"the O5 head must have exactly 2 actions (STOP, CONTINUE), got range {s5}:{e5}")
        self.obs_dim = int(obs_dim)
        self.ranges = [ranges[d] for d in DECISION_ORDER]
        self.n_actions = max(b for _, b in self.ranges)
        self.hidden, self.layers = int(hidden), int(layers)
        if layout is not None and not isinstance(layout, Layout):
            raise TypeError(f"layout must be an orchestrace.env.layout.Layout (EnvConfig.layout), got "
                            f"{type(layout).__name__}; a saved spec is read by OrchestrationPolicy.from_spec")
        if layout is not None and layout.obs.dim != self.obs_dim:
            raise ValueError(f"layout dim {layout.obs.dim} != obs_dim {self.obs_dim}")
        if layout is not None and [layout.heads.range(h) for h in range(5)] != self.ranges:
            raise ValueError(f"the layout's heads {layout.heads.starts} do not match the head ranges {self.ranges}")
        self.layout = layout
        self.evidence = layout is not None and layout.evidence
        width = self.obs_dim
        if layout is not None and self.evidence:
            self.n_header = layout.obs.header.stop
            self.norm = RunningNorm(self.n_header)  # the set blocks are already in [−1, 1]
            self.encoder: nn.Module = EvidenceEncoder(layout.obs, self.hidden)
            width = self.hidden
        else:
            self.norm = RunningNorm(self.obs_dim)
            mods: list[nn.Module] = []
            for _ in range(self.layers):
                mods += [nn.Linear(width, self.hidden), nn.Tanh()]
                width = self.hidden
            self.encoder = nn.Sequential(*mods)
        self.heads = nn.ModuleList([nn.Linear(width, b - a) for a, b in self.ranges[:4]])
        self.stop_gate = nn.Linear(width, 1)
        self.value_head = nn.Linear(width, 1)
        self.stop_values = nn.Linear(width, 2)
        # head index of each flat action, (A,)
        head_of = torch.full((self.n_actions,), -1, dtype=torch.long)
        for i, (a, b) in enumerate(self.ranges):
            head_of[a:b] = i
        self.register_buffer("head_of_action", head_of, persistent=False)
        for layer in self.heads:
            assert isinstance(layer, nn.Linear)
            nn.init.orthogonal_(layer.weight, 0.01)
            nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(self.stop_gate.weight, 0.01)
        nn.init.zeros_(self.stop_gate.bias)
        # built last, and only when asked, so every other parameter starts exactly as without it
        self.stop_critic_spec = dict(stop_critic) if stop_critic is not None else None
        self.stop_critic: StopCritic | None = None
        if self.stop_critic_spec is not None:
            self.stop_critic = StopCritic(self.obs_dim, self.layout, int(self.stop_critic_spec.get("hidden", self.hidden)))

    @property
    def stop_index(self) -> int:
        """Flat index of the STOP action (CONTINUE is the next one)."""
        return self.ranges[DECISION_ORDER.index(Decision.O5)][0]

    def update_norm(self, obs: torch.Tensor) -> None:
        """Merge a batch of observations (B, D) into the running normaliser (the header only
        with the evidence observation)."""
        self.norm.update(obs[:, :self.n_header] if self.evidence else obs)

    # ------------------------------------------------------------------ forward
    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> PolicyOutput:
        """Masked logits (B, A) and the value outputs for observations (B, D) and masks (B, A)."""
        if self.evidence:
            h = self.encoder(self.norm(obs[:, :self.n_header]), obs)  # (B, H)
        else:
            h = self.encoder(self.norm(obs))  # (B, H)
        b = obs.shape[0]
        logits = torch.zeros(b, self.n_actions, dtype=h.dtype, device=h.device)
        for (a, e), layer in zip(self.ranges[:4], self.heads, strict=True):
            logits[:, a:e] = layer(h)
        # (B,) the halting gate: the fitted stop critic when the policy has one
        z = self.stop_gate(h).squeeze(-1) if self.stop_critic is None else self.stop_critic.gate_logit(obs)
        s5 = self.stop_index
        logits[:, s5] = nn.functional.logsigmoid(z)  # log λ      (STOP)
        logits[:, s5 + 1] = nn.functional.logsigmoid(-z)  # log(1 − λ) (CONTINUE)
        logits = logits.masked_fill(~mask.bool(), _MASKED)
        q = self.stop_values(h)  # (B, 2)
        return PolicyOutput(logits, self.value_head(h).squeeze(-1), z, q[:, 0], q[:, 1])

    @torch.no_grad()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, *, greedy: bool = False,
            generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor, PolicyOutput]:
        """Sample (or take the mode of) actions: returns ``(actions (B,), logprobs (B,), output)``.

        Sampling uses the inverse-CDF on one uniform per row so that a seeded ``generator``
        gives the same actions on every platform.
        """
        out = self(obs, mask)
        logp_all = torch.log_softmax(out.logits, -1)
        if greedy:
            actions = out.logits.argmax(-1)
        else:
            u = torch.rand(obs.shape[0], 1, generator=generator, dtype=logp_all.dtype, device=obs.device)
            cdf = logp_all.exp().cumsum(-1)
            actions = (cdf < u * cdf[:, -1:]).sum(-1).clamp_max(self.n_actions - 1)
            # never pick a masked action because of rounding at the CDF's flat parts
            legal = mask.bool().gather(1, actions[:, None]).squeeze(1)
            if not bool(legal.all()):
                actions = torch.where(legal, actions, out.logits.argmax(-1))
        return actions, logp_all.gather(1, actions[:, None]).squeeze(1), out

    def spec(self) -> dict[str, object]:
        """The architecture (saved beside the weights; a mismatch is a CheckpointError on load)."""
        spec: dict[str, object] = {"obs_dim": self.obs_dim, "hidden": self.hidden, "layers": self.layers,
                                   "heads": {d.code: list(r) for d, r in zip(DECISION_ORDER, self.ranges, strict=True)}}
        if self.layout is not None and self.evidence:
            spec["layout"] = self.layout.obs.to_dict()
        if self.stop_critic_spec is not None:
            spec["stop_critic"] = self.stop_critic_spec
        return spec

    @classmethod
    def from_spec(cls, spec: dict) -> OrchestrationPolicy:
        """Rebuild an (untrained) policy from :meth:`spec`."""
        codes = {d.code: d for d in DECISION_ORDER}
        heads = {codes[k]: (int(v[0]), int(v[1])) for k, v in dict(spec["heads"]).items()}
        layout = Layout.from_spec(int(spec["obs_dim"]), [heads[d] for d in DECISION_ORDER if d in heads],
                                  spec.get("layout")) if set(heads) == set(DECISION_ORDER) else None
        return cls(int(spec["obs_dim"]), heads, int(spec["hidden"]), int(spec["layers"]), layout=layout,
                   stop_critic=spec.get("stop_critic"))


def halting_distribution(lambdas: torch.Tensor) -> torch.Tensor:
    """PonderNet's halting distribution p_n = λ_n Π_{j<n}(1 − λ_j) over the O5 checks, (N,) → (N+1,).

    The last entry is the mass left when the episode ends without a STOP (budget or forced end),
    so the result sums to 1.

    >>> halting_distribution(torch.tensor([0.5, 0.5])).tolist()
    [0.5, 0.25, 0.25]
    """
    surv = torch.cumprod(torch.cat([lambdas.new_ones(1), 1.0 - lambdas]), 0)  # (N+1,)
    return torch.cat([lambdas * surv[:-1], surv[-1:]])


def expected_decisions(lambdas: torch.Tensor, check_at: torch.Tensor, length: int) -> float:
    """Expected number of decisions of an episode under the gate: Σ_n p_n·d_n + p_end·length.

    ``check_at[n]`` is the (1-based) decision count at the n-th O5 check.

    >>> expected_decisions(torch.tensor([0.5, 1.0]), torch.tensor([4, 8]), 8)
    6.0
    """
    p = halting_distribution(lambdas)
    d = torch.cat([check_at.to(p.dtype), p.new_tensor([float(length)])])
    return float((p * d).sum())
