"""What ``%acp`` does — a prompt turn or a control — on the agents it owns.

Built by the first ``%acp`` (or the first API call), not by ``%load_ext``: this is where
the notebook layer (the agents, turns, widgets, controls, the protocol models) is
loaded. The magics read the line (``load/options.py``) once and hand it here; the
configuration is ``load/config.py``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sized
from dataclasses import replace
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.display import display

from ...client.presets import DEMO
from ..controls import REGISTRY, Control, ControlContext, ControlFailed, run, run_awaited
from ..frontend import frontends
from ..load.options import AcpOptions
from ..located import say_once
from ..prompt.context import NoError, NotebookPrompt, notebook_prompt
from ..runtime.agents import NotebookAgents
from ..tools.session_tools import KernelTools
from .dry_run import dry_run_bundle
from .handle import TurnHandle, TurnSettings

if TYPE_CHECKING:
    from ..load.config import AcpConfig
    from ..prompt.cell_log import CellLog
    from ..runtime.start import EarlyStart


def kernel_runs_comms_while_awaiting() -> bool:
    """ipykernel >= 7.4 dispatches comm messages while a cell awaits (ipykernel#1565)."""
    try:
        import ipykernel
    except ImportError:
        return False
    parts = re.findall(r"\d+", ipykernel.__version__)[:2]
    return tuple(int(p) for p in parts) >= (7, 4)


class AcpRunner:
    """The agents of this kernel, and ``%acp``'s lines (read by the magics) run on them
    with the settings of ``config`` (the configuration and interactivity) and the cells
    of ``cells`` as context; ``early``: the agent of the first line, already starting
    (``runtime/start.py``)."""

    def __init__(
        self, config: AcpConfig, cells: CellLog | None = None, early: EarlyStart | None = None
    ) -> None:
        self.config = config
        self.cells = cells
        self.agents = NotebookAgents(early=early)
        if config.shell is not None:
            self.agents.tools = KernelTools(config.shell, lambda: self.agents.loop)
        self._fallback_said = False
        config.apply_to_agents(self.agents)

    # ------------------------------------------------------------------ entry points

    def acp(self, options: AcpOptions) -> None:
        handle = self._start(options, awaited=False)
        if handle is not None and handle.settings.plain:
            self._wait_plain(handle)
        elif handle is not None and handle.settings.headless:
            try:
                handle.wait()
            finally:  # an interrupted turn still leaves its transcript in the output
                display(handle.bundle(), raw=True)
                self._inspect_after(options)

    async def acp_awaited(self, options: AcpOptions) -> None:
        if options.control is not None and REGISTRY[str(options.control)].awaits_page:
            await self._control_awaited(options)
            return
        handle = self._start(options, awaited=True)
        if handle is None:
            return
        if handle.settings.plain:
            self._wait_plain(handle)  # input() blocks the main thread anyway
        elif handle.settings.headless:
            try:
                await handle
            finally:  # an interrupted turn still leaves its transcript in the output
                display(handle.bundle(), raw=True)
                self._inspect_after(options)
        elif handle.settings.wait:
            await handle

    def _start(self, options: AcpOptions, *, awaited: bool) -> TurnHandle | None:
        handle = None
        try:
            handle = self._start_turn(options, awaited=awaited)
            return handle
        finally:
            if handle is None:  # no turn took the agent started early: not needed
                self.agents.discard_early()

    def _start_turn(self, options: AcpOptions, *, awaited: bool) -> TurnHandle | None:
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
        if settings.plain and self.agents.tools is not None:
            from ..view.plain import PlainView

            return self.agents.start_turn(settings, PlainView(self.agents.tools.prepare()))
        from ...ui.turn import TurnView
        from ..view.live_cell import LiveCell

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

    def _wait_plain(self, handle: TurnHandle) -> None:
        """Block until a plain-text turn ends, printing it and asking its questions here,
        in the cell (its stdout and stdin)."""
        try:
            handle.wait()
        finally:
            if self.agents.tools is not None and self.agents.tools.runner is not None:
                self.agents.tools.runner.drain()  # the last words, queued as the turn ended

    def _inspect_after(self, options: AcpOptions) -> None:
        """``%acp --inspect PROMPT`` headless: the timeline once the turn is over."""
        if options.inspect:
            self._control(replace(options, control="inspector"))

    # ------------------------------------------------------------------ settings

    def turn_settings(self, options: AcpOptions, *, awaited: bool) -> TurnSettings:
        config = self.config
        headless = config.is_headless(options.headless)
        plain = not headless and config.is_plain(options.headless)
        wait = config.wait if options.wait is None else options.wait
        if (
            not headless
            and not plain
            and wait
            and not (awaited and kernel_runs_comms_while_awaiting())
        ):
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
            agent=options.agent or config.agent,
            session=options.session,
            permissions=config.policy(options.permissions),
            timeout=options.timeout if options.timeout is not None else config.timeout,
            headless=headless,
            plain=plain,
            wait=wait,
            coalesce=config.coalesce_ms / 1000,
            tools=config.tools and options.tools is not False,
            cell_id=frontends.executing_cell(),
        )

    def prompt(self, options: AcpOptions) -> NotebookPrompt:
        """The line's words with the notebook as context (``prompt/context.py``)."""
        with_cells = self.config.context if options.context is None else options.context
        try:
            prompt = notebook_prompt(
                self.cells,
                options.prompt,
                cells_too=with_cells,
                fix=options.fix,
                about=frontends.asked(),
            )
        except NoError as exc:
            raise UsageError(str(exc)) from None
        if prompt.unknown_note is not None:
            print(f"acp_notebook: {prompt.unknown_note}", file=sys.stderr)
        say_once(prompt.unseen)
        return prompt

    def control_context(
        self, agent: str | None, session: str | None, given: AcpOptions | None = None
    ) -> ControlContext:
        """What a control acts on, for ``%acp --…`` and ``acp.…()`` alike: the agent and
        session given (None: not given), with the policy and interactivity of the line
        (``given``) or the configuration."""
        return ControlContext(
            self.agents,
            self.config.agent,
            agent=agent,
            session=session,
            policy=self.config.policy(given.permissions if given else None),
            interactive=not self.config.is_headless(given.headless if given else None),
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
