"""Landlock through ctypes: write access limited to some directories and files, TCP
connections to some ports, for the calling thread and everything it starts afterwards.

Standard library only: the supervisor (``supervisor.py``, started with ``-S -I``) loads
this file by path to confine the child it is about to ``exec``; the client imports it to
learn whether the kernel has Landlock (:func:`abi`).

The rules (Linux's ``Documentation/userspace-api/landlock.rst``):

* a ruleset *handles* some access rights; what it handles is denied except beneath the
  paths (or on the ports) a rule grants it to; what it does not handle is left alone.
  Only the rights that change something are handled here (creating, removing, writing,
  truncating, linking and renaming), so reads and execution stay as they were;
* ``landlock_restrict_self`` needs ``PR_SET_NO_NEW_PRIVS`` (no set-uid gains after it),
  and the domain is inherited by every descendant, through ``fork``, ``setsid`` and
  ``exec``: nothing below can lift it;
* each ABI version adds rights: 2 ``REFER`` (re-parenting a file: without it renames and
  links across directories are always refused), 3 ``TRUNCATE``, 4 TCP ``bind`` and
  ``connect`` by port, 5 ``IOCTL_DEV``. A right the kernel does not know is not asked for.
  ``IOCTL_DEV`` is not handled: terminals need their ioctls, and it guards no write.
* a rule on a file (not a directory) may grant only the file rights.
"""

from __future__ import annotations

import ctypes
import os

# Unified syscall numbers (the same on every architecture since Linux 5.13).
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
CONNECT_TCP = 1 << 1  # ABI 4 (network rights)

#: The write rights of each ABI version (the index is the version).
_WRITES_V1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)
#: What a rule on a file (not a directory) may grant.
FILE_RIGHTS = WRITE_FILE | TRUNCATE


def writes(version: int) -> int:
    """The write rights an ABI ``version`` knows."""
    rights = _WRITES_V1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPortAttr(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


class LandlockError(OSError):
    """The kernel refused a step of confining (its ``errno`` and which step)."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi(libc: ctypes.CDLL | None = None) -> int:
    """The kernel's Landlock ABI version; 0 when it has none (too old, not built in, or
    disabled at boot)."""
    libc = libc or _libc()
    version = libc.syscall(
        ctypes.c_long(SYS_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def _check(result: int, step: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise LandlockError(number, f"{step}: {os.strerror(number)}")
    return result


def confine(
    writable: list[str], *, connect_ports: list[int] | None = None, libc: ctypes.CDLL | None = None
) -> int:
    """Confine the calling process: writes only beneath ``writable`` (directories, or
    single files written in place); with ``connect_ports`` (a list, maybe empty), TCP
    connections only to those ports (ABI 4 and later; earlier, :class:`LandlockError`).
    Paths that do not exist are skipped. The ABI version used; raises
    :class:`LandlockError` when the kernel refuses (nothing is confined then)."""
    libc = libc or _libc()
    version = abi(libc)
    if version < 1:
        raise LandlockError(95, "Landlock is not available in this kernel")
    handled = writes(version)
    net = 0
    if connect_ports is not None:
        if version < 4:
            raise LandlockError(95, f"Landlock ABI {version} has no network rules (4 has)")
        net = CONNECT_TCP
    attr = _RulesetAttr(handled, net)
    size = ctypes.sizeof(attr) if net else ctypes.sizeof(ctypes.c_uint64)
    ruleset = _check(
        libc.syscall(
            ctypes.c_long(SYS_CREATE_RULESET),
            ctypes.byref(attr),
            ctypes.c_size_t(size),
            ctypes.c_uint32(0),
        ),
        "landlock_create_ruleset",
    )
    try:
        for path in writable:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not there: nothing to grant
            try:
                is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
                rule = _PathBeneathAttr(handled if is_dir else handled & FILE_RIGHTS, fd)
                _check(
                    libc.syscall(
                        ctypes.c_long(SYS_ADD_RULE),
                        ctypes.c_int(ruleset),
                        ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    ),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
        for port in connect_ports or ():
            port_rule = _NetPortAttr(CONNECT_TCP, port)
            _check(
                libc.syscall(
                    ctypes.c_long(SYS_ADD_RULE),
                    ctypes.c_int(ruleset),
                    ctypes.c_int(RULE_NET_PORT),
                    ctypes.byref(port_rule),
                    ctypes.c_uint32(0),
                ),
                f"landlock_add_rule(port {port})",
            )
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(
            libc.syscall(
                ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)
            ),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)
    return version
