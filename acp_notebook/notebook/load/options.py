"""Reading a ``%acp`` line: options first, then the prompt, verbatim.

Options are recognised only at the start of the line, and only in their exact
spelling; the first word that is not an option starts the prompt, so no prompt
is ever taken for a control (``%acp status of the build`` sends a prompt; the
control is ``%acp --status``). ``--`` ends the options explicitly.

The prompt's options are the table below; the controls come from the registry
(``controls/__init__.py``). ``%acp --help`` is derived from both.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...client.policy import POLICIES
from ..controls import REGISTRY


class OptionError(ValueError):
    """A malformed ``%acp`` line; the message is one sentence for the user."""


def _policy(flag: str, value: str) -> str:
    if value not in POLICIES:
        raise OptionError(f"{flag} takes one of {', '.join(POLICIES)}, not {value!r}.")
    return value


def _seconds(flag: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise OptionError(f"{flag} takes a number of seconds, not {value!r}.") from None
    if seconds <= 0:
        raise OptionError(f"{flag} must be positive.")
    return seconds


def _preset_names() -> list[str]:
    from ...client.presets import load_presets

    return sorted(load_presets())


@dataclass(frozen=True)
class Option:
    """An option of a prompt turn (``-a claude``, ``--no-wait``)."""

    flags: tuple[str, ...]
    #: The field of :class:`AcpOptions` it sets.
    attr: str
    help: str
    #: The value's name when the option takes one (``-a AGENT``); None for a switch.
    metavar: str | None = None
    #: A switch's value.
    value: bool = True
    #: The value from the line's text (``-t 30`` → 30.0); raises :class:`OptionError`.
    convert: Callable[[str, str], object] = lambda _flag, value: value
    #: The values Tab offers after it.
    choices: Callable[[], Iterable[str]] | None = None


OPTIONS = (
    Option(
        ("-a", "--agent"),
        "agent",
        "a preset (demo, claude, codex, gemini, ...) or a command line",
        "AGENT",
        choices=_preset_names,
    ),
    Option(
        ("-s", "--session"),
        "session",
        'a named session (default: "default"); several may run side by side',
        "NAME",
    ),
    Option(
        ("-p", "--permissions"),
        "permissions",
        "ask | allow | deny (headless runs: ask means deny)",
        "POLICY",
        convert=_policy,
        choices=lambda: POLICIES,
    ),
    Option(
        ("-t", "--timeout"), "timeout", "cancel the turn after SECONDS", "SECONDS", convert=_seconds
    ),
    Option(("--wait",), "wait", "keep the cell busy until the turn ends (the default)"),
    Option(("--no-wait", "--background"), "wait", "return at once; the turn goes on", value=False),
    Option(("--headless",), "headless", "plain-text output without widgets"),
    Option(("--interactive",), "headless", "the live widget view", value=False),
    Option(
        ("--no-context",),
        "context",
        "send only the words: no cells, no notebook path ({name} still attaches)",
        value=False,
    ),
    Option(("--context",), "context", "send the code above and the last code cell (the default)"),
    Option(("--fix",), "fix", "send the last error and its cell (prompt: explain and fix it)"),
    Option(("--dry-run",), "dry_run", "show the content blocks that would be sent; send nothing"),
    Option(
        ("--no-tools",), "tools", "do not offer the notebook tools to a new session", value=False
    ),
)
OPTION_BY_FLAG = {flag: option for option in OPTIONS for flag in option.flags}


def usage() -> str:
    """``%acp --help``."""
    options = [
        (", ".join(o.flags) + (f" {o.metavar}" if o.metavar else ""), o.help) for o in OPTIONS
    ]
    options.append(("--", "end of options: everything after it is the prompt"))
    return "\n".join(
        [
            "%acp [options] PROMPT          one prompt turn, shown live in this cell",
            "%%acp [options]                the cell body is the prompt",
            "",
            "options (before the prompt):",
            *_aligned(options),
            "",
            "controls (instead of a prompt; -a and -s pick the agent and session they act on;",
            "each is also a function: import acp_notebook as acp; acp.status(), acp.mode(ID) ...):",
            *_aligned(REGISTRY.help_rows()),
            "",
            *WITH_THE_EXTENSION,
        ]
    )


#: What needs the acp-notebook extension, and what does the same without it.
WITH_THE_EXTENSION = (
    "in JupyterLab 4 and Notebook 7, the acp-notebook extension adds a Fix button under an",
    "error (it writes and runs %acp --fix below the cell), Ask about this cell (Ctrl+K or",
    "the cell's context menu; its selected lines go marked), cell edits reviewed in the cell",
    "and the review bar; without it (VS Code, the classic Notebook, jupyter console) type",
    "%acp --fix or %acp PROMPT: the same turns, but the agent cannot edit the cells there.",
)


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = max(len(spelled) for spelled, _ in rows) + 2
    return [f"  {spelled.ljust(width)}{text}" for spelled, text in rows]


@dataclass
class AcpOptions:
    prompt: str = ""
    #: The control's name in the registry, when the line is a control.
    control: str | None = None
    #: The value given to the control (``--load ID``), if any.
    control_value: str | None = None
    agent: str | None = None
    session: str = "default"
    permissions: str | None = None
    timeout: float | None = None
    wait: bool | None = None
    headless: bool | None = None
    #: Send the cell context (None: as configured).
    context: bool | None = None
    fix: bool = False
    dry_run: bool = False
    #: Offer the notebook tools to a session this turn opens (None: as configured).
    tools: bool | None = None
    #: ``%acp --inspect PROMPT``: the turn, with the protocol inspector under it.
    inspect: bool = False
    #: The options given on the line (by field name).
    given: set[str] = field(default_factory=set)

    @property
    def sends_prompt(self) -> bool:
        """The line is a prompt turn that reaches an agent: not a control, not
        ``--dry-run``, with words (or ``--fix``)."""
        return self.control is None and not self.dry_run and bool(self.prompt.strip() or self.fix)


# A word, or a quoted string (an agent command line: -a "fast-agent acp --model passthrough").
_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+")


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return shlex.split(token)[0]
    return token


class _Reader:
    """The line's tokens, one at a time."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.pos = 0

    def next(self) -> re.Match[str] | None:
        match = _TOKEN.search(self.line, self.pos)
        if match is not None:
            self.pos = match.end()
        return match

    def value(self, *, dashed: bool) -> str | None:
        """The next token as a value, consumed; with ``dashed`` false, not when it looks
        like an option (a control's value may be left out: ``--resume -s other``)."""
        match = _TOKEN.search(self.line, self.pos)
        if match is None or (not dashed and match.group().startswith("-")):
            return None
        self.pos = match.end()
        return _unquote(match.group())


def parse_line(line: str, cell: str | None = None) -> AcpOptions:
    """Split a magic line (and a cell body) into options and the prompt."""
    options = AcpOptions()
    reader = _Reader(line)
    prompt_start: int | None = None
    control_flag = ""
    while (match := reader.next()) is not None:
        token = match.group()
        if token == "--":
            prompt_start = reader.pos
            break
        if not token.startswith("-"):
            prompt_start = match.start()
            break
        flag, eq, inline = token.partition("=")
        inline_value = _unquote(inline) if eq else None
        control = REGISTRY.by_flag.get(flag)
        option = OPTION_BY_FLAG.get(flag)
        if control is not None and (control.arg is not None or not eq):
            if options.control is not None:
                raise OptionError(f"Give one control at a time, not {control_flag} and {flag}.")
            options.control, control_flag = control.name, flag
            if control.arg is not None:
                options.control_value = inline_value if eq else reader.value(dashed=False)
                if options.control_value is None and control.arg.required:
                    raise OptionError(f"The control {flag} needs a value.")
        elif option is not None and option.metavar is None and not eq:
            setattr(options, option.attr, option.value)
            options.given.add(option.attr)
        elif option is not None and option.metavar is not None:
            text = inline_value if eq else reader.value(dashed=True)
            if text is None:
                raise OptionError(f"The option {flag} needs a value.")
            setattr(options, option.attr, option.convert(flag, text))
            options.given.add(option.attr)
        else:
            raise OptionError(
                f"Unknown option {token}; to send a prompt that starts with '-', put -- before it."
            )
    text = line[prompt_start:].strip() if prompt_start is not None else ""
    if cell is not None:
        text = f"{text}\n{cell}" if text else cell
    options.prompt = text.strip("\n")
    if options.control == "inspector" and options.prompt.strip():
        options.control, options.inspect = None, True  # the only control a prompt may follow
    if options.control is not None and options.prompt.strip():
        raise OptionError(
            f"{control_flag} takes no prompt; remove the text after it or drop {control_flag}."
        )
    return options
