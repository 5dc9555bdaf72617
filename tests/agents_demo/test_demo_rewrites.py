"""The demo agent's rewrites of Python code, without a client: what its refactoring
changes and what it must leave alone (a change in meaning, a comment lost), and the fix
it finds for each error it recognises."""

from __future__ import annotations

import pytest

from acp_notebook.agents.demo.refactors import refactor
from acp_notebook.agents.demo.repairs import Failure, Repair, columns_in, read_failure, repair


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result\n",
            "def total(values):\n    return sum(values)\n",
        ),
        (
            "def mean(xs):\n    t = 0.0\n    for x in xs:\n        t += x * 2\n    return t / len(xs)\n",
            "def mean(xs):\n    t = sum((x * 2 for x in xs), 0.0)\n    return t / len(xs)\n",
        ),
        (
            "def evens(xs):\n    out = []\n    for x in xs:\n        if x % 2 == 0:\n            out.append(x)\n    return out\n",
            "def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n",
        ),
        (
            "def big(n):\n    if n > 100:\n        return True\n    else:\n        return False\n",
            "def big(n):\n    return n > 100\n",
        ),
        (
            "def empty(x):\n    if x and x.y:\n        return False\n    else:\n        return True\n",
            "def empty(x):\n    return not (x and x.y)\n",
        ),
    ],
)
def test_the_refactoring_says_the_same_thing_more_directly(code: str, expected: str) -> None:
    result = refactor(code)
    assert result.text == expected
    assert result.changes and "Any" not in result.text and "TODO" not in result.text


@pytest.mark.parametrize(
    "code",
    [
        # Nothing to refactor: it is left exactly as it was (no placeholders added).
        "def add(a, b):\n    return a + b\n",
        # A comment between the statements would be lost with them.
        "def f(xs):\n    t = 0\n    # the sum\n    for x in xs:\n        t += x\n    return t\n",
        # The loop reads its accumulator: not a sum.
        "def f(xs):\n    t = 0\n    for x in xs:\n        t += t + x\n    return t\n",
        # The loop variable is used after the loop.
        "def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return x\n",
        # A loop with an else clause does more than accumulate.
        "def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    else:\n        t = -1\n    return t\n",
    ],
)
def test_the_refactoring_leaves_what_it_cannot_rewrite_safely(code: str) -> None:
    result = refactor(code)
    assert result.text == code and result.changes == []


def test_an_error_attachment_is_read_back_into_its_failure() -> None:
    text = (
        "The last error:\n```\nTraceback (most recent call last):\n"
        "  Cell In[4], line 2, in <module>\n    mean = 10 / total\n"
        "ZeroDivisionError: division by zero\n```\n\n"
        "It was raised in cell [4]:\n```python\ntotal = 0\nmean = 10 / total\n```"
    )
    assert read_failure(text) == Failure(
        "ZeroDivisionError", "division by zero", "total = 0\nmean = 10 / total", 4, 2
    )


def test_the_division_on_the_line_that_raised_is_guarded_inside_its_expression() -> None:
    failure = Failure("ZeroDivisionError", "division by zero", "a = 1 / 2\nb = (x / n) * 2", 5, 2)
    fixed = repair(failure)
    assert isinstance(fixed, Repair)
    assert fixed.code == 'a = 1 / 2\nb = (x / n if n != 0 else float("nan")) * 2'
    nested = repair(Failure("ZeroDivisionError", "division by zero", "y = 2 * x / n + 1", 6, 1))
    assert isinstance(nested, Repair)
    assert nested.code == 'y = (2 * x / n if n != 0 else float("nan")) + 1'


def test_a_name_is_replaced_only_by_a_close_one_and_only_where_it_is_read() -> None:
    code = "result = salse.head()\nsalse_count = len(salse)"
    fixed = repair(Failure("NameError", "name 'salse' is not defined", code), {"sales", "x"})
    assert isinstance(fixed, Repair)
    assert fixed.code == "result = sales.head()\nsalse_count = len(sales)"
    far = repair(Failure("NameError", "name 'qqq' is not defined", "qqq + 1"), {"sales"})
    assert isinstance(far, str) and "no name the kernel has is close" in far


def test_a_missing_column_needs_the_frames_columns_and_keeps_each_quote() -> None:
    code = "a = df['prce']\nb = df[\"prce\"] * 2"
    failure = Failure("KeyError", "'prce'", code, 3, 1)
    assert "I was not told its columns" in str(repair(failure))
    fixed = repair(failure, columns={"df": ["price", "qty"]})
    assert isinstance(fixed, Repair)
    assert fixed.code == "a = df['price']\nb = df[\"price\"] * 2"


def test_columns_are_read_from_a_frame_summary_or_a_mapping() -> None:
    frame = "pandas DataFrame `df`: 2 rows × 2 columns\n\nColumns (dtype, nulls):\n- `price`: float64, 0 nulls\n- `unit price`: int64, 0 nulls\n\ndescribe():\n- `x`: no"
    assert columns_in(frame) == ["price", "unit price"]
    assert columns_in('{\n  "a": 1,\n  "b": 2\n}') == ["a", "b"]
