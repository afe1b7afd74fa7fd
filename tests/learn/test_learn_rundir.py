"""The run directory rules of ``orchestrace train`` (orchestrace.trainers.rundir), without training."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrace.errors import CheckpointError, ConfigError
from orchestrace.trainers.rundir import RUN_FILES, check_run_dir, run_config


def test_overwrite_removes_the_run_files_and_nothing_else(tmp_path: Path) -> None:
    for name in (*RUN_FILES, "notes.txt"):
        (tmp_path / name).write_text("x")
    check_run_dir(tmp_path, resume=False, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_folder_that_is_not_empty_is_refused_with_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "metrics.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    with pytest.raises(ConfigError, match=r"metrics.jsonl \(2 rows\)"):
        check_run_dir(tmp_path, resume=False, overwrite=False)


def test_resume_needs_a_checkpoint_and_says_how_to_start_again(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="no checkpoint.pt.*--overwrite"):
        check_run_dir(tmp_path, resume=True, overwrite=False)
    with pytest.raises(ConfigError, match="pass one of them"):
        check_run_dir(tmp_path, resume=True, overwrite=True)
    with pytest.raises(ConfigError, match="does not exist"):
        check_run_dir(tmp_path / "nope", resume=True, overwrite=False)


def test_resume_reads_the_saved_config_under_the_given_fields(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"algo": "reinforce", "steps": 3}')
    cfg = run_config(tmp_path, {"steps": 5}, resume=True)
    assert (cfg.algo, cfg.steps) == ("reinforce", 5)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="unreadable"):
        run_config(tmp_path, {}, resume=True)


def test_a_resumed_metrics_log_keeps_its_first_rows_and_names_a_damaged_one(tmp_path: Path) -> None:
    from orchestrace.trainers.common import MetricLogger

    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 1}\n\n{"step": 2}\n{"step": 3}\n{"step": 4, "tor', encoding="utf-8")  # a killed run's tail
    kept = MetricLogger(tmp_path, keep=2, tensorboard=False)
    kept.close()
    assert kept.rows == [{"step": 1}, {"step": 2}]
    assert log.read_text(encoding="utf-8") == '{"step": 1}\n{"step": 2}\n'
    log.write_text('{"step": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"metrics\.jsonl:2: not a metrics row"):
        MetricLogger(tmp_path, keep=2, tensorboard=False)
