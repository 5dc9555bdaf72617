"""What the views of the agent's questions share (permission prompts, elicitation
forms): the request shown, how a click reaches the agent loop (``post``), a question
line, a decision line, the framed box."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import ipywidgets as w

from ..client.pending import PendingRequest
from . import layouts
from .context import Post
from .style import WARN

log = logging.getLogger(__name__)


def safe_post(post: Post, fn: Callable[[], Any]) -> bool:
    """Post ``fn``; False (and nothing else) when the loop is gone."""
    try:
        post(fn)
    except RuntimeError:  # "Event loop is closed": the session ended under the click
        log.debug("click ignored: the agent loop is gone")
        return False
    return True


RequestT = TypeVar("RequestT", bound=PendingRequest)
BrokerT = TypeVar("BrokerT")


class RequestView(Generic[RequestT, BrokerT]):
    """Base of the views of one pending request; subclasses build the controls."""

    _question: w.HTML
    _decision: w.HTML

    def __init__(self, request: RequestT, broker: BrokerT | None, post: Post) -> None:
        #: The broker's request (held by reference: its state is what the view shows).
        self.request = request
        #: Decides the request when a control is used (None: the view only shows it).
        self._broker = broker
        #: Runs a function on the agent loop thread; the only thing click handlers call.
        self._post = post
        self._closed = False

    def _frame(self, children: Sequence[w.Widget]) -> w.VBox:
        """The box around a question: a warning-coloured bar on its left."""
        return layouts.vbox(
            children, border_left=f"3px solid {WARN}", padding="4px 8px", margin="6px 0 2px 0"
        )

    @property
    def key(self) -> str:
        return str(self.request.key)

    @property
    def pending(self) -> bool:
        return bool(self.request.pending) and not self._closed

    @property
    def question(self) -> str:
        return str(self._question.value)

    @property
    def decision(self) -> str:
        return str(self._decision.value)
