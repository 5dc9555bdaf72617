"""JupyterLab in a real chromium, driven by Playwright.

* ``lab`` (module; the server itself is shared by every module of the test process that
  asks for the same options, see ``lab_servers``): a JupyterLab server on a free 127.0.0.1 port with a random token,
  a temporary ``root_dir`` and isolated config / settings / workspace / data dirs. It is
  started in its own process group and stopped with ``killpg`` (after its kernels are
  shut down through the REST API). The kernelspec ``python3`` resolves to this venv's
  interpreter: jupyter_client replaces a bare ``python`` with the server's
  ``sys.executable``, which is checked at start.
* ``browser`` (module): Debian's chromium launched by Playwright (never a downloaded
  one).
* ``notebook`` (per test): a fresh directory under the root dir (the kernel's and so the
  agent's working directory), a :class:`NotebookPage` helper that writes a notebook,
  opens it, runs cells and takes screenshots into
  ``test-artifacts/browser/<test>-<nn>-<step>.png`` at the repo root, and its page.
* ``shared_lab`` (module): the JupyterLab page a module's tests open their notebooks in,
  one after another (:class:`SharedLab`). Loading JupyterLab costs a page about
  4 CPU-seconds more than opening a notebook in one already loaded, and the browser
  tests are most of the suite's CPU. A test still gets a fresh notebook, kernel and
  agents; a test that failed, left a dialog or took the page elsewhere leaves the next
  one a fresh browser context. ``tests/deploy`` shares nothing (its tests restart
  kernels and reload pages behind gateways).

Without chromium or Playwright the tests skip, saying why; under ``CI=true`` they fail
instead (:func:`tests.conftest.skip_or_fail`), so CI cannot go green without this layer.

Every timeout here is a safety net; no test asserts on how fast anything is.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

from acp_notebook.notebook.launch import free_port, lab_command

from ..conftest import import_or_skip, skip_or_fail
from ..servers import own_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Locator, Page

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"

#: Safety nets (milliseconds for Playwright, seconds elsewhere).
UI_TIMEOUT_MS = 30_000
TURN_TIMEOUT_MS = 60_000
SERVER_START_S = 60.0
#: How long a page waits for a gateway's kernel before it reloads (see NotebookPage.open).
GATEWAY_STALL_MS = 15_000

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

#: User settings for the isolated JupyterLab: no news/update toast, every cell in the DOM.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}

PROMPT_DONE = re.compile(r"^\[\d+\]:$")
PROMPT_STARTED = re.compile(r"^\[(\*|\d+)\]:$")


# ---------------------------------------------------------------------------------- server


@dataclass
class Lab:
    """A running JupyterLab server."""

    base: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]
    #: The server's JUPYTER_DATA_DIR (its notebook-signing secret and database live here).
    data_dir: Path

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30.0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def sessions(self) -> list[dict[str, Any]]:
        return list(self.api("GET", "/api/sessions"))

    def shutdown_sessions(self) -> None:
        """Shut down every notebook session (and so its kernel and its agents)."""
        for session in self.sessions():
            with contextlib.suppress(urllib.error.URLError, OSError):
                self.api("DELETE", f"/api/sessions/{session['id']}", timeout=60)
        for kernel in self.api("GET", "/api/kernels"):
            with contextlib.suppress(urllib.error.URLError, OSError):
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=60)

    def log_tail(self, lines: int = 40, width: int | None = None) -> str:
        """The log's last ``lines``, each cut at ``width`` characters if given (a kernel's
        start logs its whole environment on one line)."""
        try:
            tail = self.log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return "(no log)"
        if width is not None:
            tail = [line if len(line) <= width else line[: width - 1] + "…" for line in tail]
        return "\n".join(tail)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def lab_args() -> list[str]:
    """Extra server options; a module overrides this fixture to start another server.
    Real-time collaboration (jupyter-collaboration, installed for the live-edit tests) is
    off unless a module turns it on."""
    return ["--YDocExtension.disable_rtc=True"]


@pytest.fixture(scope="session")
def lab_servers() -> Iterator[dict[tuple[str, ...], Lab]]:
    """The servers started so far in this test process, one per set of server options,
    all stopped at the end of the session: each module's tests get a fresh notebook
    directory, browser context and kernel, not a fresh server (a start costs seconds)."""
    servers: dict[tuple[str, ...], Lab] = {}
    yield servers
    for server in servers.values():
        with contextlib.suppress(Exception):
            server.shutdown_sessions()
        _stop(server.process)


@pytest.fixture(scope="module")
def lab(
    lab_servers: dict[tuple[str, ...], Lab],
    tmp_path_factory: pytest.TempPathFactory,
    lab_args: list[str],
) -> Iterator[Lab]:
    key = tuple(lab_args)
    server = lab_servers.get(key)
    if server is None or server.process.poll() is not None:
        server = lab_servers[key] = start_lab(tmp_path_factory, lab_args)
    yield server
    with contextlib.suppress(Exception):
        server.shutdown_sessions()


def start_lab(tmp_path_factory: pytest.TempPathFactory, lab_args: list[str]) -> Lab:
    """A JupyterLab server with ``lab_args``, answering ``/api/status``."""
    base_dir = tmp_path_factory.mktemp("jupyterlab")
    root = base_dir / "root"
    dirs = {
        name: base_dir / name for name in ("config", "settings", "workspaces", "data", "runtime")
    }
    for d in [root, *dirs.values()]:
        d.mkdir()
    # The extension built in this checkout, found before any the environment links:
    # JupyterLab takes the first of each name along its path, whose head is this data dir.
    built = REPO / "acp_notebook" / "labextension"
    if (built / "package.json").exists():
        (dirs["data"] / "labextensions").mkdir()
        (dirs["data"] / "labextensions" / "acp-notebook").symlink_to(built)
    for rel, settings in LAB_SETTINGS.items():
        target = dirs["settings"] / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(settings))

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACP_NOTEBOOK_", "JUPYTER", "JPY_"))
    }
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        # In a virtualenv Jupyter puts the environment's data dir before this one, and
        # the environment's link (``./dev setup``: the main checkout's build) won.
        JUPYTER_PREFER_ENV_PATH="0",
        PYTHONUNBUFFERED="1",
    )
    port = free_port()
    token = secrets.token_hex(16)
    # ``window.jupyterapp``: how :class:`SharedLab` opens a notebook in a loaded page.
    cmd = [*lab_command(root, port, token), "--LabApp.expose_app_in_browser=True", *lab_args]
    log_path = base_dir / "jupyterlab.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            **own_session(),
        )
    server = Lab(f"http://127.0.0.1:{port}", token, root, log_path, process, dirs["data"])
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{server.log_tail()}")
            try:
                server.api("GET", "/api/status", timeout=5)
                break
            except (urllib.error.URLError, OSError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer /api/status:\n{server.log_tail()}")
                time.sleep(0.2)
        _check_kernelspec(server)
    except BaseException:
        _stop(process)
        raise
    return server


def _check_kernelspec(server: Lab) -> None:
    """The notebooks name ``python3``: it must start this venv's interpreter."""
    specs = server.api("GET", "/api/kernelspecs")["kernelspecs"]
    assert "python3" in specs, f"no python3 kernelspec: {sorted(specs)}"
    argv = specs["python3"]["spec"]["argv"]
    bare = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}
    # jupyter_client replaces a bare "python" with the server's sys.executable (ours).
    assert argv[0] in bare or os.path.realpath(argv[0]) == os.path.realpath(sys.executable), (
        f"kernelspec python3 starts {argv[0]!r}, not {sys.executable!r}"
    )
    subprocess.run([sys.executable, "-c", "import acp_notebook, ipykernel, ipywidgets"], check=True)


# ---------------------------------------------------------------------------------- browser


def chromium_or_skip() -> str:
    """Debian's chromium (never a downloaded one); skips (fails under CI) without it."""
    chromium = shutil.which("chromium")
    if chromium is None:
        skip_or_fail(
            "chromium is not installed (apt-get install -y chromium)", allow_module_level=True
        )
    return chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module scope, not session: Playwright's sync API keeps an asyncio loop running in
    # the main thread while it is started, which breaks every async test collected after
    # this module (anyio: "another loop is running").
    chromium = chromium_or_skip()
    sync_api = import_or_skip("playwright.sync_api", "playwright is not installed")
    # Every `expect` gets the same safety net as the page's actions: Playwright's own
    # default is 5 s, which a first `%acp` (importing the notebook layer) can take on a
    # busy machine before its view appears.
    sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)
    try:
        manager = sync_api.sync_playwright().start()
    except Exception as exc:
        skip_or_fail(f"playwright does not start: {exc}")
    try:
        try:
            launched = manager.chromium.launch(
                executable_path=chromium, headless=True, args=CHROMIUM_ARGS
            )
        except Exception as exc:
            skip_or_fail(f"playwright cannot launch {chromium}: {exc}")
        yield launched
        launched.close()
    finally:
        manager.stop()


# ---------------------------------------------------------------------------------- notebook


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


@dataclass
class SharedLab:
    """The loaded JupyterLab page one module's tests open their notebooks in, one after
    another (on one server: a module's flavours get one each)."""

    page: Page | None = None
    #: The workspace the page was loaded in: a page whose URL names another is not it.
    workspace: str = ""

    def take(self) -> Page | None:
        """The loaded page if it still shows JupyterLab in its workspace, else None (and a
        page taken elsewhere is closed)."""
        if self.page is None:
            return None
        here = re.search(r"/lab/workspaces/([^/?#]+)", self.page.url)
        if self.page.is_closed() or here is None or here.group(1) != self.workspace:
            self.drop()
            return None
        return self.page

    def adopt(self, page: Page, workspace: str) -> None:
        """``page`` has loaded JupyterLab in ``workspace``: later tests open theirs in it."""
        self.page, self.workspace = page, workspace

    def owns(self, page: Page) -> bool:
        return page is self.page

    def open(self, rel: str) -> None:
        """Open ``rel`` in the loaded page, then close every other document in it."""
        assert self.page is not None
        self.page.evaluate(
            """async (path) => {
                const app = window.jupyterapp;
                const before = Array.from(app.shell.widgets('main'));
                const panel = await app.commands.execute('docmanager:open', {path});
                for (const widget of before) if (widget !== panel) widget.dispose();
                const folder = path.split('/').slice(0, -1).join('/');
                try {  // the file browser shows the notebook's folder, as after a load
                    await app.commands.execute('filebrowser:go-to-path', {path: folder});
                } catch (error) {
                    console.warn('filebrowser:go-to-path', error);
                }
            }""",
            rel,
        )

    def tidy(self) -> None:
        """After a test: close its documents without saving (before its kernels are shut
        down) and fold the right sidebar, as a freshly loaded page has it. A page showing a
        dialog, or that cannot be tidied, is dropped."""
        if self.page is None:
            return
        try:
            tidied = self.page.evaluate(
                """() => {
                    if (document.querySelector('.jp-Dialog')) return false;
                    const app = window.jupyterapp;
                    for (const widget of Array.from(app.shell.widgets('main'))) widget.dispose();
                    app.shell.collapseRight();
                    return true;
                }"""
            )
        except Exception:
            tidied = False
        if not tidied:
            self.drop()

    def drop(self) -> None:
        """Close the page's browser context: the next test loads JupyterLab afresh."""
        if self.page is not None:
            with contextlib.suppress(Exception):
                self.page.context.close()
        self.page = None


@dataclass
class NotebookPage:
    """One test's notebook: its directory, the page showing it, and its screenshots.

    Its page is, until the test asks for a new one, its module's :class:`SharedLab` page
    when there is one (see :meth:`open`), else a fresh browser context's.
    """

    lab: Lab
    browser: Browser
    dir: Path
    test: str
    shared: SharedLab | None = None
    name: str = "notebook.ipynb"
    #: The safety net for a kernel to start when the notebook opens (a gateway's
    #: kernels start on another server, slower on a busy machine).
    kernel_start_ms: int = UI_TIMEOUT_MS
    #: The server runs its kernels on a gateway: see :meth:`open`.
    through_gateway: bool = False
    _page: Page | None = None
    _shots: int = 0
    _contexts: list[BrowserContext] = field(default_factory=list)

    @property
    def page(self) -> Page:
        if self._page is None:
            taken = self.shared.take() if self.shared is not None else None
            self._page = taken or self.new_page()
        return self._page

    @page.setter
    def page(self, page: Page) -> None:
        self._page = page

    # -- files ------------------------------------------------------------------------

    @property
    def rel(self) -> str:
        return f"{self.dir.relative_to(self.lab.root).as_posix()}/{self.name}"

    @property
    def path(self) -> Path:
        return self.dir / self.name

    def write(self, sources: list[str], name: str = "notebook.ipynb", outputs: Any = None) -> Path:
        """Write a notebook of code cells naming the ``python3`` kernelspec.

        ``outputs`` (optional, one list per cell) are stored too, and the notebook is then
        signed with the server's secret so JupyterLab trusts (renders) them.
        """
        self.name = name
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata["language_info"] = {"name": "python"}
        nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
        if outputs is not None:
            for cell, cell_outputs in zip(nb.cells, outputs, strict=True):
                cell.outputs = [nbformat.from_dict(o) for o in cell_outputs]
            from nbformat.sign import NotebookNotary

            NotebookNotary(data_dir=str(self.lab.data_dir)).sign(nb)
        nbformat.write(nb, self.path)
        return self.path

    def saved(self) -> Any:
        """The notebook as saved on disk; read again while a save is being written (the
        file can be read empty between the server's truncate and write)."""
        deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
        while True:
            try:
                return nbformat.read(self.path, as_version=4)
            except nbformat.reader.NotJSONError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # -- page -------------------------------------------------------------------------

    def new_page(self) -> Page:
        context = self.browser.new_context(viewport={"width": 1280, "height": 1400})
        context.set_default_timeout(UI_TIMEOUT_MS)
        self._contexts.append(context)
        return context.new_page()

    def close_page(self) -> None:
        if self.shared is not None and self.shared.owns(self.page):
            self.shared.drop()
        else:
            self.page.context.close()

    def reopen_page(self) -> Page:
        """A fresh browser context's page (never the shared one)."""
        self.page = self.new_page()
        return self.page

    def open(self) -> None:
        """Open the notebook and wait until its kernel is idle: in the module's loaded
        JupyterLab page when this test has it (every other document there is closed), else
        by loading JupyterLab in a workspace of its own (so nothing else is restored),
        which the module's next tests then share.

        :attr:`through_gateway`: in about one whole-suite run in five, the page kept a
        gateway's kernel "Unknown" for good, and once a reload did not help. (Seen every
        time, stalled or not: the page closes its first kernel socket and opens it again
        at once with the same session id; the server's proxy cannot cancel its pending
        upstream connect, and the gateway logs "Replacing stale connection". That this
        is the cause is not proven.) A user reloads, then restarts the kernel: so does
        this, with a warning carrying the server's log each time: the first after
        :data:`GATEWAY_STALL_MS` (a stall would otherwise hold its worker for the whole
        safety net), the next after the full safety net. A kernel merely slow to start loses
        nothing by a reload: it goes on starting on the gateway, and the page waits again.
        """
        if self.shared is not None and self.shared.owns(self.page):
            self.shared.open(self.rel)
            self.cells.first.wait_for()
            self.wait_kernel_idle()
            return
        workspace = _slug(f"{self.test}-{len(self._contexts)}")
        self.page.goto(self.lab.url(f"/lab/workspaces/{workspace}/tree/{self.rel}"))
        self.page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        if not self.through_gateway:
            self.wait_kernel_idle()
            if self.shared is not None and self.shared.page is None:
                self.shared.adopt(self.page, workspace)
            return
        remedies = [
            ("reloaded", lambda: None),
            ("restarted its kernel and reloaded", self._restart),
        ]
        for attempt, (done, remedy) in enumerate(remedies):
            try:
                self.wait_kernel_idle(GATEWAY_STALL_MS if attempt == 0 else UI_TIMEOUT_MS)
                return
            except AssertionError:
                warnings.warn(
                    f"the page's kernel was not idle behind the gateway: {done}; the "
                    f"server's log:\n{self.lab.log_tail(25, width=300)}",
                    stacklevel=2,
                )
            remedy()
            self.page.reload()
            self.page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        self.wait_kernel_idle()

    def _restart(self) -> None:
        """Restart the kernels of this notebook's sessions (through the server's API)."""
        for session in self.lab.sessions():
            if session.get("path", "").endswith(self.rel):
                self.lab.api("POST", f"/api/kernels/{session['kernel']['id']}/restart", {})

    def wait_kernel_idle(self, timeout_ms: int | None = None) -> None:
        from playwright.sync_api import expect

        timeout = self.kernel_start_ms if timeout_ms is None else timeout_ms
        expect(self.page.locator(".jp-Toolbar-kernelName").first).to_contain_text(
            "Python", timeout=timeout
        )
        expect(
            self.page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first
        ).to_be_visible(timeout=timeout)

    @property
    def cells(self) -> Locator:
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")

    def cell(self, index: int) -> Locator:
        return self.cells.nth(index)

    def output(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-OutputArea")

    def prompt(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-InputArea-prompt")

    def run_cell(self, index: int, attempts: int = 3) -> None:
        """Run cell ``index`` with Ctrl+Enter and check that it started; the first run
        right after the page loads sometimes does not start, so retry."""
        prompt = self.prompt(index)
        before = prompt.inner_text().strip()
        for attempt in range(attempts):
            self.cell(index).locator(".jp-InputArea-editor").click()
            self.page.keyboard.press("Escape")
            self.page.keyboard.press("Control+Enter")
            if self._started(prompt, before):
                self._note_retries(f"cell {index}", attempt)
                return
        raise AssertionError(f"cell {index} did not start after {attempts} attempts")

    def run_all(self, attempts: int = 3) -> None:
        """Run > Run All Cells from the menu bar, checked like :meth:`run_cell`."""
        prompt = self.prompt(0)
        before = prompt.inner_text().strip()
        for attempt in range(attempts):
            self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            self.page.locator(
                ".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
                has_text=re.compile(r"^Run All Cells$"),
            ).click()
            if self._started(prompt, before):
                self._note_retries("Run All Cells", attempt)
                return
        raise AssertionError(f"Run All Cells did not start after {attempts} attempts")

    @staticmethod
    def _note_retries(what: str, attempt: int) -> None:
        if attempt:  # shown in pytest's warnings summary: keeps an eye on the flakiness
            warnings.warn(f"{what} started only on attempt {attempt + 1}", stacklevel=3)

    def _started(self, prompt: Locator, before: str) -> bool:
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            text = prompt.inner_text().strip()
            if text != before and PROMPT_STARTED.match(text):
                return True
            self.page.wait_for_timeout(100)
        return False

    def wait_done(self, index: int, timeout_ms: int = TURN_TIMEOUT_MS) -> None:
        from playwright.sync_api import expect

        expect(self.prompt(index)).to_have_text(PROMPT_DONE, timeout=timeout_ms)

    def save(self) -> None:
        """Save with Ctrl+S in command mode (the caller waits for the file on disk)."""
        self.cell(0).locator(".jp-InputArea-prompt").click()
        self.page.keyboard.press("Escape")
        self.page.keyboard.press("Control+s")

    def shot(self, step: str) -> Path:
        self._shots += 1
        target = ARTIFACTS / f"{self.test}-{self._shots:02d}-{_slug(step)}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target

    def close(self, failed: bool = False) -> None:
        """Close the test's own browser contexts; tidy the shared page for the next test
        (or drop it when the test ``failed``: nothing of a failure is carried over)."""
        if self.shared is not None:
            if failed:
                self.shared.drop()
            else:
                self.shared.tidy()
        kept = self.shared.page if self.shared is not None else None
        for context in self._contexts:
            if kept is None or context is not kept.context:
                with contextlib.suppress(Exception):
                    context.close()


@pytest.fixture(scope="module")
def shared_lab(browser: Browser, lab: Lab) -> Iterator[SharedLab | None]:
    """The JupyterLab page this module's tests share on ``lab`` (see :class:`SharedLab`)."""
    shared = SharedLab()
    yield shared
    shared.drop()


@pytest.fixture
def notebook(
    request: pytest.FixtureRequest,
    browser: Browser,
    lab: Lab,
    shared_lab: SharedLab | None,
) -> Iterator[NotebookPage]:
    test = _slug(request.node.name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob(f"{test}-*.png"):
        old.unlink()
    directory = lab.root / test
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir()
    nb = NotebookPage(lab, browser, directory, test, shared_lab)
    try:
        yield nb
    finally:
        failed = getattr(request.node, "rep_call_failed", False)
        if failed:
            with contextlib.suppress(Exception):
                nb.shot("failure")
        nb.close(failed)
        lab.shutdown_sessions()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.rep_call_failed = report.failed  # type: ignore[attr-defined]
    return report
