"""Summaries of live values, with the real libraries (issue 12).

Before them, ``{df}`` with a real pandas DataFrame raised ``TypeError: argument of type
'method' is not iterable`` (the bound ``to_csv`` was called with the frame as its path)
and sent nothing: no test used pandas. These use real pandas, polars, numpy and
matplotlib, and hostile objects whose ``__repr__`` raises, floods or never returns.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from types import ModuleType

import pytest

from acp_notebook.notebook.summaries import (
    NOT_FOUND,
    Limits,
    label_of,
    resolve,
    size_of,
    summarise,
)

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")


def _polars() -> ModuleType:
    """polars, or a skip — except under CI, where it is part of the test extra and a
    failing import must fail the test."""
    if os.environ.get("CI"):
        import polars

        return polars
    return pytest.importorskip("polars")


# ---------------------------------------------------------------------- pandas


def test_a_dataframe_with_nulls_gives_shape_dtypes_nulls_describe_and_csv() -> None:
    frame = pd.DataFrame({"region": ["north", None, "south"], "amount": [1.5, 2.0, None]})
    summary = summarise(frame, "sales")
    assert summary.label == "DataFrame 3×2"
    assert summary.mime_type == "text/markdown"
    assert summary.notes == ()
    assert summary.text.startswith("pandas DataFrame `sales`: 3 rows × 2 columns")
    assert "- `amount`: float64, 1 null" in summary.text
    assert "- `region`: " in summary.text and ", 1 null" in summary.text
    assert "describe():\n```csv\n,region,amount\ncount,2,2.0\n" in summary.text
    assert "All 3 rows (CSV):\n```csv\n,region,amount\n0,north,1.5\n1,,2.0\n2,south,\n```" in (
        summary.text
    )


def test_a_series_gives_its_dtype_nulls_describe_and_values() -> None:
    series = pd.Series([3, 1, None], name="score")
    summary = summarise(series, "score")
    assert summary.label == "Series float64 (3)"
    assert "pandas Series `score`: 3 values" in summary.text
    assert "- `score`: float64, 1 null" in summary.text
    assert "All 3 values (CSV):\n```csv\n,score\n0,3.0\n1,1.0\n2,\n```" in summary.text


def test_a_million_row_frame_is_bounded_and_says_so() -> None:
    frame = pd.DataFrame({"x": np.arange(1_000_000), "y": np.linspace(0, 1, 1_000_000)})
    summary = summarise(frame, "big", Limits(rows=20))
    assert summary.label == "DataFrame 1,000,000×2"
    assert summary.notes == ("first 20 of 1,000,000 rows shown",)
    assert "First 20 rows (CSV):" in summary.text
    assert "\n19,19," in summary.text
    assert "\n20,20," not in summary.text
    assert "count,1000000.0,1000000.0" in summary.text  # describe() covers every row
    assert len(summary.text) < 5_000


def test_a_wide_frame_shows_its_first_columns_and_says_so() -> None:
    frame = pd.DataFrame({f"c{i}": [i] for i in range(30)})
    summary = summarise(frame, "wide", Limits(columns=5))
    assert summary.label == "DataFrame 1×30"
    assert summary.notes == ("first 5 of 30 columns shown",)
    assert "`c4`" in summary.text and "`c5`" not in summary.text


def test_an_empty_frame_is_summarised_without_describe() -> None:
    summary = summarise(pd.DataFrame(), "empty")
    assert summary.label == "DataFrame 0×0"
    assert "describe()" not in summary.text
    assert summary.notes == ()


def test_a_part_that_fails_is_left_out_with_a_note() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no")

        __str__ = __repr__

    frame = pd.DataFrame({"thing": [Unprintable()]})
    summary = summarise(frame, "odd")
    assert summary.label == "DataFrame 1×1"
    assert any(
        note.startswith("writing rows as CSV failed (RuntimeError") for note in summary.notes
    )


# ---------------------------------------------------------------------- polars


def test_a_polars_frame_reads_like_a_pandas_frame() -> None:
    pl = _polars()
    frame = pl.DataFrame({"region": ["north", None, "south"], "amount": [1.5, 2.0, None]})
    summary = summarise(frame, "sales")
    assert summary.label == "DataFrame 3×2"
    assert summary.text.startswith("polars DataFrame `sales`: 3 rows × 2 columns")
    assert "- `region`: String, 1 null" in summary.text
    assert "- `amount`: Float64, 1 null" in summary.text
    assert "describe():\n```csv\nstatistic,region,amount\n" in summary.text
    assert "All 3 rows (CSV):\n```csv\nregion,amount\nnorth,1.5\n,2.0\nsouth,\n```" in summary.text
    assert size_of(frame) == frame.estimated_size()


def test_a_long_polars_series_is_bounded_and_says_so() -> None:
    pl = _polars()
    series = pl.Series("n", range(1_000_000))
    summary = summarise(series, "n", Limits(rows=10))
    assert summary.label == "Series Int64 (1,000,000)"
    assert summary.notes == ("first 10 of 1,000,000 values shown",)
    assert "First 10 values (CSV):\n```csv\nn\n0\n1\n" in summary.text


# ---------------------------------------------------------------------- numpy


def test_an_array_gives_shape_dtype_statistics_and_a_bounded_printout() -> None:
    array = np.arange(3000, dtype="float64").reshape(1000, 3)
    array[0, 0] = np.nan
    summary = summarise(array, "weights")
    assert summary.label == "ndarray float64 (1000, 3)"
    assert "- NaN count: 1" in summary.text
    assert "- min: 1\n- max: 2999" in summary.text
    assert "..." in summary.text
    assert summary.notes == ("the printout shows the edges of 3,000 elements (… marks the rest)",)
    assert size_of(array) == 24_000


def test_a_small_integer_array_is_printed_whole() -> None:
    summary = summarise(np.array([1, 2, 3]), "a")
    assert summary.label == "ndarray int64 (3,)"
    assert "- mean: 2" in summary.text
    assert "```\n[1 2 3]\n```" in summary.text
    assert summary.notes == ()


def test_a_text_array_has_no_statistics() -> None:
    summary = summarise(np.array(["a", "b"]), "s")
    assert "Statistics" not in summary.text
    assert "['a' 'b']" in summary.text


# ---------------------------------------------------------------------- code


def clean(values: list[int]) -> list[int]:
    """Drop the negatives."""
    return [v for v in values if v >= 0]


class Cleaner:
    def run(self) -> None:
        pass


def test_a_function_gives_its_source() -> None:
    summary = summarise(clean, "clean")
    assert summary.label == "function clean()"
    assert summary.mime_type == "text/x-python"
    assert summary.text.startswith("def clean(values: list[int]) -> list[int]:")


def test_a_class_and_a_module_give_their_source() -> None:
    assert summarise(Cleaner, "Cleaner").text.startswith("class Cleaner:")
    assert summarise(Cleaner, "Cleaner").label == "class Cleaner"
    module = summarise(json, "json")
    assert module.label == "module json"
    assert "def dumps(" in module.text
    assert module.notes == ()


def test_a_builtin_gives_its_signature_and_docstring() -> None:
    summary = summarise(len, "len")
    assert summary.label == "function len()"
    assert summary.text.startswith("function len(obj, /)\n\nReturn the number of items")
    assert summary.notes == ("its source code is not available",)


# ---------------------------------------------------------------------- images


def test_a_figure_is_an_image_with_its_axes_described() -> None:
    figure_module = pytest.importorskip("matplotlib.figure")
    figure = figure_module.Figure(figsize=(4, 3), dpi=100)
    axes = figure.add_subplot()
    axes.plot([1, 3, 2])
    axes.set_title("trend")
    summary = summarise(figure, "chart")
    assert summary.label == "Figure 400×300 px, 1 axes"
    assert summary.png is not None and summary.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert base64.b64decode(summary.png_base64 or "") == summary.png
    assert "- axes 1: title 'trend', 1 lines, 0 collections" in summary.text
    assert summarise(axes, "axes").png is not None  # axes stand for their figure


def test_an_axes_is_named_an_axes_of_its_figure_not_a_figure() -> None:
    # `fig, ax = plt.subplots()` then list_variables called `ax` a "Figure 640×480 px",
    # and an agent told so calls Figure methods on it.
    figure_module = pytest.importorskip("matplotlib.figure")
    figure = figure_module.Figure(figsize=(4, 3), dpi=100)
    axes = figure.add_subplot()
    assert label_of(axes) == "Axes of a Figure 400×300 px, 1 axes"
    axes.set_title("trend")
    summary = summarise(axes, "ax")
    assert summary.label == "Axes 'trend' of a Figure 400×300 px, 1 axes"
    assert summary.text.startswith(
        "matplotlib Axes 'trend' of a Figure 400×300 px, 1 axes `ax` (its figure attached"
    )


def test_an_object_with_a_png_representation_is_an_image() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16

    class Picture:
        def _repr_png_(self) -> bytes:
            return png

    class Bundle:
        def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> object:
            return {"image/png": base64.b64encode(png).decode(), "text/plain": "b"}

    assert summarise(Picture(), "p").png == png
    assert summarise(Bundle(), "b").png == png


def test_a_proxy_that_answers_every_attribute_is_not_an_image() -> None:
    class Proxy:
        def __getattr__(self, name: str) -> object:
            return lambda *args, **kwargs: b"\x89PNG\r\n\x1a\n"

        def __repr__(self) -> str:
            return "Proxy()"

    summary = summarise(Proxy(), "proxy")
    assert summary.png is None
    assert summary.text == "Proxy()"


# ---------------------------------------------------------------------- everything else


def test_plain_containers_are_json_and_strings_themselves() -> None:
    config = summarise({"paths": ["a", "b"], "depth": 2}, "config")
    assert config.label == "dict (2 keys)"
    assert config.mime_type == "application/json"
    assert json.loads(config.text) == {"paths": ["a", "b"], "depth": 2}
    note = summarise("x" * 30, "note", Limits(chars=10))
    assert note.text == "xxxxxxxxx…"
    assert note.notes == ("first 10 of 30 characters shown",)


def test_a_long_or_deep_container_is_cut_with_notes() -> None:
    summary = summarise(list(range(1000)), "numbers")
    assert summary.mime_type == "text/plain"
    assert summary.text.endswith(", 99, … 900 more]")
    assert summary.notes == ("containers show their first 100 items",)
    deep: list[object] = []
    level = deep
    for _ in range(10_000):
        level.append([])
        level = level[0]  # type: ignore[assignment]
    assert summarise(deep, "deep").text == "[[[[[[[…]]]]]]]"
    loop: list[object] = []
    loop.append(loop)
    assert summarise(loop, "loop").text == "[[[[[[[…]]]]]]]"


class Raising:
    def __repr__(self) -> str:
        raise ValueError("no repr for you")


class Flooding:
    def __repr__(self) -> str:
        return "x" * 100_000_000


class Endless:
    def __repr__(self) -> str:
        while True:
            time.sleep(0.01)


def test_a_repr_that_raises_gives_a_placeholder_and_a_note() -> None:
    summary = summarise(Raising(), "r")
    assert summary.text.startswith(f"<{__name__}.Raising object at 0x")
    assert summary.notes == ("its repr raised ValueError",)
    inside = summarise([Raising(), 1], "r")
    assert inside.text.endswith(", 1]")


def test_a_repr_of_100_mb_is_cut() -> None:
    # The cut, not the clock: building 100 MB took over the default 2 s once on a loaded
    # machine, and the repr was stopped instead of cut.
    summary = summarise(Flooding(), "f", Limits(repr_seconds=600))
    assert len(summary.text) == 20_000
    assert summary.notes == ("its repr was cut to its first 20,000 of 100,000,000 characters",)


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_a_repr_that_never_returns_is_stopped() -> None:
    summary = summarise(Endless(), "e", Limits(repr_seconds=0.2))
    assert summary.text.startswith(f"<{__name__}.Endless object at 0x")
    assert summary.notes == ("its repr ran longer than 0.2 s and was stopped",)


def test_a_hostile_class_check_falls_back_to_the_repr() -> None:
    class Liar:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise RuntimeError("no class")

        def __repr__(self) -> str:
            return "Liar()"

    text, label = summarise(Liar(), "liar").text, label_of(Liar())
    assert (text, label) == ("Liar()", "Liar")


# ---------------------------------------------------------------------- resolve


def test_resolve_follows_names_attributes_and_literal_keys() -> None:
    frame = pd.DataFrame({"a": [1]})
    namespace = {
        "frame": frame,
        "settings": {"paths": ["x", "y"], 2: "two"},
        "In": ["", "x = 1", "x + 1"],
        "Out": {2: 2},
    }
    assert resolve("frame", namespace) is frame
    assert resolve("frame.a", namespace).tolist() == [1]  # type: ignore[attr-defined]
    assert resolve("settings['paths'][-1]", namespace) == "y"
    assert resolve("settings[2]", namespace) == "two"
    assert resolve("In[1]", namespace) == "x = 1"
    assert resolve("Out[2]", namespace) == 2


def test_resolve_never_evaluates_code() -> None:
    calls: list[str] = []

    class Spy:
        def method(self) -> str:
            calls.append("called")
            return "result"

    namespace = {"spy": Spy(), "key": "paths", "settings": {"paths": 1}}
    for expression in (
        "spy.method()",
        "settings[key]",
        "__import__('os')",
        "spy.__class__",
        "_private",
        "1 + 1",
        "missing",
        "settings['nope']",
        "not python",
    ):
        assert resolve(expression, namespace) is NOT_FOUND, expression
    assert calls == []


# ---------------------------------------------------------------------- no hard imports


def test_summaries_import_none_of_the_libraries_they_describe() -> None:
    code = (
        "import sys\n"
        "from acp_notebook.notebook.summaries import summarise, label_of\n"
        "summarise({'a': 1}, 'd'); summarise(len, 'len'); label_of(object())\n"
        "print(sorted({'pandas', 'polars', 'numpy', 'matplotlib'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"
