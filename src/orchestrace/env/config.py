"""Environment configuration: worker profiles and :class:`EnvConfig` (validated at construction).

Three named configurations: :meth:`EnvConfig.small` (tests), :meth:`EnvConfig.default`
(the main job trains on it) and :meth:`EnvConfig.industrial` (≈1,000 sub-agents, 20,000+
trace steps). Every field carries its help text in ``metadata["help"]`` so that a CLI can
be generated from it; a bad value raises :class:`~orchestrace.errors.ConfigError` naming
the field and the fix.

>>> cfg = EnvConfig.default()
>>> cfg.n_actions, cfg.obs_dim
(19, 46)
>>> EnvConfig(max_rounds=0)
Traceback (most recent call last):
...
orchestrace.errors.ConfigError: EnvConfig.max_rounds=0 is invalid: must be ≥ 1 (one round attempts every subtask once); set max_rounds to 1 or more
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from .layout import Layout

__all__ = ["AGG_METHODS", "COMM_MODES", "OBS_MODES", "SUBTASK_TYPES", "EnvConfig", "WorkerProfile", "default_profiles"]

#: Subtask types (index = type id). ``code`` subtasks run a privileged tool (side effects).
SUBTASK_TYPES: tuple[str, ...] = ("retrieve", "reason", "code")
#: O3 communication modes (index = action offset in the O3 head).
COMM_MODES: tuple[str, ...] = ("none", "summary", "full")
#: Observation modes (see :mod:`orchestrace.env.layout`).
OBS_MODES: tuple[str, ...] = ("summary", "evidence")
#: O4 aggregation methods (index = action offset in the O4 head).
AGG_METHODS: tuple[str, ...] = ("majority", "verifier", "best_of", "merge")


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class WorkerProfile:
    """A sub-agent profile: skill per subtask type (logits), costs, latency, evidence quality.

    ``p(correct) = sigmoid(skill[type] − difficulty_scale·(d − difficulty_offset) + comm_bonus
    − context_penalty·[tokens_in > context_limit])``; self-reported confidence
    ``c = sigmoid(conf_bias + conf_kappa·(1 − 0.5·d)·(±1) + conf_noise·z)``.
    A ``verifier`` profile never solves: it votes on the current aggregate answer.
    """

    name: str
    skill: tuple[float, float, float]
    tokens_in: float
    tokens_out: float
    latency_s: float
    context_limit: float
    conf_bias: float
    conf_kappa: float
    catch: float  # probability of catching an upstream error instead of propagating it
    follow_injection: float  # probability of obeying an injected instruction it is shown
    verifier: bool = False

    def __post_init__(self) -> None:
        if len(self.skill) != len(SUBTASK_TYPES):
            raise ConfigError(f"WorkerProfile({self.name!r}).skill has {len(self.skill)} entries; give one per type {SUBTASK_TYPES}")
        for name in ("tokens_in", "tokens_out", "latency_s", "context_limit"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"WorkerProfile({self.name!r}).{name}={getattr(self, name)} is invalid: must be > 0")
        for name in ("catch", "follow_injection"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"WorkerProfile({self.name!r}).{name} must be a probability in [0, 1]")


def default_profiles() -> tuple[WorkerProfile, ...]:
    """cheap/fast/weak, strong/slow/expensive, one specialist per type, and a verifier.

    >>> [p.name for p in default_profiles()]
    ['cheap', 'strong', 'spec_retrieve', 'spec_reason', 'spec_code', 'verifier']
    """
    return (
        WorkerProfile("cheap", (2.2, 1.2, 1.5), 300, 150, 4.0, 1200, 1.6, 0.4, 0.1, 0.6),
        WorkerProfile("strong", (4.0, 4.0, 4.0), 900, 600, 18.0, 32000, 0.6, 2.2, 0.6, 0.1),
        WorkerProfile("spec_retrieve", (4.6, 1.0, 1.0), 500, 250, 8.0, 4000, 0.8, 2.0, 0.3, 0.3),
        WorkerProfile("spec_reason", (1.0, 4.6, 1.0), 500, 250, 8.0, 4000, 0.8, 2.0, 0.3, 0.3),
        WorkerProfile("spec_code", (1.0, 1.0, 4.6), 500, 250, 8.0, 4000, 0.8, 2.0, 0.3, 0.3),
        WorkerProfile("verifier", (0.0, 0.0, 0.0), 250, 40, 3.0, 8000, 0.0, 0.0, 0.0, 0.0, verifier=True),
    )


@dataclass(frozen=True)
class EnvConfig:
    """Configuration of the orchestration world (see :mod:`orchestrace.env.world` for the model)."""

    # task model
    n_subtasks_min: int = _f(2, "fewest subtasks in a task")
    n_subtasks_max: int = _f(4, "most subtasks in a task (observation/state arrays are sized by it)")
    p_dep: float = _f(0.6, "probability that subtask i>0 depends on an earlier subtask (first parent)")
    p_dep2: float = _f(0.3, "probability of a second parent (i>1)")
    p_easy: float = _f(0.5, "share of easy tasks (difficulty ~ U(0, 0.3))")
    p_hard: float = _f(0.2, "share of hard tasks (difficulty ~ U(0.7, 1)); the rest are medium")
    subtask_jitter: float = _f(0.08, "std of a subtask's difficulty around its task's difficulty")
    hint_noise: float = _f(0.12, "std of the noisy difficulty hint shown in the observation")
    difficulty_scale: float = _f(6.0, "logit penalty per unit of difficulty")
    difficulty_offset: float = _f(0.2, "difficulty at which a worker succeeds with sigmoid(skill)")
    n_wrong: int = _f(3, "number of distinct wrong answers per subtask")
    plausible_wrong: float = _f(0.3, "extra share of wrong answers on the 'plausible' one, × difficulty")
    fooled_conf: float = _f(0.6, "probability (× difficulty) that a plausible wrong answer is reported confidently")
    conf_noise: float = _f(0.6, "std of the noise in self-reported confidence (logit units)")
    # orchestration
    max_fanout: int = _f(3, "most sub-agents spawned for one subtask at one O1 decision")
    max_rounds: int = _f(5, "most rounds; the last O5 may only stop")
    max_attempts: int = _f(8, "most attempts (solver + verifier) on one subtask over an episode")
    profiles: tuple[WorkerProfile, ...] = _f(default_profiles(), "worker profiles (O2 delegates to one)")
    comm_bonus: tuple[float, float, float] = _f((0.0, 0.6, 1.2), "logit bonus of O3 none/summary/full (subtasks with parents)")
    comm_tokens: tuple[float, float, float] = _f((0.0, 120.0, 700.0), "tokens per parent read for none/summary/full")
    context_penalty: float = _f(2.5, "logit penalty when an attempt's input exceeds its profile's context")
    p_propagate: float = _f(0.6, "probability that a wrong parent aggregate makes an attempt wrong (unless caught)")
    p_untrusted: float = _f(0.35, "probability that a retrieve attempt reads untrusted tool output")
    p_inject: float = _f(0.5, "probability that untrusted output carries an injected instruction")
    summary_leak: float = _f(0.15, "probability that a summary still carries an injection")
    verifier_tpr: float = _f(0.95, "probability that a verifier accepts a correct aggregate")
    verifier_fool: float = _f(0.15, "probability (× difficulty) that a verifier accepts a wrong aggregate")
    merge_quality: float = _f(0.85, "probability that a merge recovers a correct answer present among attempts")
    merge_tokens: float = _f(120.0, "tokens the merge reads per attempt")
    tool_steps: int = _f(1, "tool call/result pairs per solver attempt (trace detail; a solver takes 2·tool_steps + 1 critical steps)")
    decision_tokens: float = _f(30.0, "tokens per orchestrator decision")
    decision_time_s: float = _f(0.5, "simulated seconds per orchestrator decision")
    spawn_time_s: float = _f(0.5, "simulated seconds to spawn a sub-agent")
    # v1: correlated errors, a price per episode, a token budget, observation modes
    p_misconception: float = _f(0.0, "probability (× subtask difficulty) that a subtask carries a shared misconception (v1): "
                                     "every solver is pulled to the same plausible wrong answer, so more votes do not help")
    misconception_strength: float = _f(0.7, "share of a solver's success probability a misconception takes away")
    misconception_conf: float = _f(0.8, "probability that a solver misled by a misconception reports high confidence")
    price_min: float = _f(1.0, "lowest token-price multiplier (drawn log-uniformly per episode in [price_min, price_max])")
    price_max: float = _f(1.0, "highest token-price multiplier")
    token_budget: float = _f(0.0, "tokens after which CONTINUE is illegal at O5 (0 = no budget)")
    obs_mode: str = _f("summary", "observation: summary (hand-summarised statistics, v0) | evidence (per-attempt "
                                  "votes and confidences, padded and masked; no summary statistics, no hint)")
    show_hint: bool = _f(True, "show the noisy difficulty hint in the summary observation")
    show_price: bool = _f(False, "append the episode's token price, remaining budget and rounds to the observation")
    # reward
    success_reward: float = _f(1.0, "reward for a correct submission (all subtask aggregates correct)")
    token_cost: float = _f(1.2e-5, "cost per token (return −= token_cost·tokens)")
    time_cost: float = _f(5e-4, "cost per simulated second of wall clock")
    safety_cost: float = _f(0.5, "cost per safety event (injection forwarded into a privileged tool call)")
    # observation scales
    token_scale: float = _f(20000.0, "tokens divided by this in the observation")
    time_scale: float = _f(200.0, "seconds divided by this in the observation")
    name: str = _f("default", "configuration name (recorded in traces)")

    def __post_init__(self) -> None:
        def bad(fld: str, why: str, fix: str) -> ConfigError:
            return ConfigError(f"EnvConfig.{fld}={getattr(self, fld)!r} is invalid: {why}; {fix}")

        if self.n_subtasks_min < 1:
            raise bad("n_subtasks_min", "must be ≥ 1", "set n_subtasks_min to 1 or more")
        if self.n_subtasks_max < self.n_subtasks_min:
            raise bad("n_subtasks_max", f"must be ≥ n_subtasks_min={self.n_subtasks_min}", "raise n_subtasks_max or lower n_subtasks_min")
        if self.max_rounds < 1:
            raise bad("max_rounds", "must be ≥ 1 (one round attempts every subtask once)", "set max_rounds to 1 or more")
        if self.max_fanout < 1:
            raise bad("max_fanout", "must be ≥ 1", "set max_fanout to 1 or more")
        if self.max_attempts < self.max_fanout:
            raise bad("max_attempts", f"must be ≥ max_fanout={self.max_fanout}", "raise max_attempts or lower max_fanout")
        if self.tool_steps < 1:
            raise bad("tool_steps", "must be ≥ 1", "set tool_steps to 1 or more")
        if self.n_wrong < 1:
            raise bad("n_wrong", "must be ≥ 1", "set n_wrong to 1 or more")
        for fld in ("p_dep", "p_dep2", "p_easy", "p_hard", "p_propagate", "p_untrusted", "p_inject",
                    "summary_leak", "fooled_conf", "verifier_tpr", "verifier_fool", "merge_quality", "plausible_wrong",
                    "p_misconception", "misconception_strength", "misconception_conf"):
            v = getattr(self, fld)
            if not 0.0 <= v <= 1.0:
                raise bad(fld, "must be a probability in [0, 1]", f"set {fld} between 0 and 1")
        if self.p_easy + self.p_hard > 1.0:
            raise bad("p_hard", f"p_easy + p_hard = {self.p_easy + self.p_hard:g} > 1", "lower p_easy or p_hard")
        for fld in ("subtask_jitter", "hint_noise", "conf_noise", "difficulty_scale", "context_penalty", "merge_tokens",
                    "decision_tokens", "decision_time_s", "spawn_time_s", "token_cost", "time_cost", "safety_cost"):
            v = getattr(self, fld)
            if not (v >= 0.0 and v < float("inf")):
                raise bad(fld, "must be finite and ≥ 0", f"set {fld} to a finite non-negative number")
        for fld in ("token_scale", "time_scale", "success_reward"):
            if not getattr(self, fld) > 0:
                raise bad(fld, "must be > 0", f"set {fld} to a positive number")
        if not 0.0 < self.price_min < float("inf"):
            raise bad("price_min", "must be finite and > 0", "set price_min to a positive multiplier (1 = base price)")
        if not self.price_min <= self.price_max < float("inf"):
            raise bad("price_max", f"must be finite and ≥ price_min={self.price_min:g}", "raise price_max or lower price_min")
        if not 0.0 <= self.token_budget < float("inf"):
            raise bad("token_budget", "must be finite and ≥ 0", "set token_budget to 0 (none) or a token count")
        if self.obs_mode not in OBS_MODES:
            raise bad("obs_mode", f"must be one of {', '.join(OBS_MODES)}", "set obs_mode to summary or evidence")
        if len(self.profiles) < 1 or not any(not p.verifier for p in self.profiles):
            raise bad("profiles", "needs at least one solver (non-verifier) profile", "add a WorkerProfile with verifier=False")
        if len(self.comm_bonus) != 3 or len(self.comm_tokens) != 3:
            raise bad("comm_bonus", "comm_bonus and comm_tokens need one entry per mode (none, summary, full)", "give 3 values each")
        names = [p.name for p in self.profiles]
        if len(set(names)) != len(names):
            raise bad("profiles", "profile names must be unique", "rename the duplicates")

    # -- derived sizes -----------------------------------------------------------------
    @property
    def n_profiles(self) -> int:
        """Number of worker profiles (size of the O2 head)."""
        return len(self.profiles)

    @property
    def head_sizes(self) -> tuple[int, int, int, int, int]:
        """Sizes of the O1..O5 heads: fan-out 0..F, profiles, 3 comm modes, 4 aggregations, stop/continue."""
        return (self.max_fanout + 1, self.n_profiles, len(COMM_MODES), len(AGG_METHODS), 2)

    @property
    def n_actions(self) -> int:
        """Total number of discrete actions (all heads)."""
        return sum(self.head_sizes)

    @functools.cached_property
    def layout(self) -> Layout:
        """The env ↔ learner contract of this configuration (:class:`orchestrace.env.layout.Layout`:
        observation, summary features, heads), derived once and kept with the config.

        >>> EnvConfig.small().layout.heads.stop
        17
        """
        from .layout import layout_of

        return layout_of(self)

    @property
    def obs_dim(self) -> int:
        """Observation length (the layout is :attr:`layout`)."""
        return self.layout.obs.dim

    def replace(self, **changes: Any) -> EnvConfig:
        """A copy with some fields changed (validated again).

        >>> EnvConfig.small().replace(max_rounds=2).max_rounds
        2
        """
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ConfigError(f"EnvConfig has no field {unknown[0]!r}; fields: {', '.join(f.name for f in dataclasses.fields(self))}")
        return dataclasses.replace(self, **changes)

    # -- named configurations ----------------------------------------------------------
    @classmethod
    def default(cls) -> EnvConfig:
        """The main job's configuration: 2–4 subtasks, ≤ 5 rounds, ≈ 9–40 decisions."""
        return cls()

    @classmethod
    def small(cls) -> EnvConfig:
        """A tiny configuration for tests: 2–3 subtasks, ≤ 3 rounds.

        >>> EnvConfig.small().n_subtasks_max
        3
        """
        return cls(n_subtasks_min=2, n_subtasks_max=3, max_rounds=3, max_attempts=6, name="small")

    @classmethod
    def industrial(cls) -> EnvConfig:
        """The industrial envelope: 480 subtasks → ≈ 1,000 sub-agents and 20,000+ trace steps."""
        return cls(n_subtasks_min=480, n_subtasks_max=480, max_rounds=4, p_dep=0.7, p_dep2=0.4, tool_steps=8,
                   token_scale=4e6, time_scale=2000.0, name="industrial")

    # -- v1: the world where stopping is hard ------------------------------------------------
    @classmethod
    def default_v1(cls) -> EnvConfig:
        """``Orchestrate-v1``: the main claim's world (see ``docs/env-v1.md`` for every change and why).

        Shared misconceptions (votes agree on a wrong answer), a token price drawn per episode
        in [¼, 4]× and shown with the remaining budget, a token budget, and the *evidence*
        observation (per-attempt votes and confidences; no summary statistics, no hint).

        >>> c = EnvConfig.default_v1(); c.obs_mode, c.price_min, c.price_max
        ('evidence', 0.25, 4.0)
        """
        return cls(max_rounds=6, p_misconception=0.6, price_min=0.25, price_max=4.0, token_cost=3e-5,
                   token_budget=24000.0, obs_mode="evidence", show_hint=False, show_price=True, name="default-v1")

    @classmethod
    def small_v1(cls) -> EnvConfig:
        """The v1 world at test size (2–3 subtasks, ≤ 3 rounds; the same attempt slots as
        ``default_v1``, so a policy trained on one runs on the other)."""
        return cls.default_v1().replace(n_subtasks_max=3, max_rounds=3, name="small-v1")

    @classmethod
    def industrial_v1(cls) -> EnvConfig:
        """The industrial envelope in v1: the price scaled so that tokens cost ≈ 0.1–0.3 of a success
        per episode (v0's price made the return ≈ −12, all cost), summary observation (an evidence
        observation of 480 subtasks × 8 attempts is not a useful policy input)."""
        return cls.industrial().replace(p_misconception=0.6, price_min=0.25, price_max=4.0, token_cost=2e-7,
                                        show_hint=False, show_price=True, name="industrial-v1")

    def with_overrides(self, items: list[str] | tuple[str, ...]) -> EnvConfig:
        """A copy with ``FIELD=VALUE`` overrides (the CLI's ``--set``), type- and range-checked.

        >>> EnvConfig.small().with_overrides(["token_cost=4.8e-5", "obs_mode=evidence"]).token_cost
        4.8e-05
        >>> EnvConfig.small().with_overrides(["max_round=2"])
        Traceback (most recent call last):
        ...
        orchestrace.errors.ConfigError: --set max_round=2: EnvConfig has no field 'max_round'; did you mean 'max_rounds'?
        """
        return self.replace(**parse_overrides(items)) if items else self

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (profiles as dicts), e.g. for trace metadata.

        >>> EnvConfig.small().to_dict()["name"]
        'small'
        """
        return dataclasses.asdict(self)


_BOOL = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def parse_overrides(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["FIELD=VALUE", …]`` → typed EnvConfig changes; :class:`ConfigError` names the bad item.

    >>> parse_overrides(["max_rounds=3", "comm_bonus=0,0.5,1", "show_hint=false"])
    {'max_rounds': 3, 'comm_bonus': (0.0, 0.5, 1.0), 'show_hint': False}
    """
    import typing

    from ..errors import did_you_mean

    hints = typing.get_type_hints(EnvConfig)
    names = [f.name for f in dataclasses.fields(EnvConfig)]
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = str(item).partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item!r} must look like FIELD=VALUE (e.g. token_cost=4.8e-5)")
        if key not in names:
            hint = (did_you_mean(key, names, prefix="; ")
                    or f"; fields: {', '.join(n for n in names if n != 'profiles')}")
            raise ConfigError(f"--set {item}: EnvConfig has no field {key!r}{hint}")
        typ = hints[key]
        try:
            if key == "profiles":
                raise ValueError("worker profiles cannot be set from the command line; build an EnvConfig in Python")
            if typ is bool:
                if raw.lower() not in _BOOL:
                    raise ValueError("expected true or false")
                value: Any = _BOOL[raw.lower()]
            elif typ is int:
                value = int(raw)
            elif typ is float:
                value = float(raw)
                if value != value:
                    raise ValueError("NaN is not a value")
            elif typ is str:
                value = raw
            else:  # tuple[float, float, float]
                parts = [float(x) for x in raw.split(",")]
                if len(parts) != 3:
                    raise ValueError("expected 3 comma-separated numbers (none, summary, full)")
                value = tuple(parts)
        except ValueError as exc:
            tname = getattr(typ, "__name__", str(typ))
            raise ConfigError(f"--set {item}: {exc if str(exc) and 'invalid literal' not in str(exc) and 'could not convert' not in str(exc) else f'expected a {tname}'}") from None
        out[key] = value
    try:  # the fields' own ranges, together (rules that involve the world's other fields wait for it)
        EnvConfig(**out)
    except ConfigError as exc:
        bad = next((k for k in out if str(exc).startswith(f"EnvConfig.{k}=")), None)
        if bad is not None:
            raise ConfigError(f"--set {bad}={out[bad]!r}: {exc}") from None
    return out
