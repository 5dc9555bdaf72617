"""Logging in to an agent: its own message, verbatim, and one way in per auth method.

* agent-handled methods (no ``type`` / ``"agent"``): a button; the agent does the rest
  (`authenticate`), which may print a device code in the message above;
* methods that need environment variables (``type: "env_var"`` with ``vars``, sent by
  codex and others though it left the spec): a password field per variable; the agent
  is restarted with them (never echoed, never in a trace), then authenticated;
* terminal methods: the command to run in a terminal, then Retry (this client does not
  advertise ``auth.terminal``, so compliant agents do not send them);
* methods of a type this client does not know: a button, like agent-handled ones (the
  agent knows what its own method means).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..client.auth import AuthMethodInfo
from .style import MUTED, esc

#: ``choose(method_id, env)``: called on the agent loop thread (through ``post``).
Choose = Callable[[str | None, dict[str, str]], None]
Post = Callable[..., Any]


class AuthPrompt:
    """The login panel shown in a cell whose agent answered `auth_required`."""

    def __init__(
        self,
        agent: str,
        message: str,
        methods: list[AuthMethodInfo],
        *,
        post: Post,
        choose: Choose,
        command_line: str = "",
    ) -> None:
        self._post = post
        self._choose = choose
        self.done = False
        self.fields: dict[str, dict[str, w.Password]] = {}
        self.buttons: dict[str, w.Button] = {}
        header = w.HTML(
            f"<div><b>{esc(agent)} needs you to log in.</b> It said:</div>"
            f"<blockquote style='margin: 4px 0 6px 8px; white-space: pre-wrap'>{esc(message)}</blockquote>"
        )
        rows: list[w.Widget] = [header]
        for method in methods:
            method_id, name = method.id, method.name
            note = (
                f"<span style='color: {MUTED}'>{esc(method.description)}</span>"
                if method.description
                else ""
            )
            if method.vars:
                secrets = {
                    var: w.Password(
                        placeholder=var, description=var, style={"description_width": "initial"}
                    )
                    for var in method.vars
                }
                self.fields[method_id] = secrets
                button = w.Button(description=f"Save and log in: {name}", button_style="primary")
                button.on_click(lambda _b, mid=method_id: self.choose(mid, self._values(mid)))
                self.buttons[method_id] = button
                rows.append(
                    w.VBox([w.HTML(f"<b>{esc(name)}</b> {note}"), *secrets.values(), button])
                )
            elif method.type == "terminal":
                args = " ".join(method.args)
                command = esc(f"{command_line} {args}".strip())
                rows.append(
                    w.HTML(
                        f"<b>{esc(name)}</b>: run <code>{command}</code> in a terminal, then press Retry. {note}"
                    )
                )
            else:  # agent-handled, or a type this client does not know: `authenticate`
                button = w.Button(
                    description=f"Log in: {name}",
                    button_style="primary",
                    tooltip=f"authenticate {method_id}",
                )
                button.on_click(lambda _b, mid=method_id: self.choose(mid))
                self.buttons[method_id] = button
                rows.append(w.HBox([button, w.HTML(note)]))
        retry = w.Button(description="Retry", tooltip="try again without logging in here")
        retry.on_click(lambda _b: self.choose(None))
        cancel = w.Button(description="Cancel", button_style="danger")
        cancel.on_click(lambda _b: self.cancel())
        self.buttons["__retry__"] = retry
        self.buttons["__cancel__"] = cancel
        self.status = w.HTML("")
        rows += [w.HBox([retry, cancel]), self.status]
        self.widget = w.VBox(
            rows,
            layout=w.Layout(
                border="1px solid var(--jp-warn-color1, #f57c00)", padding="6px", margin="4px 0"
            ),
        )
        self._cancelled = False

    def _values(self, method_id: str) -> dict[str, str]:
        return {var: field.value for var, field in self.fields.get(method_id, {}).items()}

    def choose(self, method_id: str | None, env: dict[str, str] | None = None) -> None:
        """What a click does: hand the choice to the agent loop (from any thread)."""
        if self.done:
            return
        self._post(self._choose, method_id, dict(env or {}))

    def cancel(self) -> None:
        if self.done:
            return
        self._cancelled = True
        self._post(self._choose, "__cancel__", {})

    def close(self, text: str) -> None:
        """Disable everything, forget typed secrets, show the outcome (loop thread)."""
        self.done = True
        for button in self.buttons.values():
            button.disabled = True
        for secrets in self.fields.values():
            for field in secrets.values():
                field.value = ""
                field.disabled = True
        self.status.value = f"<span style='color: {MUTED}'>{esc(text)}</span>"
