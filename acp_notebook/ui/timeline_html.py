"""The protocol timeline as HTML: one message in full, and the lanes picture.

The picture (:func:`lanes_html`) draws one lane per party: the client, the agent, and,
when the agent spoke MCP to the notebook's own tools, those tools. Each message is an arrow
from its sender's lane to its receiver's, in time order, coloured by kind (requests,
responses, notifications, errors); a request and its answer are joined by a bracket in the
gutter; the client's decision about a tool call (who allowed ``run_code``) sits on the
tools' lane between the call and its answer. A click on an arrow opens the message's JSON
and its schema check (a native ``<details>``: no script, so it works in any output that
renders HTML, and in a saved notebook).

Widget-free (the live view and the static output both use it). Every string a message
carries is escaped; the schema check is shown only where already made (checking is the
views' business: never on the path that draws).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..client.formatting import portable
from ..client.timeline import Row, Sender, Timeline
from ..protocol.trace_event import ACP, DECISION
from .style import (
    BORDER,
    ERROR,
    FAINT,
    INFO,
    MUTED,
    SMALL_SIZE,
    SUCCESS,
    WARN,
    div,
    esc,
    link,
    pre,
    span,
)

#: The lanes, left to right, and their titles.
LANE_TITLES: dict[Sender, str] = {
    "client": "client (this notebook)",
    "agent": "agent",
    "tools": "notebook tools (MCP)",
}
#: The colour of each kind of message.
KIND_COLOURS = {
    "request": INFO,
    "response": SUCCESS,
    "notification": MUTED,
    "error": ERROR,
    "invalid": ERROR,
    "decision": WARN,
}
#: Brackets drawn side by side at most (more overlapping pairs are named in the detail).
TRACKS = 4
#: Characters of a message's JSON shown in the picture (the list shows it whole).
JSON_CHARS = 4000


def lanes_of(rows: Sequence[Row]) -> list[Sender]:
    """The lanes ``rows`` need: client and agent, and the tools once they spoke."""
    lanes: list[Sender] = ["client", "agent"]
    return [*lanes, "tools"] if any(row.channel != ACP for row in rows) else lanes


def lanes_html(
    rows: Sequence[Row], timeline: Timeline, cwd: str | None = None, *, check: bool = True
) -> str:
    """The picture of ``rows`` (see the module docstring); ``check``: check each message
    now (else a message not checked yet says it will be)."""
    lanes = lanes_of(rows)
    halves = 2 * len(lanes)
    inner = f"display: grid; grid-template-columns: repeat({halves}, minmax(0, 1fr))"
    column = f"grid-column: {TRACKS + 1}"
    cells = [_header(lanes, column, inner)]
    if rows:
        # The lanes' vertical lines: one element under every arrow, spanning all rows.
        lines = "".join(
            div("", f"border-right: 1px dashed {BORDER}" if half % 2 == 0 else "")
            for half in range(halves)
        )
        cells.append(
            div(lines, f"{column}; grid-row: 2 / {len(rows) + 2}; {inner}; pointer-events: none")
        )
    cells += _brackets(rows)
    for index, row in enumerate(rows):
        cells.append(_message(row, index + 2, lanes, timeline, cwd, column, inner, check))
    if not rows:
        cells.append(div("No messages.", f"{column}; color: {MUTED}"))
    body = "".join(cells)
    return (
        div(
            body,
            f"display: grid; grid-template-columns: repeat({TRACKS}, 7px) minmax(0, 1fr); "
            f"font-size: {SMALL_SIZE}; line-height: 1.35",
        )
        + _legend()
    )


def _header(lanes: Sequence[Sender], column: str, inner: str) -> str:
    titles = "".join(
        div(esc(LANE_TITLES[lane]), "grid-column: span 2; text-align: center; font-weight: 600")
        for lane in lanes
    )
    return div(titles, f"{column}; grid-row: 1; {inner}; border-bottom: 1px solid {BORDER}")


def _legend() -> str:
    keys = [
        span(esc(f"━ {kind}"), f"color: {colour}; margin-right: 10px")
        for kind, colour in KIND_COLOURS.items()
        if kind != "invalid"
    ]
    keys.append(span("⊏ a request and its answer", f"color: {FAINT}"))
    return div("".join(keys), f"font-size: {SMALL_SIZE}; margin-top: 4px")


def _brackets(rows: Sequence[Row]) -> list[str]:
    """The gutter brackets joining each request shown to its answer shown."""
    index = {row.number: i for i, row in enumerate(rows)}
    ends = [-1] * TRACKS  # the last row each track is busy until
    drawn = []
    for start, row in enumerate(rows):
        if row.category != "request" or row.paired is None or row.paired not in index:
            continue
        end = index[row.paired]
        track = next((t for t in range(TRACKS) if ends[t] < start), None)
        if track is None:
            continue
        ends[track] = end
        answer = rows[end]
        colour = KIND_COLOURS["error" if answer.category == "error" else "request"]
        title = f"#{row.number} {row.method or ''} answered by #{answer.number}"
        drawn.append(
            f'<div title="{esc(title)}" style="grid-column: {track + 1}; '
            f"grid-row: {start + 2} / {end + 3}; border: 2px solid {colour}; "
            "border-right: none; border-radius: 4px 0 0 4px; margin: 0.55em 0 0.55em 1px; "
            'opacity: 0.7"></div>'
        )
    return drawn


def _message(
    row: Row,
    grid_row: int,
    lanes: Sequence[Sender],
    timeline: Timeline,
    cwd: str | None,
    column: str,
    inner: str,
    check: bool,
) -> str:
    colour = KIND_COLOURS.get(row.category, MUTED)
    start, end = lanes.index(row.sender), lanes.index(row.receiver)
    if start == end:  # a decision: a box on its lane
        place = f"grid-column: {2 * start + 1} / {2 * start + 3}"
        shape = f"border: 1px solid {colour}; border-radius: 4px; text-align: center"
        label = f"⚖ {row.method or ''}: {row.decision}"
    else:
        low, high = min(start, end), max(start, end)
        place = f"grid-column: {2 * low + 2} / {2 * high + 2}"
        line = "dashed" if row.category == "notification" else "solid"
        shape = f"border-bottom: 2px {line} {colour}"
        words = _words(row)
        if end > start:
            shape += "; text-align: right"
            label = f"#{row.number} {words} ▶"
        else:
            label = f"◀ #{row.number} {words}"
    arrow = (
        f'<div style="{place}; {shape}; color: {colour}; white-space: nowrap; overflow: hidden; '
        f'text-overflow: ellipsis; padding: 0 3px">{esc(label)}</div>'
    )
    summary = (
        f'<summary title="{esc(_words(row))}" style="{inner}; list-style: none; '
        f'cursor: pointer">{arrow}</summary>'
    )
    body = div(
        detail_html(row, timeline, cwd, check=check, limit=JSON_CHARS), "padding: 2px 0 6px 0"
    )
    return (
        f'<details data-acp-message="{row.number}" style="{column}; grid-row: {grid_row}; '
        f'position: relative; margin: 1px 0">{summary}{body}</details>'
    )


def _words(row: Row) -> str:
    """An arrow's words: the category (with id), the method, the update kind."""
    what = row.category if row.request_id is None else f"{row.category} {row.request_id}"
    return " ".join(part for part in (row.method, row.update_kind, f"({what})") if part)


def detail_html(
    row: Row,
    timeline: Timeline,
    cwd: str | None = None,
    *,
    check: bool = True,
    limit: int | None = None,
) -> str:
    """One message in full: what it is, what it pairs with, its schema verdict (checked
    now unless ``check`` is false), the spec section, the pretty JSON (the session's
    directory as ``.``; with ``limit``, at most that many characters)."""
    head = [f"<b>#{row.number}</b> {esc(row.route)} · {esc(row.category)}"]
    if row.method:
        head.append(f"<code>{esc(row.method)}</code>")
    if row.update_kind:
        head.append(f"<code>{esc(row.update_kind)}</code>")
    if row.paired is not None:
        latency = f" after {row.latency * 1000:.0f} ms" if row.latency is not None else ""
        what = "answered by" if row.category == "request" else "answers"
        head.append(esc(f"{what} #{row.paired}{latency}"))
    elif row.pending:
        head.append("not answered yet")
    if row.event.abridged_from is not None:
        head.append(esc(f"kept abridged (was {row.event.abridged_from:,} bytes)"))
    lines = [div(" · ".join(head))]
    if row.error:
        lines.append(div(esc(f"Error {row.error}"), f"color: {ERROR}"))
    lines.append(_verdict(row, timeline, check))
    if row.spec:
        lines.append(div("Spec: " + link(row.spec, row.spec)))
    if row.message is None:
        body = row.event.invalid or ""
    else:
        body = json.dumps(portable(row.message, cwd, "."), indent=2, ensure_ascii=False)
    if limit is not None and len(body) > limit:
        body = body[:limit] + f"\n… ({len(body) - limit:,} more characters)"
    lines.append(pre(body))
    return div("".join(lines), f"font-size: {SMALL_SIZE}")


def _verdict(row: Row, timeline: Timeline, check: bool) -> str:
    if row.channel == DECISION:
        return div(
            "Not a message: the client's own decision (nothing travelled).", f"color: {MUTED}"
        )
    if not check and not timeline.checked(row):
        return div("Schema: checked when the traffic pauses.", f"color: {MUTED}")
    errors = timeline.flags(row)
    schema = "the ACP v1 schema" if row.channel == ACP else "MCP's message types"
    if errors:
        items = "".join(f"<li>{esc(error)}</li>" for error in errors)
        return div(f"Breaks {schema}:<ul>{items}</ul>", f"color: {ERROR}")
    if row.event.abridged_from is not None:
        return ""
    return div(f"Conforms to {schema}.", f"color: {SUCCESS}")
