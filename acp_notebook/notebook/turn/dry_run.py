"""``%acp --dry-run``: the exact content blocks a prompt would send, and nothing sent.

The blocks follow the agent's ``promptCapabilities`` when the agent runs already; when it
has not started, they are shown as for an agent that accepts embedded resources and
images (said above them). Nothing is started and nothing is sent.
"""

from __future__ import annotations

import json
from typing import Any

from ...client.formatting import fence, md_escape
from ..prompt.context import all_accepted
from ..runtime.agents import NotebookAgents
from .handle import TurnSettings


def _shown(wire: Any) -> Any:
    """The wire blocks, with an image's base64 data replaced by its size (readable)."""
    if isinstance(wire, list):
        return [_shown(item) for item in wire]
    if isinstance(wire, dict):
        if wire.get("type") in ("image", "audio") and isinstance(wire.get("data"), str):
            return {**wire, "data": f"<{len(wire['data']):,} characters of base64>"}
        return {key: _shown(value) for key, value in wire.items()}
    return wire


def dry_run_bundle(agents: NotebookAgents, settings: TurnSettings) -> dict[str, str]:
    """The display bundle of ``--dry-run`` (Markdown and plain text)."""
    runtime = agents.runtimes.get(settings.agent)
    connection = runtime.connection if runtime is not None else None
    if connection is not None:
        accepts = connection.agent_capabilities.prompt_capabilities
        said = f"as `{settings.agent}` accepts them (its promptCapabilities)"
    else:
        accepts = all_accepted()
        said = (
            f"as for an agent that accepts embedded resources and images (`{settings.agent}` "
            "has not started, so its promptCapabilities are not known yet)"
        )
    blocks = [block.to_wire() for block in settings.blocks(accepts)]
    text = json.dumps(_shown(blocks), indent=2, ensure_ascii=False)
    heading = (
        f"Dry run: nothing was sent. The `session/prompt` would carry {len(blocks)} content "
        f"block{'s' if len(blocks) != 1 else ''}, {said}; image data is shown by its size."
    )
    return {
        "text/markdown": f"*{md_escape(heading)}*\n\n{fence(text, 'json')}\n",
        "text/plain": f"{heading}\n{text}\n",
    }
