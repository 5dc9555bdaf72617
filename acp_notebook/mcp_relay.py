"""``python -m acp_notebook.mcp_relay --socket PATH --token-file PATH``: the notebook
tools' stdio MCP server, as an agent starts it.

It is a pipe, not a server: it connects to the kernel's private socket (in a 0700
directory), proves it may with the secret read from the 0600 token file — so the
secret is never in a command line, an environment variable, the ACP ``session/new``
message, a trace or a saved notebook — and then copies bytes between its stdio and
the socket until either side closes. When the kernel goes away the socket closes and
the relay exits; when the agent goes away stdin closes and the relay exits.

Only the standard library is imported, so an agent's MCP start-up stays fast.

The hello, one line each way before any MCP byte::

    relay → kernel:  HELLO + token + b"\\n"
    kernel → relay:  ACCEPTED, or REFUSED and the connection closes
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading

HELLO = b"acp-notebook-relay/1 "
ACCEPTED = b"ok\n"
REFUSED = b"refused\n"
_CHUNK = 65536


def _fail(message: str) -> int:
    sys.stderr.write(f"acp_notebook.mcp_relay: {message}\n")
    return 1


def _hello(connection: socket.socket, token: str) -> bool:
    connection.sendall(HELLO + token.encode("utf-8") + b"\n")
    reply = b""
    while not reply.endswith(b"\n") and len(reply) < 64:
        chunk = connection.recv(64 - len(reply))
        if not chunk:
            break
        reply += chunk
    return reply == ACCEPTED


def _agent_to_kernel(connection: socket.socket) -> None:
    """stdin → socket; at the agent's end of input, the kernel's end of input."""
    try:
        while data := os.read(0, _CHUNK):
            connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _kernel_to_agent(connection: socket.socket) -> None:
    """socket → stdout, until the kernel closes the connection or the agent stdout."""
    try:
        while data := connection.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m acp_notebook.mcp_relay",
        description="Relay MCP over stdio to the notebook tools of a Jupyter kernel.",
    )
    parser.add_argument("--socket", required=True, help="the kernel's socket path")
    parser.add_argument("--token-file", required=True, help="the file holding the secret")
    args = parser.parse_args(argv)
    try:
        with open(args.token_file, encoding="utf-8") as file:
            token = file.read().strip()
    except OSError as exc:
        return _fail(f"cannot read the token file ({exc.strerror}); the kernel may have stopped.")
    if not hasattr(socket, "AF_UNIX"):
        return _fail("this platform has no Unix sockets, which the notebook tools need.")
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(args.socket)
        accepted = _hello(connection, token)
    except OSError as exc:
        return _fail(f"cannot reach the kernel ({exc.strerror}); the kernel may have stopped.")
    if not accepted:
        return _fail("the kernel refused the connection: the token does not match.")
    threading.Thread(target=_agent_to_kernel, args=(connection,), daemon=True).start()
    _kernel_to_agent(connection)
    return 0


if __name__ == "__main__":
    sys.exit(main())
