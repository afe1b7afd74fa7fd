"""The examples in the docs are real: they parse, validate and measure."""

from __future__ import annotations

import re
from pathlib import Path

import orchestrace as ot

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_format_doc_example_is_a_valid_native_trace() -> None:
    text = (DOCS / "format.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", text, re.S)
    assert block, "docs/format.md must hold a JSON example"
    trace = ot.loads(block.group(1).encode())
    report = ot.validate(trace)
    assert report.valid and not report.problems, [str(p) for p in report.problems]
    assert trace.stop_event is not None and trace.stop_event.id == "e7"
    m = ot.compute_metrics(trace).metrics
    assert m["e1/task_success"] == 1.0
    assert m["waste/events"] == 0.0
    assert m["safety/flows"] == 0.0


def test_readme_python_examples_run(tmp_path, monkeypatch) -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {}
    for code in blocks:  # later blocks may use names from earlier ones, as a reader would
        exec(compile(code, "README.md", "exec"), ns)
    assert ot.load(tmp_path / "run-1.json").stop_event is not None
    assert len(ot.load(tmp_path / "run.jsonl").events) == 7


def test_format_doc_points_at_the_problem_code_table() -> None:
    import subprocess
    import sys

    text = (DOCS / "format.md").read_text(encoding="utf-8")
    cmd = re.search(r'`python -c "(import orchestrace[^"]*)"`', text)
    assert cmd, "docs/format.md must say how to print the problem-code table"
    code = cmd.group(1).replace("help(v)", "print(v.__doc__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for c in ("schema.enum", "edge.cycle", "stop.multiple"):
        assert f"``{c}``" in out, c


def test_links_in_the_docs_point_into_the_repository() -> None:
    root = DOCS.parent
    for page in [root / "README.md", *sorted(DOCS.glob("*.md")), root / "tests" / "data" / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor on the same page
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists() and root in path.parents, f"{page.name}: link to {target} leaves the repo"
        # files a clone does not have (the workspace's design notes and shared fixtures)
        assert "DESIGN.md" not in text and "../shared" not in text, page.name
