"""The six real agents as the kernel-interop tests run them: each pinned package, installed
once per machine into the agent cache (:mod:`.npm`), its launch under its preset name, and
what points it at the loopback model (environment variables, a config file in its HOME,
a login method).

The kernel is started as Jupyter Server starts it: ``jupyter_client``'s ``KernelManager``
with the project's own kernelspec (``Python 3 (ACP)``, the extension loaded by
``--ext``). Its folder and HOME lie outside temp (:func:`tests.conftest.sandbox_scratch`),
so the sandbox's refusal of a write outside the folder is real; every process it starts
carries a marker in its environment, so one left behind is found whatever its parent.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from acp_notebook.notebook.kernelspec import kernel_json

from ..conftest import sandbox_scratch
from ..kernel.conftest import SAFETY, Kernel
from .loopback import LoopbackModel
from .npm import npm_agents

#: The marker every process of a test kernel carries in its environment.
MARK = "ACP_NOTEBOOK_INTEROP_RUN"
DUMMY_KEY = "sk-loopback-dummy"


@dataclass(frozen=True)
class RealAgent:
    """One agent: its preset, its pinned install, and how it reaches the loopback model."""

    preset: str
    #: Installs it (once per machine) and returns its executables by name.
    install: Callable[[], dict[str, Path]]
    #: Environment variables that point it at the model (``{url}`` is the model's URL).
    env: dict[str, str]
    #: Files written into its HOME before it starts: path → text (``{url}`` as above).
    files: dict[str, str] = field(default_factory=dict)
    #: ``%acp --login METHOD`` before the first prompt (the agent asks for it).
    login: str | None = None
    #: The variables whose absence is "no key", the files of :attr:`files` left out then
    #: (where the key or the provider lies), the options of a turn then (a ``-t`` for an
    #: agent that never answers without a provider), and a phrase of the hint the cell shows.
    key_vars: tuple[str, ...] = ()
    key_files: tuple[str, ...] = ()
    no_key_options: str = ""
    no_key_hint: str = ""
    #: The agent's own tool that writes a file, and its arguments for (path, text).
    write_tool: str = ""
    write_args: Callable[[Path, str], dict[str, object]] = lambda path, text: {}
    #: The agent's own bugs these tests meet, by the check they change: check → what the
    #: pinned version does. Each is asserted as the bug (a fixed agent fails the check, and
    #: its entry goes) and listed in docs/real-agents.md.
    bugs: dict[str, str] = field(default_factory=dict)

    def environment(self, model: LoopbackModel, bin_dir: Path) -> dict[str, str]:
        return {
            **{key: value.format(url=model.url) for key, value in self.env.items()},
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        }

    def configure(self, home: Path, model: LoopbackModel, *, keyless: bool = False) -> None:
        for relative, text in self.files.items():
            if keyless and relative in self.key_files:
                continue
            path = home / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.replace("{url}", model.url), encoding="utf-8")


def _npm(cache: str, package: str, binary: str) -> Callable[[], dict[str, Path]]:
    return lambda: {binary: npm_agents(cache, [package], [binary]) / binary}


def _claude_and_qwen(binary: str) -> Callable[[], dict[str, Path]]:
    from .test_real_agents_doctor import PACKAGES

    return lambda: {
        binary: npm_agents("npm-agents", PACKAGES, ["claude-agent-acp", "qwen"]) / binary
    }


def _fast_agent() -> dict[str, Path]:
    from .test_fast_agent import install_fast_agent

    return {"fast-agent": install_fast_agent()}


# No sandbox_mode here: Codex's own sandbox (bubblewrap) cannot start inside the client's
# ("bwrap: setting up uid map: Permission denied"), so the codex preset turns it off when
# the client confines Codex; the tests run Codex as the preset starts it.
CODEX_CONFIG = """\
model = "mock-model"
model_provider = "loopback"

[model_providers.loopback]
name = "loopback"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
"""

OPENCODE_CONFIG = json.dumps(
    {
        "$schema": "https://opencode.ai/config.json",
        "model": "loopback/mock-model",
        "provider": {
            "loopback": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "loopback",
                "options": {"baseURL": "{url}/v1", "apiKey": DUMMY_KEY},
                "models": {"mock-model": {"name": "mock-model"}},
            }
        },
    }
)

AGENTS = {
    "claude": RealAgent(
        preset="claude",
        install=_claude_and_qwen("claude-agent-acp"),
        env={
            "ANTHROPIC_BASE_URL": "{url}",
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        },
        key_vars=("ANTHROPIC_API_KEY",),
        no_key_hint="ANTHROPIC_API_KEY",
        write_tool="Write",
        write_args=lambda path, text: {"file_path": str(path), "content": text},
        bugs={"usage used": "its `usage_update` says `used: null`, which ACP requires a number"},
    ),
    "codex": RealAgent(
        preset="codex",
        install=_npm("npm-codex", "@zed-industries/codex-acp@0.16.0", "codex-acp"),
        env={"OPENAI_API_KEY": DUMMY_KEY},
        files={".codex/config.toml": CODEX_CONFIG},
        login="openai-api-key",
        key_vars=("OPENAI_API_KEY", "CODEX_API_KEY"),
        no_key_hint="OPENAI_API_KEY",
        write_tool="exec_command",
        write_args=lambda path, text: {"cmd": f"printf %s {text!r} > {str(path)!r}"},
        bugs={
            "warning in the reply": "a model it has no metadata for puts its warning "
            '("Model metadata for `mock-model` not found…") into the reply, as agent text',
        },
    ),
    "qwen-code": RealAgent(
        preset="qwen-code",
        install=_claude_and_qwen("qwen"),
        env={
            "OPENAI_BASE_URL": "{url}/v1",
            "OPENAI_API_KEY": DUMMY_KEY,
            "OPENAI_MODEL": "mock-model",
        },
        login="openai",
        key_vars=("OPENAI_API_KEY",),
        no_key_hint="OPENAI_API_KEY",
        write_tool="write_file",
        write_args=lambda path, text: {"file_path": str(path), "content": text},
        bugs={
            "notebook rule": "its permission request for an MCP tool names neither the tool "
            "nor its server (the title is the arguments' JSON), so a `notebook` rule "
            "cannot decide it",
            "rejected call": "a call whose permission was rejected is left pending",
        },
    ),
    "fast-agent": RealAgent(
        preset="fast-agent",
        install=_fast_agent,
        env={
            "FAST_AGENT_MODEL": "generic.mock-model",
            "GENERIC_BASE_URL": "{url}/v1",
            "GENERIC_API_KEY": DUMMY_KEY,
        },
        key_vars=("FAST_AGENT_MODEL",),
        no_key_hint="--model",
        write_tool="write_text_file",
        write_args=lambda path, text: {"path": str(path), "content": text},
        bugs={"title": "the session's title is the first prompt, with the context sent"},
    ),
    "gemini": RealAgent(
        preset="gemini",
        install=_npm("npm-gemini", "@google/gemini-cli@0.61.0", "gemini"),
        env={
            "GOOGLE_GEMINI_BASE_URL": "{url}",
            "GEMINI_API_KEY": DUMMY_KEY,
            # Else it drops the MCP servers it is given (the notebook tools) in the folder.
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        },
        # With a base URL it takes the model for a gateway, which needs no key.
        key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
        no_key_hint="GEMINI_API_KEY",
        write_tool="write_file",
        write_args=lambda path, text: {"file_path": str(path), "content": text},
        bugs={
            "new file": "it cannot create a file through the client (ACP `fs/*`): it reads "
            "the file first, and takes the client's answer that there is none for a failure",
        },
    ),
    "opencode": RealAgent(
        preset="opencode",
        install=_npm("npm-opencode", "opencode-ai@1.18.33", "opencode"),
        env={},
        files={".config/opencode/opencode.json": OPENCODE_CONFIG},
        key_files=(".config/opencode/opencode.json",),
        # Long enough for its first start in a fresh HOME, which -t bounds too (17 s here,
        # up to 54 s for a whole first turn with the machine loaded).
        no_key_options="-t 45",
        no_key_hint="opencode.json",
        write_tool="write",
        write_args=lambda path, text: {"filePath": str(path), "content": text},
    ),
}


@dataclass
class Place:
    """A kernel's tree outside temp: ``home`` (its HOME), ``project`` (its folder) and
    ``outside`` (neither)."""

    base: Path

    @classmethod
    def make(cls) -> Place:
        base = sandbox_scratch() / f"interop-{uuid.uuid4().hex[:12]}"
        for name in ("home", "project", "outside", "kernels"):
            (base / name).mkdir(parents=True)
        return cls(base)

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def project(self) -> Path:
        return self.base / "project"

    @property
    def outside(self) -> Path:
        return self.base / "outside"

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def start_kernel(place: Place, env: dict[str, str]) -> tuple[Kernel, str]:
    """A kernel of the project's kernelspec in ``place.project`` with HOME ``place.home``
    and ``env``, without a widget manager (as ``jupyter console``, so turns are plain
    text); returns it and the marker its processes carry."""
    spec_dir = place.base / "kernels" / "acp"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps(kernel_json("acp")), encoding="utf-8")
    mark = uuid.uuid4().hex
    ksm = KernelSpecManager(kernel_dirs=[str(place.base / "kernels")])
    kernel = Kernel(
        place.project,
        kernel_name="acp",
        kernel_spec_manager=ksm,
        env={**env, "HOME": str(place.home), MARK: mark, "NO_COLOR": "1"},
    )
    loaded = kernel.text("print('acp' in get_ipython().magics_manager.magics['line'])")
    assert loaded.strip() == "True", "the kernelspec did not load the extension"
    return kernel, mark


def processes_marked(mark: str) -> list[tuple[int, str]]:
    """Every live process whose environment carries ``mark``: (pid, command line)."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(entry.name), cmdline.strip()))
        except OSError:
            continue
    return found


__all__ = ["AGENTS", "SAFETY", "Place", "RealAgent", "processes_marked", "start_kernel"]
