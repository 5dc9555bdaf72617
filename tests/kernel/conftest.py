"""A real Jupyter kernel, driven the way a frontend drives it.

:class:`Kernel` wraps a ``jupyter_client`` kernel manager and a blocking client. Every
iopub message is kept, in arrival order, in one log (``Kernel.log``): a turn's widget
updates and its final ``update_display_data`` may arrive after its cell went idle and
with any parent header, so they are matched by comm id and display id, not by parent.

:meth:`Kernel.execute` sends an ``execute_request`` and returns an :class:`Execution`,
a live view of that request in the log: its own messages (by parent), its widget tree
(every comm reachable from the ``VBox`` it displayed), its final transcript bundle,
and when it went idle. :meth:`Execution.click` / :meth:`Kernel.click` send the
ipywidgets 8 click (a ``comm_msg`` to the Button's model id) as JupyterLab does.

Timeouts here are safety nets: a test that hangs fails with a description of what it
was waiting for instead of blocking the suite. No test asserts on how fast anything is.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

if TYPE_CHECKING:
    from .fake_frontend import FakeFrontend

#: Safety net for one wait (kernel start, a whole turn, ...). Never an assertion of speed.
SAFETY = 90.0
#: The checkout under test.
ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
REF = "IPY_MODEL_"


@dataclass
class Msg:
    """One iopub message, numbered in arrival order (``seq``)."""

    seq: int
    msg_type: str
    content: dict[str, Any]
    parent_id: str | None
    received: float
    size: int  # bytes of the JSON content (what the frontend has to receive)


@dataclass
class Comm:
    """A widget model seen on iopub: its state as opened, then as updated."""

    comm_id: str
    opened: Msg
    state: dict[str, Any]
    #: Every model id this model referred to at any time (children, layout, style...).
    refs: set[str] = field(default_factory=set)
    updates: list[Msg] = field(default_factory=list)
    closed: Msg | None = None

    @property
    def model(self) -> str:
        return str(self.state.get("_model_name", ""))

    @property
    def description(self) -> str | None:
        value = self.state.get("description")
        return value if isinstance(value, str) else None

    def updated_with(self, key: str, value: Any) -> list[Msg]:
        """The updates that set trait ``key`` to ``value``."""
        return [m for m in self.updates if m.content["data"].get("state", {}).get(key) == value]


def _refs(value: Any) -> set[str]:
    """Model ids referenced in a widget state ("IPY_MODEL_<id>", nested in lists)."""
    found: set[str] = set()
    if isinstance(value, str) and value.startswith(REF):
        found.add(value[len(REF) :])
    elif isinstance(value, list | tuple):
        for item in value:
            found |= _refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            found |= _refs(item)
    return found


def html_value(msg: Msg) -> str:
    """The ``value`` an HTML widget's comm_open or update carries ("" if none)."""
    value = msg.content.get("data", {}).get("state", {}).get("value", "")
    return value if isinstance(value, str) else ""


class Kernel:
    """One running kernel and everything it published on iopub."""

    def __init__(
        self,
        cwd: Path,
        *,
        kernel_name: str = "python3",
        kernel_spec_manager: KernelSpecManager | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``kernel_name`` in ``kernel_spec_manager``'s kernelspecs (Jupyter's own by
        default), run with ``env`` added to this process's environment."""
        self.cwd = cwd
        extra = {} if kernel_spec_manager is None else {"kernel_spec_manager": kernel_spec_manager}
        # Unix sockets in ``cwd``, not TCP ports: a port found free here was sometimes
        # taken by another process before the kernel bound it ("Address already in use",
        # the kernel dead before its kernel_info reply, every test of its module in error).
        self.km = KernelManager(
            kernel_name=kernel_name, transport="ipc", ip=str(cwd / "kernel"), **extra
        )
        # The package is installed editable, but the kernel (and the agents it starts,
        # which inherit its environment) import this checkout first whatever the state
        # of that install (a reinstall running next to the tests, say).
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        self.km.start_kernel(cwd=str(cwd), env={**os.environ, **(env or {}), "PYTHONPATH": path})
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=SAFETY)
        self.log: list[Msg] = []
        self.comms: dict[str, Comm] = {}
        self.executions: list[Execution] = []
        self._down = False

    # ------------------------------------------------------------------ iopub

    def pump(self, timeout: float = 0.05) -> bool:
        """Read one iopub message into the log; False when none came within ``timeout``."""
        try:
            raw = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return False
        content = raw.get("content", {})
        msg = Msg(
            seq=len(self.log),
            msg_type=raw["header"]["msg_type"],
            content=content,
            parent_id=(raw.get("parent_header") or {}).get("msg_id"),
            received=time.monotonic(),
            size=len(json.dumps(content, separators=(",", ":"), default=str)),
        )
        self.log.append(msg)
        comm_id = content.get("comm_id")
        if msg.msg_type == "comm_open":
            state = dict(content.get("data", {}).get("state", {}))
            self.comms[comm_id] = Comm(comm_id, msg, state, _refs(state))
        elif msg.msg_type == "comm_msg" and comm_id in self.comms:
            comm = self.comms[comm_id]
            comm.updates.append(msg)
            delta = content.get("data", {}).get("state", {})
            comm.state.update(delta)
            comm.refs |= _refs(delta)
        elif msg.msg_type == "comm_close" and comm_id in self.comms:
            self.comms[comm_id].closed = msg
        return True

    def drain(self) -> None:
        """Read whatever is already waiting."""
        while self.pump(0.01):
            pass

    def wait_for(self, predicate: Callable[[], Any], what: str, timeout: float = SAFETY) -> Any:
        """Read iopub until ``predicate()`` is truthy; return its value. Fails after the
        safety timeout, saying what it was waiting for."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out ({timeout:g} s safety net) waiting for {what}")
            self.pump(0.05)

    def settle(self, quiet: float = 0.3, timeout: float = SAFETY) -> None:
        """Read until iopub has been quiet for ``quiet`` seconds (late widget traffic)."""
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() - last < quiet and time.monotonic() < deadline:
            if self.pump(0.05):
                last = time.monotonic()

    # ------------------------------------------------------------------ requests

    def execute(
        self,
        code: str,
        allow_stdin: bool = True,
        until: str | Callable[[Execution], Any] | None = "idle",
        timeout: float = SAFETY,
        cell_id: str | None = None,
    ) -> Execution:
        """Send ``code``; wait ``until`` "idle" (the cell returned), "final" (the turn's
        transcript bundle arrived, and the cell is idle), a predicate of the execution,
        or None (return at once). ``cell_id``: sent as JupyterLab does, in the request's
        metadata (``cellId``)."""
        if cell_id is None:
            msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        else:
            content = {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": allow_stdin,
                "stop_on_error": True,
            }
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        execution = Execution(self, msg_id, code, allow_stdin)
        self.executions.append(execution)
        if until is not None:
            execution.wait(until, timeout)
        return execution

    def click(self, label: str, within: Execution | None = None) -> Comm:
        """Click the most recent Button labelled ``label`` (in ``within``'s widget tree)."""
        comms = within.comms if within is not None else list(self.comms.values())
        buttons = [c for c in comms if c.model == "ButtonModel" and c.description == label]
        assert buttons, f"no button labelled {label!r}" + (
            f" in the view of {within.code!r}" if within is not None else ""
        )
        button = max(buttons, key=lambda c: c.opened.seq)
        self.send_click(button.comm_id)
        return button

    def send_click(self, comm_id: str) -> None:
        """The ipywidgets 8 click: a ``custom`` comm message to the Button's model."""
        msg = self.kc.session.msg(
            "comm_msg",
            {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}},
        )
        self.kc.shell_channel.send(msg)

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def text(self, code: str, timeout: float = SAFETY) -> str:
        """Run ``code`` (headless, no widgets) and return its stdout; fails on an error."""
        execution = self.execute(code, allow_stdin=False, until="idle", timeout=timeout)
        assert not execution.errors, execution.describe()
        return execution.stdout

    def agent_log(self) -> list[tuple[str, dict[str, Any]]]:
        """The JSON-RPC messages exchanged with the agents so far, as (direction, message):
        direction "send" (client → agent) or "recv". Read from the extension's message log
        inside the kernel (what ``%acp --log`` shows), as JSON."""
        out = self.text(
            "print(__import__('json').dumps([[m.direction, m.message] for m in "
            "__import__('acp_notebook').messages() if m.message is not None], default=str))"
        )
        return [(direction, message) for direction, message in json.loads(out)]

    def shutdown(self) -> None:
        """Stop the channels and shut the kernel down politely (idempotent)."""
        if self._down:
            return
        self._down = True
        try:
            self.kc.stop_channels()
        finally:
            if self.km.is_alive():
                self.km.shutdown_kernel(now=False)


class Execution:
    """One ``execute_request`` and what it produced, read from the kernel's log."""

    def __init__(self, kernel: Kernel, msg_id: str, code: str, allow_stdin: bool) -> None:
        self.kernel = kernel
        self.msg_id = msg_id
        self.code = code
        self.allow_stdin = allow_stdin
        self.start_seq = len(kernel.log)

    # ------------------------------------------------------------------ by parent

    @property
    def messages(self) -> list[Msg]:
        return [m for m in self.kernel.log if m.parent_id == self.msg_id]

    def of_type(self, *types: str) -> list[Msg]:
        return [m for m in self.messages if m.msg_type in types]

    @property
    def idle(self) -> Msg | None:
        for m in self.of_type("status"):
            if m.content.get("execution_state") == "idle":
                return m
        return None

    @property
    def busy(self) -> bool:
        return self.idle is None

    @property
    def errors(self) -> list[Msg]:
        return self.of_type("error")

    @property
    def stdout(self) -> str:
        return "".join(
            m.content["text"] for m in self.of_type("stream") if m.content["name"] == "stdout"
        )

    @property
    def stderr(self) -> str:
        return "".join(
            m.content["text"] for m in self.of_type("stream") if m.content["name"] == "stderr"
        )

    @property
    def displays(self) -> list[Msg]:
        return self.of_type("display_data")

    # ------------------------------------------------------------------ the live view

    @property
    def widget_display(self) -> Msg | None:
        for m in self.displays:
            if WIDGET_VIEW in m.content.get("data", {}):
                return m
        return None

    @property
    def display_id(self) -> str | None:
        shown = self.widget_display
        return shown.content.get("transient", {}).get("display_id") if shown else None

    @property
    def root(self) -> str | None:
        shown = self.widget_display
        return shown.content["data"][WIDGET_VIEW]["model_id"] if shown else None

    @property
    def comms(self) -> list[Comm]:
        """Every widget model of this cell's live view (reachable from its root), by age."""
        root = self.root
        if root is None:
            return []
        seen: set[str] = set()
        todo = [root]
        while todo:
            comm_id = todo.pop()
            if comm_id in seen or comm_id not in self.kernel.comms:
                continue
            seen.add(comm_id)
            todo.extend(self.kernel.comms[comm_id].refs)
        return sorted((self.kernel.comms[c] for c in seen), key=lambda c: c.opened.seq)

    @property
    def comm_msgs(self) -> list[Msg]:
        """Every trait update of this view's widgets, in arrival order."""
        return sorted((m for c in self.comms for m in c.updates), key=lambda m: m.seq)

    def buttons(self, label: str) -> list[Comm]:
        return [c for c in self.comms if c.model == "ButtonModel" and c.description == label]

    def html_text(self) -> str:
        """The concatenated values of the view's HTML widgets (what is shown live)."""
        return "\n".join(
            str(c.state.get("value", "")) for c in self.comms if c.model == "HTMLModel"
        )

    def html_messages(self) -> list[Msg]:
        """The comm_open and updates of the view's HTML widgets, in arrival order."""
        found = [m for c in self.comms if c.model == "HTMLModel" for m in (c.opened, *c.updates)]
        return sorted(found, key=lambda m: m.seq)

    @property
    def updates(self) -> list[Msg]:
        """``update_display_data`` for this cell's display id (any parent)."""
        display_id = self.display_id
        if display_id is None:
            return []
        return [
            m
            for m in self.kernel.log
            if m.msg_type == "update_display_data"
            and m.content.get("transient", {}).get("display_id") == display_id
        ]

    @property
    def final(self) -> Msg | None:
        """The transcript bundle: the live view's replacement, or a headless display."""
        for m in self.updates:
            if "text/markdown" in m.content.get("data", {}):
                return m
        if self.widget_display is None:
            for m in self.displays:
                if "text/markdown" in m.content.get("data", {}):
                    return m
        return None

    @property
    def markdown(self) -> str:
        final = self.final
        assert final is not None, f"no transcript bundle yet for {self.code!r}"
        return str(final.content["data"]["text/markdown"])

    @property
    def plain(self) -> str:
        final = self.final
        assert final is not None, f"no transcript bundle yet for {self.code!r}"
        return str(final.content["data"]["text/plain"])

    # ------------------------------------------------------------------ driving

    def wait(
        self, until: str | Callable[[Execution], Any] = "idle", timeout: float = SAFETY
    ) -> Any:
        if until == "idle":
            return self.kernel.wait_for(lambda: self.idle, f"{self.code!r} to go idle", timeout)
        if until == "final":

            def final() -> bool:
                if self.idle is not None and self.errors and self.final is None:
                    raise AssertionError(
                        f"the cell failed without a transcript:\n{self.describe()}"
                    )
                return self.final is not None and self.idle is not None

            return self.kernel.wait_for(
                final,
                f"the transcript of {self.code!r} (and its idle status)",
                timeout,
            )
        assert callable(until)
        return self.kernel.wait_for(lambda: until(self), f"a condition on {self.code!r}", timeout)

    def wait_button(self, label: str, timeout: float = SAFETY) -> Comm:
        buttons = self.kernel.wait_for(
            lambda: self.buttons(label), f"a {label!r} button in the view of {self.code!r}", timeout
        )
        return buttons[-1]

    def click(self, label: str) -> Comm:
        return self.kernel.click(label, within=self)

    def describe(self) -> str:
        """For assertion messages: what this execution produced so far."""
        lines = [f"execution {self.code!r}:"]
        for m in self.messages:
            if m.msg_type == "stream":
                lines.append(f"  stream {m.content['name']}: {m.content['text'][:500]!r}")
            elif m.msg_type == "error":
                lines.append(f"  error {m.content['ename']}: {m.content['evalue'][:500]}")
            elif m.msg_type in ("display_data", "execute_result"):
                data = m.content.get("data", {})
                lines.append(f"  {m.msg_type}: {str(data.get('text/plain', data))[:500]!r}")
        for m in self.updates:
            lines.append(
                f"  update_display_data: {m.content['data'].get('text/plain', '')[:800]!r}"
            )
        return "\n".join(lines)


# ---------------------------------------------------------------------- fixtures


def _start(tmp: Path, *, widgets: bool = True) -> Kernel:
    """A kernel with the extension loaded. ``widgets``: the client announces a widget
    manager as JupyterLab's does when it connects (a ``comm_info_request`` for
    ``jupyter.widget``); without it the client is a frontend without widgets, as
    ``jupyter console`` is."""
    kernel = Kernel(tmp)
    # The kernel must run this environment's interpreter (the python3 kernelspec's bare
    # "python" is replaced by jupyter_client with sys.executable).
    prefix, package = kernel.text(
        "import sys, acp_notebook; print(sys.prefix); print(acp_notebook.__file__)"
    ).split()
    assert prefix == sys.prefix, f"the kernel runs {prefix}, not this venv {sys.prefix}"
    assert Path(package).is_relative_to(ROOT), f"the kernel imports {package}, not {ROOT}"
    kernel.text("%load_ext acp_notebook")
    if widgets:
        kernel.kc.comm_info(target_name="jupyter.widget", reply=True, timeout=SAFETY)
    return kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """One kernel (with the extension loaded) shared by the tests of a module."""
    kernel = _start(tmp_path_factory.mktemp("kernel"))
    try:
        yield kernel
    finally:
        kernel.shutdown()


def leave_no_turn(kernel: Kernel) -> None:
    """After a test on a shared kernel: no cell still running, no turn left (a failed
    test must not leave a turn waiting for a click that the next tests queue behind)."""
    busy = [e for e in kernel.executions if e.busy]
    if busy:
        kernel.interrupt()
        for execution in busy:
            with contextlib.suppress(AssertionError):
                execution.wait("idle", timeout=30)
    kernel.text("%acp --cancel")
    deadline = time.monotonic() + 30
    while "turn in session" in kernel.text("%acp --status") and time.monotonic() < deadline:
        time.sleep(0.1)
    kernel.settle(0.1)


@pytest.fixture(autouse=True)
def _leave_no_turn(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "kernel" in request.fixturenames:
        leave_no_turn(request.getfixturevalue("kernel"))


@pytest.fixture
def fresh_kernel(tmp_path: Path) -> Iterator[Kernel]:
    """A kernel of its own, for tests that interrupt, stop or shut things down."""
    kernel = _start(tmp_path)
    try:
        yield kernel
    finally:
        kernel.shutdown()


@pytest.fixture
def workdir(kernel: Kernel, request: pytest.FixtureRequest) -> Path:
    """A directory of this test's own inside the shared kernel's working directory
    (the agent's cwd): tests use paths relative to the kernel cwd, e.g. ``t_x/utils.py``."""
    path = kernel.cwd / re.sub(r"\W", "_", f"t_{request.node.name}")[:60]
    path.mkdir()
    return path


UTILS_PY = """\
def total(values):
    result = 0
    for v in values:
        result += v
    return result


def add(a, b):
    return a + b


def is_big(n):
    if n > 100:
        return True
    else:
        return False
"""

#: What the demo agent's refactoring (``/edit``, ``refactor``) makes of UTILS_PY.
REFACTORED_UTILS_PY = """\
def total(values):
    return sum(values)


def add(a, b):
    return a + b


def is_big(n):
    return n > 100
"""


@pytest.fixture
def utils_py(workdir: Path) -> Path:
    """A small Python file that ``/edit`` would refactor (a loop that adds up, an if/else
    that returns True or False)."""
    path = workdir / "utils.py"
    path.write_text(UTILS_PY)
    return path


def rel(kernel: Kernel, path: Path) -> str:
    """``path`` relative to the kernel's (and so the agent's) working directory."""
    return str(path.relative_to(kernel.cwd))


def prompt_exchange(
    log: list[tuple[str, dict[str, Any]]], text: str
) -> tuple[int, dict[str, Any] | None, int | None]:
    """The last ``session/prompt`` whose prompt contains ``text``: (index of the request
    in ``log``, the result it was answered with or None, index of that answer or None)."""
    index = None
    for i, (direction, message) in enumerate(log):
        if (
            direction == "send"
            and message.get("method") == "session/prompt"
            and text in json.dumps(message.get("params", {}).get("prompt"))
        ):
            index = i
    assert index is not None, f"no session/prompt containing {text!r} was sent"
    request_id = log[index][1]["id"]
    for j in range(index + 1, len(log)):
        direction, message = log[j]
        if direction == "recv" and message.get("id") == request_id and "method" not in message:
            return index, message.get("result"), j
    return index, None, None


@pytest.fixture
def function_notebook(kernel: Kernel) -> Iterator[FakeFrontend]:
    """A live notebook (through the fake frontend) whose cell 2 defines the function."""
    from .fake_frontend import FUNCTION, FakeFrontend

    fake = FakeFrontend(kernel)
    fake.cells = [
        fake.cell("c-load", "code", "%load_ext acp_notebook", 1),
        fake.cell("c-func", "code", FUNCTION, 2),
    ]
    fake.connect()
    try:
        yield fake
    finally:
        fake.close()
