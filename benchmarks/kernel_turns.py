"""A real kernel (jupyter_client), the extension loaded, the demo agent streaming ``/long N``
(about 40 bytes a chunk, as fast as it can):

- **wire**: the bytes (JSON content, as tests/kernel/test_cost.py counts them) of the live
  view's messages on iopub during the turn (``comm_open``, ``comm_msg``, ``comm_close``,
  ``display_data``) against the reply's own size; and, in a row of its own, the whole
  traffic: the same plus the ``update_display_data`` that replaces the live view with the
  saved transcript at the end (what the .ipynb keeps: ``ui/saved_transcript.py``);
- **responsiveness**: the time from sending ``1+1`` to its ``execute_reply`` while a
  ``--no-wait`` turn streams at full speed, against the same while the kernel is idle
  (medians); and a click: the ``comm_msg`` the browser sends when Cancel is pressed on a
  turn streaming at full speed, timed until the view says "Cancelling…" on iopub (the
  kernel handled the message, the agent loop ran the click), against the same idle ``1+1``
  (one click per turn, median).
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from acp_notebook.agents.demo.content import long_markdown_pieces

from .table import Row

ROOT = Path(__file__).resolve().parent.parent
LIVE_MESSAGES = {"comm_open", "comm_msg", "comm_close", "display_data"}
SAVED_MESSAGES = {"update_display_data"}
#: The coalescing interval (AcpMagics.coalesce_ms), the responsiveness budget's slack.
INTERVAL_MS = 75.0
SAFETY = 300.0


class Kernel:
    """One kernel with the extension loaded; iopub read by hand."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="acp-bench-")
        self.km = KernelManager(kernel_name="python3")
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        self.km.start_kernel(cwd=self._dir.name, env={**os.environ, "PYTHONPATH": path})
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=SAFETY)
        self.run("%load_ext acp_notebook")
        # A widget manager announces itself as JupyterLab's does when it connects; without
        # it the kernel serves a frontend without widgets (plain text, no widget traffic).
        self.kc.comm_info(target_name="jupyter.widget", reply=True, timeout=SAFETY)

    def iopub(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None

    def run(self, code: str) -> list[dict[str, Any]]:
        """Execute ``code``; every iopub message until the cell is idle and iopub has been
        quiet for half a second (a turn's last widget messages come after idle)."""
        msg_id = self.kc.execute(code)
        seen: list[dict[str, Any]] = []
        idle = False
        deadline = time.monotonic() + SAFETY
        while time.monotonic() < deadline:
            msg = self.iopub(0.5)
            if msg is None:
                if idle:
                    return seen
                continue
            seen.append(msg)
            if (
                msg["header"]["msg_type"] == "status"
                and msg["parent_header"].get("msg_id") == msg_id
                and msg["content"]["execution_state"] == "idle"
            ):
                idle = True
        raise TimeoutError(f"{code!r} did not finish in {SAFETY:g} s")

    def latency(self, code: str = "1+1") -> float:
        """Seconds from sending ``code`` to its ``execute_reply``."""
        start = time.perf_counter()
        msg_id = self.kc.execute(code)
        while True:
            reply = self.kc.get_shell_msg(timeout=SAFETY)
            if reply["parent_header"].get("msg_id") == msg_id:
                return time.perf_counter() - start

    def drain(self) -> list[dict[str, Any]]:
        seen = []
        while (msg := self.iopub(0.01)) is not None:
            seen.append(msg)
        return seen

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self._dir.cleanup()


def message_bytes(messages: list[dict[str, Any]], types: set[str]) -> int:
    return sum(
        len(json.dumps(m["content"], separators=(",", ":"), default=str))
        for m in messages
        if m["header"]["msg_type"] in types
    )


def reply_bytes(chunks: int) -> int:
    return len("".join(long_markdown_pieces(chunks)).encode())


def models_opened(messages: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per widget model kind: how many the messages opened, and the bytes of their
    ``comm_open``s, updates and ``comm_close``s (where a turn's wire goes)."""
    kinds: dict[str, str] = {}
    found: dict[str, tuple[int, int]] = {}
    for message in messages:
        kind, content = message["header"]["msg_type"], message["content"]
        if kind not in ("comm_open", "comm_msg", "comm_close"):
            continue
        if kind == "comm_open":
            kinds[content["comm_id"]] = content["data"]["state"].get("_model_name", "?")
        name = kinds.get(content["comm_id"], "(opened before)")
        count, size = found.get(name, (0, 0))
        found[name] = (count + (kind == "comm_open"), size + message_bytes([message], {kind}))
    return dict(sorted(found.items(), key=lambda item: -item[1][1]))


def breakdown(chunks: int = 3000) -> None:
    """Print the models and bytes per kind of the first ``/long chunks`` turn of a kernel
    (it opens the layouts and styles every later view shares) and of a later one."""
    kernel = Kernel()
    try:
        for turn in ("first turn of the kernel", "a later turn"):
            messages = kernel.run(f"%acp /long {chunks}")
            print(f"{turn}: reply {reply_bytes(chunks):,} B")
            for name, (count, size) in models_opened(messages).items():
                print(f"  {name:24} {count:4} opened {size:9,} B")
            for types in (LIVE_MESSAGES, SAVED_MESSAGES):
                print(f"  {' + '.join(sorted(types)):24} {message_bytes(messages, types):19,} B")
    finally:
        kernel.close()


def wire_rows(kernel: Kernel, sizes: list[int]) -> list[Row]:
    kernel.run("%acp /long 100")  # the agent is started and the session exists
    rows = []
    for chunks in sizes:
        reply = reply_bytes(chunks) / 1000
        messages = kernel.run(f"%acp /long {chunks}")
        live = message_bytes(messages, LIVE_MESSAGES) / 1000
        saved = message_bytes(messages, SAVED_MESSAGES) / 1000
        name = f"a {reply:,.0f} KB reply (`/long {chunks}`)"
        rows.append(
            Row(f"live view bytes of {name}", live, reply, "the reply", "KB", limit=3, gated=True)
        )
        rows.append(
            Row(
                f"… live view + saved transcript of `/long {chunks}`",
                live + saved,
                reply,
                "the reply",
                "KB",
                limit=3,
                gated=True,
            )
        )
    return rows


def responsiveness_row(kernel: Kernel, chunks: int, samples: int) -> Row:
    kernel.run("%acp /long 100")
    idle = [kernel.latency() for _ in range(samples)]
    kernel.drain()
    kernel.kc.execute(f"%acp --no-wait /long {chunks}")
    busy = [kernel.latency() for _ in range(samples)]
    streaming = _still_streaming(kernel)
    _wait_quiet(kernel)
    figure = f"`1+1` while `/long {chunks}` streams (median of {samples})"
    if not streaming:
        figure += " [the stream ended before the samples did]"
    return Row(
        figure,
        statistics.median(busy) * 1000,
        statistics.median(idle) * 1000,
        "`1+1` idle",
        "ms",
        limit=2,
        slack=INTERVAL_MS,
    )


def click_row(kernel: Kernel, chunks: int, samples: int, idle_ms: float) -> Row:
    clicks = [_click_cancel(kernel, chunks) for _ in range(samples)]
    return Row(
        f"Cancel clicked while `/long {chunks}` streams (median of {samples})",
        statistics.median(clicks) * 1000,
        idle_ms,
        "`1+1` idle",
        "ms",
        limit=2,
        slack=INTERVAL_MS,
    )


def _click_cancel(kernel: Kernel, chunks: int) -> float:
    """Seconds from a click on the streaming turn's Cancel to the view's "Cancelling…"."""
    kernel.drain()
    kernel.kc.execute(f"%acp --no-wait /long {chunks}")
    cancel, status_ids, streaming = None, set(), False
    deadline = time.monotonic() + SAFETY
    while not (cancel and streaming) and time.monotonic() < deadline:
        msg = kernel.iopub(SAFETY)
        if msg is None:
            break
        content, kind = msg["content"], msg["header"]["msg_type"]
        if kind == "comm_open":
            state = content["data"]["state"]
            if state.get("_model_name") == "ButtonModel" and state.get("description") == "Cancel":
                cancel = content["comm_id"]
            if state.get("_model_name") == "HTMLModel":
                status_ids.add(content["comm_id"])
        # Text arrived: the turn streams (a segment opened or the live tail changed).
        streaming = streaming or (kind in ("comm_open", "comm_msg") and "Section 1" in str(content))
    if cancel is None or not streaming:
        raise TimeoutError("the streaming turn's Cancel button was not seen")
    click = {"method": "custom", "content": {"event": "click"}}
    message = kernel.kc.session.msg("comm_msg", {"comm_id": cancel, "data": click})
    start = time.perf_counter()
    kernel.kc.shell_channel.send(message)
    while time.monotonic() < deadline:
        msg = kernel.iopub(SAFETY)
        if msg is None:
            break
        if msg["header"]["msg_type"] == "comm_msg" and "Cancelling" in str(msg["content"]):
            elapsed = time.perf_counter() - start
            _wait_quiet(kernel)
            return elapsed
    raise TimeoutError("the click on Cancel was not answered")


def _still_streaming(kernel: Kernel) -> bool:
    """Widget updates still arriving: the samples were taken during the stream."""
    return any(m["header"]["msg_type"] == "comm_msg" for m in kernel.drain())


def _wait_quiet(kernel: Kernel, quiet: float = 1.0) -> None:
    """Until iopub has been quiet for ``quiet`` seconds (the background turn ended)."""
    deadline = time.monotonic() + SAFETY
    last = time.monotonic()
    while time.monotonic() - last < quiet and time.monotonic() < deadline:
        if kernel.iopub(0.1) is not None:
            last = time.monotonic()


def wire_sizes(quick: bool) -> list[int]:
    return [3000, 6000] if quick else [3000, 25_000]


def wire(quick: bool) -> list[Row]:
    """The wire rows alone (what ``--gate`` runs)."""
    kernel = Kernel()
    try:
        return wire_rows(kernel, wire_sizes(quick))
    finally:
        kernel.close()


def measure(quick: bool) -> list[Row]:
    kernel = Kernel()
    try:
        rows = wire_rows(kernel, wire_sizes(quick))
        typing = responsiveness_row(kernel, 5000 if quick else 20_000, 10 if quick else 20)
        rows.append(typing)
        rows.append(
            click_row(kernel, 5000 if quick else 20_000, 3 if quick else 7, typing.baseline)
        )
        return rows
    finally:
        kernel.close()


if __name__ == "__main__":
    breakdown()
