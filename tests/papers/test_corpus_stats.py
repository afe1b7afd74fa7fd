"""The survey's published numbers, reproduced from the copy of the pool in tests/data/reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec

import orchestrace.papers as corpus
from orchestrace.papers import _pool, check, load_excluded, load_papers, stats, to_json, to_markdown
from orchestrace.vocab import CreditUnit, RewardFamily, Topology

DOCS = Path(__file__).resolve().parents[2] / "docs" / "corpus.md"


def _stats(reference: Path) -> corpus.CorpusStats:
    return stats(load_papers(reference / "papers.csv"), load_excluded(reference / "excluded.csv"))


def test_headline_numbers(reference):
    s = _stats(reference)
    assert (s.retained, s.excluded, s.audited) == (84, 32, 116)


def test_reward_type_and_credit_counts(reference):
    s = _stats(reference)
    rt, cg = s.counts["reward_type"], s.counts["credit_granularity"]
    assert (rt["hybrid"], rt["shared"], rt["orchestration"]) == (15, 10, 7)
    assert {k: cg[k] for k in ("agent", "role", "orchestrator", "turn", "message")} == {
        "agent": 23, "role": 10, "orchestrator": 8, "turn": 5, "message": 2}
    assert sum(rt.values()) == sum(cg.values()) == 84
    # verifier is written for R6 as well as debate; the family total merges them
    assert s.reward_families["R6"] == rt.get("debate", 0) + rt.get("verifier", 0)


def test_sparse_cells_and_crosstabs(reference):
    s = _stats(reference)
    assert s.sparse["message"] == ["c3", "debate-as-reward"]
    assert len(s.sparse["orchestrator"]) == 8 and "puppeteer" in s.sparse["orchestrator"]
    for x in (s.reward_x_credit, s.form_x_credit):
        assert sum(map(sum, x.cells)) == 84
        col_totals = {c: sum(r[j] for r in x.cells) for j, c in enumerate(x.cols)}
        assert {k: v for k, v in col_totals.items() if v} == s.counts["credit_granularity"]
    assert s.reward_x_credit.get("orchestration", "orchestrator") == 6


def test_stopping_rule_is_whole_word(reference):
    s = _stats(reference)
    # "Christopher" (in magrpo's notes) contains "stop" but is not a mention of stopping.
    assert "magrpo" not in s.stopping.keys
    for key, terms in s.stopping.terms.items():
        assert key in s.stopping.keys and terms
    assert s.stopping.pattern == _pool.STOP_PATTERN


def test_stopping_finds_mentions():
    row = dict(key="k", title="Learning when to Stop", first_author="", affiliation="",
               year=2025, arxiv_id="", venue="", url="https://x.org", category="rl_method",
               is_rl="yes", reward_type="NA", credit_granularity="NA",
               orchestration_form="NA", scenario="general", is_core="core",
               one_liner="halting policy; early termination", verified="yes", notes="")
    p = msgspec.convert(row, corpus.Paper)
    assert stats([p]).stopping.terms == {"k": ["halting", "stop", "termination"]}


def test_reference_copy_has_no_errors(reference):
    for name in ("papers.csv", "excluded.csv"):
        assert [str(p) for p in check(reference / name) if p.severity == "error"] == []


def test_json_and_markdown(reference):
    s = _stats(reference)
    data = json.loads(to_json(s))
    assert data["retained"] == 84 and data["audited"] == 116
    assert data["counts"]["credit_granularity"]["message"] == 2
    md = to_markdown(s)
    assert "| retained (`papers.csv`) | 84 |" in md
    assert "| audited (retained + excluded) | 116 |" in md
    for col in corpus.PAPER_COLUMNS + corpus.EXCLUDED_COLUMNS:
        assert f"| `{col}` |" in md


def test_docs_page_is_up_to_date(reference):
    assert DOCS.is_file(), "docs/corpus.md is missing; regenerate it (see its first lines)"
    assert DOCS.read_text(encoding="utf-8") == to_markdown(_stats(reference)), (
        "docs/corpus.md is stale: orchestrace corpus stats papers.csv --excluded "
        "excluded.csv --format md > docs/corpus.md")


def test_taxonomy_columns_use_vocab_enums():
    by_name = {c.name: c for c in _pool._PAPER_SCHEMA}
    assert by_name["reward_type"].enum is RewardFamily
    assert by_name["credit_granularity"].enum is CreditUnit
    assert by_name["orchestration_form"].enum is Topology
    allowed = _pool._choices(by_name["reward_type"])
    assert set(allowed) == {m.value for m in RewardFamily} | {"verifier", "NA"}


def test_module_docstring_documents_every_column_and_value():
    doc = corpus.__doc__ or ""
    for col in _pool._PAPER_SCHEMA + _pool._EXCLUDED_SCHEMA:
        assert f"``{col.name}``" in doc, col.name
        if col.enum is not None:
            for value in _pool._choices(col):
                assert re.search(rf"\b{re.escape(value)}\b", doc), (col.name, value)


def test_public_api():
    assert sorted(corpus.__all__) == sorted([
        "EXCLUDED_COLUMNS", "IO_CODES", "MAX_BYTES", "PAPER_COLUMNS", "Category", "CoreStatus",
        "CorpusError", "CorpusStats", "CrossTab", "ExcludedRecord", "Paper", "RLStatus",
        "Scenario", "ScreeningStage", "StoppingCoverage", "Verified", "check", "check_text",
        "load_excluded", "load_papers", "stats", "to_json", "to_markdown"])
    for name in corpus.__all__:
        assert hasattr(corpus, name)
