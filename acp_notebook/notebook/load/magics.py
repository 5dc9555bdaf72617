"""``%acp`` and ``%%acp``: a prompt turn in a cell, or a control.

By default the cell stays busy until its turn ends — so Run All runs the next cells
after the agent's edits, and the kernel's interrupt button cancels the turn — while
its buttons keep working. That needs ipykernel >= 7.4, which processes widget
messages while a cell *awaits*; an input transformer (``transformers.py``) therefore
turns a top-level ``%acp`` line into ``await ...``. Where the kernel cannot process
clicks during a busy cell, ``%acp`` returns at once instead (said once).

``%load_ext`` only registers what is here, which is light: what a line does is the
:class:`~..turn.line.AcpRunner`, built by the first ``%acp`` or API call (:attr:`AcpMagics.runner`).
The configuration (``%config AcpMagics.…``) is ``config.py``; the controls
(``%acp --status`` …) are the registry in ``controls/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..prompt.cell_log import CellLog
from . import transformers
from .completion import install as install_completion
from .completion import uninstall as uninstall_completion
from .config import AcpConfig
from .headless import install as watch_frontend
from .headless import uninstall as unwatch_frontend

if TYPE_CHECKING:
    from ..runtime.agents import NotebookAgents
    from ..turn.line import AcpRunner
    from .options import AcpOptions


@magics_class
class AcpMagics(AcpConfig, Magics):
    """The ``%acp`` magics and their configuration."""

    #: Made on first use (:attr:`runner`); a class default, as `%config` values are
    #: applied (and observed) before ``__init__`` sets anything.
    _runner: AcpRunner | None = None

    def __init__(self, shell: InteractiveShell | None = None, **kwargs: object) -> None:
        super().__init__(shell=shell, **kwargs)
        #: The cells as they run: the prompt's context (``prompt/cells.py``), from ``%load_ext`` on.
        self.cells: CellLog | None = CellLog(self.shell) if self.shell is not None else None
        # Read now, as when the agents were made here: a malformed setting in the
        # environment is refused (one line on stderr) at `%load_ext`.
        _ = (self.permission_rules, self.mcp_servers)

    @property
    def runner(self) -> AcpRunner:
        """What ``%acp`` does, and the agents: made on first use (this is where the
        notebook layer is imported, not at ``%load_ext``)."""
        return self._runner_for(None)

    def _runner_for(self, options: AcpOptions | None) -> AcpRunner:
        """:attr:`runner`; the first one made for a line that sends a prompt starts its
        agent before it loads the notebook layer, so the two overlap (``runtime/start.py``)."""
        if self._runner is None:
            early = None
            if options is not None and options.sends_prompt:
                from ..runtime.start import start_early

                early = start_early(options.agent or self.agent, self.sandbox_choice())
            try:
                from ..turn.line import AcpRunner  # while the agent starts

                self._runner = AcpRunner(self, self.cells, early)
            except BaseException:
                if early is not None:
                    early.discard()
                raise
        return self._runner

    @property
    def agents(self) -> NotebookAgents:
        return self.runner.agents

    def agents_if_made(self) -> NotebookAgents | None:
        return self._runner.agents if self._runner is not None else None

    # ------------------------------------------------------------------ entry points

    @no_var_expand
    @line_cell_magic
    def acp(self, line: str, cell: str | None = None) -> None:
        """Send a prompt to the agent (``%acp --help`` for options)."""
        options = parsed(line, cell)
        self._runner_for(options).acp(options)

    async def acp_awaited(self, line: str, cell: str | None) -> None:
        """What a top-level ``%acp`` becomes: awaited, so the cell stays busy."""
        options = parsed(line, cell)
        await self._runner_for(options).acp_awaited(options)

    def slash_commands(self) -> set[str]:
        """The slash commands the agents announced (none before the first prompt)."""
        agents = self.agents_if_made()
        return agents.slash_commands() if agents is not None else set()


def parsed(line: str, cell: str | None) -> AcpOptions:
    """The ``%acp`` line (and cell body) read once, for everything the line does; a
    malformed line is the user's one-sentence error."""
    from .options import OptionError, parse_line

    try:
        return parse_line(line, cell)
    except OptionError as exc:
        raise UsageError(str(exc)) from None


def register(shell: InteractiveShell) -> AcpMagics:
    magics = AcpMagics(shell=shell)
    shell.register_magics(magics)
    if magics.cells is not None:
        magics.cells.install()
    transformers.install(shell, magics.acp_awaited)
    install_completion(shell, magics.slash_commands)
    watch_frontend(shell)
    return magics


def unregister(shell: InteractiveShell, magics: AcpMagics | None) -> None:
    transformers.uninstall(shell)
    uninstall_completion(shell)
    unwatch_frontend(shell)
    if magics is not None:
        if magics.cells is not None:
            magics.cells.uninstall()
        agents = magics.agents_if_made()
        if agents is not None:
            agents.shutdown()
        shell.magics_manager.magics["line"].pop("acp", None)
        shell.magics_manager.magics["cell"].pop("acp", None)
