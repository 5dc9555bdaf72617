"""ipywidgets views of transcript state (see ARCHITECTURE.md, ``ui/``).

Views read :mod:`acp_notebook.client` state and never parse protocol messages; what a
piece of content shows comes from :mod:`acp_notebook.client.display`, as in the saved
transcript. One module per concept: :mod:`.turn` (the whole turn) and
:mod:`.turn_status` (its status, title and footer lines), :mod:`.message`,
:mod:`.content`, :mod:`.toolcall`, :mod:`.diff`, :mod:`.terminal`, :mod:`.permission`
and :mod:`.elicitation` (on :mod:`.request`), :mod:`.plan`; :mod:`.markdown` renders the
agent's text; :mod:`.coalesce` limits how often widgets are updated. The HTML the live
views and the saved transcript share is in widget-free modules (``message_html``,
``toolcall_html``, ``notices``, ``sent``, ``diff``, ``plan``, ``terminal``, ``content``,
``markdown``, ``style``); the widget modules import from them, never the reverse.
"""

from __future__ import annotations

from ..protocol.lazy_names import imported_on_first_use

#: Where each name lives. Imported when first asked for: the saved transcript's renderers
#: (``saved_transcript.py`` and the widget-free modules it reads: ``transcript_html``,
#: ``content``, ``markdown``, ``style``, ``message_html``, ``toolcall_html``, ``notices``,
#: ``sent``, ``diff``, ``plan``, ``terminal``) are in this package, and a headless turn
#: uses them without importing ipywidgets.
_LAZY = {
    "Coalescer": ".coalesce",
    "DiffView": ".toolcall",
    "MessageView": ".message",
    "PermissionPrompt": ".permission",
    "PlanWidget": ".entry_views",
    "TerminalOutputView": ".toolcall",
    "ThoughtView": ".message",
    "ToolCallCard": ".toolcall",
    "TurnView": ".turn",
    "render_markdown": ".markdown",
    "split_frozen": ".markdown",
}


__getattr__ = imported_on_first_use(__name__, _LAZY)


__all__ = sorted(_LAZY)
