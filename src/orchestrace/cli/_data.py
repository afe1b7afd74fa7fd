"""``orchestrace data``: where the packaged example data is, so commands run from any folder.

``data list`` names every packaged item with a one-line description; ``data path NAME`` prints
its absolute path (use it in a command: ``orchestrace train --from-traces "$(orchestrace data
path smollm2-v1)" -o run``); ``data path`` alone prints the data folder.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import app, console, fail

data_app = typer.Typer(help="Packaged example data: list it, print its path.", no_args_is_help=True)
app.add_typer(data_app, name="data")

#: Packaged items: name → (path below orchestrace/data, what it is).
ITEMS: dict[str, tuple[str, str]] = {
    "smollm2-v1": ("corpora/smollm2-v1", "vote corpus: 1,509 real self-consistency runs of SmolLM2-135M-Instruct "
                   "(4 rounds x 2 samples, log-probs)"),
    "smollm2-v1-fresh": ("corpora/smollm2-v1-fresh", "400 fresh tasks of the vote corpus's settings, for "
                         "`eval --traces smollm2-v1 RUN --test`"),
    "smollm2-team-v1": ("corpora/smollm2-team-v1", "team corpus: 1,200 tasks of SmolLM2 members (cold, hot, calc, "
                        "reviser), every member every round"),
    "smollm2-team-fresh-v1": ("corpora/smollm2-team-fresh-v1", "400 fresh tasks of the team corpus's settings, for "
                              "`eval --traces smollm2-team-v1 RUN --test`"),
    "smollm2-samples": ("examples/smollm2-samples.jsonl.gz", "sampling logs (question, 8 samples with log-probs, "
                        "answer) of 240 add tasks, for `collect import`"),
    "smollm2-debate": ("examples/smollm2-debate.json", "one real multi-agent debate (3 agents, 2 rounds) of SmolLM2 in the "
                       "llm_multiagent_debate shape, for `collect import`"),
    "example-tasks": ("examples/tasks.jsonl", "a task file (your own tasks) for `collect run --task-file`"),
    "whowhen-ag27": ("examples/whowhen/ag_27.json", "a real failed AG2 group chat (Who&When, Algorithm-Generated 27; "
                     "MIT, licence alongside)"),
    "survey-papers": ("examples/reference/papers.csv", "the survey's tagged paper pool (CC0-1.0)"),
    "survey-excluded": ("examples/reference/excluded.csv", "the survey's exclusion log (CC0-1.0)"),
}


def data_root() -> Path:
    """The folder of the packaged data."""
    return Path(__file__).resolve().parents[1] / "data"


def available() -> dict[str, Path]:
    """The packaged items present in this install."""
    root = data_root()
    return {n: root / p for n, (p, _) in ITEMS.items() if (root / p).exists()}


@data_app.command("path")
def data_path(name: str = typer.Argument(None, help="An item of `orchestrace data list` (none: the data folder).")) -> None:
    """Print the absolute path of a packaged example (or of the data folder)."""
    if name is None:
        console.print(str(data_root()), markup=False, soft_wrap=True)
        return
    have = available()
    if name not in have:
        known = ", ".join(sorted(have)) or "none"
        raise fail(f"no packaged data named {name!r}; available: {known} (`orchestrace data list`)")
    console.print(str(have[name]), markup=False, soft_wrap=True)


@data_app.command("list")
def data_list() -> None:
    """Name every packaged example with what it is and its path."""
    for n, p in available().items():
        console.print(f"{n:16s} {ITEMS[n][1]}\n{'':16s} {p}", markup=False, soft_wrap=True)
