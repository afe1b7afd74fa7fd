"""A team of two model families, a fallible tool and per-model prices (issue 42), logged like any team corpus.

:mod:`orchestrace.collection.team` logs a team of one model. Here each member also names the **model**
that serves it (an endpoint key: ``smollm2``, ``gemma``), the **mode** it is asked in (``chat``,
or ``cloze``: a plain ``/v1/completions`` call on a cloze prompt, for a base model), its **prices**
(US dollars per million input / output tokens) and, for a ``calc`` member, the probability that
its calculator is **wrong but parseable** (the true value plus an offset from
:data:`FAULT_OFFSETS`, a pure function of the tool seed, the task id and the round).

The corpus format is the team corpus's (``orchestrace-team-corpus-v1``): the same events and
attributes, plus optional ones on each attempt — ``model``, ``mode``, ``prompt`` (the text sent),
``price_in_per_mtok``, ``price_out_per_mtok``, ``cost_usd`` and, for a calc member,
``tool_faulty`` (for analysis only: no policy reads it). The manifest's ``config.members`` lists
every member with its model, mode and prices; the reader charges them
(``orchestrace.logged._prices.charge_prices``).

The default team (:data:`MIXED_TEAM`, docs/team2-preregistration.md): ``s-cold`` and ``s-calc``
on SmolLM2-135M-Instruct (chat), ``g-cold`` and ``g-hot`` on Gemma 3 270M base (cloze), priced
like GPT-4o mini and GPT-4o (:data:`PRICES`).

>>> [(m.name, m.model, m.mode) for m in MIXED_TEAM][:3]
[('s-cold', 'smollm2', 'chat'), ('s-calc', 'smollm2', 'chat'), ('g-cold', 'gemma', 'cloze')]
>>> from orchestrace.llm.tasks import make_vote_task
>>> print(cloze_prompt(make_vote_task("add", seed=3, size=2)))
Q: What is 59 + 29?
A: 59 + 29 =
>>> tool_value(88, seed=0, task_id="add-s2-000003", round_=0, p_fault=0.0)
(88, False)
>>> round(attempt_cost(MIXED_TEAM[2], 1000, 10), 6)   # Gemma at GPT-4o prices: $2.50 / $10 per Mtok
0.0026
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..llm.tasks import Task
from .collect import Attempt
from .team import (
    Member,
    TeamConfig,
    _calc_answer,
    _calc_prompt,
    _graded,
    _reviser_prompt,
    deepconf_confidence,
    team_trace,
)

__all__ = ["FAULT_OFFSETS", "MIXED_TEAM", "MODES", "PRICES", "MixedTeamConfig", "MultiClient", "PricedMember",
           "attempt_cost", "check_same_models", "cloze_prompt", "collect_mixed_team", "serve_team", "tool_value"]

MODES = ("chat", "cloze")
#: Stand-in list prices, US dollars per million (input, output) tokens (docs/team2-preregistration.md).
PRICES: dict[str, tuple[float, float]] = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00)}
#: What a faulty calculator adds to the true value: wrong, but a well-formed number.
FAULT_OFFSETS = (-10, -2, -1, 1, 2, 10)


@dataclass(frozen=True)
class PricedMember(Member):
    """A member served by ``model`` (an endpoint key) in ``mode``, at ``price_in`` / ``price_out`` $/Mtok.

    ``tool_fault``: for a ``calc`` member, the probability that its calculator returns a wrong value.
    """

    model: str = "smollm2"
    mode: str = "chat"
    price_in: float = 0.0
    price_out: float = 0.0
    tool_fault: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        where = f"member {self.name!r}"
        if self.mode not in MODES:
            raise ConfigError(f"{where}: unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        if self.mode == "cloze" and self.style != "answer":
            raise ConfigError(f"{where}: a cloze member answers directly (style 'answer'), got style {self.style!r}")
        if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", self.model):
            raise ConfigError(f"{where}: model key {self.model!r}: use 1-32 lowercase letters, digits, - or _")
        for k in ("price_in", "price_out"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ConfigError(f"{where}: {k} must be a finite price >= 0 (US dollars per million tokens), got {v!r}")
        if not 0 <= self.tool_fault < 1:
            raise ConfigError(f"{where}: tool_fault must be in [0, 1), got {self.tool_fault}")
        if self.tool_fault and self.style != "calc":
            raise ConfigError(f"{where}: tool_fault is the calculator's fault rate; only a 'calc' member has a tool")


_SMOL, _BIG = PRICES["gpt-4o-mini"], PRICES["gpt-4o"]
MIXED_TEAM: tuple[PricedMember, ...] = (
    PricedMember("s-cold", 0.2, "answer", "smollm2", "chat", *_SMOL),
    PricedMember("s-calc", 0.2, "calc", "smollm2", "chat", *_SMOL, tool_fault=0.2),
    PricedMember("g-cold", 0.2, "answer", "gemma", "cloze", *_BIG),
    PricedMember("g-hot", 0.8, "answer", "gemma", "cloze", *_BIG),
)


def attempt_cost(m: PricedMember, prompt_tokens: int, completion_tokens: int) -> float:
    """US dollars of one attempt of ``m``."""
    return (prompt_tokens * m.price_in + completion_tokens * m.price_out) / 1e6


def tool_value(value: int, *, seed: int, task_id: str, round_: int, p_fault: float) -> tuple[int, bool]:
    """The fallible calculator: ``(value, False)``, or with probability ``p_fault`` a wrong ``(value + offset, True)``.

    A pure function of (seed, task id, round): a resumed or repeated collection gets the same faults.

    >>> n = sum(tool_value(5, seed=0, task_id=f"t{i}", round_=0, p_fault=0.25)[1] for i in range(2000))
    >>> 400 < n < 600, tool_value(5, seed=0, task_id="t1", round_=0, p_fault=0.25) == tool_value(
    ...     5, seed=0, task_id="t1", round_=0, p_fault=0.25)
    (True, True)
    """
    h = hashlib.sha256(f"calc-fault:{seed}:{task_id}:{round_}".encode()).digest()
    if int.from_bytes(h[:8], "big") / 2**64 >= p_fault:
        return value, False
    return value + FAULT_OFFSETS[h[8] % len(FAULT_OFFSETS)], True


_COMPUTE = re.compile(r"Compute ([-+*() 0-9]{1,60})\.")
_WHO = re.compile(r"Who is the (\w+) of (\w+)\?")
_REPLY = re.compile(r"\s*Reply with [^.]*\.\s*$")


def cloze_prompt(task: Task) -> str:
    """The completion-mode prompt for a base model: the task's text as a question and the start of its answer."""
    text = _REPLY.sub("", task.whole_prompt()[-1]["content"]).rstrip()
    m = _COMPUTE.search(text)
    if m:
        expr = m.group(1).strip()
        return f"Q: What is {expr}?\nA: {expr} ="
    m = _WHO.search(text)
    if m:
        rel, who = m.group(1), m.group(2)
        return f"{text[:m.start()]}Q: {text[m.start():]}\nA: The {rel} of {who} is"
    return f"{text}\nA:"


class MultiClient:
    """One :class:`~orchestrace.llm.client.ChatClient` per model key; an async context manager closing all."""

    def __init__(self, endpoints: Mapping[str, tuple[str, str]], **client_kw: Any) -> None:
        from ..llm.client import ChatClient

        self._clients = {k: ChatClient(url, model, **client_kw) for k, (url, model) in endpoints.items()}

    def __getitem__(self, key: str) -> Any:
        try:
            return self._clients[key]
        except KeyError:
            raise ConfigError(f"no endpoint for model {key!r} (endpoints: {', '.join(self._clients)})") from None

    async def __aenter__(self) -> MultiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for c in self._clients.values():
            await c.aclose()


@dataclass(frozen=True)
class MixedTeamConfig(TeamConfig):
    """A :class:`TeamConfig` whose members are :class:`PricedMember` s served by several endpoints.

    ``endpoints``: (model key, base URL, model name) per model — where this run sends its calls; not a
    setting of the corpus (not in :meth:`to_dict`; a resumed run may use other ports). ``tool_seed``
    fixes which calculator calls are faulty.

    >>> cfg = MixedTeamConfig(cells=(("add", 2),), n_tasks=1)
    >>> cfg.width, cfg.rounds, cfg.models()
    (4, 2, ['gemma', 'smollm2'])
    """

    members: tuple[Member, ...] = MIXED_TEAM
    rounds: int = 2
    endpoints: tuple[tuple[str, str, str], ...] = ()
    tool_seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        for m in self.members:
            if not isinstance(m, PricedMember):
                raise ConfigError(f"member {m.name!r}: a mixed team needs priced members (model, mode, prices)")

    def models(self) -> list[str]:
        """The model keys the members need, sorted."""
        return sorted({m.model for m in self.members if isinstance(m, PricedMember)})

    def make_client(self, concurrency: int, client_kw: Mapping[str, Any]) -> MultiClient:
        """A client per model (:meth:`collect` calls this); ConfigError naming a model without an endpoint."""
        have = {k: (url, model) for k, url, model in self.endpoints}
        missing = [k for k in self.models() if k not in have]
        if missing:
            raise ConfigError(f"no endpoint for model(s) {', '.join(missing)}: give one (key, base URL, model name) each")
        return MultiClient(have, max_concurrency=concurrency, **dict(client_kw))

    async def run_task(self, client: Any, index: int, task: Any, errors: list[str] | None = None) -> Any:
        """One task through every member for every round, each at its own endpoint (see :func:`run_mixed_task`)."""
        return await run_mixed_task(client, self, index, task, errors)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings (members with model, mode and prices; endpoints left out)."""
        d = super().to_dict()
        d.pop("endpoints", None)
        return d


async def _call(client: Any, cfg: MixedTeamConfig, m: PricedMember, task: Task, seed: int,
                seen: list[str | None]) -> tuple[Any, str]:
    """Send member ``m``'s request; returns the reply and the prompt text sent."""
    c = client[m.model]
    stop = list(cfg.stop) or None
    if m.mode == "cloze":
        prompt = cloze_prompt(task)
        res = await c.complete(prompt, max_tokens=cfg.max_tokens, temperature=m.temperature, seed=seed,
                               stop=[*(stop or []), "."], logprobs=cfg.top_logprobs if cfg.logprobs else 0)
        return res, prompt
    msgs = _calc_prompt(task) if m.style == "calc" else _reviser_prompt(task, seen) if m.style == "reviser" \
        else task.whole_prompt()
    extra = {"top_logprobs": cfg.top_logprobs} if cfg.logprobs and cfg.top_logprobs else None
    res = await c.chat(msgs, max_tokens=cfg.max_tokens, temperature=m.temperature, seed=seed,
                       logprobs=cfg.logprobs, stop=stop, extra=extra)
    return res, msgs[-1]["content"]


async def run_mixed_task(client: Any, cfg: MixedTeamConfig, index: int, task: Task,
                         errors: list[str] | None = None) -> Any:
    """Run one task through every member for every round (each member at its model's endpoint); its trace."""
    from .._limits import scrub

    rows: list[list[Attempt]] = []
    extras: list[list[dict[str, Any]]] = []
    plain: list[str | None] = []
    for r in range(cfg.rounds):
        row: list[Attempt] = []
        ext: list[dict[str, Any]] = []
        for w, m in enumerate(cfg.members):
            assert isinstance(m, PricedMember)
            seed = cfg.attempt_seed(index, r, w)
            info: dict[str, Any] = {"member": m.name, "temperature": m.temperature, "model": m.model, "mode": m.mode}
            if m.style == "reviser":
                info["saw"] = list(plain)
            res, prompt = await _call(client, cfg, m, task, seed, plain)
            err = None
            if m.style == "calc":
                answer, tool = _calc_answer(task, res.text)
                if tool["output"] is not None:
                    tool["output"], info["tool_faulty"] = tool_value(
                        int(tool["output"]), seed=cfg.tool_seed, task_id=task.id, round_=r, p_fault=m.tool_fault)
                    answer = str(tool["output"])
                info.update(tool)
                if answer is not None and hasattr(task, "grade"):
                    answer, err = _graded(task, answer, f"round {r} member {m.name} (calculator)", errors)
            else:
                answer, err = _graded(task, res.text, f"round {r} member {m.name}", errors)
            if m.style != "reviser":
                plain.append(answer)
            info.update(prompt=prompt, price_in_per_mtok=m.price_in, price_out_per_mtok=m.price_out,
                        cost_usd=round(attempt_cost(m, res.prompt_tokens, res.completion_tokens), 10),
                        confidence=deepconf_confidence(res.top_logprobs),
                        token_logprobs=[round(x, 4) for x in res.token_logprobs])
            row.append(Attempt(text=scrub(res.text), answer=answer, prompt_tokens=res.prompt_tokens,
                               completion_tokens=res.completion_tokens, logprob_mean=res.mean_logprob,
                               finish_reason=res.finish_reason, seed=seed, t_start=res.t_start, t_end=res.t_end,
                               error=err))
            ext.append(info)
        rows.append(row)
        extras.append(ext)
    return team_trace(task, rows, extras, cfg)


@contextlib.contextmanager
def serve_team(cfg: MixedTeamConfig, *, threads: int = 1, parallel: int = 2,
               ) -> Iterator[tuple[MixedTeamConfig, dict[str, Any]]]:
    """Start one local llama.cpp server per model the team needs (``smollm2``, ``gemma``); yield the config with
    its endpoints and the server info for the manifest (each model file's name and SHA-256). Stops them all."""
    from ..llm.gemma import GEMMA3_MODEL, find_gemma3_gguf
    from ..llm.local import SMOLLM2_MODEL, LocalServer, find_smollm2_gguf
    from .collect import file_sha256

    known = {"smollm2": (find_smollm2_gguf, SMOLLM2_MODEL), "gemma": (find_gemma3_gguf, GEMMA3_MODEL)}
    unknown = [k for k in cfg.models() if k not in known]
    if unknown:
        raise ConfigError(f"no local model for key(s) {', '.join(unknown)}; local keys: {', '.join(known)}")
    servers: list[LocalServer] = []
    try:
        endpoints, info = [], {}
        for key in cfg.models():
            find, alias = known[key]
            path = find()
            srv = LocalServer(model_path=path, alias=alias, threads=threads, parallel=parallel,
                              ctx=1024 * parallel).start()
            servers.append(srv)
            endpoints.append((key, srv.base_url or "", alias))
            info[key] = {"kind": "serve-local (xllamacpp)", "model": alias, "model_file": path.name,
                         "model_sha256": file_sha256(path), "threads": threads, "parallel": parallel}
        import dataclasses

        yield dataclasses.replace(cfg, endpoints=tuple(endpoints)), {"kind": "serve-local x2", "servers": info}
    finally:
        for s in servers:
            s.stop()


def check_same_models(folder: str | Any, server_info: Mapping[str, Any]) -> None:
    """Refuse to resume a collection in ``folder`` with other model files than it was collected with.

    ``server_info`` is :func:`serve_team`'s; the manifest's ``server.servers`` records each model file's
    SHA-256. ConfigError naming the model, both files and both checksums; nothing to check in a new folder.

    >>> import tempfile
    >>> check_same_models(tempfile.mkdtemp(), {"servers": {}})  # a new folder: nothing to compare
    """
    import json
    from pathlib import Path

    path = Path(folder) / "manifest.json"
    if not path.is_file():
        return
    try:
        old = json.loads(path.read_text()).get("server", {}).get("servers", {})
    except (ValueError, AttributeError, OSError) as exc:
        raise ConfigError(f"{path}: unreadable manifest ({type(exc).__name__}); fix or remove it") from None
    if not isinstance(old, dict):
        raise ConfigError(f"{path}: $.server.servers is not an object")
    now = dict(server_info.get("servers", {}))
    for key in sorted(set(old) | set(now)):
        a, b = old.get(key) or {}, now.get(key) or {}
        if a.get("model_sha256") != b.get("model_sha256"):
            raise ConfigError(
                f"{path}: model {key!r} was collected with {a.get('model_file')!r} (sha256 {a.get('model_sha256')}), "
                f"this run serves {b.get('model_file')!r} (sha256 {b.get('model_sha256')}); a corpus is one set of "
                "models: use a new folder, or serve the same model file")


def collect_mixed_team(cfg: MixedTeamConfig, folder: str | Any, *, resume: bool = False, concurrency: int = 2,
                       threads: int = 1, on_task: Any = None) -> Any:
    """Collect ``cfg`` into ``folder`` on local servers (:func:`serve_team`), the model files checked on resume
    (:func:`check_same_models`); returns :func:`~orchestrace.collection.collect.collect`'s result."""
    from .collect import collect

    with serve_team(cfg, threads=threads, parallel=concurrency) as (run_cfg, info):
        if resume:
            check_same_models(folder, info)
        return collect(run_cfg, folder, base_url="local", model="+".join(run_cfg.models()), resume=resume,
                       concurrency=concurrency, server_info=info, on_task=on_task)
