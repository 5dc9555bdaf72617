"""What the views of the agent's questions share (permission prompts, elicitation
forms): the request shown, a question line, a decision line, the framed box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from .style import WARN


class RequestView:
    """Base of the views of one pending request; subclasses build the controls."""

    request: Any
    _closed: bool
    _question: w.HTML
    _decision: w.HTML

    def _frame(self, children: Sequence[w.Widget]) -> w.VBox:
        """The box around a question: a warning-coloured bar on its left."""
        return w.VBox(
            list(children),
            layout=w.Layout(
                border_left=f"3px solid {WARN}", padding="4px 8px", margin="6px 0 2px 0"
            ),
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
