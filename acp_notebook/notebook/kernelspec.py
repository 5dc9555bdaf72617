"""Kernelspecs: "Python 3 (ACP)" (IPython with the extension loaded) and "ACP agent"
(cells are prompts by default).

A kernelspec shipped as wheel data names a bare ``python``, which Jupyter replaces
with *its own* interpreter; installing one here writes this interpreter's absolute
path instead, so the kernel runs where acp_notebook is installed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

KERNELS: dict[str, dict[str, Any]] = {
    "acp": {
        "display_name": "Python 3 (ACP)",
        "argv": ["-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=acp_notebook"],
    },
    "acp-agent": {
        "display_name": "ACP agent",
        "argv": [
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--ext=acp_notebook.agent_kernel",
        ],
    },
}


def kernel_json(name: str, python: str | None = None) -> dict[str, object]:
    spec = KERNELS[name]
    return {
        "argv": [python or sys.executable, *spec["argv"]],
        "display_name": spec["display_name"],
        "language": "python",
        "metadata": {"debugger": True},
    }


def install_kernelspecs(
    *, user: bool = False, sys_prefix: bool = False, prefix: str | None = None
) -> Iterator[str]:
    """Install every kernelspec for this interpreter; yields one line per installed spec."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    if sys_prefix:
        prefix = sys.prefix
    for name in KERNELS:
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, name)
            os.mkdir(folder)
            with open(os.path.join(folder, "kernel.json"), "w", encoding="utf-8") as handle:
                json.dump(kernel_json(name), handle, indent=2)
            dest = manager.install_kernel_spec(folder, name, user=user, prefix=prefix)
        yield f"Installed kernelspec {name} ({KERNELS[name]['display_name']}) in {dest}"
