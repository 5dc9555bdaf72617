"""Which notebook this kernel runs: its name as the server gave it, and the file, when the
kernel can see it.

Jupyter Server names the notebook in the kernel's environment, ``JPY_SESSION_NAME``: the
server's notebook folder joined with the file's name (older servers: the path relative to
the server's root). A kernel started through a gateway (``KERNEL_GATEWAY=1``) runs where
the gateway runs, in the gateway's directory: it gets ``KERNEL_WORKING_DIR`` (the server's
notebook folder, a path on the server) and ``JPY_SESSION_NAME`` only where both the server
(``GatewayClient.allowed_envs``) and the gateway (``env_whitelist``) pass it.

The name, in order:

1. VS Code's ``__vsc_ipynb_file__`` (an absolute path);
2. ``JPY_SESSION_NAME``: absolute as given; relative, its file name in the notebook's
   folder (``KERNEL_WORKING_DIR`` when the server sent one, else the kernel's directory,
   where a local server starts a notebook's kernel) — never resolved against a directory
   the notebook is not in.

The name keys what is remembered per notebook (``runtime/notebook_state.py``), whether or not the file is
visible. The *file* (:attr:`Located.file`) is the name only when it is an ``.ipynb`` regular
file here; otherwise it is None and :attr:`Located.unseen` says why in one sentence. What is
sent as the open notebook and what the guard calls "the open notebook" is the file, so a
kernel that cannot see its notebook claims no path at all rather than a wrong one.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

__all__ = ["Located", "locate", "notebook_folder", "say_once"]


@dataclass(frozen=True)
class Located:
    """The notebook a kernel runs, as far as the kernel can tell."""

    #: Its absolute path as named to the kernel (None: nobody named it).
    name: str | None
    #: ``name`` when it is an ``.ipynb`` file the kernel can see, else None.
    file: str | None
    #: Why there is no ``file`` although a server started this kernel (one sentence), or
    #: None when there is a file or no server (a console, nbclient: nothing to say).
    unseen: str | None


def notebook_folder(cwd: str, env: os._Environ[str] | dict[str, str] | None = None) -> str:
    """The notebook's folder: the server's word for it (a gateway's kernel runs elsewhere),
    else the kernel's own directory."""
    given = (os.environ if env is None else env).get("KERNEL_WORKING_DIR")
    return given if given and os.path.isabs(given) else cwd


def _named(vscode: object, cwd: str, env: os._Environ[str] | dict[str, str]) -> str | None:
    if isinstance(vscode, str) and os.path.isabs(vscode):
        return os.path.normpath(vscode)
    name = env.get("JPY_SESSION_NAME")
    if not name:
        return None
    if os.path.isabs(name):
        return os.path.normpath(name)
    # Relative to the server's root, which the kernel does not know: its file name in the
    # notebook's folder is the notebook (the folder is the server's own word for it).
    return os.path.normpath(os.path.join(notebook_folder(cwd, env), os.path.basename(name)))


def _visible(path: str) -> bool:
    try:
        return path.endswith(".ipynb") and stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def locate(
    cwd: str | None = None,
    vscode: object = None,
    env: os._Environ[str] | dict[str, str] | None = None,
) -> Located:
    """The notebook this kernel runs (``cwd``: the kernel's directory, ``vscode``: VS
    Code's ``__vsc_ipynb_file__`` from the user's namespace, ``env``: the kernel's
    environment; by default this process's)."""
    env = os.environ if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    name = _named(vscode, cwd, env)
    if name is not None and _visible(name):
        return Located(name, name, None)
    through_gateway = bool(env.get("KERNEL_GATEWAY") or env.get("KERNEL_WORKING_DIR"))
    if name is None:
        unseen = (
            "this kernel runs through a gateway that did not pass JPY_SESSION_NAME, so it "
            "cannot tell which notebook it runs: the agent gets no link to the notebook and "
            "no write is recognised as one to it (let the server and the gateway pass "
            "JPY_SESSION_NAME to it)"
            if through_gateway
            else None
        )
        return Located(None, None, unseen)
    where = "where the gateway runs it" if through_gateway else "here"
    return Located(
        name,
        None,
        f"this kernel cannot see its notebook {name} ({where}), so the agent gets no link "
        "to it and no write is recognised as one to it",
    )


_said: set[str] = set()


def say_once(unseen: str | None) -> None:
    """Print why the notebook's file is not used (:attr:`Located.unseen`), once per kernel
    and reason, on the stderr of the cell that asked (the ``%acp`` cell)."""
    if unseen is None or unseen in _said:
        return
    _said.add(unseen)
    print(f"acp_notebook: {unseen[0].upper()}{unseen[1:]}.", file=sys.stderr)
