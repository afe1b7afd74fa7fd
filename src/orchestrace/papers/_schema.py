"""The paper pool's two CSV files as types: their columns, the allowed values, the typed records.

The schema that :mod:`orchestrace.papers._pool` checks rows against and loads them into (see
:mod:`orchestrace.papers` for the column table): the controlled vocabularies (:class:`Category`,
:class:`RLStatus`, :class:`Scenario`, :class:`CoreStatus`, :class:`Verified`,
:class:`ScreeningStage`, and the survey's own enums from :mod:`orchestrace.vocab`), one
:class:`_Col` per column with its kind, and the records :class:`Paper` and
:class:`ExcludedRecord`.

>>> PAPER_COLUMNS[:3], _choices(_PAPER_SCHEMA[9])
(('key', 'title', 'first_author'), ['yes', 'no', 'partial'])
"""

from __future__ import annotations

from enum import Enum

import msgspec

from ..vocab import CreditUnit, RewardFamily, Topology

#: "Not applicable", allowed in ``reward_type``, ``credit_granularity``, ``orchestration_form``.
NA = "NA"


class _StrEnum(str, Enum):
    def __str__(self) -> str:
        return str(self.value)


class Category(_StrEnum):
    """What kind of work a paper is (``category`` column)."""

    RL_METHOD = "rl_method"
    BENCHMARK = "benchmark"
    CLASSICAL_MARL = "classical_marl"
    INDUSTRY = "industry"
    SURVEY = "survey"
    FRAMEWORK = "framework"


class RLStatus(_StrEnum):
    """Whether the paper trains with RL (``is_rl`` column)."""

    YES = "yes"
    NO = "no"
    PARTIAL = "partial"


class Scenario(_StrEnum):
    """Task domain (``scenario`` column)."""

    GENERAL = "general"
    CODING = "coding"
    MATH = "math"
    TOOL_USE = "tool_use"
    RESEARCH = "research"
    WEB = "web"


class CoreStatus(_StrEnum):
    """Role of the paper in the survey's argument (``is_core`` column)."""

    CORE = "core"
    SUPPORTING = "supporting"
    CASE = "case"


class Verified(_StrEnum):
    """Whether the tagging was checked against the paper (``verified`` column)."""

    YES = "yes"
    PARTIAL = "partial"
    NO = "no"


class ScreeningStage(_StrEnum):
    """Where an excluded record left the pipeline (``stage`` column of ``excluded.csv``)."""

    ABSTRACT_SCREEN = "abstract_screen"
    FULL_TEXT_SCREEN = "full_text_screen"
    ARTIFACT_SCREEN = "artifact_screen"
    DUPLICATE_SCREEN = "duplicate_screen"


# -- records -------------------------------------------------------------------------------


class Paper(msgspec.Struct, frozen=True, kw_only=True):
    """One retained paper. The survey's three taxonomy columns are kept *as written*
    (so ``verifier`` and ``debate`` stay distinct); use :attr:`reward_family`,
    :attr:`credit_unit`, :attr:`topology` for the enum (``None`` for ``NA``)."""

    key: str
    title: str
    first_author: str
    affiliation: str
    year: int
    arxiv_id: str
    venue: str
    url: str
    category: Category
    is_rl: RLStatus
    reward_type: str
    credit_granularity: str
    orchestration_form: str
    scenario: Scenario
    is_core: CoreStatus
    one_liner: str
    verified: Verified
    notes: str
    row: int = 0

    @property
    def reward_family(self) -> RewardFamily | None:
        return None if self.reward_type == NA else RewardFamily(self.reward_type)

    @property
    def credit_unit(self) -> CreditUnit | None:
        return None if self.credit_granularity == NA else CreditUnit(self.credit_granularity)

    @property
    def topology(self) -> Topology | None:
        return None if self.orchestration_form == NA else Topology(self.orchestration_form)


class ExcludedRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One screened-out record of ``excluded.csv``."""

    record_id: str
    source: str
    query_family: str
    screening_label: str
    identifier: str
    url: str
    date_screened: str
    stage: ScreeningStage
    exclusion_reason: str
    row: int = 0


# -- column schema -------------------------------------------------------------------------


class _Col(msgspec.Struct, frozen=True):
    name: str
    meaning: str
    kind: str = "free"  # free | required | id | year | url | arxiv | date | vocab
    enum: type[Enum] | None = None
    na: bool = False  # "NA" allowed (vocab only)


def _choices(col: _Col) -> list[str]:
    assert col.enum is not None
    out = [str(m.value) for m in col.enum.__members__.values()]
    out = list(dict.fromkeys(out))  # aliases (R1 = shared) share a value
    if col.enum is RewardFamily:
        out.insert(out.index("debate") + 1, "verifier")  # RewardFamily("verifier") is R6
    return [*out, NA] if col.na else out


_PAPER_SCHEMA: tuple[_Col, ...] = (
    _Col("key", "unique id of the paper", "id"),
    _Col("title", "title", "required"),
    _Col("first_author", "first author, `Last, First`"),
    _Col("affiliation", "first author's affiliation"),
    _Col("year", "publication year", "year"),
    _Col("arxiv_id", "arXiv id, empty when none", "arxiv"),
    _Col("venue", "venue or `arXiv`"),
    _Col("url", "http(s) URL(s), `;`-separated", "url"),
    _Col("category", "kind of work", "vocab", Category),
    _Col("is_rl", "trains with RL", "vocab", RLStatus),
    _Col("reward_type", "reward family R1–R8", "vocab", RewardFamily, na=True),
    _Col("credit_granularity", "credit-bearing unit", "vocab", CreditUnit, na=True),
    _Col("orchestration_form", "orchestration topology", "vocab", Topology, na=True),
    _Col("scenario", "task domain", "vocab", Scenario),
    _Col("is_core", "role in the survey", "vocab", CoreStatus),
    _Col("one_liner", "one-line summary"),
    _Col("verified", "tagging checked against the paper", "vocab", Verified),
    _Col("notes", "free notes (version, date, …)"),
)

_EXCLUDED_SCHEMA: tuple[_Col, ...] = (
    _Col("record_id", "unique id of the record", "id"),
    _Col("source", "where it was found"),
    _Col("query_family", "search query family"),
    _Col("screening_label", "title or label as screened"),
    _Col("identifier", "arXiv id, DOI or other identifier"),
    _Col("url", "http(s) URL(s), `;`-separated", "url"),
    _Col("date_screened", "ISO date `YYYY-MM-DD`", "date"),
    _Col("stage", "screening stage", "vocab", ScreeningStage),
    _Col("exclusion_reason", "why it was excluded", "required"),
)

#: Column names of ``papers.csv``, in the shipped order.
PAPER_COLUMNS: tuple[str, ...] = tuple(c.name for c in _PAPER_SCHEMA)
#: Column names of ``excluded.csv``, in the shipped order.
EXCLUDED_COLUMNS: tuple[str, ...] = tuple(c.name for c in _EXCLUDED_SCHEMA)
