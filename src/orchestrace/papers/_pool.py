"""Load, check and count the paper pool (see :mod:`orchestrace.papers` for the columns)."""

from __future__ import annotations

import csv
import datetime as _dt
import difflib
import io
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import Enum
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from .._problems import Problem
from ..errors import CorpusError, did_you_mean
from ..vocab import Severity
from ._schema import (
    _EXCLUDED_SCHEMA,
    _PAPER_SCHEMA,
    EXCLUDED_COLUMNS,
    NA,
    PAPER_COLUMNS,
    ExcludedRecord,
    Paper,
    ScreeningStage,
    _choices,
    _Col,
)

#: Files larger than this are refused with ``corpus.too-large`` (the real pool is ~30 kB).
MAX_BYTES = 50 * 1024 * 1024

#: Codes meaning "the file could not be read at all" (the CLI exits 2 for these).
IO_CODES = frozenset({"corpus.not-found", "corpus.not-a-file", "corpus.unreadable", "corpus.too-large"})



_ARXIV_RE = re.compile(r"^(\d{4}\.\d{4,5}|[a-z][a-z.-]*(\.[A-Z]{2})?/\d{7})(v\d+)?$")
_ARXIV_URL_RE = re.compile(r"arxiv\.org/(?:abs|pdf)/([^/?#\s]+?)(?:v\d+)?(?:\.pdf)?/?$")
_YEAR_RE = re.compile(r"^\d{4}$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MIN_YEAR = 1950

# -- reading -------------------------------------------------------------------------------


def _problem(code: str, path: str, message: str, hint: str = "", *, warn: bool = False) -> Problem:
    sev = Severity.WARNING if warn else Severity.ERROR
    return Problem(code=code, severity=sev, path=path, message=message, hint=hint)


def _read(path: str | Path) -> tuple[str | None, list[Problem]]:
    """Read a file as UTF-8 text, capped at MAX_BYTES; never raises for I/O trouble."""
    p = Path(path)
    name = p.name or str(p)
    if p.is_dir():
        return None, [_problem("corpus.not-a-file", name, f"{p} is a directory, not a CSV file",
                               "pass the path of papers.csv or excluded.csv")]
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, [_problem("corpus.not-found", name, f"{p} does not exist", "check the path")]
    except OSError as exc:
        return None, [_problem("corpus.unreadable", name, f"cannot read {p}: {exc.strerror or exc}",
                               "check the permissions")]
    if len(data) > MAX_BYTES:
        return None, [_problem("corpus.too-large", name,
                               f"{p} is larger than {MAX_BYTES // (1024 * 1024)} MB; refusing to read it",
                               "the paper pool is a small CSV; is this the right file?")]
    return _decode(data, name)


def _decode(data: bytes, name: str) -> tuple[str, list[Problem]]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.start + 1].hex()
        prob = _problem("corpus.encoding", f"{name}:row {line}",
                        f"invalid UTF-8 byte 0x{bad} at byte {col} of the line (first of the file)",
                        "save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`")
        return data.decode("utf-8", errors="replace"), [prob]


def _close(value: str, choices: Sequence[str], enum: type[Enum] | None = None) -> str:
    """A 'did you mean' hint, or the list of allowed values."""
    if enum is not None and value.strip().upper() in enum.__members__:
        member = enum.__members__[value.strip().upper()]
        return f"did you mean {str(member.value)!r}?"
    lowered = {c.lower(): c for c in choices}
    if value.strip().lower() in lowered:
        return f"did you mean {lowered[value.strip().lower()]!r}?"
    return did_you_mean(value.strip(), choices) or "allowed: " + ", ".join(choices)


def _check_url(value: str) -> str | None:
    """Return a reason when ``value`` is not a list of http(s) URLs with a host."""
    for part in value.split(";"):
        part = part.strip()
        if not part:
            return "empty URL between ';' separators"
        if any(ch.isspace() for ch in part):
            return f"{part!r} contains whitespace"
        try:
            parts = urlsplit(part)
            host = parts.hostname
        except ValueError as exc:
            return f"{part!r} is not a URL ({exc})"
        if parts.scheme not in ("http", "https"):
            return f"{part!r} is not an http(s) URL"
        if not host:
            return f"{part!r} has no host"
    return None


def _check_cell(col: _Col, value: str, where: str, max_year: int) -> list[Problem]:
    if col.kind == "free":
        return []
    if not value.strip():
        if col.kind in ("arxiv",):
            return []
        return [_problem("corpus.missing-value", where, f"{col.name} is empty",
                         f"fill in {col.name} ({col.meaning})")]
    if col.kind == "vocab":
        choices = _choices(col)
        if value not in choices:
            return [_problem("corpus.unknown-value", where,
                             f"{value!r} is not an allowed {col.name}",
                             _close(value, choices, col.enum))]
    elif col.kind == "year":
        if not _YEAR_RE.match(value) or not _MIN_YEAR <= int(value) <= max_year:
            return [_problem("corpus.bad-year", where,
                             f"year {value!r} is not a 4-digit year in {_MIN_YEAR}..{max_year}",
                             "write the publication year, e.g. 2025")]
    elif col.kind == "url":
        reason = _check_url(value)
        if reason:
            hint = "write a full URL such as https://arxiv.org/abs/2508.04652"
            if "://" not in value and "." in value.split("/")[0]:
                hint = f"did you mean {'https://' + value.strip()!r}?"
            return [_problem("corpus.bad-url", where, reason, hint)]
    elif col.kind == "arxiv":
        if not _ARXIV_RE.match(value):
            return [_problem("corpus.bad-arxiv-id", where, f"{value!r} does not look like an arXiv id",
                             "write e.g. 2508.04652 (no 'arXiv:' prefix), or leave it empty",
                             warn=True)]
    elif col.kind == "date":
        try:
            ok = bool(_DATE_RE.match(value)) and _dt.date.fromisoformat(value) is not None
        except ValueError:
            ok = False
        if not ok:
            return [_problem("corpus.bad-date", where, f"{value!r} is not an ISO date",
                             "write YYYY-MM-DD, e.g. 2026-04-26")]
    return []


def _rows(text: str, name: str) -> tuple[list[tuple[int, list[str]]], list[Problem]]:
    """Parse CSV text into (start line, fields) records, skipping blank lines."""
    out: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    prev = 0
    try:
        for fields in reader:
            start, prev = prev + 1, reader.line_num
            if fields and any(f.strip() for f in fields):
                out.append((start, fields))
    except csv.Error as exc:
        return out, [_problem("corpus.bad-csv", f"{name}:row {reader.line_num}",
                              f"malformed CSV: {exc}",
                              "check for an unbalanced '\"' quote or a field over 128 kB")]
    return out, []


def _detect(header: Sequence[str]) -> tuple[_Col, ...]:
    names = set(header)
    ex = len(names & set(EXCLUDED_COLUMNS))
    return _EXCLUDED_SCHEMA if ex > len(names & set(PAPER_COLUMNS)) else _PAPER_SCHEMA


def _parse(
    text: str, name: str, kind: str | None
) -> tuple[list[Problem], list[tuple[int, dict[str, str]]], tuple[_Col, ...]]:
    problems: list[Problem] = []
    if not text.strip():
        return [_problem("corpus.empty", name, "the file is empty",
                         "the first line must be the header: " + ",".join(PAPER_COLUMNS[:3]) + ",…")], [], _PAPER_SCHEMA
    records, csv_problems = _rows(text, name)
    problems += csv_problems
    if not records:
        return problems, [], _PAPER_SCHEMA
    hline, header = records[0]
    header = [h.strip() for h in header]
    schema = {"papers": _PAPER_SCHEMA, "excluded": _EXCLUDED_SCHEMA}.get(kind or "") or _detect(header)
    expected = [c.name for c in schema]
    seen: set[str] = set()
    for i, h in enumerate(header, 1):
        if h in seen:
            problems.append(_problem("corpus.duplicate-column", f"{name}:row {hline}:column {i}",
                                     f"column {h!r} appears twice", "remove or rename one of them"))
        seen.add(h)
    extra = [h for h in header if h not in expected]  # for "did you mean" hints
    no_header = not seen & set(expected)
    for col in expected:
        if col not in seen:
            near = difflib.get_close_matches(col, extra, n=1, cutoff=0.6)
            hint = (f"rename column {near[0]!r} to {col!r}" if near
                    else "is the header line missing? the first line must name the columns"
                    if no_header else f"add a {col!r} column to the header")
            problems.append(_problem("corpus.missing-column", f"{name}:row {hline}:{col}",
                                     f"required column {col!r} is missing", hint))
    for i, h in enumerate(header, 1):
        if h in expected:
            continue
        problems.append(_problem("corpus.unknown-column", f"{name}:row {hline}:column {i}",
                                 f"column {h!r} is not part of the format; it is ignored",
                                 did_you_mean(h, expected), warn=True))
    if len(records) == 1 and not csv_problems:
        problems.append(_problem("corpus.empty", name, "the file has a header but no rows",
                                 "add one row per record"))
    rows: list[tuple[int, dict[str, str]]] = []
    for line, fields in records[1:]:
        if len(fields) != len(header):
            problems.append(_problem("corpus.ragged-row", f"{name}:row {line}",
                                     f"expected {len(header)} fields, found {len(fields)}",
                                     "quote cells that contain commas; check for a missing or extra comma"))
            continue
        rows.append((line, dict(zip(header, fields, strict=True))))
    return problems, rows, schema


def _check_rows(rows: Iterable[tuple[int, dict[str, str]]], schema: tuple[_Col, ...],
                name: str) -> list[Problem]:
    problems: list[Problem] = []
    max_year = _dt.date.today().year + 1
    ids: dict[str, int] = {}
    for line, cells in rows:
        for col in schema:
            if col.name not in cells:
                continue
            value = cells[col.name]
            where = f"{name}:row {line}:{col.name}"
            problems += _check_cell(col, value, where, max_year)
            if col.kind == "id" and value.strip():
                if value in ids:
                    problems.append(_problem("corpus.duplicate-id", where,
                                             f"{col.name} {value!r} is already used at row {ids[value]}",
                                             "ids must be unique; rename one of the two"))
                else:
                    ids[value] = line
        arxiv, url = cells.get("arxiv_id", "").strip(), cells.get("url", "")
        m = _ARXIV_URL_RE.search(url.split(";")[0].strip())
        if arxiv and m and _ARXIV_RE.match(arxiv) and m.group(1) != re.sub(r"v\d+$", "", arxiv):
            problems.append(_problem("corpus.arxiv-mismatch", f"{name}:row {line}:arxiv_id",
                                     f"arxiv_id {arxiv!r} differs from the URL's {m.group(1)!r}",
                                     "one of the two is a copy-paste slip", warn=True))
    return problems


def check_text(text: str, *, name: str = "papers.csv", kind: str | None = None) -> list[Problem]:
    """Check CSV text (already decoded). ``kind`` is ``"papers"``, ``"excluded"`` or
    ``None`` to tell by the header. Problems are located as ``name:row N:column``.

    >>> check_text("")[0].code
    'corpus.empty'
    >>> [p.path for p in check_text("record_id,url\\nE1,ftp://x\\n", name="excluded.csv")][-1]
    'excluded.csv:row 2:url'
    """
    text = text.removeprefix("\ufeff")
    problems, rows, schema = _parse(text, name, kind)
    return problems + _check_rows(rows, schema, name)


def check(path: str | Path, *, kind: str | None = None) -> list[Problem]:
    """Every problem of a pool CSV file (``papers.csv`` or ``excluded.csv``, told apart
    by the header unless ``kind`` says). Never raises for bad input: a missing file, a
    directory, a file over :data:`MAX_BYTES`, bad UTF-8 all come back as problems.

    >>> check("/nonexistent/papers.csv")[0].code
    'corpus.not-found'
    """
    text, problems = _read(path)
    if text is None:
        return problems
    return problems + check_text(text, name=Path(path).name, kind=kind)


def _load(path: str | Path, kind: str) -> tuple[list[tuple[int, dict[str, str]]], str]:
    problems = check(path, kind=kind)
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        raise CorpusError(f"{len(errors)} error(s) in {path}; first: {first}", problems)
    text, _ = _read(path)
    assert text is not None
    name = Path(path).name
    _, rows, _ = _parse(text, name, kind)
    return rows, name


def load_papers(path: str | Path) -> list[Paper]:
    """Load ``papers.csv`` as :class:`Paper` records, or raise :class:`CorpusError`
    with every problem when :func:`check` finds an error (warnings do not block).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "papers.csv"
    >>> _ = p.write_text(",".join(PAPER_COLUMNS) + "\\n" + "c3,C3,A,B,2026,,arXiv,"
    ...     "https://example.org,rl_method,yes,shared,message,centralized,general,core,x,yes,\\n")
    >>> [(x.key, x.credit_unit, x.row) for x in load_papers(p)]
    [('c3', <CreditUnit.MESSAGE: 'message'>, 2)]
    """
    rows, _ = _load(path, "papers")
    return [msgspec.convert({**cells, "row": line}, Paper, strict=False) for line, cells in rows]


def load_excluded(path: str | Path) -> list[ExcludedRecord]:
    """Load ``excluded.csv`` as :class:`ExcludedRecord` records (raises like :func:`load_papers`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "excluded.csv"
    >>> _ = p.write_text(",".join(EXCLUDED_COLUMNS) + "\\n" + "E1,arXiv,q,T,id,"
    ...     "https://arxiv.org/abs/2305.14325,2026-04-26,abstract_screen,no RL\\n")
    >>> [(r.record_id, str(r.stage)) for r in load_excluded(p)]
    [('E1', 'abstract_screen')]
    """
    rows, _ = _load(path, "excluded")
    cols = set(EXCLUDED_COLUMNS)
    return [msgspec.convert({**{k: v for k, v in cells.items() if k in cols}, "row": line},
                            ExcludedRecord) for line, cells in rows]


# -- statistics ----------------------------------------------------------------------------


class CrossTab(msgspec.Struct, frozen=True, kw_only=True):
    """Counts of ``row_field`` × ``col_field``; ``cells[i][j]`` is rows[i] × cols[j]."""

    row_field: str
    col_field: str
    rows: list[str]
    cols: list[str]
    cells: list[list[int]]

    def get(self, row: str, col: str) -> int:
        """The count in one cell (0 for an unknown label)."""
        if row not in self.rows or col not in self.cols:
            return 0
        return self.cells[self.rows.index(row)][self.cols.index(col)]


class StoppingCoverage(msgspec.Struct, frozen=True, kw_only=True):
    """Which papers mention O5 (stop / halting / termination) in their text columns.

    The pool has no O5 column, so this is a text search: ``pattern`` (case-insensitive,
    whole words, so "Christopher" does not match "stop") over ``columns``."""

    columns: list[str]
    pattern: str
    keys: list[str]
    terms: dict[str, list[str]]


#: The rule of :class:`StoppingCoverage` (documented in docs/corpus.md).
STOP_PATTERN = r"\b(stop\w*|halt\w*|terminat\w*)\b"
STOP_COLUMNS = ("title", "one_liner", "notes")

#: Controlled fields counted by :func:`stats`, in page order.
COUNTED_FIELDS = ("reward_type", "credit_granularity", "orchestration_form", "category",
                  "is_rl", "scenario", "is_core", "verified")
#: Credit units listed key by key as "sparse cells".
SPARSE_UNITS = ("message", "orchestrator")


class CorpusStats(msgspec.Struct, frozen=True, kw_only=True):
    """The pool's published numbers. ``excluded`` / ``audited`` are ``None`` when no
    excluded list was given; ``audited = retained + excluded``."""

    retained: int
    excluded: int | None
    audited: int | None
    counts: dict[str, dict[str, int]]
    reward_families: dict[str, int]
    by_year: dict[str, int]
    reward_x_credit: CrossTab
    form_x_credit: CrossTab
    sparse: dict[str, list[str]]
    stopping: StoppingCoverage
    excluded_by_stage: dict[str, int] | None = None
    titles: dict[str, str] = msgspec.field(default_factory=dict)


def _vocab(field: str, present: Iterable[str]) -> list[str]:
    col = next(c for c in _PAPER_SCHEMA if c.name == field)
    base = _choices(col)
    return base + sorted(set(present) - set(base))


def _crosstab(papers: Sequence[Paper], rf: str, cf: str) -> CrossTab:
    rows = _vocab(rf, (getattr(p, rf) for p in papers))
    cols = _vocab(cf, (getattr(p, cf) for p in papers))
    cells = [[0] * len(cols) for _ in rows]
    for p in papers:
        cells[rows.index(str(getattr(p, rf)))][cols.index(str(getattr(p, cf)))] += 1
    return CrossTab(row_field=rf, col_field=cf, rows=rows, cols=cols, cells=cells)


def stats(papers: Sequence[Paper], excluded: Sequence[ExcludedRecord] | None = None) -> CorpusStats:
    """Headline counts, counts per controlled field (most frequent first), R1–R8 family
    totals (``verifier`` counts as R6), cross-tabs, sparse credit cells and O5 coverage.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "papers.csv"
    >>> _ = p.write_text(",".join(PAPER_COLUMNS) + "\\n" + "c3,C3,A,B,2026,,arXiv,"
    ...     "https://example.org,rl_method,yes,verifier,message,centralized,general,core,"
    ...     "learns when to stop,yes,\\n")
    >>> s = stats(load_papers(p))
    >>> s.retained, s.counts["reward_type"], s.reward_families["R6"], s.sparse["message"]
    (1, {'verifier': 1}, 1, ['c3'])
    >>> s.stopping.keys, s.reward_x_credit.get("verifier", "message")
    (['c3'], 1)
    """
    counts: dict[str, dict[str, int]] = {}
    for field in COUNTED_FIELDS:
        c = Counter(str(getattr(p, field)) for p in papers)
        order = _vocab(field, c)
        counts[field] = dict(sorted(c.items(), key=lambda kv: (-kv[1], order.index(kv[0]))))
    fam = Counter(p.reward_family.code if p.reward_family else NA for p in papers)
    families = {f"R{i}": fam.get(f"R{i}", 0) for i in range(1, 9)} | {NA: fam.get(NA, 0)}
    by_year = dict(sorted(Counter(str(p.year) for p in papers).items()))
    sparse = {u: [p.key for p in papers if p.credit_granularity == u] for u in SPARSE_UNITS}
    rx = re.compile(STOP_PATTERN, re.IGNORECASE)
    terms: dict[str, list[str]] = {}
    for p in papers:
        found = sorted({m.group(0).lower() for col in STOP_COLUMNS for m in rx.finditer(getattr(p, col))})
        if found:
            terms[p.key] = found
    stopping = StoppingCoverage(columns=list(STOP_COLUMNS), pattern=STOP_PATTERN,
                                keys=list(terms), terms=terms)
    n_ex = None if excluded is None else len(excluded)
    by_stage = None
    if excluded is not None:
        st = Counter(str(r.stage) for r in excluded)
        by_stage = {s.value: st[s.value] for s in ScreeningStage if st[s.value]}
    listed = set(stopping.keys).union(*sparse.values())
    return CorpusStats(
        retained=len(papers),
        excluded=n_ex,
        audited=None if n_ex is None else len(papers) + n_ex,
        counts=counts,
        reward_families=families,
        by_year=by_year,
        reward_x_credit=_crosstab(papers, "reward_type", "credit_granularity"),
        form_x_credit=_crosstab(papers, "orchestration_form", "credit_granularity"),
        sparse=sparse,
        stopping=stopping,
        excluded_by_stage=by_stage,
        titles={p.key: p.title for p in papers if p.key in listed},
    )


# -- rendering -----------------------------------------------------------------------------


def to_json(s: CorpusStats) -> str:
    """The statistics as indented JSON (field names as in :class:`CorpusStats`).

    >>> import json
    >>> s = stats([])
    >>> json.loads(to_json(s))["retained"], json.loads(to_json(s))["audited"]
    (0, None)
    """
    return msgspec.json.format(msgspec.json.encode(s), indent=2).decode() + "\n"
