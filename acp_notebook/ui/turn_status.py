"""What the lines around a turn's live view say: the status under the title ("Running",
"Waiting for permission", "Queued behind 1 turn"…), the title line (agent, session,
mode, session title), and the footer (how the turn ended, in the transcript's words,
its tokens and how long it took).

Pure functions of the session and the turn, so :class:`~acp_notebook.ui.turn.TurnView`
only decides when to redraw them.
"""

from __future__ import annotations

from ..client.render import Renderer, usage_tokens_line
from ..client.transcript import Transcript, TurnRecord
from .context import SessionLike, TurnLike
from .style import ERROR, FG, INFO, MUTED, SMALL_SIZE, SUCCESS, UI_SIZE, WARN, esc, span

STARTING = "Starting agent…"
RUNNING = "Running"
WAITING = "Waiting for permission"
ASKING = "Waiting for your input"
CANCELLING = "Cancelling…"
CANCELLED = "Cancelled"
FINISHED = "Finished"
FAILED = "Failed"

_STATUS_LOOK = {
    STARTING: ("⏳", MUTED),
    RUNNING: ("●", INFO),
    WAITING: ("🔐", WARN),
    ASKING: ("❓", WARN),
    CANCELLING: ("⏹", WARN),
    CANCELLED: ("⏹️", MUTED),
    FINISHED: ("✅", SUCCESS),
    FAILED: ("❌", ERROR),
}
#: Stop reasons that deserve a second look (the footer says them in amber).
NOTABLE_STOPS = ("refusal", "max_tokens", "max_turn_requests")


def queued_status(ahead: int) -> str:
    return f"Queued behind {ahead} turn" + ("" if ahead == 1 else "s")


def turn_status(
    session: SessionLike | None,
    turn: TurnLike | None,
    *,
    error: str | None = None,
    cancel_pressed: bool = False,
    waiting: str = "",
) -> str:
    """The status line as text. ``waiting``: what to say before the turn runs ("Starting
    agent…" by default)."""
    if error is not None:
        return FAILED
    if session is None or turn is None:
        return CANCELLING if cancel_pressed else (waiting or STARTING)
    if turn.state == "queued":
        if cancel_pressed or turn.cancel_requested:
            return CANCELLING
        ahead = 0
        for other in session.turns:
            if other is turn:
                break
            ahead += not other.done
        # Nothing ahead: the turn is about to start (or waits for the agent).
        return queued_status(ahead) if ahead else (waiting or STARTING)
    if turn.state == "running":
        if turn.cancel_requested or cancel_pressed:
            return CANCELLING
        # One turn runs at a time per session: every pending request is this turn's.
        if session.permissions.pending:
            return WAITING
        if session.elicitations.pending:
            return ASKING
        return RUNNING
    if turn.error is not None:
        return FAILED
    if turn.stop_reason == "cancelled":
        return CANCELLED
    if turn.stop_reason in (None, "end_turn"):
        return FINISHED
    return f"Stopped: {turn.stop_reason}"


def status_html(status: str) -> str:
    icon, color = _STATUS_LOOK.get(status, ("🕒" if status.startswith("Queued") else "⏹", MUTED))
    if status.startswith("Stopped"):
        icon, color = "⚠️", WARN
    return (
        f'<div style="font-size: {UI_SIZE}; line-height: 1.6; color: {color}">'
        f"{icon} {esc(status)}</div>"
    )


def title_html(
    agent_label: str,
    session_label: str,
    transcript: Transcript | None,
    record: TurnRecord | None = None,
    sandbox: str = "",
) -> str:
    """ "🤖 Claude · session review · mode Plan · “Bug hunt”": the turn's own heading
    (``TurnRecord.heading``), not the session's first title on every turn; under it, how
    the agent runs (``sandbox``: "🔒 confined to `project/` · network on",
    ``Session.sandbox``)."""
    parts = [f"<b>{esc(agent_label)}</b>" if agent_label else "<b>agent</b>"]
    if session_label:
        parts.append(esc(f"session {session_label}"))
    if transcript is not None and transcript.current_mode_id is not None and transcript.modes:
        parts.append(esc(f"mode {transcript.mode_name(transcript.current_mode_id)}"))
    heading = record.heading if record is not None else ""
    if heading:
        parts.append(esc(f"“{heading}”"))
    confined = (
        f'<div style="font-size: {SMALL_SIZE}; color: {MUTED}">{esc(sandbox)}</div>'
        if sandbox
        else ""
    )
    return (
        f'<div style="font-size: {UI_SIZE}; line-height: 1.6; color: {FG}">🤖 '
        + span(" · ", f"color: {MUTED}").join(parts)
        + "</div>"
        + confined
    )


def usage_html(transcript: Transcript) -> str:
    """The context and cost line next to the gauge (the transcript's words)."""
    text = Renderer(transcript, markdown=False).usage_line()
    if not text:
        return ""
    return (
        f'<div style="color: {MUTED}; font-size: {SMALL_SIZE}; padding-left: 6px">{esc(text)}</div>'
    )


def footer_html(session: SessionLike | None, turn: TurnLike | None, error: str | None) -> str:
    """How the turn ended, worded as in the transcript, its tokens and its duration."""
    lines: list[tuple[str, str]] = []
    record = turn.record if turn is not None else None
    if error is not None:
        lines.append((f"Error: {error}", ERROR))
    elif record is not None and record.finished and session is not None:
        stop = Renderer(session.transcript, markdown=False).stop_line(record)
        notable = record.stop_reason in NOTABLE_STOPS
        lines.append((stop, ERROR if record.error is not None else WARN if notable else MUTED))
        tokens = usage_tokens_line(record.usage)
        if tokens:
            lines.append((tokens, MUTED))
    elif turn is not None and turn.done and record is None:
        lines.append(("Cancelled before it started." if turn.cancel_requested else "Ended.", MUTED))
    if turn is not None and turn.done and turn.duration is not None:
        lines.append((f"Took {turn.duration:.1f} s", MUTED))
    return "".join(
        f'<div style="color: {color}; font-size: {SMALL_SIZE}; line-height: 1.6">{esc(text)}</div>'
        for text, color in lines
    )
