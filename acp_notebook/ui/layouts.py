"""Layout and style models shared by every view in the kernel.

Every ``Layout`` and every style is a widget model of its own: about 1.07 KB of
``comm_open`` for a ``Layout``, 0.4-0.5 KB for a style, and a ``comm_close`` when it goes.
A turn's view gave each of its widgets its own (37 ``Layout`` models a turn, two thirds of
a 120 KB reply's bytes once the reply itself was sent once). Here a layout is one model
per set of traits, and a style one model per kind, opened the first time a view needs it
and referred to by every view after that: the frontend's widget manager holds every model
of the kernel, so a later view costs only the model id.

A shared model is never changed (a change would restyle every view that uses it: setting
a trait raises) and never closed by a view (:func:`~.segments.close_tree` skips it). A
layout that a view toggles (``display``, a border's colour) stays the widget's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import ipywidgets as w
from ipywidgets.widgets.widget_button import ButtonStyle
from ipywidgets.widgets.widget_string import HTMLStyle

_Shared = TypeVar("_Shared", bound=w.Widget)
_Style = TypeVar("_Style", bound=w.Widget)


class _Frozen:
    """Refuses to change a synced trait once made (see the module docstring)."""

    _frozen = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen and name in getattr(self, "keys", ()):
            raise AttributeError(
                f"{type(self).__name__} is shared by many views and never changes: "
                f"give the widget a {type(self).__mro__[2].__name__} of its own to change {name!r}"
            )
        super().__setattr__(name, value)


class SharedLayout(_Frozen, w.Layout):
    """A ``Layout`` shared by many widgets."""


_models: dict[tuple[Any, ...], w.Widget] = {}
_ids: set[int] = set()  # of the models above, for :func:`is_shared`
_lock = threading.RLock()  # views are built on the main thread and on the agent loop; a
# shared widget is made of shared parts


def _shared(key: tuple[Any, ...], make: Callable[[], _Shared]) -> _Shared:
    with _lock:
        model = _models.get(key)
        if model is None or model.comm is None:  # closed (``Widget.close_all``): anew
            model = make()
            if isinstance(model, _Frozen):
                model._frozen = True
            if key in _models:
                _ids.discard(id(_models[key]))
            _models[key] = model
            _ids.add(id(model))
        return model


def layout(**traits: str) -> w.Layout:
    """The shared ``Layout`` with these traits (the rest at their defaults)."""
    return _shared(("layout", *sorted(traits.items())), lambda: SharedLayout(**traits))


def style(kind: type[_Style]) -> _Style:
    """The shared style model of ``kind`` (``HTMLStyle``, ``ButtonStyle``, …) at its
    defaults."""
    return _shared(("style", kind), lambda: type(f"Shared{kind.__name__}", (_Frozen, kind), {})())


def shared_widget(key: str, make: Callable[[], _Shared]) -> _Shared:
    """A widget shown by many views (the Markdown stylesheet): made once, never closed
    by a view."""
    return _shared(("widget", key), make)


def is_shared(widget: w.Widget) -> bool:
    return id(widget) in _ids


def shared_ids() -> set[str]:
    """The model ids of every shared model made so far."""
    with _lock:
        return {model.model_id for model in _models.values()}


def html(value: str = "", **traits: str) -> w.HTML:
    """An ``HTML`` widget with a shared layout of ``traits`` and the shared style."""
    return w.HTML(value=value, layout=layout(**traits), style=style(HTMLStyle))


def vbox(children: Sequence[w.Widget] = (), **traits: str) -> w.VBox:
    return w.VBox(children, layout=layout(**traits))


def hbox(children: Sequence[w.Widget] = (), **traits: str) -> w.HBox:
    return w.HBox(children, layout=layout(**traits))


def button(description: str, *, traits: dict[str, str] | None = None, **kwargs: Any) -> w.Button:
    """A ``Button`` with a shared layout of ``traits`` and the shared style."""
    return w.Button(
        description=description, layout=layout(**(traits or {})), style=style(ButtonStyle), **kwargs
    )
