"""What every test layer shares.

:func:`skip_or_fail`: the browser layer and the real-agent layer need setup the machine
may lack (chromium, Playwright, npm, a Python ≥ 3.12, the network). On a developer's
machine they skip and say why; under ``CI=true`` the same reason fails the test, so CI
cannot go green with a whole layer missing.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest


def in_ci() -> bool:
    """``CI`` is set to something true (``true``, ``1``, ``yes``), as CI services do."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_or_fail(reason: str, *, allow_module_level: bool = False) -> NoReturn:
    """This layer cannot run here: skip, saying ``reason``; under CI, fail with it."""
    if in_ci():
        pytest.fail(
            f"{reason} (CI=true: this layer must run in CI, so its setup must work)",
            pytrace=False,
        )
    pytest.skip(reason, allow_module_level=allow_module_level)


def import_or_skip(name: str, reason: str) -> ModuleType:
    """``pytest.importorskip`` that fails under CI (see :func:`skip_or_fail`)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        skip_or_fail(f"{reason} ({exc})", allow_module_level=True)


def pytest_configure(config: pytest.Config) -> None:
    """Notebook state (acp_notebook's per-user state directory) goes to a directory of
    this test run, never the user's: every kernel and command the tests start inherits it."""
    state = tempfile.mkdtemp(prefix="acp-notebook-state-")
    os.environ["XDG_STATE_HOME"] = state
    config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: pytest without xdist runs too
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``./dev test``): whole files per worker, the longest first, a
    browser file's flavours apart (``tests/schedule.py``)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from .schedule import LongestFirst

    return LongestFirst(config, log)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close the widgets the in-process UI tests left open while ipywidgets can still do it.

    Otherwise the ones still referenced (cycles, module globals) are closed by
    ``Widget.__del__`` during interpreter shutdown, after ipywidgets' instance registry is
    gone, and each prints "Exception ignored in: Widget.__del__" after the test summary.
    """
    widgets = sys.modules.get("ipywidgets")
    if widgets is not None:
        widgets.Widget.close_all()


def sandbox_scratch() -> Path:
    """Where the sandbox tests make their trees: a place that is neither the temp directory
    nor under it (the sandbox lets every agent write temp), so ``build/`` of this checkout
    unless the checkout itself lies in temp, then the user's cache directory."""
    root = Path(__file__).resolve().parent.parent
    temps = {
        Path(tempfile.gettempdir()).resolve(),
        Path("/tmp"),
        Path("/var/tmp"),
        Path("/dev/shm"),
    }
    if any(root == t or t in root.parents for t in temps):
        return Path.home() / ".cache" / "acp-notebook" / "sandbox-tests"
    return root / "build" / "sandbox-tests"
