"""The ``acp-notebook`` command: one turn from a shell, diagnosing an agent, listing presets.

    acp-notebook run [--agent SPEC] [--cwd DIR] [--add-dir DIR]... [--permissions ask|allow|deny]
                     [--rule RULE]... [--trace FILE] [--timeout SECONDS] [--auth METHOD_ID]
                     [--env NAME=VALUE]... PROMPT
    acp-notebook doctor [--agent SPEC]
    acp-notebook agents
    acp-notebook demo-agent [...]
    acp-notebook replay-agent TRACE [--speed X]
    acp-notebook install-kernel [--user|--sys-prefix|--prefix DIR]

The pieces: :mod:`.commands` (the parser, the small commands, :func:`main`),
:mod:`.run` (``run``), :mod:`.prompts` (the agent's questions on a terminal),
:mod:`.doctor` (``doctor``), :mod:`.exits` (exit codes). The command imports no Jupyter
or widget code.
"""

from .commands import build_parser, entry, main
from .exits import EXIT_AGENT_FAILED, EXIT_USAGE

__all__ = ["EXIT_AGENT_FAILED", "EXIT_USAGE", "build_parser", "entry", "main"]
