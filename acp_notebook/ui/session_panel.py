"""The session panel (``%acp --settings``): mode and config options as controls, the
agent's slash commands, and the context gauge — following agent-side changes live.

spec: prefer config options over modes when an agent has both (a config option of
category ``mode`` then replaces the mode selector); options of an unknown type are
shown, not editable.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import ipywidgets as w

from ..client.session import Session
from ..client.transcript import Transcript, select_choices
from ..protocol import models as m
from . import layouts
from .coalesce import Coalescer, ScheduleLater
from .style import MUTED, esc

#: ``submit(coroutine_function, *args)``: run on the agent loop (thread-safe).
Submit = Callable[..., Any]


def select_labels(option: m.SessionConfigOptionSelect) -> list[tuple[str, str]]:
    """(label, value) pairs, grouped options labelled "Group · Name"."""
    pairs: list[tuple[str, str]] = []
    for item in option.options:
        if isinstance(item, m.SessionConfigSelectGroup):
            pairs.extend((f"{item.name} · {choice.name}", choice.value) for choice in item.options)
        elif isinstance(item, m.SessionConfigSelectOption):
            pairs.append((item.name, item.value))
    return pairs


class SessionPanel:
    """Live controls for one session. Widget callbacks only ``submit`` to the loop."""

    def __init__(
        self, session: Session, *, submit: Submit, schedule_later: ScheduleLater | None = None
    ) -> None:
        self.session = session
        self._submit = submit
        #: The thread writing the transcript's values into the controls (the agent loop's)
        #: while it does: those changes are not the user's. A user's change arrives on the
        #: kernel's comm thread meanwhile and must not be dropped (it was, under load).
        self._syncing_thread: int | None = None
        #: The user's changes posted to the loop and not applied yet, per control: until
        #: they are, the transcript's older value must not be written back over the
        #: control (the user's next change would then start from a value they never chose,
        #: and one of their changes was lost under load).
        self._pending: dict[str, int] = {}
        self._pending_lock = threading.Lock()  # counted on the comm thread and the loop
        self.controls: dict[str, w.Widget] = {}
        self.error = layouts.html()
        self._title = layouts.html()
        self._controls_box = layouts.vbox()
        self._commands = layouts.html()
        self._usage = layouts.html()
        self._shown_shape: tuple[Any, ...] = ()
        self.widget = layouts.vbox(
            [self._title, self._controls_box, self.error, self._usage, self._commands],
            border="1px solid var(--jp-border-color2, #e0e0e0)",
            padding="6px",
        )
        self._coalescer = (
            Coalescer(schedule_later, 0.1, callback=self.refresh) if schedule_later else None
        )
        self._unsubscribe = (
            session.transcript.subscribe(self._on_change) if self._coalescer else None
        )
        self.refresh()

    def _on_change(self, _transcript: Transcript) -> None:
        if self._coalescer is not None:
            self._coalescer.poke()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._coalescer is not None:
            self._coalescer.close()

    # ------------------------------------------------------------------ user actions

    def set_option(self, config_id: str, value: str | bool) -> None:
        """What changing a control does: `session/set_config_option` on the loop."""
        self._post(config_id, self.session.set_config_option, config_id, value)

    def set_mode(self, mode_id: str) -> None:
        """What choosing a mode does: `session/set_mode` on the loop."""
        self._post("__mode__", self.session.set_mode, mode_id)

    def _post(self, key: str, method: Callable[..., Awaitable[None]], *args: Any) -> None:
        with self._pending_lock:
            self._pending[key] = self._pending.get(key, 0) + 1
        self._submit(self._apply, key, method, *args)

    async def _apply(self, key: str, method: Callable[..., Awaitable[None]], *args: Any) -> None:
        try:
            await method(*args)
        except Exception as exc:  # shown in the panel, in one sentence
            self.error.value = (
                f"<span style='color: var(--jp-error-color1, #d32f2f)'>{esc(str(exc))}</span>"
            )
        else:
            self.error.value = ""
        finally:
            with self._pending_lock:
                left = self._pending.pop(key, 1) - 1
                if left > 0:
                    self._pending[key] = left
        self.refresh()

    # ------------------------------------------------------------------ rendering

    def _uses_mode_option(self) -> bool:
        return any(
            getattr(o, "category", None) == "mode" for o in self.session.transcript.config_options
        )

    def refresh(self) -> None:
        transcript = self.session.transcript
        title = transcript.title or "untitled"
        self._title.value = (
            f"<b>Session</b> <code>{esc(self.session.session_id)}</code> · {esc(title)}"
        )
        options_shape = [
            (
                getattr(o, "id", "?"),
                type(o).__name__,
                tuple(select_labels(o)) if isinstance(o, m.SessionConfigOptionSelect) else (),
            )
            for o in transcript.config_options
        ]
        shape = (*options_shape, ("__modes__", tuple(mode.id for mode in transcript.modes)))
        if shape != self._shown_shape:
            self._shown_shape = shape
            self._build_controls()
        self._sync_values()
        self._show_usage()
        self._show_commands()

    def _build_controls(self) -> None:
        transcript = self.session.transcript
        self.controls = {}
        rows: list[w.Widget] = []
        if transcript.modes and not self._uses_mode_option():
            mode = w.Dropdown(
                description="Mode",
                options=[(mm.name, mm.id) for mm in transcript.modes],
                layout=layouts.layout(),
            )
            mode.observe(
                lambda change: self._user_changed("__mode__", change["new"]), names="value"
            )
            self.controls["__mode__"] = mode
            rows.append(mode)
        for option in transcript.config_options:
            if isinstance(option, m.SessionConfigOptionSelect):
                control: w.Widget = w.Dropdown(
                    description=option.name, options=select_labels(option), layout=layouts.layout()
                )
            elif isinstance(option, m.SessionConfigOptionBoolean):
                control = w.Checkbox(description=option.name, indent=False, layout=layouts.layout())
            else:
                name = getattr(option, "raw", {}).get("name", "?")
                rows.append(
                    layouts.html(
                        f"<span style='color: {MUTED}'>{esc(str(name))}: not editable here</span>"
                    )
                )
                continue
            control.tooltip = option.description or ""
            control.style.description_width = "initial"
            control.observe(
                lambda change, oid=option.id: self._user_changed(oid, change["new"]), names="value"
            )
            self.controls[option.id] = control
            rows.append(control)
        self._controls_box.children = tuple(rows)

    def _sync_values(self) -> None:
        transcript = self.session.transcript
        self._syncing_thread = threading.get_ident()
        try:
            mode = self.controls.get("__mode__")
            if (
                mode is not None
                and transcript.current_mode_id is not None
                and "__mode__" not in self._pending
            ):
                mode.value = transcript.current_mode_id
            for option in transcript.known_config_options:
                control = self.controls.get(option.id)
                if control is not None and option.id not in self._pending:
                    control.value = option.current_value
        finally:
            self._syncing_thread = None

    def _user_changed(self, key: str, value: Any) -> None:
        if self._syncing_thread == threading.get_ident():
            return
        if key == "__mode__":
            self.set_mode(value)
        else:
            self.set_option(key, value)

    def _show_usage(self) -> None:
        usage = self.session.transcript.usage
        if usage is None or usage.used is None:
            self._usage.value = ""
            return
        size = f" / {usage.size:,}" if usage.size else ""
        cost = (
            f" · {usage.cost_amount:.6f}".rstrip("0").rstrip(".") + f" {usage.cost_currency}"
            if usage.cost_amount is not None
            else ""
        )
        self._usage.value = (
            f"<span style='color: {MUTED}'>Context: {usage.used:,}{size} tokens{cost}</span>"
        )

    def _show_commands(self) -> None:
        commands = self.session.transcript.commands
        if not commands:
            self._commands.value = ""
            return
        rows = "".join(
            f"<tr><td><code>/{esc(c.name)}</code></td><td>{esc(c.description)}</td>"
            f"<td style='color: {MUTED}'>{esc(getattr(c.input, 'hint', '') or '')}</td></tr>"
            for c in commands
        )
        self._commands.value = f"<details><summary>Slash commands ({len(commands)})</summary><table>{rows}</table></details>"


def choices_text(option: Any) -> str:
    """The values of a config option, for plain-text output."""
    if isinstance(option, m.SessionConfigOptionSelect):
        return ", ".join(c.value for c in select_choices(option))
    if isinstance(option, m.SessionConfigOptionBoolean):
        return "true, false"
    return "?"
