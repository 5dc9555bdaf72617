"""Agent presets: how to launch each known agent, as data.

The shipped presets (``presets.json``) use the ACP registry's manifest shape. A
user adds or overrides presets with JSON files of the same shape, listed in the
``ACP_NOTEBOOK_PRESETS`` environment variable (``os.pathsep``-separated) or passed
explicitly.

Resolution of a preset prefers an installed binary (``local``), then ``npx``, then
``uvx``; anything that is not a preset name is a command line, split like a shell.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..protocol.sandbox import DEFAULT_MODE, Confinement, confinement

DEMO = "demo"
PRESETS_ENV = "ACP_NOTEBOOK_PRESETS"

Which = Callable[[str], "str | None"]

#: The environment of a package runner: npm retries an unreachable registry for over a
#: minute by default (an offline `npx` sat 71 s), so once, quickly; and it logs each
#: download (`http`), which is the start-up progress shown while the agent is fetched.
RUNNER_ENV: dict[str, dict[str, str]] = {
    "npx": {
        "npm_config_fetch_retries": "1",
        "npm_config_fetch_retry_mintimeout": "1000",
        "npm_config_fetch_retry_maxtimeout": "3000",
        "npm_config_loglevel": "http",
    },
}

#: What a package runner writes besides the agent's own state: its download cache.
RUNNER_WRITABLE: dict[str, tuple[str, ...]] = {"npx": ("~/.npm/",), "uvx": ("~/.cache/uv/",)}


class AgentNotFound(Exception):
    """A preset none of whose launch methods is available here; the message says what to install."""


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    description: str
    distribution: Mapping[str, Any]
    auth: str = ""
    website: str = ""
    source: str = "shipped"
    #: How it runs confined: ``writable`` (its state and cache paths), ``default`` (its
    #: sandbox mode unless the user chose one), ``env`` and ``args`` (set and added only
    #: when really confined), ``note`` (what that means for the agent), ``seed`` (state
    #: files made with their text when missing, before it runs confined).
    sandbox: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], source: str) -> Preset:
        return cls(
            id=str(raw["id"]),
            name=str(raw.get("name", raw["id"])),
            description=str(raw.get("description", "")),
            distribution=dict(raw.get("distribution") or {}),
            auth=str(raw.get("auth", "")),
            website=str(raw.get("website", "")),
            source=source,
            sandbox=dict(raw.get("sandbox") or {}),
        )


def _seed(path: str, text: str) -> None:
    """Make ``path`` holding ``text`` (owner-only) unless something is there already."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return  # there already, or its folder is missing: the agent makes its own then
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@dataclass(frozen=True)
class LaunchSpec:
    """A resolved way to start an agent."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    #: builtin, local, npx, uvx, or command (a command line given by the user).
    method: str = "command"
    preset: Preset | None = None

    #: The agent's own state and cache paths, writable when it runs confined (``~/.claude/``).
    writable: tuple[str, ...] = ()

    @property
    def command_line(self) -> str:
        return shlex.join(self.argv)

    @property
    def sandbox_default(self) -> str:
        """The sandbox mode this agent runs in unless the user chose one."""
        return str((self.preset.sandbox if self.preset else {}).get("default", DEFAULT_MODE))

    def confinement(
        self,
        mode: str | None,
        roots: Sequence[str],
        *,
        writable: Sequence[str] = (),
        ports: Sequence[int] = (),
    ) -> Confinement:
        """How this agent runs in ``roots`` (its cwd first) with ``mode`` (None: its
        default); ``writable`` adds places it may write in every mode but ``off``, as its
        own state. When it really runs confined, the preset's ``seed`` files that are
        missing are made now with their text: a confined agent can write a state file
        only where it exists, and Claude Code waits forever at ``session/new`` when it
        cannot make ``~/.claude.json`` (its first run)."""
        made = confinement(
            mode or self.sandbox_default, roots, state=[*self.writable, *writable], ports=ports
        )
        if made.enforced:
            seeds = (self.preset.sandbox if self.preset else {}).get("seed") or {}
            for path, text in seeds.items():
                _seed(os.path.expanduser(str(path)), str(text))
        return made

    def confined_env(self, confined: Confinement) -> dict[str, str]:
        """Its environment when run as ``confined`` says: the preset's sandbox variables
        (Claude Code's ``IS_SANDBOX``) only when the operating system really confines it."""
        extra = (self.preset.sandbox if self.preset else {}).get("env") or {}
        return {
            **self.env,
            **({str(k): str(v) for k, v in extra.items()} if confined.enforced else {}),
        }

    def confined_argv(self, confined: Confinement) -> list[str]:
        """Its command when run as ``confined`` says: the preset's sandbox arguments only
        when the operating system really confines it (Codex's ``-c
        sandbox_mode="danger-full-access"``: its own sandbox is left to the client's,
        which keeps it in the folder; unconfined, it keeps its own)."""
        extra = (self.preset.sandbox if self.preset else {}).get("args") or []
        return [*self.argv, *(map(str, extra) if confined.enforced else ())]

    @property
    def sandbox_note(self) -> str:
        """What running confined means for this agent, as its preset says ("" if nothing)."""
        return str((self.preset.sandbox if self.preset else {}).get("note") or "")

    @property
    def display_name(self) -> str:
        return self.preset.name if self.preset else self.name


@dataclass(frozen=True)
class LaunchOption:
    """One distribution method of a preset and whether it can run here."""

    method: str
    argv: list[str]
    env: dict[str, str]
    available: bool
    missing: str = ""


def _manifests(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    agents = data.get("agents") if isinstance(data, Mapping) else None
    return [a for a in agents or [] if isinstance(a, Mapping) and isinstance(a.get("id"), str)]


def load_presets(extra_files: Iterable[str | os.PathLike[str]] = ()) -> dict[str, Preset]:
    """The shipped presets, overridden by user files (later files win)."""
    shipped = json.loads(resources.files(__package__).joinpath("presets.json").read_text("utf-8"))
    presets = {p["id"]: Preset.from_manifest(p, "shipped") for p in _manifests(shipped)}
    files = [
        *filter(None, os.environ.get(PRESETS_ENV, "").split(os.pathsep)),
        *(os.fspath(f) for f in extra_files),
    ]
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise AgentNotFound(f"The presets file {path} could not be read: {exc}.") from exc
        for manifest in _manifests(data):
            presets[manifest["id"]] = Preset.from_manifest(manifest, path)
    return presets


def launch_options(preset: Preset, which: Which = shutil.which) -> list[LaunchOption]:
    """Every way this preset could start, in order of preference, with availability."""
    dist = preset.distribution
    options: list[LaunchOption] = []
    builtin = dist.get("builtin")
    if isinstance(builtin, Mapping):
        argv = [sys.executable, "-m", str(builtin["module"]), *map(str, builtin.get("args", []))]
        options.append(LaunchOption("builtin", argv, dict(builtin.get("env", {})), True))
    local = dist.get("local")
    if isinstance(local, Mapping):
        command = str(local["command"])
        found = which(command)
        argv = [found or command, *map(str, local.get("args", []))]
        options.append(
            LaunchOption(
                "local",
                argv,
                dict(local.get("env", {})),
                found is not None,
                f"`{command}` is not on PATH",
            )
        )
    for runner in ("npx", "uvx"):
        entry = dist.get(runner)
        if isinstance(entry, Mapping):
            found = which(runner)
            argv = [found or runner, *(["--yes"] if runner == "npx" else []), str(entry["package"])]
            argv += [str(a) for a in entry.get("args", [])]
            why = (
                "Node.js's `npx` is not on PATH"
                if runner == "npx"
                else "`uvx` (from uv) is not on PATH"
            )
            env = {**RUNNER_ENV.get(runner, {}), **dict(entry.get("env", {}))}
            options.append(LaunchOption(runner, argv, env, found is not None, why))
    return options


@dataclass(frozen=True)
class PresetStatus:
    """A preset and every way it could start here, for listing the presets."""

    preset: Preset
    options: tuple[LaunchOption, ...]

    @property
    def usable(self) -> LaunchOption | None:
        """The way it starts here (the first available), if any."""
        return next((option for option in self.options if option.available), None)

    @property
    def status(self) -> str:
        usable = self.usable
        return f"ready via {usable.method}" if usable else "not installed"


def preset_table(
    presets: Mapping[str, Preset] | None = None, which: Which = shutil.which
) -> list[PresetStatus]:
    """Every preset (shipped and the user's), whether it is installed here and how it
    starts: what `acp-notebook agents` and `%acp --agents` show."""
    presets = load_presets() if presets is None else presets
    return [PresetStatus(p, tuple(launch_options(p, which))) for p in presets.values()]


def install_hint(preset: Preset) -> str:
    """How to get the agent, as one sentence ("" when the preset says nothing): the
    package commands where it is published, else where it comes from (a program this
    project cannot install, such as goose)."""
    dist = preset.distribution
    hints = []
    if isinstance(dist.get("npx"), Mapping):
        hints.append(f"`npm install -g {dist['npx']['package']}` (needs Node.js)")
    if isinstance(dist.get("uvx"), Mapping):
        hints.append(f"`uv tool install {dist['uvx']['package']}`")
    if hints:
        return f"Install it with {' or '.join(hints)}."
    local = dist.get("local")
    if not isinstance(local, Mapping):
        return ""
    where = f" as {preset.website} says" if preset.website else ""
    return f"Install {preset.name}{where}, so that `{local['command']}` is on PATH."


def resolve_agent(
    spec: str | None,
    *,
    presets: Mapping[str, Preset] | None = None,
    which: Which = shutil.which,
) -> LaunchSpec:
    """A preset name (``claude``, ``demo``, ...) or a command line → how to launch it."""
    presets = load_presets() if presets is None else presets
    name = (spec or DEMO).strip()
    preset = presets.get(name)
    if preset is None:
        try:
            argv = shlex.split(name)
        except ValueError as exc:  # an unclosed quote
            raise AgentNotFound(f"The agent command {name!r} cannot be read: {exc}.") from None
        if not argv:
            raise AgentNotFound("The agent command is empty.")
        if argv[0] in ("python", "python3"):
            # "python -m some_agent" means this interpreter (the kernel's environment),
            # not whichever python comes first on PATH.
            argv[0] = sys.executable
        return LaunchSpec(os.path.basename(argv[0]), argv, method="command")
    options = launch_options(preset, which)
    for option in options:
        if option.available:
            writable = (
                *map(str, preset.sandbox.get("writable") or ()),
                *RUNNER_WRITABLE.get(option.method, ()),
            )
            demo_state = os.environ.get("ACP_DEMO_STATE_FILE")
            if preset.id == DEMO and demo_state:  # the demo's own sessions file
                writable += (os.path.dirname(os.path.abspath(demo_state)) + os.sep,)
            return LaunchSpec(preset.id, option.argv, option.env, option.method, preset, writable)
    missing = (
        "; ".join(o.missing for o in options if o.missing)
        or "it has no launch method for this platform"
    )
    hint = install_hint(preset)
    said = f"{preset.name} cannot be started here: {missing}."
    raise AgentNotFound(f"{said} {hint}" if hint else said)
