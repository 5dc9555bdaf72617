"""The demo agent's sessions: kept in memory, listed in pages, and (with ``--state-file``)
saved to a JSON file, atomically, so that a later process can list and load them.

The state file is the only thing the demo agent ever writes to disk itself.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import anyio
import anyio.to_thread

from ...protocol.errors import INVALID_PARAMS, RpcError
from .session import DemoSession

__all__ = ["SessionStore", "timestamp"]

log = logging.getLogger(__name__)

STATE_VERSION = 1


def timestamp() -> str:
    """Now, for ``updatedAt``."""
    # ISO 8601 for updatedAt; never part of message text (transcripts stay deterministic).
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SessionStore:
    """Every session this agent knows, by id (opened in this connection or not)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.sessions: dict[str, DemoSession] = {}
        self._next_session = 1
        #: A counter bumped by every change: ``session/list`` shows the latest first.
        self._activity = 0
        self._save_lock = anyio.Lock()
        self._load()

    def get(self, session_id: str) -> DemoSession | None:
        return self.sessions.get(session_id)

    def next_id(self) -> str:
        """The id the next new session gets (``demo-session-N``)."""
        while f"demo-session-{self._next_session}" in self.sessions:  # a hand-edited file
            self._next_session += 1
        return f"demo-session-{self._next_session}"

    def add(self, session: DemoSession) -> None:
        """Keep a new session (its id from :meth:`next_id`)."""
        self.sessions[session.id] = session
        self._next_session += 1

    def remove(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def touch(self, session: DemoSession) -> None:
        """``session`` changed: it moves to the top of the list."""
        self._activity += 1
        session.activity = self._activity
        session.updated_at = timestamp()

    def page(
        self, cwd: str | None, cursor: str | None, size: int
    ) -> tuple[Sequence[DemoSession], str | None]:
        """One page of ``session/list`` (most recently active first) and the cursor of the
        next page, if any."""
        sessions = list(self.sessions.values())
        if cwd is not None:
            wanted = os.path.normpath(cwd)
            sessions = [s for s in sessions if os.path.normpath(s.cwd) == wanted]
        sessions.sort(key=_list_key)
        if cursor is not None:
            after = _decode_cursor(cursor)
            sessions = [s for s in sessions if _list_key(s) > after]
        page = sessions[:size]
        more = len(sessions) > len(page)
        return page, _encode_cursor(_list_key(page[-1])) if more else None

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
            sessions = [DemoSession.from_state(item) for item in state.get("sessions", [])]
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring the unreadable state file %s: %s", self.path, exc)
            return
        self.sessions = {session.id: session for session in sessions}
        self._next_session = int(state.get("nextSession", 1))
        self._activity = max([int(state.get("activity", 0))] + [s.activity for s in sessions])
        log.info("loaded %d sessions from %s", len(sessions), self.path)

    async def save(self) -> None:
        """Write the state file (when there is one); a failure is logged, never raised."""
        path = self.path
        if path is None:
            return
        async with self._save_lock:  # one writer at a time: the newest snapshot wins
            data = json.dumps(
                {
                    "version": STATE_VERSION,
                    "nextSession": self._next_session,
                    "activity": self._activity,
                    "sessions": [s.to_state() for s in self.sessions.values()],
                },
                ensure_ascii=False,
            )
            try:
                await anyio.to_thread.run_sync(_write_atomically, path, data)
            except OSError as exc:
                log.warning("could not save the state file %s: %s", path, exc)


def _list_key(session: DemoSession) -> tuple[int, str]:
    # Most recently active first; ties (never in practice) by id.
    return (-session.activity, session.id)


def _encode_cursor(key: tuple[int, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode("ascii")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        activity, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return (int(activity), str(session_id))
    except (ValueError, TypeError, binascii.Error, UnicodeError) as exc:
        raise RpcError(INVALID_PARAMS, "The cursor is not one this agent gave out.") from exc


def _write_atomically(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
