"""A `session/request_permission` prompt, shown inside its tool call's card.

It says exactly what is being approved (title, kind, the command or the files; the
diffs and raw input are above it in the card), then — when the tool call looks risky —
a warning line with the reasons (``danger.py``: red for danger, amber for caution), then
for a command or a write whether it runs confined (the turn header's words; for
``run_code``, that the kernel is not confined), then one button per option, labelled with the option's ``name`` exactly as the agent sent it
and coloured by its ``kind``.
After the decision every button is disabled and a line says what was chosen and by
whom — the same words as the saved transcript (``PermissionRequest.describe()``).
An "always" option on a call rated risky binds only after a second question in the card
("Allow every future execute call …? Yes / No", ``client/asking.py``); No returns to the
options.

Clicks may arrive on any thread: :meth:`PermissionPrompt.choose` only posts the
decision to the agent loop, which asks the broker and then redraws the prompt.
"""

from __future__ import annotations

import ipywidgets as w

from ..client.asking import always_question
from ..client.formatting import short_path
from ..client.permission_request import PermissionRequest
from ..client.permissions import PermissionBroker
from ..client.toolcall import EDIT_KINDS, ToolCallState
from . import layouts
from .attention import BEACON, CARD_CLASS, OPTION_CLASS, REJECT_CLASS, keys_hint
from .markdown import inline_markdown
from .request import Post, RequestView, safe_post
from .style import FG, MUTED, SMALL_SIZE, UI_SIZE, code, esc, span
from .toolcall_html import decision_line, sandbox_line, warning_line

#: allow_always is broader than it looks, so it is yellow, not green.
BUTTON_STYLES = {
    "allow_once": "success",
    "allow_always": "warning",
    "reject_once": "danger",
    "reject_always": "danger",
}
KIND_HINTS = {
    "allow_once": "allow this action once",
    "allow_always": "allow this and later actions like it without asking",
    "reject_once": "reject this action",
    "reject_always": "reject this and later actions like it without asking",
}

#: The layout of an option button (shared: :mod:`.layouts`).
BUTTON = {"width": "auto", "margin": "2px 6px 2px 0"}


def button_style(kind: str) -> str:
    return BUTTON_STYLES.get(kind, "")


def tooltip(kind: str) -> str:
    hint = KIND_HINTS.get(kind)
    return f"{kind}: {hint}" if hint else (kind or "option")


def what_is_approved(call: ToolCallState, cwd: str | None) -> str:
    """One HTML line: what the agent asks to do, in the terms a user checks — the same
    command, files and URL the rules and the risk rating read (``ToolCallState``)."""
    title = inline_markdown(call.shown_title) if call.shown_title else esc(call.tool_call_id)
    head = f"<b>{title}</b> " + span(esc(f"· {call.kind}"), f"color: {MUTED}")
    command = call.command
    if command is not None:
        return f"{head}<br>Run {code(command)}"
    diffs = call.diffs
    if call.kind in EDIT_KINDS or diffs:
        names = list(dict.fromkeys(short_path(p, cwd) for p in call.paths))
        verb = {"delete": "Delete", "move": "Move"}.get(call.kind, "Edit")
        target = ", ".join(code(n) for n in names) if names else "files"
        see = " — see the diffs above" if diffs else ""
        return f"{head}<br>{verb} {target}{see}"
    url = call.url
    if url is not None:
        return f"{head}<br>Fetch {code(url)}"
    if call.locations:
        located = ", ".join(code(short_path(loc.path, cwd)) for loc in call.locations)
        return f"{head}<br>On {located}"
    return head


class PermissionPrompt(RequestView[PermissionRequest, PermissionBroker]):
    """The question, one button per option, and the decision once there is one."""

    def __init__(
        self,
        request: PermissionRequest,
        call: ToolCallState,
        *,
        broker: PermissionBroker | None,
        post: Post,
        cwd: str | None = None,
    ) -> None:
        super().__init__(request, broker, post)
        self.call = call
        self._cwd = cwd
        self.buttons: dict[str, w.Button] = {}
        for option in request.options:
            button = layouts.button(
                option.name,
                button_style=button_style(option.kind),
                tooltip=tooltip(option.kind),
                traits=BUTTON,
            )
            button.on_click(lambda _button, option_id=option.option_id: self.choose(option_id))
            button.add_class(OPTION_CLASS)
            if option.kind == "reject_once":
                button.add_class(REJECT_CLASS)
            self.buttons[option.option_id] = button
        self._question = layouts.html(margin="0")
        self._warning = layouts.html(margin="0")
        self._sandbox = layouts.html(margin="0")
        #: The "always" option waiting for the second question's answer (loop thread).
        self._confirming: str | None = None
        self._again = layouts.html(margin="0")
        self.yes = layouts.button("Yes, allow always", button_style="warning", traits=BUTTON)
        self.no = layouts.button("No", traits=BUTTON)
        self.yes.on_click(lambda _button: safe_post(self._post, self._confirmed))
        self.no.on_click(lambda _button: safe_post(self._post, self._declined))
        # While the question is on, the options are disabled: keys 1 and 2 (and Esc, as
        # for a reject) answer it (``attention.py`` presses the enabled option buttons).
        self.yes.add_class(OPTION_CLASS)
        self.no.add_class(OPTION_CLASS)
        self.no.add_class(REJECT_CLASS)
        self._second = w.VBox(
            [self._again, layouts.hbox([self.yes, self.no])],
            layout=w.Layout(display="none", margin="0"),  # its own: toggled
        )
        self._decision = layouts.html(margin="0")
        #: While the request waits: the script that brings the card into sight and
        #: answers keys (``attention.py``), and the line that names the keys.
        self._attention = layouts.html(margin="0")
        self.widget = self._frame(
            [
                self._question,
                self._warning,
                self._sandbox,
                layouts.hbox(list(self.buttons.values()), flex_flow="row wrap"),
                self._second,
                self._decision,
                self._attention,
            ]
        )
        self.widget.add_class(CARD_CLASS)
        self._signature: tuple[object, ...] | None = None
        self.refresh()

    @property
    def warning(self) -> str:
        """The risk warning above the buttons (HTML; "" when nothing risky was found)."""
        return str(self._warning.value)

    @property
    def sandbox(self) -> str:
        """Whether what is asked runs confined, above the buttons (HTML; "" when the
        request is about neither a command nor a write)."""
        return str(self._sandbox.value)

    # ------------------------------------------------------------------ user actions

    def choose(self, option_id: str) -> None:
        """What pressing the option's button does, from any thread: post the decision."""
        if self._closed:
            return
        if self.request.option(option_id) is None:
            offered = ", ".join(o.option_id for o in self.request.options)
            raise ValueError(
                f"The agent did not offer option {option_id!r}; it offered: {offered}."
            )
        safe_post(self._post, lambda: self._picked(option_id))

    @property
    def second_question(self) -> str | None:
        """The second question on screen (before an "always" binds), if one is."""
        return str(self._again.value) if self._confirming is not None else None

    def _picked(self, option_id: str) -> None:  # agent loop thread
        option = self.request.option(option_id)
        if self._closed or option is None:
            return
        if always_question(self.request, option) is not None:
            self._confirming = option_id  # asked again first (refresh shows it)
            self.refresh()
            return
        self._decide(option_id)

    def _confirmed(self) -> None:  # agent loop thread
        option_id, self._confirming = self._confirming, None
        if option_id is not None:
            self._decide(option_id)

    def _declined(self) -> None:  # agent loop thread
        self._confirming = None
        self.refresh()

    def _decide(self, option_id: str) -> None:  # agent loop thread
        if self._closed:
            return
        if self._broker is not None:
            self._broker.choose(self.request.key, option_id, by="user")
        self.refresh()

    # ------------------------------------------------------------------ loop thread

    def refresh(self) -> bool:
        call = self.call
        request = self.request
        # Holding the values (not their ids) keeps this exact; an unchanged call compares
        # by identity, element by element, so this stays cheap.
        signature = (
            call.title,
            call.kind,
            call.raw_input,
            call.content,
            call.locations,
            request.state,
            request.decided_by,
            request.note,
            request.danger,
            request.unasked,
            self._closed,
            self._confirming,
        )
        if signature == self._signature:
            return False
        self._signature = signature
        # The client's own question (guard.py): the agent went ahead without asking.
        head = (
            "🛡️ <b>The agent did not ask</b>"
            if request.unasked
            else "🔐 <b>Permission requested</b>"
        )
        question = (
            f'<div style="font-size: {UI_SIZE}; line-height: 1.6; color: {FG}">'
            f"{head}: {what_is_approved(call, self._cwd)}</div>"
        )
        if question != self._question.value:
            self._question.value = question
        warning = warning_line(request.danger)
        if warning != self._warning.value:
            self._warning.value = warning
        sandbox = sandbox_line(request)
        if sandbox != self._sandbox.value:
            self._sandbox.value = sandbox
        decided = not request.pending
        if decided or self._closed:
            self._confirming = None
        option = request.option(self._confirming) if self._confirming is not None else None
        again = always_question(request, option) if option is not None else None
        self._again.value = (
            f'<div style="font-size: {UI_SIZE}; color: {FG}">{esc(again)}</div>' if again else ""
        )
        self._second.layout.display = "flex" if again else "none"
        self.yes.disabled = self.no.disabled = again is None
        for option_id, button in self.buttons.items():
            button.disabled = decided or self._closed or again is not None
            if decided and (request.chosen is None or request.chosen.option_id != option_id):
                # Only the chosen option keeps its colour: the decision reads at a glance.
                button.button_style = ""
        line = decision_line(request)
        if request.pending and self._closed:
            line = span(
                esc("No longer answerable: the turn has ended."),
                f"color: {MUTED}; font-size: {SMALL_SIZE}",
            )
        if line != self._decision.value:
            self._decision.value = line
        attention = ""
        if request.pending and not self._closed:
            attention = BEACON + span(
                esc(keys_hint(len(self.buttons))), f"color: {MUTED}; font-size: {SMALL_SIZE}"
            )
        if attention != self._attention.value:
            self._attention.value = attention
        return True

    def close(self) -> None:
        """The turn ended: no more answers from this prompt."""
        self._closed = True
        self.refresh()
