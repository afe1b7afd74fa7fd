"""The LLM judge against the real local model (SmolLM2-135M on llama.cpp, one thread), on a three-turn
transcript. SmolLM2 is weak: these tests check the plumbing (a verdict or a stated no verdict, the
server's token counts, the call counts of each protocol), never the judgement.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from orchestrace.blame.judge import PROTOCOLS, JudgeConfig, ajudge, transcript_of
from orchestrace.cli import app
from orchestrace.importers.chat import from_doc
from orchestrace.llm.client import ChatClient
from orchestrace.llm.local import LocalServer

DOC = {"question": "What is 2 + 2?", "ground_truth": "4", "is_correct": False,
       "history": [{"name": "Coder", "role": "assistant", "content": "print(2 + 3)"},
                   {"name": "Computer_terminal", "role": "user", "content": "exitcode: 0\n5"},
                   {"name": "Checker", "role": "assistant", "content": "The answer is 5. TERMINATE"}]}


def test_three_protocols_on_the_local_model(local_llm: LocalServer) -> None:
    tx = transcript_of(from_doc(DOC, "tiny.json", content="keep")[0][0])

    async def go() -> list:
        async with ChatClient(local_llm.base_url or "", local_llm.model, timeout=60, deadline=120) as c:
            return [await ajudge(tx, c, JudgeConfig(protocol=p, context_tokens=1024, max_tokens=24,
                                                    with_ground_truth=True)) for p in PROTOCOLS]

    for v in asyncio.run(go()):
        assert v.raw and all(isinstance(r, str) for r in v.raw)
        assert v.prompt_tokens > 0 and v.completion_tokens > 0  # the server's usage report
        assert v.ok or v.reason.startswith("no verdict")
        assert v.agent is None or v.agent in tx.team
        assert v.step is None or v.step in (0, 1, 2)
        limit = {"all-at-once": 1, "step-by-step": 3, "binary-search": 2}[v.protocol]
        assert 1 <= v.calls <= limit


def test_blame_judge_command_on_the_local_model(local_llm: LocalServer, tmp_path: Path) -> None:
    src, run = tmp_path / "tiny.json", tmp_path / "tiny.trace.json"
    src.write_text(json.dumps(DOC))
    assert CliRunner().invoke(app, ["import", "chat", str(src), "--content", "keep", "-o", str(run)]).exit_code == 0
    res = CliRunner().invoke(app, ["blame-judge", str(run), "--base-url", local_llm.base_url or "", "--model",
                                   local_llm.model, "--context-tokens", "1024", "--max-tokens", "24", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["protocol"] == "all-at-once" and got["calls"] == 1 and got["prompt_tokens"] > 0


def test_one_turn_transcript(local_llm: LocalServer) -> None:
    """Binary search over one step asks nothing; step-by-step asks once."""
    doc = dict(DOC, history=DOC["history"][:1])
    tx = transcript_of(from_doc(doc, "one.json", content="keep")[0][0])

    async def go() -> list:
        async with ChatClient(local_llm.base_url or "", local_llm.model, timeout=60, deadline=120) as c:
            return [await ajudge(tx, c, JudgeConfig(protocol=p, context_tokens=1024, max_tokens=8))
                    for p in ("binary-search", "step-by-step")]

    bs, sbs = asyncio.run(go())
    assert (bs.agent, bs.step, bs.calls) == ("Coder", 0, 0)
    assert sbs.calls == 1 and (sbs.step in (0, None))
