"""Functions, classes and modules: their source code.

``inspect.getsource`` finds the source of anything defined in a notebook cell too:
IPython keeps every executed cell in ``linecache`` under the file name its code was
compiled with. Classes are the exception on Python < 3.13 (``inspect`` looks for the
class in its module's file, and ``__main__`` has none), so a notebook class is found
through the cell that defined one of its functions. Builtins have no source: their
signature and docstring stand in.
"""

from __future__ import annotations

import inspect
import linecache
import re
import types

from .kinds import Summariser
from .model import Limits, Summary, finish


def _is_code(value: object) -> bool:
    return inspect.isroutine(value) or inspect.isclass(value) or inspect.ismodule(value)


def _name(value: object) -> str:
    """``Outer.method``, without the ``<locals>`` of a function defined in a function."""
    name = str(getattr(value, "__qualname__", None) or getattr(value, "__name__", "?"))
    return name.rsplit("<locals>.", 1)[-1]


def _label(value: object) -> str:
    if inspect.ismodule(value):
        return f"module {value.__name__}"
    if inspect.isclass(value):
        return f"class {_name(value)}"
    name = _name(value)
    kind = "method" if inspect.ismethod(value) or "." in name else "function"
    return f"{kind} {name}()"


def _class_source(cls: type) -> str | None:
    """A class's source, found through the file of one of its functions (notebook cells)."""
    pattern = re.compile(rf"^(\s*)class\s+{re.escape(cls.__name__)}\b")
    for member in vars(cls).values():
        function = inspect.unwrap(
            member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        )
        code = getattr(function, "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        lines = linecache.getlines(code.co_filename)
        # The nearest "class Name" above the function's first line.
        for start in range(min(code.co_firstlineno, len(lines)) - 1, -1, -1):
            if pattern.match(lines[start]):
                return "".join(inspect.getblock(lines[start:]))
    return None


def source_of(value: object) -> str | None:
    """The source code of a function, class or module, or None when it has none."""
    try:
        return inspect.getsource(value)  # type: ignore[arg-type]
    except (OSError, TypeError):
        if inspect.isclass(value):
            return _class_source(value)
        return None


def _summary(value: object, name: str, limits: Limits) -> Summary:
    label = _label(value)
    source = source_of(value)
    if source is not None:
        return finish(name, label, source, limits, mime_type="text/x-python")
    try:
        signature = str(inspect.signature(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        signature = ""
    doc = inspect.getdoc(value) or ""
    heading = f"{label.rsplit('(', 1)[0]}{signature}" if signature else label
    text = f"{heading}\n\n{doc}".strip()
    return finish(name, label, text, limits, notes=["its source code is not available"])


SOURCE = Summariser("source", _is_code, _label, _summary)
