"""Task suites: answer parsing (units + Hypothesis), exact checking, decomposition invariants."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.errors import ConfigError
from orchestrace.llm.tasks import (
    SUITES,
    make_task,
    make_tasks,
    parse_answer,
    parse_choice,
    parse_int,
    task_for_dag,
)

# -- parse_int units ----------------------------------------------------------------------------


@pytest.mark.parametrize("text,want", [
    ("42", 42),
    ("The answer is 42.", 42),
    ("3 + 4 = 7", 7),
    ("2 - 5 = -3", -3),
    ("5-3=2", 2),
    ("Answer: 3 + 4 = 7", 7),
    ("Answer: 12. Then again, maybe 13", 12),
    ("<answer>-8</answer> but some say 9", -8),
    ("so \\boxed{144} is it; 12*12", 144),
    ("#### 1,234", 1234),
    ("the result: −7", -7),
    ("It is 3.0", 3),
    ("It is 2.5", None),
    ("no numbers here", None),
    ("", None),
    ("Step 1: add 2 and 3 to get 5. Step 2: times 4 is 20", 20),
    ("final answer is 0", 0),
    ("x = +6", 6),
])
def test_parse_int_examples(text: str, want: int | None) -> None:
    assert parse_int(text) == want


@pytest.mark.parametrize("text,want", [
    ("Carol", "Carol"),
    ("The mentor of Bob is Carol.", "Carol"),
    ("Answer: alice. (Not Bob.)", "Alice"),
    ("<answer>Bob</answer> Alice Carol", "Bob"),
    ("nobody", None),
    ("Bobby is not a name here", None),
])
def test_parse_choice_examples(text: str, want: str | None) -> None:
    assert parse_choice(text, ["Alice", "Bob", "Carol"]) == want


def test_parse_answer_kinds() -> None:
    assert parse_answer("= 0042", "int") == "42"
    assert parse_answer("it is dave", "choice", ["Dave"]) == "Dave"
    with pytest.raises(ConfigError):
        parse_answer("x", "float")


# -- Hypothesis ---------------------------------------------------------------------------------

_no_digits = st.text(alphabet=st.characters(blacklist_categories=("Nd",), blacklist_characters="-+.,−\\#<>:=_"),
                     max_size=40)
_words = st.lists(st.sampled_from(["so", "the", "sum", "we", "get", "hence", "ok", "is", "it"]), max_size=6).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(-10**9, 10**9), pre=_words, post=_words)
def test_last_integer_wins_in_rambling(n: int, pre: str, post: str) -> None:
    assert parse_int(f"{pre} 17 then 3 {pre} {n} {post}") == n


@settings(max_examples=60, deadline=None)
@given(n=st.integers(-10**6, 10**6), noise=st.lists(st.integers(-999, 999), max_size=5), pre=_words)
def test_tagged_answer_wins_over_later_numbers(n: int, noise: list[int], pre: str) -> None:
    tail = " ".join(str(x) for x in noise)
    assert parse_int(f"{pre} <answer>{n}</answer> {tail}") == n
    assert parse_int(f"{pre}\nAnswer: {n}\n{tail}") == n


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 10**12))
def test_thousands_separators(n: int) -> None:
    assert parse_int(f"total {n:,} units") == n


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=200))
def test_parsers_never_raise(text: str) -> None:
    v = parse_int(text)
    assert v is None or isinstance(v, int)
    c = parse_choice(text, ["Alice", "Bob"])
    assert c in (None, "Alice", "Bob")


@settings(max_examples=60, deadline=None)
@given(text=_no_digits)
def test_no_digits_no_integer(text: str) -> None:
    assert parse_int(text) is None


@settings(max_examples=50, deadline=None)
@given(names=st.lists(st.sampled_from(["Alice", "Bruno", "Chen", "Dana"]), min_size=1, max_size=6), pre=_words)
def test_last_named_choice_wins(names: list[str], pre: str) -> None:
    text = f"{pre} " + ", then ".join(names) + "."
    assert parse_choice(text, ["Alice", "Bruno", "Chen", "Dana"]) == names[-1]


# -- tasks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("suite", SUITES)
def test_make_task_is_deterministic_and_consistent(suite: str) -> None:
    for seed in range(30):
        t = make_task(suite, seed=seed, size=3)
        assert t == make_task(suite, seed=seed, size=3)
        ids = [s.id for s in t.subtasks]
        for k, s in enumerate(t.subtasks):  # topological order, deps earlier
            assert all(ids.index(d) < k for d in s.deps)
            assert t.expected(s.id, {d: t.subtask(d).answer for d in s.deps}) == s.answer
        assert t.subtask(t.root).answer == t.answer
        assert t.check(f"blah blah.\nAnswer: {t.answer}")
        assert not t.check("I do not know")


@pytest.mark.parametrize("suite", SUITES)
def test_task_for_dag_respects_any_dag(suite: str) -> None:
    rng = random.Random(0)
    for seed in range(60):
        n = rng.randint(1, 6)
        parents = [sorted(rng.sample(range(i), k=min(i, rng.randint(0, 2)))) for i in range(n)]
        t = task_for_dag(suite, parents, seed=seed)
        assert len(t.subtasks) == n and t.root == f"s{n - 1}"
        for i, s in enumerate(t.subtasks):
            want = {f"s{p}" for p in parents[i]}
            assert set(s.deps) <= want and (suite == "lookup" or set(s.deps) == want)
            truth = {d: t.subtask(d).answer for d in s.deps}
            assert t.expected(s.id, truth) == s.answer
            for comm in ("none", "summary", "full"):
                body = t.prompt(s.id, truth, comm)[-1]["content"]
                assert "{" not in body  # every placeholder filled
                if comm != "none":
                    assert all(truth[d] in body for d in s.deps)
        assert "{" not in t.question


def test_local_correctness_follows_wrong_inputs() -> None:
    t = task_for_dag("list", [[], [0]], seed=3)
    s1 = t.subtask("s1")
    wrong = str(int(t.subtask("s0").answer) + 5)
    assert t.expected("s1", {"s0": wrong}) == str(int(s1.answer) + 5)
    assert t.expected("s1", {"s0": None}) is None


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="suite"):
        make_task("chess", seed=0)
    with pytest.raises(ConfigError, match="size"):
        make_task("arith", seed=0, size=0)
    with pytest.raises(ConfigError, match="earlier"):
        task_for_dag("arith", [[], [1]], seed=0)
    with pytest.raises(ConfigError, match="communication"):
        make_task("arith", seed=0).prompt("s0", {}, "shout")
    assert [t.id for t in make_tasks("list", 2, seed=4)] == ["list-4", "list-5"]
