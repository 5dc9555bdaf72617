"""The live view of one prompt turn: header, one child view per transcript entry of the
turn, footer, and a Cancel button that works for the whole turn.

Threads (docs/jupyter-notes.md): the view may be built on the main thread, but
once :meth:`TurnView.bind` is called every trait write happens on the agent loop
thread (``refresh``, ``finish``, and the functions that clicks post). Click handlers
run on whatever thread the kernel uses for comm messages; they only ``post`` to the
loop and do nothing once the view is finished.

Updates are coalesced: with a ``schedule_later`` the view follows the transcript by
itself, at most one refresh per ``interval``, and at once when a permission request
appears (it must never wait to be seen).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any, Literal

import ipywidgets as w
from ipywidgets.widgets.widget_float import ProgressStyle

from ..client.transcript import Transcript
from . import layouts
from .attention import CANCEL_CLASS, TURN_CLASS
from .coalesce import DEFAULT_INTERVAL, Coalescer, ScheduleLater
from .context import SessionLike, TurnLike, ViewContext
from .elicitation import ElicitationForm
from .entry_views import WIDGETS, ChildView, EntryViews, Making
from .markdown import MARKDOWN_SHEET
from .message import MessageView, ThoughtView
from .permission import PermissionPrompt
from .request import Post, safe_post
from .segments import close_tree, flat_html
from .style import BORDER
from .toolcall import ToolCallCard
from .turn_status import (
    FAILED,
    STARTING,
    footer_html,
    status_html,
    title_html,
    turn_status,
    usage_html,
)

log = logging.getLogger(__name__)


def _ruled(side: Literal["top", "bottom"], **traits: str) -> dict[str, str]:
    """The layout traits of a box set off from the turn's entries by a thin rule on
    ``side``."""
    gap = "0 0 4px 0" if side == "bottom" else "4px 0 0 0"
    return {"padding": gap, "margin": gap, f"border_{side}": f"1px solid {BORDER}", **traits}


def _sheet() -> w.HTML:
    """The stylesheet of the streamed Markdown: one model for every turn of the kernel,
    shown (hidden: a <style> applies wherever it sits) in each."""
    return layouts.html(MARKDOWN_SHEET, display="none")


class TurnView:
    """The whole live view of one prompt turn. See the module docstring for threads."""

    def __init__(
        self,
        agent_label: str = "",
        session_label: str = "",
        *,
        post: Post,
        schedule_later: ScheduleLater | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        self.agent_label = agent_label
        self.session_label = session_label
        #: Called (on the loop thread, via ``post``) when Cancel is pressed. It may
        #: return an awaitable (``PromptTurn.cancel``): it is then scheduled on the loop.
        self.on_cancel: Callable[[], Any] | None = None

        self._session: SessionLike | None = None
        self._turn: TurnLike | None = None
        self._ctx = ViewContext(post=post)
        self._finished = False
        self._cancel_pressed = False
        self._error: str | None = None
        self._custom_status = ""
        self._shown: dict[str, Any] = {}
        self._seen_version = -1
        self._requests_seen = 0
        self._requests_at_change = 0
        self._coalescer = (
            Coalescer(schedule_later, interval, callback=self.refresh)
            if schedule_later is not None
            else None
        )
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        #: Entry views in order, and tool call cards by tool call id.
        self._entries = EntryViews()
        self.views: list[ChildView] = self._entries.views
        self.cards: dict[str, ToolCallCard] = self._entries.cards
        #: Prompts whose tool call belongs to an earlier turn (shown here, never lost).
        self.orphan_prompts: list[PermissionPrompt] = []
        #: The elicitation forms of this turn.
        self.forms: list[ElicitationForm] = self._entries.forms
        self._elicitations_at_change = 0

        self._title = flat_html()
        self._status = flat_html()
        self.cancel_button = layouts.button(
            "Cancel",
            icon="stop",
            tooltip="Cancel this turn: sends session/cancel and answers pending permission "
            "requests 'cancelled'",
            traits={"width": "auto", "flex": "none"},
        )
        self.cancel_button.on_click(lambda _button: self.cancel())
        self.cancel_button.add_class(CANCEL_CLASS)  # the card's ``c`` key (attention.py)
        header = layouts.hbox(
            [layouts.vbox([self._title, self._status], flex="1 1 auto"), self.cancel_button],
            **_ruled("bottom", justify_content="space-between", align_items="center"),
        )
        self._body = self._entries.body
        #: Made when a request of an earlier turn's tool call first needs showing here.
        self._orphans: w.VBox | None = None
        #: The context window gauge, made when the agent first reports its usage.
        self._gauge: w.FloatProgress | None = None
        self._usage = flat_html()
        self._footer = flat_html()
        self._usage_row = layouts.hbox([self._usage], align_items="center")
        # In the view once it has something to say (no double rule).
        self._footer_box = layouts.vbox([self._usage_row, self._footer], **_ruled("top"))
        sheet = layouts.shared_widget("markdown-sheet", _sheet)
        self.widget = layouts.vbox(
            [sheet, header, self._body.widget], width="100%", padding="2px 4px"
        )
        self.widget.add_class(TURN_CLASS)
        self._show_title()
        self._show_status(STARTING)

    # ------------------------------------------------------------------ reading

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def status(self) -> str:
        """The status line as plain text ("Running", "Waiting for permission", …)."""
        return str(self._shown.get("status", ""))

    @property
    def footer(self) -> str:
        return self._footer.value

    @property
    def usage_text(self) -> str:
        return self._usage.value

    @property
    def gauge(self) -> w.FloatProgress | None:
        return self._gauge

    @property
    def prompts(self) -> list[PermissionPrompt]:
        """Every permission prompt shown, in the order they appeared per card."""
        found = [p for card in self.cards.values() for p in card.prompts]
        return found + self.orphan_prompts

    @property
    def pending_prompts(self) -> list[PermissionPrompt]:
        return [p for p in self.prompts if p.pending]

    # ------------------------------------------------------------------ lifecycle

    def set_status(self, text: str) -> None:
        """A status to show until the turn is bound ("Starting agent…")."""
        self._custom_status = text
        if self._turn is None:
            self._show_status(text)

    def bind(self, session: SessionLike, turn: TurnLike) -> None:
        """Follow ``turn`` of ``session`` from now on (call on the agent loop thread)."""
        self._session = session
        self._turn = turn
        self._ctx = ViewContext(
            post=self._ctx.post,
            cwd=session.transcript.cwd,
            terminals=session.terminal_view,
            broker=session.permissions,
        )
        # Requests decided before this turn belong to other cells.
        self._requests_seen = len(session.permissions.requests)
        self._requests_at_change = self._requests_seen
        self._elicitations_at_change = len(session.elicitations.requests)
        if self._unsubscribe is not None:  # a turn sent again (after a login)
            self._unsubscribe()
        if self._coalescer is not None:
            self._unsubscribe = session.transcript.subscribe(self._on_change)
        self.refresh()

    def _on_change(self, _transcript: Transcript) -> None:
        """Transcript listener (loop thread): called for every chunk, so only pokes."""
        if self._finished or self._coalescer is None or self._session is None:
            return
        self._coalescer.poke()
        requests = len(self._session.permissions.requests)
        elicitations = len(self._session.elicitations.requests)
        if (requests, elicitations) != (self._requests_at_change, self._elicitations_at_change):
            # A new permission request or question: show it now, not in 75 ms (nor never).
            self._requests_at_change = requests
            self._elicitations_at_change = elicitations
            self._coalescer.flush()

    def flush(self) -> None:
        """Run a pending coalesced refresh now (before a prompt, at the end)."""
        if self._coalescer is not None:
            self._coalescer.flush()

    def refresh(self) -> bool:
        """Reconcile the widgets with the transcript (loop thread). Nothing is written
        when nothing changed. True if anything was updated."""
        session, turn = self._session, self._turn
        if session is None or turn is None:
            return self._show_status(self._custom_status or STARTING)
        transcript = session.transcript
        status = self._compute_status()
        if transcript.version == self._seen_version and status == self._shown.get("status"):
            return False
        self._seen_version = transcript.version
        changed = self._show_status(status)
        changed = self._show_title() or changed
        changed = self._sync_entries() or changed
        changed = self._sync_orphans() or changed
        changed = self._show_usage() or changed
        changed = self._show_footer() or changed
        self._show_footer_box()
        return changed

    def _show_footer_box(self) -> None:
        """The footer under the entries (last) while it says something."""
        footer = self._footer_box
        shown = bool(self._footer.value or self._usage.value)
        if shown != (footer in self.widget.children):
            rest = tuple(child for child in self.widget.children if child is not footer)
            self.widget.children = (*rest, footer) if shown else rest

    def finish(self) -> None:
        """The turn is over: last refresh, Cancel and every pending button disabled, stop
        reason, duration and usage shown. Idempotent."""
        if self._finished:
            return
        self._finished = True
        if self._coalescer is not None:
            self._coalescer.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._seen_version = -1  # force
        self.refresh()
        for card in self.cards.values():
            card.close()
        for prompt in self.orphan_prompts:
            prompt.close()
        for form in self.forms:
            form.close()
        self.cancel_button.disabled = True
        self._show_footer()
        self._show_footer_box()

    def fail(self, message: str) -> None:
        """The turn could not run at all (the agent did not start, …): say so, in one
        sentence that says what to do, and end the view."""
        self._error = message
        self._custom_status = FAILED
        self.finish()
        if self._turn is None:
            self._show_status(FAILED)
            self._show_footer()
            self._show_footer_box()

    def close(self) -> None:
        """Close every widget model (their comms), e.g. once the cell shows the static
        transcript instead; the view cannot be used afterwards."""
        self.finish()
        close_tree(self.widget)
        close_tree(self._footer_box)  # in the tree only while it says something

    # ------------------------------------------------------------------ user actions

    def cancel(self) -> None:
        """What pressing Cancel does, from any thread: post ``on_cancel`` to the loop."""
        if self._finished:
            return
        safe_post(self._ctx.post, self._cancel_on_loop)

    def _cancel_on_loop(self) -> None:
        callback = self.on_cancel
        if self._finished or callback is None:
            return
        self._cancel_pressed = True
        self._show_status(self._compute_status())  # "Cancelling…" at once
        try:
            result = callback()
        except Exception:
            log.exception("on_cancel failed")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)  # keep a reference until it is done
            task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ parts

    def _compute_status(self) -> str:
        return turn_status(
            self._session,
            self._turn,
            error=self._error,
            cancel_pressed=self._cancel_pressed,
            waiting=self._custom_status,
        )

    def _show(self, part: str, widget: w.HTML, html: str) -> bool:
        """Write ``html`` into ``widget`` unless it already shows it."""
        if self._shown.get(part) == html:
            return False
        self._shown[part] = html
        widget.value = html
        return True

    def _show_status(self, status: str) -> bool:
        if self._shown.get("status") == status:
            return False
        self._shown["status"] = status
        self._status.value = status_html(status)
        return True

    def _show_title(self) -> bool:
        transcript = self._session.transcript if self._session is not None else None
        record = self._turn.record if self._turn is not None else None
        sandbox = self._session.sandbox if self._session is not None else ""
        html = title_html(self.agent_label, self.session_label, transcript, record, sandbox)
        return self._show("title", self._title, html)

    def _sync_entries(self) -> bool:
        assert self._session is not None and self._turn is not None
        record = self._turn.record
        if record is None:
            return False
        running = self._turn.state == "running" and not self._finished
        making = Making(self._ctx, self._session, record)
        changed = self._entries.sync(
            self._session.transcript, record.index, lambda e: WIDGETS(making, e, running)
        )
        note = self._entries.note
        if note is not None and note not in self.widget.children:  # above the entries
            sheet, header, *rest = self.widget.children
            self.widget.children = (sheet, header, note, *rest)
        last = self.views[-1] if self.views else None
        for view in self.views:
            changed = view.refresh(active=running and view is last) or changed
        if isinstance(last, MessageView | ThoughtView) and last.withheld:
            # Text the wire budget put off: refresh again next tick, even if nothing new
            # arrives by then.
            self._seen_version = -1
            if self._coalescer is not None:
                self._coalescer.poke()
        return changed

    def _sync_orphans(self) -> bool:
        """A request whose tool call lives in an earlier turn's card would be invisible
        there (that cell is static by now): show it in this turn instead."""
        assert self._session is not None and self._turn is not None
        requests = self._session.permissions.requests
        changed = False
        if self._turn.state != "running":
            # Requests while this turn waits in the queue are the running turn's.
            self._requests_seen = len(requests)
        elif len(requests) != self._requests_seen:
            for key in list(requests)[self._requests_seen :]:
                request = requests[key]
                if request.tool_call_id in self.cards:
                    continue
                call = self._session.transcript.tool_calls.get(request.tool_call_id)
                if call is None:
                    continue
                prompt = PermissionPrompt(
                    request, call, broker=self._ctx.broker, post=self._ctx.post, cwd=self._ctx.cwd
                )
                self.orphan_prompts.append(prompt)
                changed = True
            self._requests_seen = len(requests)
            if changed:
                self._show_orphans()
        for prompt in self.orphan_prompts:
            changed = prompt.refresh() or changed
        return changed

    def _show_orphans(self) -> None:
        """The orphan prompts, in a box under the entries (made with the first)."""
        prompts = tuple(p.widget for p in self.orphan_prompts)
        if self._orphans is not None:
            self._orphans.children = prompts
            return
        self._orphans = layouts.vbox(prompts, width="100%")
        children = list(self.widget.children)
        children.insert(children.index(self._body.widget) + 1, self._orphans)
        self.widget.children = tuple(children)

    def _show_usage(self) -> bool:
        assert self._session is not None
        transcript = self._session.transcript
        usage = transcript.usage
        if usage is self._shown.get("usage", False):
            return False
        self._shown["usage"] = usage
        if usage is not None and usage.used is not None and usage.size:
            fraction = usage.used / usage.size
            style = "danger" if fraction > 0.95 else "warning" if fraction > 0.8 else ""
            used, size = float(min(usage.used, usage.size)), float(usage.size)
            if self._gauge is None:
                self._gauge = w.FloatProgress(
                    value=used,
                    min=0.0,
                    max=size,
                    bar_style=style,
                    layout=layouts.layout(width="140px"),
                    style=layouts.style(ProgressStyle),
                )
                self._usage_row.children = (self._gauge, self._usage)
            else:
                self._gauge.max = size
                self._gauge.value = used
                self._gauge.bar_style = style
        self._usage.value = usage_html(transcript)
        return True

    def _show_footer(self) -> bool:
        return self._show(
            "footer", self._footer, footer_html(self._session, self._turn, self._error)
        )
