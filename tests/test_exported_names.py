"""Every public package exports exactly its curated names (httpx's ``test_exported_members``).

A package's ``__all__`` is its contract: a name added or dropped must be a decision, so it
must show up here too. Each package found in ``src/orchestrace`` (a folder with ``__init__.py``,
not starting with ``_``) is checked; one missing from :data:`EXPORTED` must export nothing.
Every exported name must resolve (lazy ``__getattr__`` exports included); a package or name that
needs an optional extra is skipped with the install command on an install without it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "orchestrace"
PACKAGES = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_"))

EXPORTED: dict[str, set[str]] = {
    "blame": {
        "Agreement", "Attribution", "BlameResult", "Culprit", "Evidence", "EvidenceKind", "FALLBACKS",
        "FALLBACK_RULE", "JudgeConfig", "METHODS", "PROTOCOLS", "Provenance", "STATUSES", "Verdict",
        "ajudge", "blame", "evidence_of", "judge", "second_opinion", "transcript_of", "turn_of",
        "unit_values"
    },
    "cli": {
        "app", "main"
    },
    "trainers": {
        "train"
    },
    "evaluation": {
        "LoggedEvaluation", "evaluate_logged"
    },
    "papers": {
        "Category", "CoreStatus", "CorpusError", "CorpusStats", "CrossTab", "EXCLUDED_COLUMNS",
        "ExcludedRecord", "IO_CODES", "MAX_BYTES", "PAPER_COLUMNS", "Paper", "RLStatus", "Scenario",
        "ScreeningStage", "StoppingCoverage", "Verified", "check", "check_text", "load_excluded",
        "load_papers", "stats", "to_json", "to_markdown"
    },
    "credit": {
        "Batched", "CreditMethod", "CreditResult", "GameResult", "TURN_TYPES", "TraceValue",
        "UnitIndex", "assign", "batched", "c3_advantages", "coma_advantage", "graph_returns",
        "group_baselines", "hoeffding_epsilon", "hoeffding_samples", "leave_one_out", "owen",
        "parse_method", "parse_unit", "shapley", "t_quantile", "unit_index"
    },
    "env": {
        "BASELINES", "BatchEnv", "BatchedEnv", "ChangeDelegation", "DropMessage", "ENV_IDS",
        "EnvConfig", "EnvMaker", "EpisodeResult", "OraclePolicy", "OrchestrationEnv", "Policy",
        "RemoveAgent", "SimulatedWorkers", "StopAt", "SwapAggregation", "WorkerBackend",
        "WorkerProfile", "WorkerResult", "agent_value_function", "config_for", "evaluate",
        "local_batch_env", "make_baseline", "message_value_function", "replay", "replay_many",
        "stop_values"
    },
    "exporters": {
        "EXPORT_FORMATS", "Turn", "advantages_of", "emit_to_tracer", "export_turns", "export_warnings",
        "to_otlp", "to_rllm", "to_trl", "to_verl", "turns_of", "verl_rows"
    },
    "frameworks": {
        "AG2Recorder", "LangGraphRecorder", "OpenAIAgentsRecorder", "ToolCallTransport", "counts"
    },
    "importers": {
        "BUCKETS", "CHAT_LIST_KEYS", "CONTENT_MODES", "ContentMode", "Evidence", "EvidenceKind",
        "FORMATS", "ImportReport", "ImportResult", "Provenance", "STRENGTH", "content_digest",
        "evidence_of", "import_traces", "of_tool_output", "scan", "to_attrs"
    },
    "learn": {
        "TrainConfig", "evaluate", "load_policy", "run_demo", "train"
    },
    "llm": {
        "AttemptRequest", "AttemptResult", "ChatClient", "ChatResult", "EpisodeResult", "LLMEnvBackend",
        "LLMError", "LLMProfile", "LLMWorkers", "LocalServer", "PLANS", "Plan", "SUITES", "Subtask",
        "Task", "arun_episode", "find_smollm2_gguf", "make_task", "make_tasks", "parse_choice",
        "parse_int", "run_episode", "task_for_dag"
    },
    "offline": {
        "AGGREGATIONS", "AdaptiveBeta", "AdaptiveDirichlet", "CISC", "Candidate", "DeepConf", "ESC",
        "FAMILIES", "FEATURES", "FeatureRule", "FixedBudget", "LoggedEvaluation", "LoggedRuns", "PriceLogistic",
        "StopDecision", "StopGate", "StopRule", "TeamArrays", "TeamDecision", "TeamPolicy", "TeamState",
        "ThresholdRule", "Valuation", "VoteShare", "VoteState", "check_runs", "check_team_runs",
        "columns_of", "configs", "continuation_values", "demo_section", "evaluate_logged", "evaluate_team",
        "evaluate_traces", "family_candidates", "first_stop", "fit_gate", "fit_price_logistic",
        "fit_team_policy", "fresh_mismatch", "load_logged_runs", "logged_from_codes",
        "make_synthetic_logged", "make_synthetic_team", "read_corpus", "read_manifest",
        "render_summary", "render_team", "rollout", "save_runs", "split_of", "task_prices", "team_demo_section", "team_claims", "demo_ci_text", "demo_verdict", "valuation",
        "value_candidates", "write_pareto"
    },
    "report": {
        "Analysis", "analyse", "credit_payload", "measures_of", "report_html", "save_png",
        "write_report"
    },
    "rewards": {
        "BUILTINS", "Bound", "CreditSpec", "Mixed", "RewardFn", "RewardSpec", "Scaled", "Term",
        "WeightedSum", "agent_success", "aggregation_quality", "anneal", "bind", "critical_steps_cost",
        "default_signals", "event_score", "hybrid", "judge", "load_spec", "loads_spec", "marti",
        "marti_margin", "marti_quality", "merge", "mix", "outcome_value", "parallel_speedup", "parl",
        "parl_reward", "process", "puppeteer", "puppeteer_returns", "role_reward", "scale",
        "shared_outcome", "signals_for", "split_correctness", "tool_use", "total", "weighted_sum"
    },
    "scale": {
        "Cluster", "EpisodeJob", "MeasureJob", "RAY_START_S", "RAY_TASK_S", "RayBatchEnv", "RayEnvs",
        "ShardResult", "break_even_s", "check_request", "connect", "measure_partition", "partitions",
        "ray_decision", "ray_player", "ray_running", "run_item", "run_shard", "shards",
        "should_distribute", "write_parts"
    },
}


def _import(name: str) -> ModuleType:
    from orchestrace.errors import MissingExtraError

    try:
        return importlib.import_module(f"orchestrace.{name}")
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("orchestrace"):
            raise
        pytest.skip(f"needs {exc.name} (an optional extra of orchestrace; see pyproject.toml)")


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports_exactly_its_curated_names(name: str) -> None:
    mod = _import(name)
    exported = list(getattr(mod, "__all__", []))
    assert len(exported) == len(set(exported)), f"orchestrace.{name}.__all__ repeats a name"
    assert set(exported) == EXPORTED.get(name, set()), (
        f"orchestrace.{name}.__all__ changed: update EXPORTED here if that is deliberate")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves(name: str) -> None:
    from orchestrace.errors import MissingExtraError

    mod = _import(name)
    for attr in getattr(mod, "__all__", []):
        try:
            assert getattr(mod, attr) is not None or attr.isupper(), f"orchestrace.{name}.{attr} is None"
        except (MissingExtraError, ModuleNotFoundError) as exc:
            if isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("orchestrace"):
                raise
            pytest.skip(f"orchestrace.{name}.{attr}: {exc}")


def test_every_package_is_listed_or_exports_nothing() -> None:
    assert set(EXPORTED) <= set(PACKAGES), f"EXPORTED names packages that are gone: {set(EXPORTED) - set(PACKAGES)}"
