"""An `elicitation/create` in the live view: the agent's question as a form, or a URL to open.

Form mode: who asks and why (the agent's name and message), then one input per field of
the requested schema — Text (Textarea for long text), a number input with its bounds
(a text box when the field has no default: ipywidgets' number inputs cannot be empty,
and a 0 the user never typed must not be sent), Checkbox, Dropdown for a single choice,
checkboxes or a SelectMultiple for several, and dates as validated text — pre-filled with
the schema's defaults, required fields marked ``*``. **Accept** validates what is shown
against the schema and, when it fits, sends it; problems appear under their fields.
**Decline** and **Cancel** are always offered. A field type this client does not know is
never shown as a known control: it is named, and only Decline and Cancel remain.

URL mode: the full URL with its host highlighted, a warning that it opens outside the
notebook, and **Open** (the user's consent: ``accept``), **Decline**, **Cancel**. After
Open, a link the user clicks opens the page in a new tab; nothing here fetches it.

After the decision every control is disabled and the outcome is shown, in the words of
the saved transcript (``ElicitationRequest.outcome()``). Clicks only ``post`` to the agent
loop (like :mod:`.permission`), and each action is also a method: :meth:`accept`,
:meth:`decline`, :meth:`cancel`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import ipywidgets as w
from traitlets import TraitError

from ..client.elicitation import (
    FORMAT_HINTS,
    ElicitationBroker,
    ElicitationRequest,
    FieldSpec,
    InvalidContent,
    split_url,
    validate_content,
)
from ..client.elicitation import defaults as schema_defaults
from ..client.transcript import Transcript
from .markdown import inline_markdown
from .request import Post, RequestView, safe_post
from .style import ERROR, FG, INFO, MUTED, SMALL_SIZE, SUCCESS, UI_SIZE, WARN, esc, link, span

log = logging.getLogger(__name__)

#: Strings allowed this long (or longer) get a Textarea.
LONG_TEXT = 200
#: Multi-selects with at most this many choices are checkboxes; more get a SelectMultiple.
CHECKBOX_CHOICES = 8
#: The empty first choice of a single-select Dropdown.
NO_CHOICE = "—"


def _wide() -> w.Layout:
    # One Layout per widget: a shared one would be closed with the first widget closed.
    return w.Layout(width="100%", max_width="560px")


class FieldInput:
    """The input of one form field: its label, its control, and its problem line."""

    def __init__(self, spec: FieldSpec, default: Any) -> None:
        self.spec = spec
        self.kind = spec.kind
        #: For multi-selects shown as checkboxes: value -> Checkbox.
        self.checkboxes: dict[str, w.Checkbox] = {}
        self.control: w.Widget | None = self._build(default)
        mark = span("*", f"color: {ERROR}; font-weight: 600") if spec.required else ""
        description = (
            span(" — " + inline_markdown(spec.description), f"color: {MUTED}")
            if spec.description
            else ""
        )
        hint = spec.describe()
        if self.kind == "unsupported":
            hint = f"This field has {hint}: you can only decline or cancel."
        self.label = w.HTML(
            f'<div style="font-size: {UI_SIZE}; line-height: 1.5; color: {FG}">'
            f"<b>{esc(spec.title)}</b> {mark}{description}"
            f'<div style="color: {WARN if self.kind == "unsupported" else MUTED}; '
            f'font-size: {SMALL_SIZE}">{esc(hint)}</div></div>',
            layout=w.Layout(margin="0"),
        )
        self.error = w.HTML("", layout=w.Layout(margin="0"))
        parts = [self.label] + ([self.control] if self.control is not None else []) + [self.error]
        self.widget = w.VBox(parts, layout=w.Layout(margin="4px 0"))

    def _build(self, default: Any) -> w.Widget | None:
        spec, kind = self.spec, self.kind
        schema = spec.schema
        if kind == "unsupported":
            return None
        if kind == "boolean":
            # The title is in the label above; the box itself says what ticking it means.
            return w.Checkbox(value=bool(default), description="Yes", indent=False, layout=_wide())
        if kind == "multi":
            choices = spec.choices
            chosen = set(default or [])
            if len(choices) <= CHECKBOX_CHOICES:
                for value, label in choices:
                    self.checkboxes[value] = w.Checkbox(
                        value=value in chosen,
                        description=label,
                        indent=False,
                        layout=w.Layout(width="auto", margin="0 12px 0 0"),
                    )
                return w.HBox(list(self.checkboxes.values()), layout=w.Layout(flex_flow="row wrap"))
            return w.SelectMultiple(
                options=[(label, value) for value, label in choices],
                value=[v for v, _label in choices if v in chosen],
                rows=min(len(choices), 8),
                layout=_wide(),
            )
        if kind in ("integer", "number") and default is not None:
            return _number_input(kind, schema.minimum, schema.maximum, default)
        if kind in ("integer", "number"):
            return w.Text(value="", placeholder=spec.describe(), layout=_wide())
        if spec.choices:
            options: list[tuple[str, Any]] = [(NO_CHOICE, None)]
            options += [(label, value) for value, label in spec.choices]
            known = {value for _label, value in options}
            return w.Dropdown(
                options=options, value=default if default in known else None, layout=_wide()
            )
        placeholder = FORMAT_HINTS.get(str(schema.format), "") if schema.format else ""
        long_text = schema.max_length is not None and schema.max_length >= LONG_TEXT
        cls = w.Textarea if long_text else w.Text
        return cls(value=str(default or ""), placeholder=placeholder, layout=_wide())

    # ------------------------------------------------------------------ values

    def value(self) -> Any:
        """The value as the form would send it; None when the user gave none. Text that is
        not a number is returned as typed, so validation can say what is wrong."""
        control, kind = self.control, self.kind
        if control is None:
            return None
        if self.checkboxes:
            chosen = [value for value, box in self.checkboxes.items() if box.value]
            return chosen or None
        if isinstance(control, w.SelectMultiple):
            return list(control.value) or None
        if kind in ("integer", "number") and isinstance(control, w.Text):
            text = control.value.strip()
            if not text:
                return None
            try:
                return int(text) if kind == "integer" else float(text)
            except ValueError:
                return text
        value = control.value
        if isinstance(value, str) and not value:
            return None
        return value

    def set_value(self, value: Any) -> None:
        """Show ``value`` (best effort: a value the control cannot hold is left out)."""
        control = self.control
        if control is None:
            return
        try:
            if self.checkboxes:
                chosen = set(value or [])
                for key, box in self.checkboxes.items():
                    box.value = key in chosen
            elif isinstance(control, w.SelectMultiple):
                control.value = tuple(value or ())
            elif isinstance(control, (w.Text, w.Textarea)):
                control.value = "" if value is None else str(value)
            else:
                control.value = value
        except (TraitError, TypeError, ValueError):
            log.debug("elicitation: %r cannot be shown in field %s", value, self.spec.name)

    def show_error(self, message: str | None) -> None:
        html = (
            span(esc("⚠ " + message), f"color: {ERROR}; font-size: {SMALL_SIZE}") if message else ""
        )
        if self.error.value != html:
            self.error.value = html

    def disable(self) -> None:
        for control in [self.control, *self.checkboxes.values()]:
            if control is not None and hasattr(control, "disabled"):
                control.disabled = True


def _number_input(kind: str, low: Any, high: Any, default: Any) -> w.Widget:
    if low is not None and high is not None:
        cls: Any = w.BoundedIntText if kind == "integer" else w.BoundedFloatText
        return cls(value=default, min=low, max=high, layout=_wide())
    cls = w.IntText if kind == "integer" else w.FloatText
    return cls(value=default, layout=_wide())


def url_html(url: str) -> str:
    """The whole URL, its host in bold and colour (spec: show the full URL, highlight the host)."""
    before, host, after = split_url(url)
    mono = "font-family: var(--jp-code-font-family, monospace); overflow-wrap: anywhere"
    if not host:
        return span(esc(url), mono)
    shown = (
        esc(before)
        + span(esc(host), f"font-weight: 700; color: {INFO}; background: rgba(25,118,210,0.10)")
        + esc(after)
    )
    return span(shown, mono)


_OUTCOME_LOOK = {"accepted": ("✅", SUCCESS), "declined": ("⛔", FG), "cancelled": ("⏹️", MUTED)}


class ElicitationForm(RequestView[ElicitationRequest, ElicitationBroker]):
    """One elicitation of the turn; :meth:`refresh` follows its request's state."""

    def __init__(
        self,
        request: ElicitationRequest,
        *,
        broker: ElicitationBroker | None,
        post: Post,
        transcript: Transcript | None = None,
    ) -> None:
        super().__init__(request, broker, post)
        self._transcript = transcript
        self._errors: dict[str, str] = {}
        self._signature: tuple[object, ...] | None = None
        self.inputs: dict[str, FieldInput] = {}
        if request.mode == "form" and request.schema is not None:
            prefill = schema_defaults(request.schema)  # spec SHOULD: pre-fill defaults
            for spec in request.fields:
                self.inputs[spec.name] = FieldInput(spec, prefill.get(spec.name))
        is_url = request.mode == "url"
        self.accept_button = w.Button(
            description="Open" if is_url else "Accept",
            icon="external-link" if is_url else "check",
            button_style="primary" if is_url else "success",
            tooltip="Consent to open this URL (outside the notebook)"
            if is_url
            else "Send the values above to the agent",
            layout=w.Layout(width="auto", margin="2px 6px 2px 0"),
        )
        self.decline_button = w.Button(
            description="Decline",
            tooltip="Do not give this input; the agent goes on without it",
            layout=w.Layout(width="auto", margin="2px 6px 2px 0"),
        )
        self.cancel_button = w.Button(
            description="Cancel",
            tooltip="Dismiss without a choice",
            layout=w.Layout(width="auto", margin="2px 6px 2px 0"),
        )
        self.accept_button.on_click(lambda _b: self.accept())
        self.decline_button.on_click(lambda _b: self.decline())
        self.cancel_button.on_click(lambda _b: self.cancel())
        buttons = [self.decline_button, self.cancel_button]
        if request.can_accept:
            buttons.insert(0, self.accept_button)
        self._question = w.HTML(layout=w.Layout(margin="0"))
        self._summary = w.HTML(layout=w.Layout(margin="0"))
        self._decision = w.HTML(layout=w.Layout(margin="0"))
        self.widget = self._frame(
            [
                self._question,
                *(i.widget for i in self.inputs.values()),
                w.HBox(buttons, layout=w.Layout(flex_flow="row wrap")),
                self._summary,
                self._decision,
            ]
        )
        self.refresh()

    # ------------------------------------------------------------------ reading

    @property
    def errors(self) -> dict[str, str]:
        """The problems shown under the fields after the last Accept."""
        return dict(self._errors)

    def values(self) -> dict[str, Any]:
        """What Accept would send now: every field the user filled in."""
        found = {name: field.value() for name, field in self.inputs.items()}
        return {name: value for name, value in found.items() if value is not None}

    # ------------------------------------------------------------------ user actions

    def accept(self, values: Mapping[str, Any] | None = None) -> None:
        """Accept (Open for a URL), from any thread: posts the submission to the loop.
        With ``values``, those are shown and sent instead of what the form holds."""
        if not self._closed:
            given = dict(values) if values is not None else None
            safe_post(self._post, lambda: self._submit(given))

    def decline(self) -> None:
        if not self._closed:
            safe_post(self._post, lambda: self._end("decline"))

    def cancel(self) -> None:
        if not self._closed:
            safe_post(self._post, lambda: self._end("cancel"))

    # ------------------------------------------------------------------ loop thread

    def _submit(self, values: dict[str, Any] | None) -> None:
        request = self.request
        if self._closed or not request.pending:
            return
        content: dict[str, Any] | None = None
        if request.mode == "form" and request.schema is not None:
            if values is not None:
                for name, value in values.items():
                    if name in self.inputs:
                        self.inputs[name].set_value(value)
            content = values if values is not None else self.values()
            errors = validate_content(request.schema, content)
            if errors:
                self._show_errors(errors)
                return
        if self._broker is not None:
            try:
                self._broker.accept(request.key, content, by="user")
            except InvalidContent as exc:
                self._show_errors(exc.errors)
                return
        self._show_errors({})
        self.refresh()

    def _end(self, action: str) -> None:
        if self._closed or not self.request.pending or self._broker is None:
            return
        if action == "decline":
            self._broker.decline(self.request.key, by="user")
        else:
            self._broker.cancel(self.request.key, by="user")
        self.refresh()

    def _show_errors(self, errors: dict[str, str]) -> None:
        self._errors = dict(errors)
        for name, field in self.inputs.items():
            field.show_error(errors.get(name))
        others = [f"{k}: {v}" if k else v for k, v in errors.items() if k not in self.inputs]
        lines = []
        if errors:
            lines.append("Nothing was sent: fix the fields marked above.")
        lines += others
        html = "".join(
            f'<div style="color: {ERROR}; font-size: {SMALL_SIZE}">{esc(line)}</div>'
            for line in lines
        )
        if self._summary.value != html:
            self._summary.value = html

    def refresh(self, active: bool = False) -> bool:
        request = self.request
        title = self._tool_title()
        signature = (request.state, request.decided_by, request.completed, self._closed, title)
        if signature == self._signature:
            return False
        self._signature = signature
        question = self._question_html(title)
        if question != self._question.value:
            self._question.value = question
        if not request.pending or self._closed:
            for field in self.inputs.values():
                field.disable()
            for button in (self.accept_button, self.decline_button, self.cancel_button):
                button.disabled = True
            if request.state != "accepted":
                self.accept_button.button_style = ""
        decision = self._decision_html()
        if decision != self._decision.value:
            self._decision.value = decision
        return True

    def close(self) -> None:
        """The turn ended: no more answers from this form."""
        self._closed = True
        self.refresh()

    # ------------------------------------------------------------------ parts

    def _tool_title(self) -> str | None:
        call_id = self.request.tool_call_id
        if not call_id:
            return None
        call = self._transcript.tool_calls.get(call_id) if self._transcript else None
        return (call.title if call is not None else None) or call_id

    def _question_html(self, tool_title: str | None) -> str:
        request = self.request
        agent = f"<b>{esc(request.agent or 'The agent')}</b>"
        verb = "asks you to open a URL" if request.mode == "url" else "asks for input"
        scope = f" for tool call <b>{inline_markdown(tool_title)}</b>" if tool_title else ""
        icon = "🔗" if request.mode == "url" else "❓"
        parts = [
            f'<div style="font-size: {UI_SIZE}; line-height: 1.6; color: {FG}">'
            f"{icon} {agent} {verb}{scope}</div>",
            f'<div style="font-size: {UI_SIZE}; line-height: 1.5; color: {FG}; '
            f'margin: 2px 0 4px 0">{inline_markdown(request.message)}</div>',
        ]
        if request.mode == "url" and request.url:
            parts.append(
                f'<div style="font-size: {UI_SIZE}; line-height: 1.6">{url_html(request.url)}</div>'
            )
            if request.host:
                parts.append(
                    f'<div style="color: {WARN}; font-size: {SMALL_SIZE}; line-height: 1.5">'
                    f"⚠ Opens <b>{esc(request.host)}</b> in a new browser tab, outside the "
                    "notebook. acp_notebook does not fetch or read the page; check the host "
                    "before you open it.</div>"
                )
        if request.problem is not None:
            parts.append(
                f'<div style="color: {WARN}; font-size: {SMALL_SIZE}; line-height: 1.5">'
                f"⚠ {esc(request.problem[0].upper() + request.problem[1:])}: "
                "you can only decline or cancel.</div>"
            )
        return "".join(parts)

    def _decision_html(self) -> str:
        request = self.request
        if request.pending:
            if self._closed:
                return span(
                    esc("No longer answerable: the turn has ended."),
                    f"color: {MUTED}; font-size: {SMALL_SIZE}",
                )
            return span(esc("Waiting for your answer…"), f"color: {WARN}; font-size: {UI_SIZE}")
        icon, color = _OUTCOME_LOOK.get(request.state, ("", MUTED))
        html = span(
            esc(f"{icon} {_capital(request.outcome())}"), f"color: {color}; font-size: {UI_SIZE}"
        )
        if request.state == "accepted" and request.mode == "url" and request.url:
            # Only now, and only as a link the user clicks: nothing here loads the page.
            html += (
                f'<div style="font-size: {UI_SIZE}; line-height: 1.6">↗ '
                f"{link(request.url, 'Open ' + (request.host or request.url) + ' in a new tab')}"
                "</div>"
            )
        return html


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
