"""The protocol lab: drive an agent one message at a time, and grade it.

* :mod:`.stepper` — :func:`connect` / :class:`Stepper`: send ``initialize``, ``session/new``,
  ``session/prompt``, … by hand, each checked and explained first, every message shown;
* :mod:`.report` — the agent report card (``acp-notebook doctor --report``,
  ``acp.report(...)``).

Above the client and the agent presets (it starts agents by preset name), below ui/ and
notebook/: nothing here imports Jupyter except :mod:`.display`, imported lazily when a lab
runs in a notebook.
"""

from __future__ import annotations

from .explain import StepError
from .messages import LabMessage
from .requests import AgentRequest
from .stepper import Stepper, connect

__all__ = ["AgentRequest", "LabMessage", "StepError", "Stepper", "connect"]
