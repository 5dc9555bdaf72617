"""A minimal agent on :func:`acp_notebook.protocol.stdio.serve_stdio`: ``_test/echo``
answers with its params, after a stray ``print`` that must land on stderr, never in the
protocol stream."""

from __future__ import annotations

import sys
from typing import Any

import anyio.abc

from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.stdio import serve_stdio


async def serve(receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
    peer = Peer(receive, send, name="stdio-echo", drain=10.0)

    async def echo(params: Any) -> Any:
        print("a stray print from the agent")
        return params

    peer.handle_request("_test/echo", echo)
    try:
        await peer.run()
    finally:
        await peer.aclose()


if __name__ == "__main__":
    sys.exit(serve_stdio(serve))
