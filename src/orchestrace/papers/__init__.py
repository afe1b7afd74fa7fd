"""The survey's tagged paper pool: load it, check it, count it.

The survey (Zhang 2026, arXiv:2605.02801) ships its evidence base as two CSV files:
``papers.csv`` (the *retained* pool, one paper a row) and ``excluded.csv`` (records
screened out, with the reason). :func:`check` finds every problem in either file, located
as ``papers.csv:row 12:reward_type`` (row = 1-based line number in the file, the header is
row 1); :func:`load_papers` / :func:`load_excluded` return typed records or raise
:class:`CorpusError` carrying those problems; :func:`stats` computes the numbers the survey
publishes, and :func:`to_markdown` / :func:`to_json` render them.

Files are UTF-8 (a leading byte-order mark is accepted), comma-separated with ``"``
quoting, at most :data:`MAX_BYTES` bytes. Columns are matched by name, in any order.

``papers.csv`` columns (all required; *controlled* columns must hold one allowed value):

===================  ================================================================
``key``              unique, non-empty id of the paper (``magrpo``)
``title``            non-empty title
``first_author``     free text (``"Liu, Shuo"``)
``affiliation``      free text
``year``             four digits, 1950 … current year + 1
``arxiv_id``         empty, or ``2508.04652`` / ``cs/0101001`` style (warning otherwise)
``venue``            free text (``arXiv``, ``ICLR 2025`` …)
``url``              one or more ``http(s)://host/…`` URLs separated by ``;``
``category``         controlled, :class:`Category`: rl_method, benchmark, classical_marl,
                     industry, survey, framework
``is_rl``            controlled, :class:`RLStatus`: yes, no, partial
``reward_type``      controlled, :class:`~orchestrace.vocab.RewardFamily` values
                     (shared, individual, role, process, tool, debate, orchestration,
                     hybrid; ``verifier`` is accepted as R6) or ``NA``
``credit_granularity``  controlled, :class:`~orchestrace.vocab.CreditUnit` values
                     (token, tool_call, message, turn, agent, role, orchestrator, team)
                     or ``NA``
``orchestration_form``  controlled, :class:`~orchestrace.vocab.Topology` values
                     (centralized, planner_executor_critic, debate, swarm, hierarchical,
                     harness, mixed, unknown) or ``NA``
``scenario``         controlled, :class:`Scenario`: general, coding, math, tool_use,
                     research, web
``is_core``          controlled, :class:`CoreStatus`: core, supporting, case
``one_liner``        free text
``verified``         controlled, :class:`Verified`: yes, partial, no
``notes``            free text
===================  ================================================================

``NA`` means "not applicable" (a benchmark has no reward type). Controlled values are
case-sensitive and exact; near misses get a ``did you mean 'hybrid'?`` hint.

``excluded.csv`` columns: ``record_id`` (unique, non-empty), ``source``, ``query_family``,
``screening_label`` (free text), ``identifier`` (free text), ``url`` (as above),
``date_screened`` (ISO date ``YYYY-MM-DD``), ``stage`` (controlled,
:class:`ScreeningStage`: abstract_screen, full_text_screen, artifact_screen,
duplicate_screen), ``exclusion_reason`` (non-empty).

Problem codes (stable): ``corpus.not-found``, ``corpus.not-a-file``, ``corpus.unreadable``,
``corpus.too-large`` (I/O: the file could not be read), ``corpus.encoding``,
``corpus.empty``, ``corpus.bad-csv``, ``corpus.missing-column``,
``corpus.duplicate-column``, ``corpus.unknown-column`` (warning), ``corpus.ragged-row``,
``corpus.missing-value``, ``corpus.unknown-value``, ``corpus.duplicate-id``,
``corpus.bad-year``, ``corpus.bad-url``, ``corpus.bad-date``, ``corpus.bad-arxiv-id``
(warning), ``corpus.arxiv-mismatch`` (warning).

>>> row = ("magrpo,LLM Collaboration,\\"Liu, Shuo\\",NEU,2025,2508.04652,arXiv,"
...        "https://arxiv.org/abs/2508.04652,rl_method,yes,hybrid,agent,centralized,"
...        "general,core,MAGRPO,yes,")
>>> text = ",".join(PAPER_COLUMNS) + "\\n" + row + "\\n"
>>> check_text(text)
[]
>>> [str(p) for p in check_text(text.replace("hybrid", "hybird"))]
["error corpus.unknown-value at papers.csv:row 2:reward_type: 'hybird' is not an allowed reward_type (hint: did you mean 'hybrid'?)"]
"""

from __future__ import annotations

from ..errors import CorpusError
from ._markdown import to_markdown
from ._pool import (
    IO_CODES,
    MAX_BYTES,
    CorpusStats,
    CrossTab,
    StoppingCoverage,
    check,
    check_text,
    load_excluded,
    load_papers,
    stats,
    to_json,
)
from ._schema import (
    EXCLUDED_COLUMNS,
    PAPER_COLUMNS,
    Category,
    CoreStatus,
    ExcludedRecord,
    Paper,
    RLStatus,
    Scenario,
    ScreeningStage,
    Verified,
)

__all__ = [
    "EXCLUDED_COLUMNS",
    "IO_CODES",
    "MAX_BYTES",
    "PAPER_COLUMNS",
    "Category",
    "CoreStatus",
    "CorpusError",
    "CorpusStats",
    "CrossTab",
    "ExcludedRecord",
    "Paper",
    "RLStatus",
    "Scenario",
    "ScreeningStage",
    "StoppingCoverage",
    "Verified",
    "check",
    "check_text",
    "load_excluded",
    "load_papers",
    "stats",
    "to_json",
    "to_markdown",
]
