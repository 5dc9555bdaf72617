"""Values shown as pictures: matplotlib figures and axes, and any object with a PNG
representation (``_repr_png_``, or ``image/png`` in ``_repr_mimebundle_``).

Representation methods are looked up on the type, never through ``__getattr__``: a
proxy object that answers every attribute name is not a picture.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import io
from typing import Any

from .kinds import Summariser, is_instance
from .model import Limits, Summary, finish
from .reprs import BoundedRepr

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def as_png(data: object) -> bytes | None:
    """PNG bytes from what a representation method returned (bytes or base64 text)."""
    if isinstance(data, tuple) and data:  # (data, metadata)
        data = data[0]
    if isinstance(data, str):
        try:
            data = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            return None
    if isinstance(data, (bytes, bytearray)) and bytes(data[:8]) == PNG_SIGNATURE:
        return bytes(data)
    return None


def _method(value: object, name: str) -> Any:
    return inspect.getattr_static(type(value), name, None)


def _figure_of(value: object) -> Any:
    """The matplotlib figure a Figure or Axes value draws, else None."""
    if is_instance(value, "matplotlib.figure", "Figure"):
        return value
    if is_instance(value, "matplotlib.axes", "Axes"):
        return value.figure  # type: ignore[attr-defined]
    return None


def _is_picture(value: object) -> bool:
    if isinstance(value, type):
        return False
    return (
        _figure_of(value) is not None
        or _method(value, "_repr_png_") is not None
        or _method(value, "_repr_mimebundle_") is not None
    )


def render_png(value: object) -> bytes | None:
    """The value as PNG bytes, or None when it has no PNG representation."""
    figure = _figure_of(value)
    if figure is not None:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
    if _method(value, "_repr_png_") is not None:
        png = as_png(value._repr_png_())  # type: ignore[attr-defined]
        if png is not None:
            return png
    if _method(value, "_repr_mimebundle_") is not None:
        bundle = value._repr_mimebundle_(include=["image/png"])  # type: ignore[attr-defined]
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        if isinstance(bundle, dict):
            return as_png(bundle.get("image/png"))
    return None


def _figure_label(figure: Any) -> str:
    width, height = (int(x) for x in figure.get_size_inches() * figure.dpi)
    return f"Figure {width}×{height} px, {len(figure.axes)} axes"


def _label(value: object) -> str:
    """ "Figure 640×480 px, 1 axes"; an Axes is named as one (its methods are not a
    Figure's), with the figure it draws in: "Axes 'trend' of a Figure 640×480 px, 1 axes"."""
    figure = _figure_of(value)
    if figure is None:
        return type(value).__name__
    if figure is value:
        return _figure_label(figure)
    title = value.get_title()  # type: ignore[attr-defined]
    named = f"Axes {title!r}" if title else "Axes"
    return f"{named} of a {_figure_label(figure)}"


def _describe_figure(figure: Any) -> list[str]:
    lines = []
    for index, axes in enumerate(figure.axes[:10]):
        described = [
            f"{what} {text!r}"
            for what, text in (
                ("title", axes.get_title()),
                ("x label", axes.get_xlabel()),
                ("y label", axes.get_ylabel()),
            )
            if text
        ]
        described.append(f"{len(axes.lines)} lines, {len(axes.collections)} collections")
        lines.append(f"- axes {index + 1}: " + ", ".join(described))
    return lines


def _summary(value: object, name: str, limits: Limits) -> Summary:
    notes: list[str] = []
    try:
        png = render_png(value)
    except Exception as exc:
        png = None
        notes.append(f"rendering it as PNG failed ({type(exc).__name__})")
    if png is not None and len(png) > limits.image_bytes:
        notes.append(
            f"its PNG of {len(png):,} bytes is over {limits.image_bytes:,} and was left out"
        )
        png = None
    figure = _figure_of(value)
    if figure is not None:
        drawn = "image attached" if figure is value else "its figure attached as an image"
        text = "\n".join(
            [f"matplotlib {_label(value)} `{name}` ({drawn})", *_describe_figure(figure)]
        )
    else:
        bounded = BoundedRepr(limits)
        text = bounded(value)
        notes.extend(bounded.notes)
    return finish(name, _label(value), text, limits, png=png, notes=notes)


IMAGES = Summariser("image", _is_picture, _label, _summary)
