"""The live-notebook protocol's comm targets and the envelope of every message (the
messages themselves: ``protocol.py``). Without pydantic, so that ``%load_ext`` can register
the kernel's target and open its beacon cheaply."""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = 2
#: Registered by the kernel; the extension opens one comm per notebook here.
KERNEL_TARGET = "acp_notebook.live"
#: Registered by the extension; the kernel's beacon comm.
FRONTEND_TARGET = "acp_notebook.live.announce"
#: The key of an ``ask`` in the metadata of the execute request of a ``%acp`` cell the
#: extension wrote (Fix, Ask about this cell).
ASK_METADATA = "acp_notebook"


def message(type_: str, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "type": type_, **fields}
