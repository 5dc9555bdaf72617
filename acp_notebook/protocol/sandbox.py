"""The confinement the operating system enforces on an agent and every command it runs.

An agent's process tree and each terminal command are started under the supervisor
(``supervisor.py``), which confines the child before its ``exec``; the confinement is
inherited by every descendant, escaped ones (``setsid``, double forks) included, and
nothing below can lift it. What it allows, by mode:

==================  =========================================  =====================
mode                writes                                     network
==================  =========================================  =====================
workspace           the session's folders, temp, devices,      on
                    the agent's own state directories
read-only           temp, devices, the agent's state           on
workspace-offline   as workspace                               TCP connect only to
                                                               the allowed ports
off                 anything the user may write (unconfined)   on
==================  =========================================  =====================

Reads and execution are never restricted. How, in order of preference:

1. Landlock (Linux 5.13 and later, unprivileged; ``landlock.py``). Its network rules
   (ABI 4, Linux 6.7) are per *port*, not per address: ``workspace-offline`` refuses a
   TCP ``connect`` to any port not allowed, on any host, and allows one to an allowed
   port on every host. UDP (DNS included) is not restricted.
2. bubblewrap (``bwrap``) when the kernel has no Landlock: the file system read-only but
   for the writable places; ``workspace-offline`` is a network namespace of its own, with
   no allowed port (its loopback is empty).
3. Nothing: the agent runs unconfined, and :meth:`Confinement.describe` says so.

``ACP_NOTEBOOK_NO_LANDLOCK=1`` makes this process act as if the kernel had no Landlock
(tests, and a way out should a kernel's Landlock misbehave).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

__all__ = [
    "AS_CONFIGURED",
    "DEFAULT_MODE",
    "MODES",
    "NO_LANDLOCK_ENV",
    "REFUSED_WRITE",
    "Confinement",
    "Mechanism",
    "SandboxChoice",
    "confinement",
    "mechanism",
    "sandbox_line",
]

MODES = ("workspace", "read-only", "workspace-offline", "off")
#: How a program says the kernel refused it a write: EACCES from Landlock, EROFS from
#: bubblewrap's read-only mounts (the one sign a confined process gives of it).
REFUSED_WRITE = re.compile(r"EACCES|EROFS|Permission denied|Read-only file system", re.IGNORECASE)
DEFAULT_MODE = "workspace"
NO_LANDLOCK_ENV = "ACP_NOTEBOOK_NO_LANDLOCK"

#: Devices a program writes to as a matter of course (output thrown away, its terminal,
#: pseudo-terminals, POSIX shared memory).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm")


@dataclass(frozen=True)
class Mechanism:
    """How this machine can confine a process: ``landlock`` (with its ABI version),
    ``bwrap``, or ``none``."""

    name: str
    abi: int = 0

    @property
    def text(self) -> str:
        if self.name == "landlock":
            return f"Landlock ABI {self.abi}"
        if self.name == "bwrap":
            return "bubblewrap (this kernel has no Landlock)"
        return "this kernel has no Landlock and bubblewrap is not installed"


@lru_cache(maxsize=4)
def _mechanism(simulate_missing: bool) -> Mechanism:
    if not (sys.platform.startswith("linux") and os.path.isdir("/proc")):
        return Mechanism("none")  # no supervisor to apply it (process.SUPERVISED)
    if not simulate_missing:
        from . import landlock

        try:
            version = landlock.abi()
        except (OSError, AttributeError):  # no libc.syscall (not Linux)
            version = 0
        if version > 0:
            return Mechanism("landlock", version)
    if shutil.which("bwrap"):
        return Mechanism("bwrap")
    return Mechanism("none")


def mechanism() -> Mechanism:
    """How processes are confined here (asked of the kernel once per process)."""
    return _mechanism(os.environ.get(NO_LANDLOCK_ENV, "") not in ("", "0"))


def _temp_dirs() -> list[str]:
    import tempfile  # only when confining: it imports random and hashlib

    return list(dict.fromkeys([tempfile.gettempdir(), "/tmp", "/var/tmp"]))


@dataclass(frozen=True)
class SandboxChoice:
    """What the user asks (``--sandbox``, ``AcpMagics.sandbox``, ``writable_dirs``,
    ``allowed_ports``): a mode (None: the agent's default), places writable besides the
    folders and the agent's own, the ports an offline agent may reach."""

    mode: str | None = None
    writable: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()


#: The choice when the user made none: each agent's default mode.
AS_CONFIGURED = SandboxChoice()


@dataclass(frozen=True)
class Confinement:
    """What an agent (or one terminal command) may write and connect to, and how that is
    enforced."""

    mode: str = DEFAULT_MODE
    #: The session's folders (its cwd first): writable unless ``read-only``.
    roots: tuple[str, ...] = ()
    #: The agent's own state and cache directories and files (absolute).
    state: tuple[str, ...] = ()
    #: ``workspace-offline``: the TCP ports a connection may still go to.
    ports: tuple[int, ...] = ()
    mechanism: Mechanism = field(default_factory=lambda: Mechanism("none"))

    @property
    def enforced(self) -> bool:
        """Whether the operating system really confines the process."""
        return self.mode != "off" and self.mechanism.name != "none"

    @property
    def offline(self) -> bool:
        """Whether TCP connections are really restricted."""
        if not self.enforced or self.mode != "workspace-offline":
            return False
        return self.mechanism.name == "bwrap" or self.mechanism.abi >= 4

    @property
    def writable(self) -> list[str]:
        """Every place a write is allowed beneath."""
        roots = list(self.roots) if self.mode != "read-only" else []
        return list(dict.fromkeys([*roots, *_temp_dirs(), *DEVICES, *self.state]))

    def with_roots(self, roots: Iterable[str]) -> Confinement:
        """The same, with more folders (a session's, for its terminals)."""
        return replace(self, roots=tuple(dict.fromkeys([*self.roots, *roots])))

    def supervisor_args(self) -> list[str]:
        """The supervisor's options that apply it (none when it is not enforced)."""
        if not self.enforced:
            return []
        args = [f"--{self.mechanism.name}"]
        for path in self.writable:
            args += ["--write", path]
        if self.offline:
            args.append("--offline")
            for port in self.ports:
                args += ["--port", str(port)]
        return args

    @property
    def icon(self) -> str:
        """🔒 confined; 🔓 unconfined as chosen (sandbox off); ⚠️ unconfined for want of a
        way to confine it."""
        return "🔓" if self.mode == "off" else "🔒" if self.enforced else "⚠️"

    def headline(self, cwd: str | None = None) -> str:
        """:meth:`describe` marked with :attr:`icon`, for a turn's header and the
        permission cards of its commands and writes: "🔒 confined to `project/` ·
        network on"."""
        return f"{self.icon} {self.describe(cwd)}"

    def describe(self, cwd: str | None = None) -> str:
        """How the agent runs, for ``--status`` and ``doctor``: "confined to `project/` ·
        network on"."""
        if self.mode == "off":
            return "unconfined (sandbox off) · network on"
        if not self.enforced:
            return f"unconfined: {self.mechanism.text}"
        if self.mode == "read-only":
            where = "confined read-only (writes only to temp and the agent's own files)"
        else:
            base = cwd or (self.roots[0] if self.roots else "")
            folder = os.path.basename(base.rstrip(os.sep)) or base
            more = len(self.roots) - 1
            where = f"confined to `{folder}/`" + (
                f" and {more} more folder{'s' if more > 1 else ''}" if more > 0 else ""
            )
        if self.mode != "workspace-offline":
            return f"{where} · network on"
        if not self.offline:
            return f"{where} · network on ({self.mechanism.text} has no network rules)"
        if self.mechanism.name == "bwrap" or not self.ports:
            return f"{where} · network off"
        ports = ", ".join(str(port) for port in self.ports)
        return f"{where} · network off but TCP port{'s' if len(self.ports) > 1 else ''} {ports}"


def sandbox_line(mode: str | None) -> str:
    """The sandbox in one line, for ``--status`` and ``doctor``: the mode asked for and
    how this machine enforces it ("workspace, enforced by Landlock ABI 7")."""
    asked = mode or f"each agent's default ({DEFAULT_MODE} unless its preset says)"
    if mode == "off":
        return "off: agents run unconfined"
    found = mechanism()
    if found.name == "none":
        return f"{asked}, not enforced: agents run unconfined ({found.text})"
    return f"{asked}, enforced by {found.text}"


def _expanded(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def confinement(
    mode: str,
    roots: Sequence[str],
    *,
    state: Sequence[str] = (),
    ports: Sequence[int] = (),
) -> Confinement:
    """The confinement of an agent started in ``roots`` (its cwd first) with its ``state``
    paths (``~`` expanded; one ending in ``/`` is a directory, made now when missing so
    the agent can use it; a file must exist to be written)."""
    if mode not in MODES:
        raise ValueError(f"The sandbox is one of {', '.join(MODES)}, not {mode!r}.")
    found = mechanism() if mode != "off" else Mechanism("none")
    paths = []
    for entry in state:
        path = _expanded(entry)
        if entry.endswith("/") and found.name != "none":
            try:
                os.makedirs(path, mode=0o700, exist_ok=True)
            except OSError:
                continue
        paths.append(path)
    return Confinement(
        mode,
        tuple(dict.fromkeys(_expanded(root) for root in roots)),
        tuple(paths),
        tuple(ports),
        found,
    )
