"""Hostile input on the learning surfaces (issue 33): one regression test per class.

Corpus traces, manifests, ``.npz`` runs and gate files are refused with a located error (no
internal error, no hang, bounded memory); writes are atomic; nothing is lost silently; no
secret or terminal control sequence reaches what is stored or printed.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import shutil
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrace._limits import capped_lines, printable, read_capped, redact_url, scrub
from orchestrace.cli import app
from orchestrace.collection.collect import CorpusWriter
from orchestrace.core.io import atomic_write
from orchestrace.errors import ConfigError, TraceInvalidError
from orchestrace.logged.corpus import read_corpus
from orchestrace.logged.runs import load_logged_runs
from orchestrace.offline import StopGate, make_synthetic_logged, save_runs

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"
runner = CliRunner()


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    def boom(*_: object) -> None:
        raise TimeoutError(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """The tiny committed corpus as a plain .jsonl folder (30 runs, 4 rounds x 2)."""
    d = tmp_path / "c"
    d.mkdir()
    (d / "traces.jsonl").write_bytes(gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()))
    shutil.copy(TINY / "manifest.json", d / "manifest.json")
    return d


def _lines(folder: Path) -> list[str]:
    return (folder / "traces.jsonl").read_text().splitlines(keepends=True)


def _set_return(folder: Path, edit: str) -> int:
    """Replace the first return event's ``edit`` (``key: raw JSON``) text; the line number edited."""
    lines = _lines(folder)
    i = next(k for k, ln in enumerate(lines) if '"type":"return"' in ln)
    key, raw = edit.split("=", 1)
    rec = json.loads(lines[i])
    ev = rec["event"]
    target = ev["attrs"] if key.startswith("attrs.") else ev
    target[key.removeprefix("attrs.")] = "@@"
    lines[i] = json.dumps(rec).replace('"@@"', raw) + "\n"
    (folder / "traces.jsonl").write_text("".join(lines))
    return i + 1


# -- 1. numbers out of range, wrong types: located errors, runs counted ---------------------------
@pytest.mark.parametrize("edit, field", [
    ("attrs.logprob_mean=-" + "9" * 400, "$.event.attrs.logprob_mean"),
    ("attrs.logprob_mean=-1e308", "$.event.attrs.logprob_mean"),
    ("attrs.logprob_mean=1e38", "$.event.attrs.logprob_mean"),
    ("attrs.logprob_mean=0.5", "$.event.attrs.logprob_mean"),
    ("tokens_out=2147483648", "$.event.tokens_out"),
    ("tokens_out=-3", "$.event.tokens_out"),
    ("tokens_in=" + "1" * 400, "$.event.tokens_in"),
    ('attrs.answer={"a": 1}', "$.event.attrs.answer"),
    ("attrs.round=1.0", "$.event.attrs.round"),
])
def test_a_bad_number_or_type_is_located_and_excluded_by_run(plain: Path, edit: str, field: str) -> None:
    ln = _set_return(plain, edit)
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(plain)
    p = ei.value.problems[0]
    assert p.path == f"{plain / 'traces.jsonl'}:{ln}"
    assert field in p.message or "not JSON" in p.message, p.message  # 400-digit floats fail in the JSON decoder
    with pytest.warns(UserWarning, match="excluded 1 run"):
        runs = load_logged_runs(plain, exclude=True)
    assert runs.shape == (29, 4, 2)
    assert (runs.logprob_mean[~np.isnan(runs.logprob_mean)] <= 0).all() and (runs.completion_tokens >= 0).all()


def test_a_difficulty_of_1e30_is_located(plain: Path) -> None:
    lines = _lines(plain)
    lines[0] = lines[0].replace('"difficulty":1', '"difficulty":1e30', 1)
    (plain / "traces.jsonl").write_text("".join(lines))
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(plain)
    assert "$.header.meta.difficulty" in ei.value.problems[0].message and ei.value.problems[0].path.endswith(":1")


@pytest.mark.parametrize("doc, expect", [
    ("[1, 2]", "expected an object"), ("not json", "not valid JSON"), ('{"config": {"rounds": "4"}}', "$.config.rounds"),
    ('{"config": {"width": 4.0}}', "$.config.width"), ('{"config": {"cells": 5}}', "$.config.cells"),
])
def test_a_bad_manifest_is_a_located_config_error(plain: Path, doc: str, expect: str) -> None:
    (plain / "manifest.json").write_text(doc)
    with pytest.raises(ConfigError, match=expect.replace("$", r"\$")):
        load_logged_runs(plain)


def test_a_corpus_too_wide_is_refused_quickly(tmp_path: Path) -> None:
    d = tmp_path / "w"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"config": {"rounds": 4, "width": 1500}}))
    (d / "traces.jsonl").write_text('{"header": {"task_id": "t", "meta": {"rounds": 4, "width": 1500}}}\n')
    with deadline(20), pytest.raises(ConfigError, match=r"\$.config.width"):
        load_logged_runs(d)


# -- 2. .npz: answer codes, dtypes, declared sizes -------------------------------------------------
def _npz(tmp_path: Path, **override: np.ndarray) -> Path:
    runs = make_synthetic_logged(30, 2, 2, seed=0)
    p = save_runs(runs, tmp_path / "x.npz")
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(override)
    np.savez_compressed(p, **arrays)
    return p


def test_an_npz_answer_code_of_2_pow_30_is_refused_without_allocating(tmp_path: Path) -> None:
    ans = make_synthetic_logged(30, 2, 2, seed=0).answers.copy()
    ans[0, 0, 0] = 2**30
    with deadline(20), pytest.raises(ConfigError, match="answer codes must be -1..3"):
        read_corpus(_npz(tmp_path, answers=ans))


@pytest.mark.parametrize("name, value, expect", [
    ("answers", np.zeros((30, 2, 2), np.float32), "answers is float32"),
    ("prompt_tokens", np.full((30, 2, 2), -5, np.int32), "prompt_tokens must be in"),
    ("logprob_mean", np.full((30, 2, 2), 3.0, np.float32), "logprob_mean must be NaN"),
    ("task_ids", np.array([{"a": 1}] * 30, dtype=object), "Python objects|not a readable"),
    ("answers", np.array([[[1, 0], [0, 0]]] * 30, np.int32), "first-appearance order"),
])
def test_an_npz_with_wrong_arrays_is_a_config_error(tmp_path: Path, name: str, value: np.ndarray,
                                                     expect: str) -> None:
    with pytest.raises(ConfigError, match=expect):
        read_corpus(_npz(tmp_path, **{name: value}))


# -- 3. gate files: frozen, typed, bounded ----------------------------------------------------------
@pytest.fixture(scope="module")
def gate_doc() -> dict:
    from orchestrace.policies.features import FEATURES

    f = len(FEATURES)
    g = StopGate(model_class="linear", checks=[{"w": [0.0] * f, "b": 0.3}], mean=[0.0] * f, std=[1.0] * f,
                 features=list(FEATURES), width=2, aggregation="majority", max_rounds=2, logged_width=2,
                 token_scale=100.0, lp_fill=-1.0, len_scale=50.0, attempt_tokens=50.0)
    return json.loads(json.dumps(g.document()))


@pytest.mark.parametrize("field, raw, expect", [
    ("max_rounds", "4.0", "$.max_rounds"), ("max_rounds", '"4"', "$.max_rounds"), ("checks", "null", "$.checks"),
    ("features", "null", "$.features"), ("meta", "[]", "$.meta"), ("width", "0", "$.width"),
    ("width", '"1"', "$.width"), ("aggregation", '"median"', "$.aggregation"), ("lp_fill", "NaN", "malformed|invalid"),
    ("std", "[" + ",".join(["0.0"] * 21) + "]", "$.std"), ("mean", "[1e400]", "$.mean"),
    ("token_scale", "0", "$.token_scale"), ("extra_field", "1", "extra_field"),
])
def test_a_bad_gate_file_is_refused_at_load(tmp_path: Path, gate_doc: dict, field: str, raw: str,
                                            expect: str) -> None:
    doc = dict(gate_doc)
    doc[field] = "@@"
    p = tmp_path / "gate.json"
    p.write_text(json.dumps(doc).replace('"@@"', raw))
    with pytest.raises(ConfigError) as ei:
        StopGate.load(p)
    assert any(e in str(ei.value) for e in expect.split("|")), str(ei.value)
    assert str(p) in str(ei.value)


def test_gates_are_frozen_and_take_rounds_of_answers(tmp_path: Path, gate_doc: dict) -> None:
    p = tmp_path / "gate.json"
    p.write_text(json.dumps(gate_doc))
    g = StopGate.load(p)
    with pytest.raises(AttributeError):
        g.width = 3  # type: ignore[misc]
    for bad in ("abc", ["42", "41"], [[{"x": 1}, "41"]], 42):
        with pytest.raises(ConfigError, match="answers_so_far"):
            g.decide(bad, price=0.1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="price"):
        g.decide([["42", "41"]], price=True)
    assert g.decide([["42", "41"]], price=0.1).stop in (True, False)


# -- 4. no hangs, bounded memory: FIFOs, sparse files, gzip bombs, symlink loops --------------------
def test_fifos_never_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "traces.jsonl")
    os.mkfifo(tmp_path / "gate.json")
    with deadline(20):
        with pytest.raises(ConfigError, match="FIFO"):
            load_logged_runs(tmp_path)
        with pytest.raises(ConfigError, match="FIFO"):
            StopGate.load(tmp_path / "gate.json")
        with pytest.raises(ConfigError, match="FIFO"):
            load_logged_runs(tmp_path / "traces.jsonl")


def test_a_sparse_file_and_a_symlink_loop_are_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "traces.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(2**30)  # 1 GiB, sparse
    with deadline(20), pytest.raises(ConfigError, match="over the"):
        load_logged_runs(big)
    gate = tmp_path / "gate.json"
    os.symlink(gate, gate)
    with pytest.raises(ConfigError, match="symbolic links"):
        StopGate.load(gate)


def test_a_gzip_bomb_stops_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRACE_MAX_CORPUS_BYTES", str(8 * 1024**2))
    p = tmp_path / "traces.jsonl.gz"
    with gzip.open(p, "wb") as fh:
        for _ in range(32):
            fh.write(b"\0" * 2**20)  # 32 MiB of zeros on one line: ~32 KiB on disk
    out = list(capped_lines(p))
    assert isinstance(out[0][1], ValueError) and isinstance(out[-1][1], OSError)
    with pytest.raises(TraceInvalidError, match="no run could be read"):
        load_logged_runs(p)


def test_read_capped_refuses_a_device(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="device"):
        read_capped("/dev/zero", limit=10)


# -- 5. nothing lost: atomic writes, --resume, counted exclusions ----------------------------------
def test_atomic_write_follows_symlinks_and_keeps_hard_links(tmp_path: Path) -> None:
    target = tmp_path / "t.json"
    target.write_text("old")
    link = tmp_path / "l.json"
    link.symlink_to(target)
    atomic_write(link, b"new")
    assert link.is_symlink() and target.read_text() == "new"
    hard = tmp_path / "h.json"
    os.link(target, hard)
    atomic_write(hard, b"newer")
    assert target.read_text() == "newer" and os.stat(target).st_nlink == 2


def test_a_failed_gate_save_leaves_the_old_gate_whole(tmp_path: Path, gate_doc: dict,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "gate.json"
    p.write_text(json.dumps(gate_doc))
    g = StopGate.load(p)
    before = p.read_bytes()

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        g.save(p)
    assert p.read_bytes() == before and [x.name for x in tmp_path.iterdir()] == ["gate.json"]


def test_resume_keeps_a_complete_last_trace_without_its_newline(plain: Path) -> None:
    data = (plain / "traces.jsonl").read_bytes()
    (plain / "traces.jsonl").write_bytes(data.rstrip(b"\n"))
    w = CorpusWriter(plain, resume=True)
    w.close()
    assert len(w.done) == 30 and w.cut_bytes == 0
    assert (plain / "traces.jsonl").read_bytes() == data


def test_resume_refuses_damage_before_complete_traces(plain: Path) -> None:
    lines = _lines(plain)
    lines[0] = '{"header": {"task_id": "\xff' + "\n"
    (plain / "traces.jsonl").write_text("".join(lines))
    before = (plain / "traces.jsonl").read_bytes()
    with pytest.raises(ConfigError, match=r"traces.jsonl:1: a trace header that is not valid JSON"):
        CorpusWriter(plain, resume=True)
    assert (plain / "traces.jsonl").read_bytes() == before


def test_a_truncated_gzip_counts_every_lost_run(tmp_path: Path) -> None:
    d = tmp_path / "g"
    d.mkdir()
    shutil.copy(TINY / "manifest.json", d / "manifest.json")
    blob = (TINY / "traces.jsonl.gz").read_bytes()
    (d / "traces.jsonl.gz").write_bytes(blob[: len(blob) // 3])
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(d)
    assert any(p.code == "corpus.lost" for p in ei.value.problems)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        runs = load_logged_runs(d, exclude=True)
    lost = runs.meta["lost_runs"]
    excluded = sum(len(v) for v in runs.meta["excluded"].values())
    assert runs.shape[0] + excluded + lost == 30 and lost >= 10  # every run counted, none silently
    assert f"excluded {excluded + lost} run(s)" in str(rec[-1].message)


# -- 6. secrets and terminal control ----------------------------------------------------------------
def test_secrets_are_scrubbed_and_urls_redacted() -> None:
    assert "sk-" not in scrub("Incorrect API key provided: sk-proj-AbCdEf0123456789xyz")
    assert scrub("Authorization: Bearer eyJhbGciOi.J9-abc") == "Authorization: ***"
    assert redact_url("https://h.example/v1/sk-AbCdEf0123456789xyzxyz/chat") == "https://h.example/v1/***/chat"
    assert printable("r0w0\x1b[2J\x1b]0;pwned\x07") == "r0w0\\x1b[2J\\x1b]0;pwned\\x07"


def test_an_evidence_excerpt_never_keeps_a_key() -> None:
    from orchestrace.importers._evidence import Evidence, EvidenceKind, evidence_of

    ev = Evidence(EvidenceKind.TOOL_ERROR, (0, 5), "Incorrect API key provided: sk-abcdefghijklmnopqrstu")
    assert "sk-" not in json.dumps(ev.to_json())
    assert "sk-" not in evidence_of({"evidence": [{"kind": "tool_error", "excerpt": "key sk-abcdefghijklmnopq"}]})[0].excerpt


def test_a_reply_echoing_the_key_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrace.llm.client import ChatClient

    monkeypatch.setenv("ORCHESTRACE_HOSTILE_KEY", "k3y-Very-Secret-0042")

    def echo(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": req.headers["authorization"]}}]})

    async def go() -> str:
        async with ChatClient("http://x.test/v1", "m", api_key_env="ORCHESTRACE_HOSTILE_KEY",
                              transport=httpx.MockTransport(echo)) as c:
            return (await c.chat([{"role": "user", "content": "hi"}])).text

    text = asyncio.run(go())
    assert "k3y-Very-Secret-0042" not in text and "***" in text


def test_a_redirect_loop_is_reported_as_such() -> None:
    from orchestrace.errors import LLMError
    from orchestrace.llm.client import ChatClient

    async def go() -> None:
        loop = httpx.MockTransport(lambda req: httpx.Response(307, headers={"location": str(req.url)}))
        async with ChatClient("http://x.test/v1", "m", transport=loop, max_retries=2) as c:
            await c.chat([{"role": "user", "content": "hi"}])

    with pytest.raises(LLMError, match="redirect loop") as ei:
        asyncio.run(go())
    assert ei.value.cause == "redirect" and ei.value.attempts == 1


def test_blame_and_credit_escape_control_characters_in_names(tmp_path: Path) -> None:
    from orchestrace.core.builder import TraceBuilder
    from orchestrace.core.io import dump
    from orchestrace.core.trace import Outcome

    evil = "w\x1b[31mRED\x1b]0;title\x07"
    b = TraceBuilder("t1", task_id="k")
    s = b.spawn(evil, t=0.0)
    b.return_(evil, t=1.0, after=s, content="Traceback (most recent call last):\nValueError: sk-abcdefghijklmnop1")
    p = tmp_path / "t.json"
    dump(b.build(outcome=Outcome(success=False)), p)
    for args in (["blame", str(p)], ["credit", str(p), "-u", "agent"]):
        r = runner.invoke(app, args)
        assert "\x1b" not in r.output and "\x07" not in r.output, (args, r.output)
        assert "sk-abcdefghijklmnop1" not in r.output


# -- 7. messages and exit codes ---------------------------------------------------------------------
def test_train_and_fit_sim_agree_on_an_invalid_corpus_and_only_fit_sim_advises_exclude_bad(
        plain: Path, tmp_path: Path) -> None:
    _set_return(plain, "tokens_out=-1")
    t = runner.invoke(app, ["train", "--from-traces", str(plain), "-o", str(tmp_path / "r"), "-q"])
    f = runner.invoke(app, ["collect", "fit-sim", str(plain), "-o", str(tmp_path / "f.json")])
    assert t.exit_code == f.exit_code == 1, (t.output, f.output)
    assert "--exclude-bad" not in t.output and "--exclude-bad" in f.output
    assert "internal error" not in t.output + f.output and "$.event.tokens_out" in t.output


def test_zero_tokens_are_located_not_a_bare_token_scale_error(tmp_path: Path) -> None:
    runs = make_synthetic_logged(60, 2, 2, seed=0)
    import dataclasses

    z = dataclasses.replace(runs, prompt_tokens=np.zeros_like(runs.prompt_tokens),
                            completion_tokens=np.zeros_like(runs.completion_tokens))
    p = save_runs(z, tmp_path / "z.npz")
    r = runner.invoke(app, ["train", "--from-traces", str(p), "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 1 and str(p) in r.output and "0 tokens" in r.output


def test_a_split_of_one_task_is_refused(tmp_path: Path) -> None:
    runs = make_synthetic_logged(60, 2, 2, seed=0)
    keep = np.flatnonzero(runs.split == "train").tolist() + [int(np.flatnonzero(runs.split == "validation")[0]),
                                                            int(np.flatnonzero(runs.split == "test")[0])]
    p = save_runs(runs.subset(np.array(keep)), tmp_path / "s.npz")
    r = runner.invoke(app, ["train", "--from-traces", str(p), "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 1 and "too few tasks" in r.output


def test_resume_cuts_a_torn_non_utf8_header_at_the_tail(plain: Path) -> None:
    data = (plain / "traces.jsonl").read_bytes()
    (plain / "traces.jsonl").write_bytes(data + b'{"header": {"task_id": "\xff\xfe')
    w = CorpusWriter(plain, resume=True)
    w.close()
    assert len(w.done) == 30 and w.cut_bytes > 0 and (plain / "traces.jsonl").read_bytes() == data


def test_eval_warns_when_a_gate_was_fitted_on_another_corpus(tmp_path: Path, gate_doc: dict) -> None:
    from orchestrace.policies.features import FEATURES

    doc = {**gate_doc, "max_rounds": 3, "checks": [{"w": [0.0] * len(FEATURES), "b": 0.3}] * 2,
           "meta": {"corpus_fingerprint": "0123456789abcdef", "corpus_path": "elsewhere"}}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "gate.json").write_text(json.dumps(doc))
    corpus = save_runs(make_synthetic_logged(90, 3, 2, seed=1), tmp_path / "c.npz")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "fitted on another corpus (elsewhere)" in r.output
