"""Running an agent's code in the user's namespace, as a cell would but leaving no trace
in the notebook's history: the execution count, ``In``, ``Out``, ``_`` and the last
error (``sys.last_*``) are untouched.

It runs on the main thread (see :mod:`.runner`). IPython syntax (``%magic``, ``!cmd``)
is transformed as in a cell; the last expression's value is kept, with its rich PNG
when it has one. stdout, stderr and ``display()`` calls are captured, bounded; pyplot
figures the code opened are rendered and closed, so they do not surface in the user's
next cell.
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import linecache
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..summaries import Limits
from ..summaries.images import as_png, render_png
from ..summaries.model import cut_head, cut_text
from ..summaries.reprs import BoundedRepr

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .runner import Interruption

#: run_code output bounds: 20,000 characters per stream, a few images.
LIMITS = Limits(chars=20_000)
MAX_IMAGES = 4

_numbers = itertools.count(1)


@dataclass(frozen=True)
class CodeResult:
    """What a piece of code did when it ran."""

    code: str
    stdout: str = ""
    stderr: str = ""
    #: ``text/plain`` of the last expression's value (None when it was None or absent).
    value: str | None = None
    #: ``text/plain`` of each ``display()`` call.
    displays: tuple[str, ...] = ()
    #: PNGs: the value's, ``display()`` calls', and figures the code drew.
    images: tuple[bytes, ...] = ()
    #: The traceback when it raised (plain text).
    error: str | None = None
    #: One sentence per thing left out.
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.error is None


class _BoundedText(io.TextIOBase):
    """A text stream that keeps its first ``limit`` characters and counts the rest."""

    encoding = "utf-8"  # read by libraries that size their output (progress bars, rich)

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.total += len(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        return len(text)

    def text(self, stream: str, notes: list[str]) -> str:
        if self.total > self.kept:
            notes.append(
                f"{stream} was cut to its first {self.kept:,} of {self.total:,} characters"
            )
        return "".join(self.parts)


@contextmanager
def _captured(
    shell: InteractiveShell,
) -> Iterator[tuple[_BoundedText, _BoundedText, list[dict[str, Any]]]]:
    from IPython.core.displaypub import CapturingDisplayPublisher

    stdout, stderr = _BoundedText(LIMITS.chars), _BoundedText(LIMITS.chars)
    publisher = CapturingDisplayPublisher()
    saved = sys.stdout, sys.stderr, shell.display_pub
    sys.stdout, sys.stderr, shell.display_pub = stdout, stderr, publisher
    try:
        yield stdout, stderr, publisher.outputs
    finally:
        sys.stdout, sys.stderr, shell.display_pub = saved


def _open_figures() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _compile(shell: InteractiveShell, code: str) -> tuple[Any, Any]:
    """The code's statements and its last expression (or None), compiled under a file
    name of their own in linecache, so tracebacks and ``inspect`` find the source."""
    source = shell.transform_cell(code)
    filename = f"<run_code {next(_numbers)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    tree = ast.parse(source, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expression = tree.body.pop()
        assert isinstance(expression, ast.Expr)
        last = compile(ast.Expression(expression.value), filename, "eval")
    return compile(tree, filename, "exec"), last


def _traceback(exc: BaseException) -> str:
    """The traceback without this module's frames (a syntax error: just the error)."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc))
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def run(shell: InteractiveShell, code: str, interruption: Interruption | None = None) -> CodeResult:
    """Run ``code`` in ``shell.user_ns`` (main thread only) and say what it did; with
    ``interruption``, another thread may interrupt it (``runner.py``)."""
    notes: list[str] = []
    images: list[bytes] = []
    value: object = None
    value_text: str | None = None
    error: str | None = None
    before = _open_figures()
    guard = interruption.running() if interruption is not None else contextlib.nullcontext()
    with _captured(shell) as (stdout, stderr, outputs):
        try:
            body, last = _compile(shell, code)
            with guard:
                exec(body, shell.user_ns)
                value = eval(last, shell.user_ns) if last is not None else None
            if value is not None:
                value_text, png = _formatted(shell, value)
                if png is not None:
                    images.append(png)
        except BaseException as exc:  # the agent's code: SystemExit and interrupts included
            error = _traceback(exc)
        images.extend(_new_figures(before, shown=value))
    displays: list[str] = []
    for output in outputs:
        data = output.get("data") or {}
        if "text/plain" in data:
            displays.append(str(data["text/plain"]))
        png = as_png(data.get("image/png"))
        if png is not None:
            images.append(png)
    if interruption is not None and interruption.hit:
        notes.append(f"it was interrupted because {interruption.reason}")
    if len(images) > MAX_IMAGES:
        notes.append(f"the first {MAX_IMAGES} of {len(images)} images are given")
    return CodeResult(
        code=code,
        stdout=stdout.text("stdout", notes),
        stderr=stderr.text("stderr", notes),
        value=_bounded(value_text, "the value's repr", notes),
        displays=tuple(t for t in (_bounded(d, "a display", notes) for d in displays) if t),
        images=tuple(images[:MAX_IMAGES]),
        error=_bounded(error, "the traceback", notes, keep_end=True),
        notes=tuple(notes),
    )


def _formatted(shell: InteractiveShell, value: object) -> tuple[str, bytes | None]:
    """The value's ``text/plain`` and PNG as IPython's formatters give them (a figure's
    PNG is rendered here when the inline backend's formatter is not registered)."""
    formatter = shell.display_formatter
    data: dict[str, Any] = {}
    if formatter is not None:
        data, _ = formatter.format(value, include={"text/plain", "image/png"})
    png = as_png(data.get("image/png"))
    if png is None:
        try:
            png = render_png(value)
        except Exception:
            png = None
    text = data.get("text/plain")
    return (str(text) if text is not None else BoundedRepr(LIMITS)(value)), png


def _new_figures(before: set[int], shown: object) -> list[bytes]:
    """PNGs of the pyplot figures opened since ``before`` (except ``shown``, the value,
    whose image is already taken), which are then closed."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    pngs = []
    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        try:
            png = None if figure is shown else render_png(figure)
        except Exception:
            png = None
        if png is not None:
            pngs.append(png)
        pyplot.close(figure)
    return pngs


def _bounded(text: str | None, what: str, notes: list[str], keep_end: bool = False) -> str | None:
    if text is None:
        return None
    text, note = (cut_head if keep_end else cut_text)(text, LIMITS.chars)
    if note:
        notes.append(f"{what} was cut to its {note}")
    return text
