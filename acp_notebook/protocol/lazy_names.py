"""Module attributes made on first use (PEP 562), for the generated models.

Creating a pydantic model class costs about half a millisecond (its fields are collected and
checked even when its validator is deferred), and the generated ``models.py`` has some 170 of
them, while a turn uses a third. So each model, union and method table there is written inside a
factory function, and :class:`LazyNames` makes a name the first time it is looked up:
``from acp_notebook.protocol.models import X``, ``models.X`` and pickling all go through the
module's ``__getattr__``.

A factory's parameters are the names its body uses (the generator knows them): they are made
first, then passed in. What a factory returns is stored in the module's globals, so the next
lookup is a plain attribute, and anything that reads the module's ``__dict__`` (pydantic
resolving a reference, ``vars()``) finds every name made so far. A class made inside a function
would be called ``_X.<locals>.X``: its ``__qualname__`` is set back to ``X``, so repr, error
messages and pickling are those of a module-level class.

:func:`imported_on_first_use` is the simpler kind, for a package whose names live in its
modules (``acp_notebook.client``, ``acp_notebook.ui``): a name's module is imported when the
name is first asked for.
"""

import threading
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any, TypeVar

__all__ = ["LazyNames", "imported_on_first_use"]

_F = TypeVar("_F", bound=Callable[..., Any])


class LazyNames:
    """The names of one module made on first use by the factories registered with
    :meth:`factory`; :meth:`getattr` and :meth:`dir` are the module's ``__getattr__`` and
    ``__dir__``."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self._namespace = namespace
        self._factories: dict[str, Callable[..., Any]] = {}
        # The agent loop and the kernel's main thread may look the same name up at once: two
        # classes for one name would make isinstance() fail. Re-entrant: a name makes its
        # dependencies first.
        self._lock = threading.RLock()

    def factory(self, make: _F) -> _F:
        """Register ``_X`` as the factory of the name ``X`` (a decorator)."""
        self._factories[make.__name__[1:]] = make
        return make

    @property
    def names(self) -> frozenset[str]:
        """Every name a factory makes, made yet or not."""
        return frozenset(self._factories)

    def getattr(self, name: str) -> Any:
        """The module's ``__getattr__``: make ``name`` (after what it uses) and keep it."""
        make = self._factories.get(name)
        if make is None:
            module = self._namespace.get("__name__")
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        with self._lock:
            if name in self._namespace:  # made by another thread meanwhile
                return self._namespace[name]
            code = make.__code__
            value = make(*(self._get(dep) for dep in code.co_varnames[: code.co_argcount]))
            if isinstance(value, type):
                value.__qualname__ = name
            self._namespace[name] = value
            return value

    def _get(self, name: str) -> Any:
        return self._namespace[name] if name in self._namespace else self.getattr(name)

    def dir(self) -> list[str]:
        """The module's ``__dir__``: the names made so far and those not made yet."""
        return sorted({*self._namespace, *self._factories})


def imported_on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package`` (PEP 562): a name in ``homes`` is read from its
    module (relative to ``package``), imported when the name is first asked for."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(home, package), name)

    return __getattr__
