"""The agent's plan as a checklist: ✅ done, ▶ in progress (bold), ☐ pending, with
priority badges. spec: each `plan` update replaces the whole plan, so the view
redraws when the transcript's entry list object changes. HTML only, no widgets: the live
view (``PlanWidget``) is in ``entry_views.py``."""

from __future__ import annotations

from ..protocol import models as m
from .style import ERROR, FG, MUTED, SMALL_SIZE, UI_SIZE, WARN, badge, esc, span

MARKS = {"completed": "✅", "in_progress": "▶", "pending": "☐"}
PRIORITY_COLORS = {"high": ERROR, "medium": WARN, "low": MUTED}


def plan_html(entries: list[m.PlanEntry]) -> str:
    done = sum(1 for e in entries if e.status == "completed")
    rows = []
    for entry in entries:
        status = str(entry.status)
        mark = MARKS.get(status, "☐")
        text = esc(entry.content)
        if status == "in_progress":
            text = f"<b>{text}</b>"
        elif status == "completed":
            text = span(text, f"color: {MUTED}")
        priority = str(entry.priority)
        rows.append(
            '<li style="list-style: none; margin: 1px 0; display: flex; gap: 6px; align-items: baseline">'
            f'<span style="width: 1.3em; flex: none; text-align: center">{mark}</span>'
            f"<span>{text}</span> {badge(priority, PRIORITY_COLORS.get(priority, MUTED))}</li>"
        )
    title = (
        span("<b>Plan</b>", f"color: {FG}")
        + " "
        + span(esc(f"{done}/{len(entries)} done"), f"color: {MUTED}; font-size: {SMALL_SIZE}")
    )
    return (
        f'<div style="font-size: {UI_SIZE}; line-height: 1.55; color: {FG}; margin: 4px 0">'
        f'<div>📋 {title}</div><ul style="margin: 2px 0 0 0; padding-left: 4px">{"".join(rows)}</ul></div>'
    )
