"""A demo agent session: what it keeps, and the modes and config options it offers.

Everything here is deterministic: tool call and message ids are counters of the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio

from ...protocol import models as m
from ...protocol.modelbase import AcpModel

__all__ = [
    "MODELS",
    "MODES",
    "ClientCaps",
    "DemoModel",
    "DemoSession",
    "RunningTurn",
    "config_options",
]

Wire = dict[str, Any]


class RunningTurn(Protocol):
    """What a session needs of the prompt turn it runs (``.turn.Turn``): to stop it on
    ``session/cancel`` or ``session/close``, and to know when it has answered."""

    done: anyio.Event

    def cancel(self) -> None: ...


@dataclass(frozen=True)
class DemoModel:
    """One value of the ``model`` config option; drives the ``usage_update`` numbers."""

    value: str
    name: str
    description: str
    group: str
    context_window: int


MODELS = [
    DemoModel("demo-small", "Demo small", "Pretend-fast model: 128k token context.", "fast",
              128_000),
    DemoModel("demo-large", "Demo large", "Pretend-capable model: 200k token context.",
              "capable", 200_000),
]  # fmt: skip
MODEL_GROUPS = {"fast": "Fast", "capable": "Capable"}

MODES = [
    m.SessionMode(
        id="ask",
        name="Ask",
        description="Ask before every edit and command, unless you chose “Allow always” for "
        "that kind, at that risk or a higher one, earlier in this session (never for a "
        "destructive command).",
    ),
    m.SessionMode(
        id="code",
        name="Code",
        description="The same permissions as Ask: switching modes is what this demonstrates.",
    ),
]


@dataclass(frozen=True)
class ClientCaps:
    """What the client advertised in ``initialize`` (spec: omitted means unsupported)."""

    read: bool = False
    write: bool = False
    terminal: bool = False
    boolean_options: bool = False
    #: ``elicitation.form`` / ``elicitation.url`` (``{}`` advertises a mode).
    elicitation_form: bool = False
    elicitation_url: bool = False
    #: ``session.notices`` / ``session.compaction`` (spec: agents MUST NOT send those updates
    #: to a client that did not advertise them).
    notices: bool = False
    compaction: bool = False

    @classmethod
    def of(cls, caps: m.ClientCapabilities) -> ClientCaps:
        session = caps.session
        elicitation = caps.elicitation
        return cls(
            read=caps.fs.read_text_file,
            write=caps.fs.write_text_file,
            terminal=caps.terminal,
            boolean_options=bool(
                session is not None
                and session.config_options is not None
                and session.config_options.boolean is not None
            ),
            # spec: `{}` advertises a mode; omitted, null or an empty elicitation object none.
            elicitation_form=elicitation is not None and elicitation.form is not None,
            elicitation_url=elicitation is not None and elicitation.url is not None,
            notices=session is not None and session.notices is not None,
            compaction=session is not None and session.compaction is not None,
        )


@dataclass
class DemoSession:
    """A session kept in memory (and in the state file, see :meth:`to_state`)."""

    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    title: str | None = None
    updated_at: str = ""
    #: Global activity counter at the last change: ``session/list`` orders by it.
    activity: int = 0
    mode: str = "ask"
    model: str = "demo-small"
    verbose: bool = False
    #: Kinds of action the user chose "Allow always" for in this session, each with the
    #: highest risk it was chosen for (:mod:`.risk`: 0 nothing noticed, 1 worth a look):
    #: it covers that risk or less, never a riskier action.
    allow_always: dict[str, int] = field(default_factory=dict)
    #: The updates ``session/load`` replays (compacted, see :func:`.history.compact`).
    history: list[Wire] = field(default_factory=list)
    next_call: int = 1
    next_message: int = 1
    next_user_message: int = 1
    prompts: int = 0
    input_chars: int = 0
    output_chars: int = 0
    # -- runtime only (not saved) --
    active: bool = False
    mcp_servers: list[str] = field(default_factory=list)
    #: The stdio MCP servers given, by name (the scenes that use the client's MCP tools).
    mcp_stdio: dict[str, m.McpServerStdio] = field(default_factory=dict)
    turn: RunningTurn | None = None
    #: Set once the command list that follows the answer opening the session went out.
    announced: anyio.Event | None = None

    def new_call_id(self) -> str:
        # Counted per session, never random: the same prompts give the same transcript.
        call_id = f"call-{self.next_call}"
        self.next_call += 1
        return call_id

    def new_message_id(self) -> str:
        message_id = f"msg-{self.next_message}"
        self.next_message += 1
        return message_id

    def new_user_message_id(self) -> str:
        message_id = f"user-{self.next_user_message}"
        self.next_user_message += 1
        return message_id

    @property
    def model_info(self) -> DemoModel:
        return next((x for x in MODELS if x.value == self.model), MODELS[0])

    _SAVED = (
        "id", "cwd", "additional_directories", "title", "updated_at", "activity", "mode",
        "model", "verbose", "history", "next_call", "next_message", "next_user_message",
        "prompts", "input_chars", "output_chars",
    )  # fmt: skip

    def to_state(self) -> Wire:
        state = {name: getattr(self, name) for name in self._SAVED}
        state["allow_always"] = dict(sorted(self.allow_always.items()))
        return state

    @classmethod
    def from_state(cls, state: Wire) -> DemoSession:
        known = {name: state[name] for name in cls._SAVED if name in state}
        session = cls(**known)
        remembered = state.get("allow_always") or {}
        if isinstance(remembered, list):  # kinds alone: allowed always for no risk
            remembered = dict.fromkeys(remembered, 0)
        session.allow_always = {
            str(kind): int(risk) for kind, risk in remembered.items() if isinstance(risk, int)
        }
        return session

    def modes(self) -> m.SessionModeState:
        return m.SessionModeState(current_mode_id=self.mode, available_modes=MODES)


def config_options(session: DemoSession, caps: ClientCaps) -> list[AcpModel]:
    """The complete config state (spec: every answer and update carries all of it)."""
    modes = [_choice(mode.id, mode.name, mode.description) for mode in MODES]
    models = [
        m.SessionConfigSelectGroup(
            group=group,
            name=label,
            options=[_choice(x.value, x.name, x.description) for x in MODELS if x.group == group],
        )
        for group, label in MODEL_GROUPS.items()
    ]
    options: list[AcpModel] = [
        _select(
            "mode", "Mode", "When the agent asks before edits and commands.", session.mode, modes
        ),
        _select(
            "model",
            "Model",
            "Pretend models: they change the usage numbers, nothing else.",
            session.model,
            models,
        ),
    ]
    if caps.boolean_options:
        # spec: boolean options only for clients that advertised them.
        options.append(
            m.SessionConfigOptionBoolean(
                id="verbose",
                name="Protocol notes",
                description="End each reply with a note naming the ACP messages it used.",
                category="_demo",
                current_value=session.verbose,
            )
        )
    return options


def _select(
    option_id: Literal["mode", "model"],
    name: str,
    description: str,
    current: str,
    choices: list[m.SessionConfigSelectOption] | list[m.SessionConfigSelectGroup],
) -> m.SessionConfigOptionSelect:
    # Both selects are of a standard category, named like their id.
    return m.SessionConfigOptionSelect(
        id=option_id,
        name=name,
        description=description,
        category=option_id,
        current_value=current,
        options=choices,
    )


def _choice(value: str, name: str, description: str | None) -> m.SessionConfigSelectOption:
    return m.SessionConfigSelectOption(value=value, name=name, description=description)
