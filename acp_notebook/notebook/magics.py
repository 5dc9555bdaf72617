"""``%acp`` and ``%%acp``: a prompt turn in a cell, or a control.

By default the cell stays busy until its turn ends — so Run All runs the next cells
after the agent's edits, and the kernel's interrupt button cancels the turn — while
its buttons keep working. That needs ipykernel >= 7.4, which processes widget
messages while a cell *awaits*; an input transformer therefore turns a top-level
``%acp`` line into ``await ...``. Where the kernel cannot process clicks during a
busy cell, ``%acp`` returns at once instead (said once).

The configuration (``%config AcpMagics.…``) is ``config.py``; the controls
(``%acp --status`` …) are the registry in ``controls/``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sized
from dataclasses import replace

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import display

from ..agents.presets import DEMO
from ..client.permissions import Policy
from .cells import CellLog
from .completion import install as install_completion
from .config import AcpConfig
from .context import NoError, NotebookPrompt, notebook_prompt
from .controls import REGISTRY, Control, ControlContext, ControlFailed, run, run_awaited
from .dryrun import dry_run_bundle
from .headless import detect_headless
from .manager import NotebookAgents
from .options import AcpOptions, OptionError, parse_line
from .tool_calls import KernelTools
from .turns import TurnHandle, TurnSettings

AWAIT_HELPER = "__acp_notebook_await__"
# The transformed forms of `%acp ...` / `x = %acp ...` / `%%acp` at the top level of a cell.
_LINE_MAGIC = re.compile(
    r"^(?P<assign>[A-Za-z_][A-Za-z0-9_]*\s*=\s*)?get_ipython\(\)\.run_line_magic\('acp', (?P<args>.*)\)\s*$"
)
_CELL_MAGIC = re.compile(r"^get_ipython\(\)\.run_cell_magic\('acp', (?P<args>.*)\)\s*$", re.DOTALL)


_ACP_LINE = re.compile(r"^%acp(?=\s|$)(?P<rest>.*)$")


def escape_transformer(lines: list[str]) -> list[str]:
    """Turn a top-level ``%acp`` line into the magic call before IPython reads it.

    A prompt is free text: IPython would take ``%acp what can you do?`` for a help
    request on ``do`` (a trailing ``?``); here the whole line reaches the magic as typed.
    """
    out = []
    for line in lines:
        match = _ACP_LINE.match(line.rstrip("\n"))
        if match:
            line = f"get_ipython().run_line_magic('acp', {match.group('rest').strip()!r})\n"
        out.append(line)
    return out


def await_transformer(lines: list[str]) -> list[str]:
    """Make top-level ``%acp`` awaited, so the cell stays busy while clicks still work."""
    text = "".join(lines)
    cell = _CELL_MAGIC.match(text)
    if cell:
        return [f"await {AWAIT_HELPER}({cell.group('args')})\n"]
    out = []
    for line in lines:
        match = _LINE_MAGIC.match(line.rstrip("\n"))
        if match:
            line = (
                f"{match.group('assign') or ''}await {AWAIT_HELPER}({match.group('args')}, None)\n"
            )
        out.append(line)
    return out


def kernel_runs_comms_while_awaiting() -> bool:
    """ipykernel >= 7.4 dispatches comm messages while a cell awaits (ipykernel#1565)."""
    try:
        import ipykernel
    except ImportError:
        return False
    parts = re.findall(r"\d+", ipykernel.__version__)[:2]
    return tuple(int(p) for p in parts) >= (7, 4)


@magics_class
class AcpMagics(AcpConfig, Magics):
    """The ``%acp`` magics and their configuration."""

    def __init__(self, shell: InteractiveShell | None = None, **kwargs: object) -> None:
        super().__init__(shell=shell, **kwargs)
        self.agents = NotebookAgents()
        #: The cells as they run: the prompt's context (``cells.py``).
        self.cells: CellLog | None = None
        if self.shell is not None:
            self.agents.tools = KernelTools(self.shell, lambda: self.agents.loop)
            self.cells = CellLog(self.shell)
        self._fallback_said = False
        self.apply_to_agents()

    # ------------------------------------------------------------------ entry points

    @no_var_expand
    @line_cell_magic
    def acp(self, line: str, cell: str | None = None) -> None:
        """Send a prompt to the agent (``%acp --help`` for options)."""
        options = self._parse(line, cell)
        handle = self._start(options, awaited=False)
        if handle is not None and handle.settings.headless:
            try:
                handle.wait()
            finally:  # an interrupted turn still leaves its transcript in the output
                display(handle.bundle(), raw=True)
                self._inspect_after(options)

    async def acp_awaited(self, line: str, cell: str | None) -> None:
        """What a top-level ``%acp`` becomes: awaited, so the cell stays busy."""
        options = self._parse(line, cell)
        if options.control is not None and REGISTRY[str(options.control)].awaits_page:
            await self._control_awaited(options)
            return
        handle = self._start(options, awaited=True)
        if handle is None:
            return
        if handle.settings.headless:
            try:
                await handle
            finally:  # an interrupted turn still leaves its transcript in the output
                display(handle.bundle(), raw=True)
                self._inspect_after(options)
        elif handle.settings.wait:
            await handle

    @staticmethod
    def _parse(line: str, cell: str | None) -> AcpOptions:
        try:
            return parse_line(line, cell)
        except OptionError as exc:
            raise UsageError(str(exc)) from None

    def _start(self, options: AcpOptions, *, awaited: bool) -> TurnHandle | None:
        if options.control is not None:
            self._control(options)
            return None
        if not options.prompt.strip() and not options.fix:
            raise UsageError(
                "Give a prompt after %acp (or a cell body after %%acp); %acp --help lists the options."
            )
        settings = self.turn_settings(options, awaited=awaited)
        if settings.tools and self.agents.tools is not None:
            self.agents.tools.prepare()  # here: on the main thread, inside a cell
        if options.dry_run:
            display(dry_run_bundle(self.agents, settings), raw=True)
            return None
        if settings.headless:
            return self.agents.start_turn(settings)
        from ..ui.turn import TurnView
        from .cell import LiveCell

        loop = self.agents.loop
        label = settings.agent
        if label == DEMO:
            # Say so: with no configuration at all, this is the built-in demo agent.
            label = "demo agent (built in, offline; -a claude, -a gemini … for a real one)"
        view = TurnView(
            label,
            settings.session,
            post=loop.post,
            schedule_later=loop.call_later,
            interval=settings.coalesce,
        )
        live = LiveCell(view, loop)
        display(live.widget, display_id=live.display_id)
        if options.inspect:  # under the turn, following its messages as they come
            self._control(replace(options, control="inspector"))
        return self.agents.start_turn(settings, live)

    def _inspect_after(self, options: AcpOptions) -> None:
        """``%acp --inspect PROMPT`` headless: the timeline once the turn is over."""
        if options.inspect:
            self._control(replace(options, control="inspector"))

    # ------------------------------------------------------------------ settings

    def is_headless(self, given: bool | None = None) -> bool:
        """No widgets: as given (``--headless``), configured, or when no one can click."""
        if given is not None:
            return given
        configured = {"yes": True, "no": False}.get(self.headless)
        return configured if configured is not None else detect_headless(self.shell)

    def policy(self, given: str | None = None) -> Policy:
        return given or self.permissions  # type: ignore[return-value]

    def turn_settings(self, options: AcpOptions, *, awaited: bool) -> TurnSettings:
        headless = self.is_headless(options.headless)
        wait = self.wait if options.wait is None else options.wait
        if not headless and wait and not (awaited and kernel_runs_comms_while_awaiting()):
            wait = False
            if awaited and not self._fallback_said:
                self._fallback_said = True
                print(
                    "acp_notebook: this kernel cannot process button clicks while a cell runs "
                    "(that needs ipykernel >= 7.4), so %acp returns at once and the turn goes on "
                    "in the background.",
                    file=sys.stderr,
                )
        return TurnSettings(
            prompt=self.prompt(options),
            agent=options.agent or self.agent,
            session=options.session,
            permissions=self.policy(options.permissions),
            timeout=options.timeout if options.timeout is not None else self.timeout,
            headless=headless,
            wait=wait,
            coalesce=self.coalesce_ms / 1000,
            tools=self.tools and options.tools is not False,
        )

    def prompt(self, options: AcpOptions) -> NotebookPrompt:
        """The line's words with the notebook as context (``context.py``)."""
        with_cells = self.context if options.context is None else options.context
        try:
            return notebook_prompt(
                self.cells, options.prompt, cells_too=with_cells, fix=options.fix
            )
        except NoError as exc:
            raise UsageError(str(exc)) from None

    def control_context(
        self, agent: str | None, session: str | None, given: AcpOptions | None = None
    ) -> ControlContext:
        """What a control acts on, for ``%acp --…`` and ``acp.…()`` alike: the agent and
        session given (None: not given), with the policy and interactivity of the line
        (``given``) or the configuration."""
        return ControlContext(
            self.agents,
            self.agent,
            agent=agent,
            session=session,
            policy=self.policy(given.permissions if given else None),
            interactive=not self.is_headless(given.headless if given else None),
        )

    # ------------------------------------------------------------------ controls

    def _control(self, options: AcpOptions) -> None:
        control, ctx = self._control_of(options)
        try:
            show(run(control, ctx, *control.arguments(options.control_value)))
        except ControlFailed as exc:
            print(f"acp_notebook: {exc}", file=sys.stderr)

    async def _control_awaited(self, options: AcpOptions) -> None:
        control, ctx = self._control_of(options)
        try:
            show(await run_awaited(control, ctx, *control.arguments(options.control_value)))
        except ControlFailed as exc:
            print(f"acp_notebook: {exc}", file=sys.stderr)

    def _control_of(self, options: AcpOptions) -> tuple[Control, ControlContext]:
        control = REGISTRY[str(options.control)]
        session = options.session if "session" in options.given else None
        return control, self.control_context(options.agent, session, options)


def show(answer: object) -> None:
    """A control's answer in the cell: words are printed (an empty table is words too);
    anything else displays itself (Markdown tables, widgets, bundles)."""
    if answer is None:
        return
    if isinstance(answer, str) or (isinstance(answer, Sized) and not len(answer)):
        print(answer)
    else:
        display(answer)


def register(shell: InteractiveShell) -> AcpMagics:
    magics = AcpMagics(shell=shell)
    shell.register_magics(magics)
    if magics.cells is not None:
        magics.cells.install()
    shell.user_ns[AWAIT_HELPER] = magics.acp_awaited
    shell.user_ns_hidden[AWAIT_HELPER] = magics.acp_awaited
    install_completion(shell, magics.agents.slash_commands)
    if escape_transformer not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(escape_transformer)
    if await_transformer not in shell.input_transformers_post:
        shell.input_transformers_post.append(await_transformer)
    return magics


def unregister(shell: InteractiveShell, magics: AcpMagics | None) -> None:
    if escape_transformer in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(escape_transformer)
    if await_transformer in shell.input_transformers_post:
        shell.input_transformers_post.remove(await_transformer)
    shell.user_ns.pop(AWAIT_HELPER, None)
    shell.user_ns_hidden.pop(AWAIT_HELPER, None)
    if magics is not None:
        if magics.cells is not None:
            magics.cells.uninstall()
        magics.agents.shutdown()
        shell.magics_manager.magics["line"].pop("acp", None)
        shell.magics_manager.magics["cell"].pop("acp", None)
