"""Your own logs → a vote corpus: :func:`import_logs` (``orchestrace collect import``).

Three shapes of existing logs become a corpus in the vote-corpus trace format
(:func:`~orchestrace.collection.collect.task_trace`, a folder with ``traces.jsonl`` and
``manifest.json``), so ``train --from-traces`` and ``eval --traces`` value the stop after
round r, the aggregation and the width exactly:

``batch``    OpenAI / vLLM batch output (``/v1/batches``, ``vllm run_batch``): one JSON line per
             request, ``{"custom_id", "response": {"body": chat.completion or text completion}}``
             — or a bare completion object with an ``id`` — whose ``n`` choices are samples; the
             choices of lines with the same id are joined in file order. Reference answers and
             graders come from a task file (``--tasks``: :mod:`~orchestrace.collection.taskfile`, ``id``
             = ``custom_id``; prompts optional). Samples are cut into rounds of ``width``.
``samples``  plain JSONL: ``{"id"?, "question"?, "answer", "samples": [text | {"text",
             "logprob_mean"? | "logprobs"?: [float], "tokens"?, "prompt_tokens"?}], "grader"?}``;
             samples are cut into rounds of ``width``.
``debate``   multi-agent debate transcripts in the shape of the ``llm_multiagent_debate`` code:
             one JSON object mapping each question to ``[agent_contexts, answer]``; each agent's
             context is its chat (user, assistant, user, assistant, …), assistant turn r is its
             round-r answer, and each later user turn carries the other agents' previous answers.
             Agents are the attempt columns (W = agents, R = rounds); a GSM8K-style reference
             (``… #### 72``) is read after ``####``; replies are parsed as ``\\boxed{}`` or the
             last number (grader ``numeric`` unless ``--grader`` says otherwise).

Each round's logged aggregate is the majority of **all** answers so far (ties: the first),
as in a collected vote corpus; for a debate the trace meta also records each round's own
majority (``last_round_answers``). The manifest carries ``members`` (one name per
column) and ``sees`` (per column, the columns whose answers it was shown; ``sees_from_round``
says from which round) for the team reader: debate agents see every other agent from round 1,
so a narrower width is exact at round 0 only.

Nothing is dropped silently: a record without a reference answer, with a reference the grader
cannot read, with fewer samples or rounds than the corpus shape, or an unreadable line is
excluded and counted by reason, with its location (``FILE:LINE`` or ``FILE:$[key]``); replies
with no parsable answer, samples without log-probs and estimated token counts are counted and
stated (:class:`ImportReport`). ``strict=True`` turns any exclusion into an error.

>>> import tempfile, pathlib, json
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"id": f"q{i}", "answer": "4", "samples": ["4", "5", "4", "so 4"]} for i in range(3)]
>>> _ = (d / "s.jsonl").write_text("\\n".join(json.dumps(r) for r in rows) + "\\n")
>>> rep = import_logs([d / "s.jsonl"], d / "corpus", width=2)
>>> rep.tasks, rep.rounds, rep.width, rep.excluded
(3, 2, 2, {})
"""

from __future__ import annotations

import collections
import math
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._limits import LOGPROB_MIN, MAX_TOKENS, corpus_bytes, regular_file
from .._problems import Problem
from ..errors import ConfigError
from ..vocab import Severity
from ._logread import bad_number, first_records, log_document, log_lines
from .collect import (
    FORMAT,
    MANIFEST_FILE,
    Attempt,
    CorpusWriter,
    _versions,
    _write_manifest,
    majority,
    task_trace,
)
from .taskfile import MAX_ANSWER_CHARS, FileTask, Grader, load_task_file, parse_grader

__all__ = ["FORMATS", "ImportError_", "ImportReport", "deepconf_confidence", "detect_format", "import_logs"]

#: Bad lines in one log before the rest of it is left unread (a file of junk is not read to its end).
_MAX_BAD_LINES = 10_000
#: The log shapes :func:`import_logs` reads.
FORMATS: tuple[str, ...] = ("batch", "samples", "debate")


class ImportError_(ConfigError):  # noqa: N801 (not the builtin ImportError)
    """Logs that cannot become a corpus; ``problems`` lists every located problem."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass
class ImportReport:
    """What :func:`import_logs` did; every exclusion and estimate is counted here and in the manifest."""

    format: str = ""
    tasks: int = 0
    rounds: int = 0
    width: int = 0
    replies: int = 0
    unparsed: int = 0
    grader_errors: int = 0
    no_logprobs: int = 0
    tokens_estimated: bool = False
    dropped_samples: int = 0
    excluded: dict[str, list[str]] = field(default_factory=dict)  # reason → locations
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report as plain sentences (what the CLI prints)."""
        out = [f"{self.tasks} task(s) × {self.rounds} round(s) × {self.width} attempt(s) from {self.format} logs "
               f"({self.replies} replies)"]
        if self.excluded:
            n = sum(map(len, self.excluded.values()))
            out.append(f"excluded {n} record(s) that cannot be graded or shaped: " + "; ".join(
                f"{k}: {len(v)} (first: {v[0]})" for k, v in sorted(self.excluded.items())))
        if self.unparsed:
            out.append(f"{self.unparsed} of {self.replies} replies have no parsable answer (kept: they do not vote)")
        if self.grader_errors:
            out.append(f"{self.grader_errors} replies could not be graded (the grader raised or timed out; kept as "
                       "no answer)")
        if self.no_logprobs:
            out.append(f"{self.no_logprobs} of {self.replies} replies carry no log-probs (the log-prob vote gives them "
                       "the corpus-mean weight)")
        if self.dropped_samples:
            out.append(f"{self.dropped_samples} sample(s) beyond rounds × width were not used")
        if self.tokens_estimated:
            out.append("token counts are estimated as characters / 4 (the logs carry no usage)")
        return out + self.notes


def deepconf_confidence(top_logprobs: Sequence[Sequence[float]], window: int = 4) -> float | None:
    """DeepConf-style confidence: the lowest sliding-window mean of per-token −mean(top-k log-probs).

    >>> deepconf_confidence([[-0.1, -3.0], [-0.2, -2.0], [-0.1, -4.0], [-0.1, -5.0], [-1.0, -1.1]])
    1.6875
    >>> deepconf_confidence([]) is None
    True
    """
    per = [-sum(t) / len(t) for t in top_logprobs if t]
    if not per:
        return None
    k = min(window, len(per))
    return round(min(sum(per[i:i + k]) / k for i in range(len(per) - k + 1)), 6)


def _est(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def detect_format(path: Path) -> str:
    """Guess a log file's format from its first record (``debate``: one JSON object of question → entry).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = p.write_text('{"custom_id": "a", "response": {"body": {"choices": []}}}\\n')
    >>> detect_format(p)
    'batch'
    """
    recs, head = first_records(path)  # regular file, caps; lines split at \n only, a long first line read whole
    for rec in recs:  # the first line that is a record decides (a torn or junk first line does not)
        if isinstance(rec, dict):
            if "custom_id" in rec or "response" in rec or "choices" in rec:
                return "batch"
            if "samples" in rec:
                return "samples"
            if rec and all(isinstance(v, list) and len(v) == 2 for v in rec.values()):
                return "debate"  # a one-line debate log
    if head.lstrip().startswith(b"{") and not any(isinstance(r, dict) for r in recs):
        return "debate"  # a whole-file JSON object (its first line alone is not a record)
    raise ConfigError(f"{path}: cannot tell the log format from its first record; pass --format "
                      f"({', '.join(FORMATS)})")


# ----------------------------------------------------------------------------- per-format readers
class _Sample:
    __slots__ = ("text", "lp", "conf", "tok_out", "tok_in", "estimated")

    def __init__(self, text: str, lp: float | None, conf: float | None, tok_out: int | None, tok_in: int | None) -> None:
        self.text, self.lp, self.conf = text, lp, conf
        self.estimated = tok_out is None or tok_in is None
        self.tok_out, self.tok_in = tok_out, tok_in


class _Record:
    """One task's samples (``rows``: rounds of attempts for debates, else a flat list) before shaping."""

    def __init__(self, where: str, tid: str, answer: Any, grader: Any, question: str,
                 flat: list[_Sample] | None = None, rows: list[list[_Sample]] | None = None) -> None:
        self.where, self.tid, self.answer, self.grader, self.question = where, tid, answer, grader, question
        self.flat, self.rows = flat, rows


def _choice_sample(ch: dict, usage: dict, n: int) -> _Sample:
    msg = ch.get("message")
    text = msg.get("content") if isinstance(msg, dict) else ch.get("text")
    text = text if isinstance(text, str) else ""
    lps: list[float] = []
    tops: list[list[float]] = []
    lp = ch.get("logprobs")
    if isinstance(lp, dict):
        if isinstance(lp.get("content"), list):  # chat completions
            for t in lp["content"]:
                if isinstance(t, dict) and isinstance(t.get("logprob"), (int, float)):
                    lps.append(float(t["logprob"]))
                    top = t.get("top_logprobs")
                    if isinstance(top, list):
                        tops.append([float(x["logprob"]) for x in top
                                     if isinstance(x, dict) and isinstance(x.get("logprob"), (int, float))])
        elif isinstance(lp.get("token_logprobs"), list):  # text completions
            lps = [float(x) for x in lp["token_logprobs"] if isinstance(x, (int, float))]
            if isinstance(lp.get("top_logprobs"), list):
                tops = [[float(v) for v in d.values() if isinstance(v, (int, float))]
                        for d in lp["top_logprobs"] if isinstance(d, dict)]
    pt = usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None
    ct = usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None
    tok_out = len(lps) if lps else (None if ct is None else max(1, round(ct / max(n, 1))))
    return _Sample(text, sum(lps) / len(lps) if lps else None, deepconf_confidence(tops), tok_out, pt)


def _read_jsonl(path: Path, rep: ImportReport) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    n_bad = 0
    for where, rec, why in log_lines(path):  # capped sizes; one bad line is located, the others kept
        if why is None:
            out.append((where, rec))
            continue
        if why.startswith("unreadable"):  # a torn gzip, the decompressed cap: the log is not whole
            raise ImportError_(f"{where}: {why}; nothing written", [Problem(
                code="import.unreadable", severity=Severity.ERROR, path=where, message=why)])
        n_bad += 1
        if n_bad > _MAX_BAD_LINES:
            rep.excluded.setdefault("unreadable data (the rest of the file was not read)", []).append(
                f"{where} (more than {_MAX_BAD_LINES} bad lines: not a log)")
            break
        kind = ("line is too long" if "longer than" in why
                else "line holds NaN, ±inf, an integer beyond ±2**63 or deep nesting" if any(
                    k in why for k in ("may hold", "finite", "out of range", "nested")) else "line is not JSON")
        rep.excluded.setdefault(kind, []).append(where if kind == "line is not JSON" else f"{where} ({why})")
    return out


def _read_batch(path: Path, rep: ImportReport, tasks: dict[str, FileTask] | None) -> list[_Record]:
    if tasks is None:
        raise ConfigError(f"{path}: batch outputs carry no reference answers; pass --tasks FILE (a task file whose "
                          "ids are the requests' custom_id, with answer and grader)")
    by_id: dict[str, _Record] = {}
    for where, rec in _read_jsonl(path, rep):
        if not isinstance(rec, dict):
            rep.excluded.setdefault("not a batch output record", []).append(where)
            continue
        resp = rec.get("response")
        body = resp.get("body") if isinstance(resp, dict) else rec if "choices" in rec else None
        status = resp.get("status_code", 200) if isinstance(resp, dict) else 200
        tid = rec.get("custom_id", rec.get("id"))
        if rec.get("error") or status != 200 or not isinstance(body, dict) or not isinstance(body.get("choices"), list):
            rep.excluded.setdefault("failed request (error, status != 200 or no choices)", []).append(where)
            continue
        if not isinstance(tid, str) or tid not in tasks:
            rep.excluded.setdefault("custom_id not in the task file (no reference answer)", []).append(
                f"{where} ({tid!r})")
            continue
        usage: dict = body["usage"] if isinstance(body.get("usage"), dict) else {}
        chs = [c for c in body["choices"] if isinstance(c, dict)]
        chs.sort(key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
        t = tasks[tid]
        r = by_id.setdefault(tid, _Record(where, tid, t.answer, t.grader, t.question, flat=[]))
        assert r.flat is not None
        r.flat += [_choice_sample(c, usage, len(chs)) for c in chs]
    return list(by_id.values())


def _read_samples(path: Path, rep: ImportReport) -> list[_Record]:
    out: list[_Record] = []
    for where, rec in _read_jsonl(path, rep):
        if not isinstance(rec, dict) or not isinstance(rec.get("samples"), list):
            rep.excluded.setdefault("no 'samples' list", []).append(where)
            continue
        flat: list[_Sample] = []
        for s in rec["samples"]:
            if isinstance(s, str):
                flat.append(_Sample(s, None, None, None, None))
            elif isinstance(s, dict) and isinstance(s.get("text"), str):
                lp = s.get("logprob_mean")
                if lp is None and isinstance(s.get("logprobs"), list) and s["logprobs"]:
                    vals = [float(x) for x in s["logprobs"] if isinstance(x, (int, float))]
                    lp = sum(vals) / len(vals) if vals else None
                tok = s.get("tokens") if isinstance(s.get("tokens"), int) else None
                pt = s.get("prompt_tokens") if isinstance(s.get("prompt_tokens"), int) else None
                flat.append(_Sample(s["text"], float(lp) if isinstance(lp, (int, float)) else None, None, tok, pt))
            else:
                flat.append(_Sample("", None, None, None, None))  # an unreadable sample: no answer, counted
        tid = rec.get("id")
        tid = str(tid) if isinstance(tid, (str, int)) and not isinstance(tid, bool) else f"{path.stem}-{where.rsplit(':', 1)[1]}"
        q = rec.get("question", rec.get("prompt", ""))
        out.append(_Record(where, tid, rec.get("answer"), rec.get("grader"), q if isinstance(q, str) else "", flat=flat))
    return out


_GSM_REF = re.compile(r"####\s*(.+?)\s*$", re.S)


def _read_debate(path: Path, rep: ImportReport) -> list[_Record]:
    try:
        data = log_document(path)  # regular file, capped on disk and decompressed, finite numbers, bounded nesting
    except ValueError as exc:
        raise ConfigError(f"{path}: not a debate log (one JSON object mapping each question to [agent contexts, "
                          f"answer]): {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a debate log is one JSON object mapping each question to [agent contexts, answer]; "
                          f"got a JSON {type(data).__name__}")
    out: list[_Record] = []
    for i, (q, entry) in enumerate(data.items()):
        where = f"{path}:$[{i}]"
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], list)):
            rep.excluded.setdefault("entry is not [agent contexts, answer]", []).append(where)
            continue
        contexts, answer = entry
        rows_by_agent: list[list[_Sample]] = []
        ok = True
        for ctx in contexts:
            if not isinstance(ctx, list) or not all(isinstance(m, dict) and isinstance(m.get("content"), str)
                                                    for m in ctx):
                ok = False
                break
            agent: list[_Sample] = []
            seen_chars = 0
            for m in ctx:
                if m.get("role") == "assistant":
                    agent.append(_Sample(m["content"], None, None, None, None))
                    agent[-1].tok_in = _est("x" * seen_chars)
                seen_chars += len(m["content"])
            rows_by_agent.append(agent)
        if not ok or not rows_by_agent:
            rep.excluded.setdefault("agent contexts are not chat message lists", []).append(where)
            continue
        n_rounds = {len(a) for a in rows_by_agent}
        if len(n_rounds) != 1 or 0 in n_rounds:
            rep.excluded.setdefault("agents answered a different number of rounds", []).append(
                f"{where} ({sorted(len(a) for a in rows_by_agent)})")
            continue
        if isinstance(answer, str) and (m := _GSM_REF.search(answer)):
            answer = m.group(1).replace(",", "")
        rows = [[a[r] for a in rows_by_agent] for r in range(n_rounds.pop())]
        out.append(_Record(where, _debate_id(q), answer, None, str(q), rows=rows))
    return out


def _stem(where: str) -> str:
    """The suite of an imported record: its log file's name without suffixes (``FILE:LINE`` → ``FILE``)."""
    return Path(where.rsplit(":", 1)[0]).name.split(".")[0] or "imported"


def _debate_id(question: str) -> str:
    import hashlib

    return "debate-" + hashlib.sha256(question.encode()).hexdigest()[:12]


# ----------------------------------------------------------------------------- shaping, grading, writing
def _shape(records: list[_Record], width: int, rep: ImportReport) -> tuple[list[_Record], int, int]:
    """Fix one (rounds, width): the most common shape; shorter records are excluded, longer ones cut (counted)."""
    shapes: collections.Counter[tuple[int, int]] = collections.Counter()
    for r in records:
        if r.rows is not None:
            shapes[(len(r.rows), len(r.rows[0]))] += 1
        else:
            assert r.flat is not None
            if len(r.flat) >= width:
                shapes[(len(r.flat) // width, width)] += 1
    if not shapes:
        return [], 0, 0
    R, W = shapes.most_common(1)[0][0]  # noqa: N806
    keep: list[_Record] = []
    for r in records:
        if r.rows is not None:
            if (len(r.rows), len(r.rows[0])) != (R, W):
                rep.excluded.setdefault(f"not {R} rounds × {W} agents", []).append(
                    f"{r.where} ({len(r.rows)} × {len(r.rows[0])})")
                continue
        else:
            assert r.flat is not None
            if len(r.flat) < R * W:
                rep.excluded.setdefault(f"fewer than {R * W} samples (rounds × width)", []).append(
                    f"{r.where} ({len(r.flat)})")
                continue
            rep.dropped_samples += len(r.flat) - R * W
            r.rows = [r.flat[k * W:(k + 1) * W] for k in range(R)]
        keep.append(r)
    return keep, R, W


def _grader_for(rec: _Record, default: Any) -> tuple[Grader | None, str, str | None]:
    """(grader, reference, problem) for a record."""
    ans = rec.answer
    if ans is None or isinstance(ans, (dict, list, bool)) or str(ans).strip() == "":
        return None, "", "no reference answer"
    if isinstance(ans, float) and not math.isfinite(ans):
        return None, "", "reference answer is not a finite number"
    ref = str(int(ans)) if isinstance(ans, float) and ans == int(ans) else str(ans).strip()
    if len(ref) > MAX_ANSWER_CHARS:
        return None, "", f"reference answer over {MAX_ANSWER_CHARS} characters"
    spec = rec.grader if rec.grader is not None else default
    if spec is None:
        try:
            float(ref.replace(",", ""))
            spec = "numeric"
            ref = ref.replace(",", "")
        except ValueError:
            spec = "exact"
    if isinstance(spec, Grader):
        return spec, ref, None
    try:
        return parse_grader(spec, answer=ref), ref, None
    except ValueError as exc:
        return None, ref, f"grader: {exc}"


def import_logs(
    paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *, fmt: str = "auto",
    tasks: str | os.PathLike[str] | None = None, grader: Any = None, width: int = 2, model: str = "",
    strict: bool = False,
) -> ImportReport:
    """Read logs (module docstring) and write the corpus folder ``out``; return the :class:`ImportReport`.

    ``fmt``: one of :data:`FORMATS` or ``auto`` (per file, :func:`detect_format`). ``tasks``: a
    task file with the references (needed for ``batch``). ``grader``: the default grader spec for
    records without one (else ``numeric`` when the reference is a number, ``exact`` otherwise).
    ``width``: attempts per round when samples are cut into rounds (``batch``, ``samples``).
    Raises :class:`ImportError_` (located problems) when nothing usable remains or ``strict``
    and anything was excluded; :class:`~orchestrace.errors.ConfigError` for a bad option.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose auto, {', '.join(FORMATS)}")
    if width < 1:
        raise ConfigError(f"--width must be >= 1, got {width}")
    if grader is not None and not isinstance(grader, Grader):
        try:
            parse_grader(grader, answer="")
        except ValueError as exc:
            raise ConfigError(f"--grader: {exc}") from None
    task_map: dict[str, FileTask] | None = None
    if tasks is not None:
        task_map = {t.id: t for t in load_task_file(tasks, require_prompt=False)}
    rep = ImportReport()
    records = _read_all(paths, fmt, rep, task_map)
    graded = _graded(records, grader, task_map, rep)
    kept, R, W = _shape([r for r, _ in graded], width, rep)  # noqa: N806
    keep_ids = {r.tid for r in kept}
    problems = [Problem(code="import.excluded", severity=Severity.ERROR, path=loc, message=reason)
                for reason, locs in rep.excluded.items() for loc in locs]
    if not kept:
        raise ImportError_(f"no usable record in {', '.join(map(str, paths))} ({len(records)} read); nothing written",
                           problems)
    if strict and problems:
        raise ImportError_(f"{len(problems)} record(s) excluded and --strict is set; nothing written", problems)
    rep.rounds, rep.width = R, W
    stage = _stage(Path(out))  # written beside OUT, renamed onto it when whole: a failure leaves nothing behind
    try:
        _write_corpus(stage, graded, keep_ids, rep, paths, tasks, model)
        if Path(out).is_dir():
            os.rmdir(out)  # an empty folder (_stage checked it)
        os.rename(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return rep


def _stage(out: Path) -> Path:
    """A fresh folder beside ``out`` to write the corpus into; ``out`` must not exist or be an empty folder."""
    import tempfile

    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise ConfigError(f"{out}: exists and is not an empty folder; import into a new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.import-", dir=out.parent))


def _write_corpus(stage: Path, graded: list[tuple[_Record, FileTask]], keep_ids: set[str], rep: ImportReport,
                  paths: Sequence[str | os.PathLike[str]], tasks: Any, model: str) -> None:
    """The traces and the manifest of the kept records, into the folder ``stage``."""
    R, W = rep.rounds, rep.width  # noqa: N806
    writer = CorpusWriter(stage)
    debate = rep.format == "debate"
    try:
        for rec, task in graded:
            if rec.tid not in keep_ids:
                continue
            attempts = _attempts(rec, task, rep)
            meta: dict[str, Any] = {"source": str(rec.where), "import_format": rep.format, "grader": task.kind}
            if debate:  # the debate's own answer after each round: the majority of that round alone
                meta["last_round_answers"] = [majority([a.answer for a in row]) for row in attempts]
            writer.append(task_trace(task, attempts, meta=meta))
            rep.tasks += 1
    finally:
        writer.close()
    members = ["debater"] * W if debate else []
    sees = [[c for c in range(W) if c != k] for k in range(W)] if debate else []
    _write_manifest(stage / MANIFEST_FILE, {
        "format": FORMAT, "model": model, "source": "import",
        "config": {"rounds": R, "width": W, "cells": [], "import_format": rep.format,
                   "logs": [str(Path(p).resolve()) for p in paths], "tasks": None if tasks is None else str(tasks)},
        "members": members, "sees": sees, "sees_from_round": 1 if debate else None,
        "import": {k: v for k, v in rep.__dict__.items() if k != "excluded"} | {
            "excluded": {k: len(v) for k, v in rep.excluded.items()},
            "excluded_examples": {k: v[:10] for k, v in rep.excluded.items()}},
        "tasks_done": rep.tasks, "versions": _versions(),
    })


def _read_all(paths: Sequence[str | os.PathLike[str]], fmt: str, rep: ImportReport,
              task_map: dict[str, FileTask] | None) -> list[_Record]:
    """Every record of every log (one format for all; ``auto``: detected per file); sets ``rep.format``."""
    records: list[_Record] = []
    fmts: set[str] = set()
    for raw in paths:
        p = Path(raw)
        regular_file(p, limit=corpus_bytes(), what="log file")  # a FIFO, a loop, a sparse 1 GiB file: refused unread
        f = detect_format(p) if fmt == "auto" else fmt
        fmts.add(f)
        records += (_read_batch(p, rep, task_map) if f == "batch" else _read_samples(p, rep) if f == "samples"
                    else _read_debate(p, rep))
    if len(fmts) > 1:
        raise ConfigError(f"the logs are of different formats ({', '.join(sorted(fmts))}); import them separately")
    rep.format = fmts.pop() if fmts else fmt
    return records


def _graded(records: list[_Record], grader: Any, task_map: dict[str, FileTask] | None,
            rep: ImportReport) -> list[tuple[_Record, FileTask]]:
    """The records that can be graded, each with its task (an ungradable or repeated one is excluded, counted)."""
    graded: list[tuple[_Record, FileTask]] = []
    ids: set[str] = set()
    for rec in records:
        g, ref, why = _grader_for(rec, grader)
        bad = _bad_numbers(rec)
        if bad is not None:  # what a corpus reader would refuse is refused here, located
            rep.excluded.setdefault("a number no corpus accepts", []).append(f"{rec.where} ({bad})")
            continue
        if g is None:
            rep.excluded.setdefault(why or "ungradable", []).append(rec.where)
            continue
        if rec.tid in ids:
            rep.excluded.setdefault("duplicate id", []).append(f"{rec.where} ({rec.tid!r})")
            continue
        ids.add(rec.tid)
        q = rec.question or rec.tid
        suite = task_map[rec.tid].suite if task_map and rec.tid in task_map else _stem(rec.where)
        graded.append((rec, FileTask(rec.tid, suite, ({"role": "user", "content": q},), ref, g, 0, rec.where)))
    return graded


def _bad_numbers(rec: _Record) -> str | None:
    """What is wrong with the first out-of-range number of a record's samples (log-prob, tokens), or None."""
    rows = rec.rows if rec.rows is not None else [rec.flat or []]
    for row in rows:
        for k, s in enumerate(row):
            why = (bad_number(s.lp, f"sample {k}: mean log-prob", lo=LOGPROB_MIN, hi=0.0)
                   or bad_number(s.tok_out, f"sample {k}: tokens", lo=0, hi=MAX_TOKENS - 1)
                   or bad_number(s.tok_in, f"sample {k}: prompt tokens", lo=0, hi=MAX_TOKENS - 1)
                   or bad_number(s.conf, f"sample {k}: confidence", lo=0.0, hi=1e6))
            if why is not None:
                return why
    return None


def _attempts(rec: _Record, task: FileTask, rep: ImportReport) -> list[list[Attempt]]:
    """One record's replies graded, round by round (tokens estimated where the log has none; counted in ``rep``)."""
    assert rec.rows is not None
    attempts: list[list[Attempt]] = []
    for r, row in enumerate(rec.rows):
        line: list[Attempt] = []
        for s in row:
            ans, _, err = task.grade(s.text)
            rep.replies += 1
            rep.unparsed += ans is None and err is None
            rep.grader_errors += err is not None
            rep.no_logprobs += s.lp is None
            rep.tokens_estimated |= s.estimated
            tok_out = s.tok_out if s.tok_out is not None else _est(s.text)
            tok_in = s.tok_in if s.tok_in is not None else _est(task.question)
            line.append(Attempt(text=s.text, answer=ans, prompt_tokens=tok_in, completion_tokens=tok_out,
                                logprob_mean=s.lp, finish_reason=None, seed=-1, t_start=float(r),
                                t_end=float(r) + 0.5, error=err, confidence=s.conf))
        attempts.append(line)
    return attempts
