"""How risky a tool call looks: a shell command read word by word, and paths outside
the session's directories.

Two levels, each with reasons in plain words that the permission prompt and the saved
transcript show:

* ``danger`` — hard or impossible to undo: recursive or forced deletes, ``git reset
  --hard``, ``git clean -f``, force pushes, ``dd``, ``mkfs``, ``shred``, recursive
  ``chmod``/``chown``, writing to a disk device, running as root, running downloaded
  code, a fork bomb, shutting the machine down;
* ``caution`` — worth a look: the network, installing packages, stopping processes,
  changing files outside the session's directories.

This is a reading aid, not a sandbox: a command is read by ``shell.py`` (into the
commands of its pipelines, ``&&``/``||``/``;`` chains, subshells, ``$(…)`` and
backticks, and the payload of ``sh -c``/``bash -c``/``eval``), and every command is
looked at by its name and flags. Anything not recognised is not rated — no rating does
not mean safe.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .shell import (
    MAX_DEPTH,
    SimpleCommand,
    flags,
    inline_code,
    is_interpreter,
    pipelines,
    positional,
    shell_invocation,
    shell_payload,
    substitutions,
    unwrap,
)
from .shell_writes import written_words

Level = Literal["caution", "danger"]
LEVELS: tuple[Level, ...] = ("caution", "danger")

#: What the prompt and the transcript put before the reasons.
LABELS = {"danger": "⚠️ Risky", "caution": "🔸 Caution"}

#: How many outside paths a reason names before "and N more".
MAX_NAMED = 3


@dataclass
class Danger:
    """A rating: the worst level found, and every reason (the worst first)."""

    level: Level
    reasons: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The reasons as one phrase: "deletes files recursively; runs as root"."""
        return "; ".join(self.reasons)

    @property
    def label(self) -> str:
        """What the prompt and the transcript show: "⚠️ Risky: deletes files recursively"."""
        return f"{LABELS[self.level]}: {self.text}"


def combine(*ratings: Danger | None) -> Danger | None:
    """One rating from several: the worst level; reasons deduplicated, danger first."""
    found = [r for r in ratings if r is not None and r.reasons]
    if not found:
        return None
    level: Level = "danger" if any(r.level == "danger" for r in found) else "caution"
    ordered = [r for r in found if r.level == "danger"] + [r for r in found if r.level != "danger"]
    reasons = list(dict.fromkeys(reason for r in ordered for reason in r.reasons))
    return Danger(level, reasons)


_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https"})
#: Inline code (``python -c``, ``node -e``…) that deletes files or starts other programs.
_DESTRUCTIVE_CODE = re.compile(
    r"rmtree|os\.(remove|unlink|rmdir|removedirs|system|exec|spawn|kill)|\.unlink\(|subprocess"
    r"|popen|pty\.spawn|child_process|(rm|unlink|rmdir)Sync|fs\.rm\b|FileUtils\.rm|File\.delete"
    r"|\bsystem\s*\(|\bexec\s*\(|`|\brm\s+-|\bunlink\b|\bqx\b",
    re.IGNORECASE,
)
_FORK_BOMB = re.compile(r"([A-Za-z_:][\w:]*)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&")


# ---------------------------------------------------------------------------- rating


class _Findings:
    def __init__(self) -> None:
        self.danger: list[str] = []
        self.caution: list[str] = []

    def rating(self) -> Danger | None:
        danger = list(dict.fromkeys(self.danger))
        caution = [r for r in dict.fromkeys(self.caution) if r not in danger]
        if danger:
            return Danger("danger", danger + caution)
        if caution:
            return Danger("caution", caution)
        return None


_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|mapper/|md\d|dm-|loop)")
_INSTALLERS: dict[str, tuple[str, ...]] = {
    "pip": ("install",),
    "pip3": ("install",),
    "npm": ("install", "i", "add", "ci"),
    "pnpm": ("install", "i", "add"),
    "yarn": ("add", "install"),
    "apt": ("install",),
    "apt-get": ("install",),
    "dnf": ("install",),
    "yum": ("install",),
    "brew": ("install",),
    "conda": ("install", "create"),
    "mamba": ("install", "create"),
    "cargo": ("install",),
    "gem": ("install",),
    "go": ("install", "get"),
    "uv": ("add",),
    "poetry": ("add",),
}


#: Absolute paths that are no file of anyone's: writing there changes nothing.
_HARMLESS = re.compile(r"^/dev/(null|zero|stdout|stderr|stdin|tty|fd/\d+)$|^/proc/self/fd/\d+$")


def _outside(path: str, roots: Sequence[str]) -> bool:
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded) or _HARMLESS.match(expanded):
        return False  # relative to wherever the command runs: not knowable here
    try:
        real = os.path.realpath(expanded)
    except (OSError, ValueError):  # a NUL byte, a loop: no file anyone can name
        real = os.path.normpath(expanded)
    for root in roots:
        base = os.path.realpath(root)
        try:
            if os.path.commonpath([real, base]) == base:
                return False
        except ValueError:
            continue
    return True


def _rate_command(
    cmd: SimpleCommand, roots: Sequence[str] | None, found: _Findings, depth: int
) -> None:
    for target in cmd.writes:
        if _DISK.match(target):
            found.danger.append("writes directly to a disk device")
        elif roots and _outside(target, roots):
            found.caution.append(f"writes outside the project (`{target}`)")
    unwrapped = unwrap(cmd.argv)
    argv, root = unwrapped.argv, unwrapped.as_root
    if root:
        found.danger.append("runs as root")
    if not argv:
        return
    name = os.path.basename(argv[0])
    invocation = shell_invocation(argv)
    payload = invocation.script if invocation is not None else shell_payload(argv)
    if payload is not None:
        if depth < MAX_DEPTH:
            _rate(payload, roots, found, depth + 1)
        return
    code = inline_code(argv)
    if code is not None:
        # Code is not read, so it is never "not rated": what it may do is named instead.
        if any(_DESTRUCTIVE_CODE.search(w) for w in argv[1:]):
            found.danger.append(f"runs inline code that deletes files or starts programs ({code})")
        else:
            found.caution.append(f"runs code given inline, which is not rated ({code})")
    short, long = flags(argv)
    args = positional(argv)
    if name == "rm":
        if "r" in short or "R" in short or "--recursive" in long:
            found.danger.append("deletes files recursively")
        elif "f" in short or "--force" in long:
            found.danger.append("force-deletes files (rm -f)")
    elif name == "find":
        if "-delete" in argv:
            found.danger.append("deletes the files it finds (find -delete)")
        for index, word in enumerate(argv):
            if word in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(argv):
                if os.path.basename(argv[index + 1]) in ("rm", "shred", "unlink"):
                    found.danger.append("deletes the files it finds (find -exec rm)")
                _rate_command(SimpleCommand(argv[index + 1 :]), roots, found, depth + 1)
    elif name == "git":
        _rate_git(argv, found)
    elif name == "dd":
        if any(_DISK.match(w[3:]) for w in argv if w.startswith("of=")):
            found.danger.append("writes directly to a disk device")
        found.danger.append("copies raw bytes over files or devices (dd)")
    elif name.startswith("mkfs") or name in ("mkswap", "wipefs", "fdisk", "parted", "sfdisk"):
        found.danger.append("formats or repartitions a disk")
    elif name == "shred":
        found.danger.append("destroys file contents beyond recovery (shred)")
    elif name in ("chmod", "chown", "chgrp") and ("R" in short or "--recursive" in long):
        found.danger.append(
            "changes permissions recursively"
            if name == "chmod"
            else "changes ownership recursively"
        )
    elif name in ("shutdown", "reboot", "halt", "poweroff"):
        found.danger.append("shuts down or restarts the machine")
    elif name in _DOWNLOADERS:
        found.caution.append(f"uses the network ({name})")
    elif name in ("ssh", "scp", "sftp", "telnet", "nc", "ncat", "ftp", "mosh"):
        found.caution.append(f"connects to another machine ({name})")
    elif name == "rsync" and any(_is_remote(a) for a in args):
        found.caution.append("copies to or from another machine (rsync)")
    elif name in ("kill", "pkill", "killall"):
        found.caution.append(f"stops processes ({name})")
    _rate_install(name, argv, args, found)
    if roots:
        outside = [t for t in written_words(argv, landed=False) if _outside(t, roots)]
        if outside:
            found.caution.append(f"changes files outside the project ({_named(outside)})")


def _is_remote(arg: str) -> bool:
    return "://" in arg or (bool(re.match(r"^[\w.@-]+:", arg)) and not arg.startswith("/"))


def _rate_git(argv: list[str], found: _Findings) -> None:
    words = argv[1:]
    while words and words[0].startswith("-"):  # git -C dir …, git -c k=v …
        flag = words.pop(0)
        if flag in ("-C", "-c") and words:
            words.pop(0)
    if not words:
        return
    sub, rest = words[0], words[1:]
    short, long = flags([sub, *rest])
    if sub == "reset" and "--hard" in rest:
        found.danger.append("discards uncommitted changes (git reset --hard)")
    elif sub == "clean" and ("f" in short or "--force" in long):
        found.danger.append("deletes untracked files (git clean)")
    elif sub == "push":
        forced = (
            "f" in short
            or long & {"--force", "--force-with-lease", "--mirror", "--delete"}
            or any(w.startswith("+") for w in rest)
        )
        if forced:
            found.danger.append("rewrites the remote's history (git push --force)")
        else:
            found.caution.append("pushes to a remote (git push)")
    elif (sub == "checkout" and "--" in rest) or sub == "restore":
        found.caution.append("discards uncommitted changes to files")
    elif sub == "branch" and "D" in short:
        found.caution.append("deletes a branch without checking it is merged")


def _rate_install(name: str, argv: list[str], args: list[str], found: _Findings) -> None:
    words = args
    tool = name
    if re.fullmatch(r"python3?(\.\d+)?", name) and argv[1:3] == ["-m", "pip"]:
        tool, words = "pip", positional(argv[2:])
    elif name == "uv" and args[:1] == ["pip"]:
        tool, words = "pip", args[1:]
    verbs = _INSTALLERS.get(tool)
    if verbs and words and words[0] in verbs:
        found.caution.append(f"installs packages ({tool} {words[0]})")


def _named(paths: list[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:MAX_NAMED])
    more = len(paths) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _runs_stdin(cmd: SimpleCommand) -> bool:
    """``sh``, ``bash -s``, ``python -``: an interpreter reading its program from stdin."""
    argv = unwrap(cmd.argv).argv
    if not argv or not is_interpreter(os.path.basename(argv[0])):
        return False
    if any(w in ("-c", "-m", "-e", "-r") for w in argv[1:]):
        return False
    args = positional(argv)
    return not args or args[0] == "-" or "-s" in argv[1:]


def _downloads(cmd: SimpleCommand) -> bool:
    argv = unwrap(cmd.argv).argv
    return bool(argv) and os.path.basename(argv[0]) in _DOWNLOADERS


def _rate(command: str, roots: Sequence[str] | None, found: _Findings, depth: int) -> None:
    if _FORK_BOMB.search(command):
        found.danger.append("a fork bomb: starts processes until the machine stalls")
    runs_code = False
    for pipeline in pipelines(command):
        for index, cmd in enumerate(pipeline):
            _rate_command(cmd, roots, found, depth)
            if _runs_stdin(cmd) and any(_downloads(c) for c in pipeline[:index]):
                runs_code = True
    inner = substitutions(command)
    for sub in inner:
        if depth < MAX_DEPTH:
            _rate(sub, roots, found, depth + 1)
    if any(_is_download(sub) for sub in inner) and any(
        is_interpreter(cmd.name) or cmd.name in ("eval", "source", ".")
        for pipeline in pipelines(command)
        for cmd in pipeline
    ):
        runs_code = True  # bash <(curl …), sh -c "$(curl …)"
    if runs_code:
        found.danger.append("downloads and runs code")


def _is_download(command: str) -> bool:
    return any(_downloads(cmd) for pipeline in pipelines(command) for cmd in pipeline)


def assess_command(command: str, roots: Sequence[str] | None = None) -> Danger | None:
    """How risky a shell command looks (None: nothing recognised).

    ``roots`` (the session's directories) adds a caution for files written outside
    them by absolute path (or ``~``); relative paths are not judged.
    """
    if not command or not command.strip():
        return None
    found = _Findings()
    _rate(command, roots, found, 0)
    return found.rating()


def assess_paths(paths: Iterable[str], roots: Sequence[str]) -> Danger | None:
    """Caution when a path lies outside ``roots`` (relative paths are taken from the first)."""
    if not roots:
        return None
    outside = []
    for path in paths:
        if not path:
            continue
        absolute = path if os.path.isabs(os.path.expanduser(path)) else os.path.join(roots[0], path)
        if _outside(absolute, roots):
            outside.append(path)
    outside = list(dict.fromkeys(outside))
    if not outside:
        return None
    return Danger("caution", [f"outside the project ({_named(outside)})"])


# ---------------------------------------------------------------------------- tool calls


class Rated(Protocol):
    """What a rating reads of a tool call: the facts ``ToolCallState`` derives."""

    @property
    def command(self) -> str | None: ...

    @property
    def paths(self) -> list[str]: ...


def assess_call(call: Rated, roots: Sequence[str]) -> Danger | None:
    """A tool call's rating: its command, and its paths against ``roots``."""
    command = call.command
    return combine(
        assess_command(command, roots) if command else None,
        assess_paths(call.paths, roots),
    )
