"""Parsing a ``%acp`` line: options first, then the prompt, verbatim.

Options are recognised only at the start of the line, and only in their exact
spelling; the first word that is not an option starts the prompt, so no prompt
is ever taken for a control (``%acp status of the build`` sends a prompt; the
control is ``%acp --status``). ``--`` ends the options explicitly.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from ..client.permissions import POLICIES


class OptionError(ValueError):
    """A malformed ``%acp`` line; the message is one sentence for the user."""


#: Controls: ``%acp --status`` etc. They take no prompt.
CONTROLS = {
    "--status": "status",
    "--cancel": "cancel",
    "--restart": "restart",
    "--stop": "stop",
    "--agents": "agents",
    "--sessions": "sessions",
    "--commands": "commands",
    "--log": "log",
    "--settings": "settings",
    "--history": "history",
    "--close": "close",
    "--logout": "logout",
    "--mcp": "mcp",
    "--rules": "rules",
    "--help": "help",
    "-h": "help",
}
#: Controls that take a value: ``%acp --load SESSION_ID``. ``None``: the value may be omitted.
VALUED_CONTROLS: dict[str, tuple[str, bool]] = {
    "--load": ("load", True),
    "--resume": ("resume", False),
    "--delete": ("delete", True),
    "--mode": ("mode", True),
    "--set": ("set", True),
    "--login": ("login", False),
}
_VALUED = {
    "-a": "agent",
    "--agent": "agent",
    "-s": "session",
    "--session": "session",
    "-p": "permissions",
    "--permissions": "permissions",
    "-t": "timeout",
    "--timeout": "timeout",
}
_FLAGS = {
    "--wait": ("wait", True),
    "--no-wait": ("wait", False),
    "--background": ("wait", False),
    "--headless": ("headless", True),
    "--interactive": ("headless", False),
}

USAGE = """\
%acp [options] PROMPT          one prompt turn, shown live in this cell
%%acp [options]                the cell body is the prompt

options (before the prompt):
  -a, --agent AGENT            a preset (demo, claude, codex, gemini, ...) or a command line
  -s, --session NAME           a named session (default: "default"); several may run side by side
  -p, --permissions POLICY     ask | allow | deny (headless runs: ask means deny)
  -t, --timeout SECONDS        cancel the turn after SECONDS
  --wait / --no-wait           keep the cell busy until the turn ends (default), or return at once
  --background                 same as --no-wait
  --headless / --interactive   force plain-text output without widgets, or the live widget view
  --                           end of options: everything after it is the prompt

controls (instead of a prompt; -a and -s pick the agent and session they act on):
  --status         agents, sessions and running turns  --cancel      cancel the running turn
  --restart        restart the agent                   --stop        stop the agent
  --agents         the agent presets and what is installed here
  --sessions       this notebook's sessions            --commands    the agent's slash commands
  --settings       the session's mode and options, as controls
  --mode MODE      switch the session's mode           --set ID=VALUE  set a config option
  --history        the agent's saved sessions          --load ID     load one (its history is replayed)
  --resume [ID]    continue a session without replay (default: this notebook's last one)
  --close          close the session                   --delete ID   delete a saved session
  --login [METHOD] authenticate with the agent         --logout      log out
  --mcp            the MCP servers passed to the agent
  --rules          the permission rules, in order, and what each does
  --log            the JSON-RPC messages of the agent  --help        this text
"""


@dataclass
class AcpOptions:
    prompt: str = ""
    control: str | None = None
    #: The value of a valued control (``--load ID``), if given.
    control_value: str | None = None
    agent: str | None = None
    session: str = "default"
    permissions: str | None = None
    timeout: float | None = None
    wait: bool | None = None
    headless: bool | None = None
    given: set[str] = field(default_factory=set)


# A word, or a quoted string (an agent command line: -a "fast-agent acp --model passthrough").
_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+")


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return shlex.split(token)[0]
    return token


def parse_line(line: str, cell: str | None = None) -> AcpOptions:
    """Split a magic line (and a cell body) into options and the prompt."""
    options = AcpOptions()
    pos = 0
    prompt_start: int | None = None
    while True:
        match = _TOKEN.search(line, pos)
        if match is None:
            break
        token = match.group()
        pos = match.end()
        if token == "--":
            prompt_start = pos
            break
        if not token.startswith("-"):
            prompt_start = match.start()
            break
        name, eq, inline_value = token.partition("=")
        if (name in CONTROLS and not eq) or name in VALUED_CONTROLS:
            if options.control is not None:
                raise OptionError(
                    f"Give one control at a time, not --{options.control} and {name}."
                )
            if name in CONTROLS:
                options.control = CONTROLS[name]
                continue
            options.control, required = VALUED_CONTROLS[name]
            if eq:
                options.control_value = _unquote(inline_value)
                continue
            value_match = _TOKEN.search(line, pos)
            if value_match is not None and not value_match.group().startswith("-"):
                options.control_value = _unquote(value_match.group())
                pos = value_match.end()
            elif required:
                raise OptionError(f"The control {name} needs a value.")
        elif name in _FLAGS and not eq:
            attr, value = _FLAGS[name]
            setattr(options, attr, value)
            options.given.add(attr)
        elif name in _VALUED:
            if eq:
                value_text = _unquote(inline_value)
            else:
                value_match = _TOKEN.search(line, pos)
                if value_match is None:
                    raise OptionError(f"The option {name} needs a value.")
                value_text = _unquote(value_match.group())
                pos = value_match.end()
            _set_valued(options, _VALUED[name], name, value_text)
        else:
            raise OptionError(
                f"Unknown option {token}; to send a prompt that starts with '-', put -- before it."
            )
    text = line[prompt_start:].strip() if prompt_start is not None else ""
    if cell is not None:
        text = f"{text}\n{cell}" if text else cell
    options.prompt = text.strip("\n")
    if options.control is not None and options.prompt.strip():
        raise OptionError(
            f"--{options.control} takes no prompt; remove the text after it or drop --{options.control}."
        )
    return options


def _set_valued(options: AcpOptions, attr: str, name: str, value: str) -> None:
    if attr == "permissions" and value not in POLICIES:
        raise OptionError(f"{name} takes one of {', '.join(POLICIES)}, not {value!r}.")
    if attr == "timeout":
        try:
            seconds = float(value)
        except ValueError:
            raise OptionError(f"{name} takes a number of seconds, not {value!r}.") from None
        if seconds <= 0:
            raise OptionError(f"{name} must be positive.")
        options.timeout = seconds
    else:
        setattr(options, attr, value)
    options.given.add(attr)
