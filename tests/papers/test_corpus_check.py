"""Planted errors: each one is found, located and hinted; bad files never raise."""

from __future__ import annotations

import pytest

from orchestrace.papers import PAPER_COLUMNS, CorpusError, _pool, check, check_text, load_papers

COL = {c: i for i, c in enumerate(PAPER_COLUMNS)}


def _set(row: int, col: str, value: str):
    def mutate(rows):
        rows[row][COL[col]] = value
    return mutate


def _dup_key(rows):
    rows[3][COL["key"]] = rows[1][COL["key"]]


def _drop_column(col: str):
    def mutate(rows):
        for r in rows:
            del r[COL[col]]
    return mutate


def _rename_column(col: str, new: str):
    def mutate(rows):
        rows[0][COL[col]] = new
    return mutate


def _ragged(rows):
    rows[2].pop()


# (id, mutation, code, path, hint fragment or None); rows[i] is at line i + 1.
PLANTED = [
    ("unknown-value", _set(2, "reward_type", "hybird"), "corpus.unknown-value",
     "papers.csv:row 3:reward_type", "did you mean 'hybrid'?"),
    ("unknown-value-case", _set(1, "credit_granularity", "Agent"), "corpus.unknown-value",
     "papers.csv:row 2:credit_granularity", "did you mean 'agent'?"),
    ("unknown-value-code", _set(1, "reward_type", "R8"), "corpus.unknown-value",
     "papers.csv:row 2:reward_type", "did you mean 'hybrid'?"),
    ("unknown-topology", _set(4, "orchestration_form", "hierarchichal"), "corpus.unknown-value",
     "papers.csv:row 5:orchestration_form", "did you mean 'hierarchical'?"),
    ("unknown-category", _set(1, "category", "zzz"), "corpus.unknown-value",
     "papers.csv:row 2:category", "allowed: rl_method"),
    ("empty-controlled", _set(2, "scenario", ""), "corpus.missing-value",
     "papers.csv:row 3:scenario", None),
    ("duplicate-key", _dup_key, "corpus.duplicate-id", "papers.csv:row 4:key", None),
    ("empty-key", _set(2, "key", " "), "corpus.missing-value", "papers.csv:row 3:key", None),
    ("bad-year-short", _set(2, "year", "25"), "corpus.bad-year", "papers.csv:row 3:year", None),
    ("bad-year-old", _set(2, "year", "1850"), "corpus.bad-year", "papers.csv:row 3:year", None),
    ("bad-year-future", _set(2, "year", "2999"), "corpus.bad-year", "papers.csv:row 3:year", None),
    ("bad-url-scheme", _set(3, "url", "arxiv.org/abs/2508.04652"), "corpus.bad-url",
     "papers.csv:row 4:url", "did you mean 'https://arxiv.org/abs/2508.04652'?"),
    ("bad-url-ftp", _set(3, "url", "ftp://example.org/x"), "corpus.bad-url",
     "papers.csv:row 4:url", None),
    ("bad-url-nohost", _set(3, "url", "https://"), "corpus.bad-url", "papers.csv:row 4:url", None),
    ("bad-url-second", _set(3, "url", "https://a.org ; nope"), "corpus.bad-url",
     "papers.csv:row 4:url", None),
    ("missing-column", _drop_column("reward_type"), "corpus.missing-column",
     "papers.csv:row 1:reward_type", None),
    ("renamed-column", _rename_column("credit_granularity", "credit_granularty"),
     "corpus.missing-column", "papers.csv:row 1:credit_granularity", "'credit_granularty'"),
    ("ragged-row", _ragged, "corpus.ragged-row", "papers.csv:row 3", None),
    ("bad-arxiv", _set(1, "arxiv_id", "arXiv:2508.04652"), "corpus.bad-arxiv-id",
     "papers.csv:row 2:arxiv_id", None),
    ("arxiv-mismatch", _set(1, "arxiv_id", "2508.04653"), "corpus.arxiv-mismatch",
     "papers.csv:row 2:arxiv_id", None),
]


@pytest.fixture(params=["mini", "shared"])
def base_rows(request, mini_rows):
    if request.param == "mini":
        return [r[:] for r in mini_rows]
    ref = request.getfixturevalue("reference")
    import csv

    with open(ref / "papers.csv", encoding="utf-8-sig", newline="") as fh:
        return [r for r in csv.reader(fh)]


def test_base_is_clean(base_rows, csv_text, tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(base_rows), encoding="utf-8")
    assert check(path) == []


@pytest.mark.parametrize(("mutate", "code", "where", "hint"),
                         [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_planted_error_is_found(base_rows, csv_text, tmp_path, mutate, code, where, hint):
    mutate(base_rows)
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(base_rows), encoding="utf-8")
    found = [p for p in check(path) if p.code == code]
    assert [p.path for p in found] == [where], check(path)
    if hint:
        assert hint in found[0].hint
    warns = code in ("corpus.bad-arxiv-id", "corpus.arxiv-mismatch")
    assert found[0].severity == ("warning" if warns else "error")
    if not warns:
        with pytest.raises(CorpusError) as info:
            load_papers(path)
        assert any(p.code == code for p in info.value.problems)


def test_invalid_utf8_is_located(mini_rows, csv_text, tmp_path):
    rows = [r[:] for r in mini_rows]
    rows[2][COL["title"]] = "Café"
    path = tmp_path / "papers.csv"
    path.write_bytes(csv_text(rows).encode("latin-1"))
    probs = check(path)
    assert [(p.code, p.path) for p in probs] == [("corpus.encoding", "papers.csv:row 3")]
    assert "0xe9" in probs[0].message and "UTF-8" in probs[0].hint


def test_utf16_file_is_an_encoding_problem(mini_rows, csv_text, tmp_path):
    path = tmp_path / "papers.csv"
    path.write_bytes(csv_text(mini_rows).encode("utf-16"))
    assert check(path)[0].code == "corpus.encoding"


def test_bom_and_crlf_are_accepted(mini_rows, csv_text, tmp_path):
    path = tmp_path / "papers.csv"
    path.write_bytes(b"\xef\xbb\xbf" + csv_text(mini_rows).replace("\n", "\r\n").encode())
    assert check(path) == []
    assert [p.key for p in load_papers(path)][0] == "magrpo"


def test_multiline_cell_keeps_line_numbers(mini_rows, csv_text, tmp_path):
    rows = [r[:] for r in mini_rows]
    rows[1][COL["notes"]] = "line one\nline two\nline three"
    rows[3][COL["year"]] = "20x5"
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(rows), encoding="utf-8")
    assert [p.path for p in check(path)] == ["papers.csv:row 6:year"]


def test_blank_lines_are_skipped(mini_rows, csv_text, tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(mini_rows).replace("\n", "\n\n", 2), encoding="utf-8")
    assert check(path) == []


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf", b" \n\n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "papers.csv"
    path.write_bytes(content)
    assert [(p.code, p.path) for p in check(path)] == [("corpus.empty", "papers.csv")]


def test_header_only(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(",".join(PAPER_COLUMNS) + "\n", encoding="utf-8")
    assert [p.code for p in check(path)] == ["corpus.empty"]


def test_directory(tmp_path):
    probs = check(tmp_path)
    assert [p.code for p in probs] == ["corpus.not-a-file"]
    with pytest.raises(CorpusError):
        load_papers(tmp_path)


def test_missing_path(tmp_path):
    assert [p.code for p in check(tmp_path / "nope.csv")] == ["corpus.not-found"]


def test_huge_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_pool, "MAX_BYTES", 1000)  # read where _read looks it up
    path = tmp_path / "papers.csv"
    path.write_bytes(b"x" * 1001)
    probs = check(path)
    assert [p.code for p in probs] == ["corpus.too-large"]


def test_unbalanced_quote(mini_rows, csv_text):
    text = csv_text(mini_rows) + 'x,"unterminated\n'
    assert "corpus.bad-csv" in [p.code for p in check_text(text)]


def test_duplicate_and_unknown_columns(mini_rows, csv_text):
    rows = [[*r, r[0], "extra"] for r in mini_rows]
    rows[0][-1] = "reward_tipe"
    probs = check_text(csv_text(rows))
    codes = {p.code: p for p in probs}
    assert codes["corpus.duplicate-column"].path == f"papers.csv:row 1:column {len(PAPER_COLUMNS) + 1}"
    assert codes["corpus.unknown-column"].severity == "warning"
    assert "did you mean 'reward_type'?" in codes["corpus.unknown-column"].hint


def test_excluded_checks(reference, csv_text):
    import csv as _csv

    with open(reference / "excluded.csv", encoding="utf-8", newline="") as fh:
        rows = list(_csv.reader(fh))
    cols = {c: i for i, c in enumerate(rows[0])}
    rows[2][cols["date_screened"]] = "2026-02-30"
    rows[3][cols["stage"]] = "abstract-screen"
    rows[4][cols["record_id"]] = rows[1][cols["record_id"]]
    probs = check_text(csv_text(rows), name="excluded.csv")
    assert [(p.code, p.path) for p in probs] == [
        ("corpus.bad-date", "excluded.csv:row 3:date_screened"),
        ("corpus.unknown-value", "excluded.csv:row 4:stage"),
        ("corpus.duplicate-id", "excluded.csv:row 5:record_id"),
    ]
    assert probs[1].hint == "did you mean 'abstract_screen'?"
