"""What the presets' agents really answer when something is missing, each failure mapped
to one sentence and the exact step that fixes it.

Each :class:`Finding` was seen with the agent itself (its error message, its ``data``, its
last stderr lines); :func:`explain` finds the first that a failure's text matches.
:func:`before_start` says what is surely missing before the agent even starts (no key and
no saved login for an agent that needs one; root outside a sandbox for Claude), so
``doctor`` says it at once. The step is a command to type, or a variable to set, which
each surface words its own way (:meth:`Finding.step`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["FINDINGS", "STDERR_LINES", "Finding", "before_start", "explain", "with_finding"]

Surface = Literal["notebook", "terminal"]

#: How many of the agent's last stderr lines a failure is searched in: an agent's own
#: reason may come before its help text (fast-agent's "--model, FAST_AGENT_MODEL" is
#: followed by six lines of it).
STDERR_LINES = 20


@dataclass(frozen=True)
class Finding:
    """One failure of one preset's agent, as it shows, and what fixes it."""

    preset: str
    #: Searched (case-insensitive) in the failure's text: message, data, stderr lines.
    pattern: str
    #: What happened and what to do, one sentence.
    sentence: str
    #: A command to run in a terminal, or
    command: str = ""
    #: a variable to set (``NAME=value``; ``NAME=…`` where the user supplies the value).
    env: str = ""

    def step(self, surface: Surface) -> str:
        """The fix, as ``surface`` takes it: ``%env NAME=…`` in a notebook (then a restart
        of the agent), ``export NAME=…`` on a terminal, or the command itself."""
        if self.command:
            return f"`{self.command}`"
        if surface == "notebook":
            return f"`%env {self.env}` then `%acp --restart`"
        return f"`export {self.env}`"

    def text(self, surface: Surface) -> str:
        return f"{self.sentence} Fix: {self.step(surface)}."


_CLAUDE_LOGIN = Finding(
    "claude",
    r"Claude Code process exited with code 1|Invalid API key|Please run /login|"
    r"Authentication required",
    "Claude Agent is not logged in: log in once with Claude Code in a terminal, or set "
    "ANTHROPIC_API_KEY where the agent starts.",
    command="claude /login",
)
_CLAUDE_ROOT = Finding(
    "claude",
    r"Query closed before response received",
    "Claude Agent ends its session at once when it runs as root outside a sandbox; tell it "
    "the machine is one.",
    env="IS_SANDBOX=1",
)
_GEMINI_KEY = Finding(
    "gemini",
    r"Gemini API key is missing|GEMINI_API_KEY",
    "Gemini CLI has no key: set GEMINI_API_KEY, or log in with Google by running `gemini` "
    "once in a terminal.",
    env="GEMINI_API_KEY=…",
)
#: Gemini CLI drops ``session/new``'s MCP servers, the notebook tools with them, in a folder
#: it does not trust (``checkPathTrust`` in gemini-cli 0.61.0); said by ``%acp --mcp``.
GEMINI_UNTRUSTED = Finding(
    "gemini",
    r"untrusted|trusted folder",
    "Gemini CLI ignores the MCP servers it is given, the notebook tools too, in a folder it "
    "does not trust.",
    env="GEMINI_CLI_TRUST_WORKSPACE=true",
)

#: Every known failure, the most specific first.
FINDINGS: tuple[Finding, ...] = (
    _CLAUDE_ROOT,
    _CLAUDE_LOGIN,
    Finding(
        "codex",
        r"Authentication required",
        "Codex needs a login: set OPENAI_API_KEY (or CODEX_API_KEY), then log in with its "
        "key method (`--login openai-api-key`).",
        env="OPENAI_API_KEY=…",
    ),
    _GEMINI_KEY,
    GEMINI_UNTRUSTED,
    Finding(
        "qwen-code",
        r"Use Qwen Code CLI to authenticate first|Authentication required",
        "Qwen Code needs a login: set OPENAI_API_KEY (with OPENAI_BASE_URL and OPENAI_MODEL "
        "for your provider), then log in with its `openai` method (`--login openai`).",
        env="OPENAI_API_KEY=…",
    ),
    Finding(
        "opencode",
        r"ProviderModelNotFound|provider.*not found|no provider|did not finish|"
        r"timeout \(-t",
        "OpenCode has no model provider it can reach (without one it never answers): log in "
        "to a provider, or define one in ~/.config/opencode/opencode.json.",
        command="opencode auth login",
    ),
    Finding(
        "fast-agent",
        r"--model|model.*(not|no) .*(set|specified|configured)|FAST_AGENT_MODEL",
        "fast-agent needs a model: name one with --model in its command or FAST_AGENT_MODEL "
        "(`passthrough` needs no account).",
        env="FAST_AGENT_MODEL=…",
    ),
)


def explain(preset: str | None, text: str) -> Finding | None:
    """The first finding of ``preset`` that ``text`` (a failure's message, data and stderr
    lines) matches; None for another agent or an unknown failure."""
    if preset is None or not text:
        return None
    for finding in FINDINGS:
        if finding.preset == preset and re.search(finding.pattern, text, re.IGNORECASE):
            return finding
    return None


def with_finding(preset: str | None, error: str, stderr: list[str]) -> str:
    """``error`` and, when ``preset``'s agent is known to fail so (``stderr``: its last
    lines), what fixes it, in a notebook's words."""
    finding = explain(preset, "\n".join([error, *stderr[-STDERR_LINES:]]))
    return f"{error} {finding.text('notebook')}" if finding is not None else error


#: Where each agent that needs an account keeps it: any of these variables, or a saved
#: login in one of these files (under the home directory).
_CREDENTIALS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...], Finding]] = {
    "claude": (
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
        (".claude/.credentials.json",),
        _CLAUDE_LOGIN,
    ),
    "gemini": (
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
        (".gemini/oauth_creds.json",),
        _GEMINI_KEY,
    ),
}


def before_start(
    preset: str | None,
    env: Mapping[str, str],
    *,
    confined: bool,
    home: Path | None = None,
    is_root: bool | None = None,
) -> list[Finding]:
    """What is surely missing before ``preset``'s agent starts with ``env`` (over this
    process's environment): no key and no saved login where the agent needs one; for
    Claude as root, IS_SANDBOX unless the sandbox confines it (its preset sets it then)."""
    if preset is None:
        return []

    def given(name: str) -> bool:
        return bool(env.get(name) or os.environ.get(name))

    found: list[Finding] = []
    root = (hasattr(os, "geteuid") and os.geteuid() == 0) if is_root is None else is_root
    if preset == "claude" and root and not confined and not given("IS_SANDBOX"):
        found.append(_CLAUDE_ROOT)
    needs = _CREDENTIALS.get(preset)
    if needs is not None:
        names, files, finding = needs
        home = Path.home() if home is None else home
        if not any(given(name) for name in names) and not any(
            (home / path).is_file() for path in files
        ):
            found.append(finding)
    return found
