"""The agent report card: observable checks of how an agent keeps the protocol.

:func:`report_card` starts the agent in a scratch directory, drives it with a
:class:`~.stepper.Stepper` (every message kept and checked against the schema), and grades
it. Each :class:`Check` has an id, a title, a verdict — ``pass``, ``fail``,
``not-applicable`` (the agent does not claim what the check needs) or ``inconclusive`` (the
run could not tell, e.g. the agent wrote no file at all) — and one sentence of evidence. The
verdicts never depend on timings beyond fixed limits, and :meth:`ReportCard.to_json` is
stable (sorted keys), so cards can be compared and recorded.

``usage_update`` is optional in ACP (no capability announces it): the check passes when the
agent sends one and is ``not-applicable`` when it never does.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..agents.evidence import before_start, explain
from ..client.formatting import md_cell
from ..client.presets import DEMO, AgentNotFound, resolve_agent
from ..protocol.sandbox import sandbox_line
from .checks import CHECKS, Run, Verdict
from .stepper import Stepper

__all__ = [
    "DEMO_PROMPTS",
    "Check",
    "Prompts",
    "ReportCard",
    "ReportCards",
    "Verdict",
    "compare",
    "report_card",
    "run_report_cards",
]


@dataclass(frozen=True)
class Prompts:
    """What the card asks the agent: a plain turn, a file edit, and a long turn to cancel."""

    hello: str = "Reply with the single word: hello."
    edit: str = (
        "Create a file named report-card.txt in the current directory containing the word ok."
    )
    slow: str = "Count slowly from 1 to 300, one number per line, explaining each number."


#: The demo agent understands slash commands, not language.
DEMO_PROMPTS = Prompts(hello="hello", edit="/write report-card.txt ok", slow="/slow")


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    verdict: Verdict
    evidence: str

    def to_json(self) -> dict[str, str]:
        return {
            "evidence": self.evidence,
            "id": self.id,
            "title": self.title,
            "verdict": self.verdict,
        }


@dataclass
class ReportCard:
    """One agent's checks, in the order they are listed in :data:`~.checks.CHECKS`."""

    agent: str
    checks: list[Check] = field(default_factory=list)
    #: The sandbox the agent ran in, as ``doctor`` says it ("workspace, enforced by
    #: Landlock ABI 7"); "" when not known.
    sandbox: str = ""
    #: What the agent is known to need here, each with its fix (``agents/evidence.py``).
    hints: list[str] = field(default_factory=list)

    def verdicts(self) -> dict[str, Verdict]:
        return {check.id: check.verdict for check in self.checks}

    @property
    def passed(self) -> bool:
        """No check failed."""
        return all(check.verdict != "fail" for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "checks": [check.to_json() for check in self.checks],
            **({"sandbox": self.sandbox} if self.sandbox else {}),
            "hints": list(self.hints),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False)

    def text(self) -> str:
        """A plain-text table (the terminal)."""
        width = max((len(c.title) for c in self.checks), default=10)
        lines = [f"Report card: {self.agent}"]
        if self.sandbox:
            lines.append(f"  sandbox: {self.sandbox}")
        lines += [f"  {c.verdict:<15} {c.title:<{width}}  {c.evidence}" for c in self.checks]
        lines += [f"Hint: {hint}" for hint in self.hints]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return compare([self])


_MARK = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "not-applicable": "➖ n/a",
    "inconclusive": "❔ inconclusive",
}


def compare(cards: Sequence[ReportCard]) -> str:
    """A Markdown table of ``cards`` side by side: one row per check, one column per agent
    (the evidence under each verdict)."""
    header = "| check | " + " | ".join(md_cell(card.agent) for card in cards) + " |"
    rule = "|---|" + "---|" * len(cards)
    rows = []
    for title, check_id in ((c.title, c.id) for c in (cards[0].checks if cards else [])):
        cells = []
        for card in cards:
            found = next((c for c in card.checks if c.id == check_id), None)
            cells.append(
                f"{_MARK[found.verdict]}<br>{md_cell(found.evidence)}" if found is not None else ""
            )
        rows.append(f"| {md_cell(title)} | " + " | ".join(cells) + " |")
    return "\n".join([header, rule, *rows])


async def report_card(
    agent: str | Sequence[str] = DEMO,
    *,
    prompts: Prompts | None = None,
    timeout: float = 60.0,
    env: dict[str, str] | None = None,
    name: str | None = None,
) -> ReportCard:
    """Start ``agent`` (a preset name or a command line) in a scratch directory, confined
    as ``acp-notebook run`` confines it by default, and grade it.

    ``timeout`` bounds each step (a turn that never ends is reported, not waited for);
    ``prompts`` default to :data:`DEMO_PROMPTS` for the demo agent and :class:`Prompts` for
    any other."""
    label = name or (agent if isinstance(agent, str) else " ".join(agent))
    if prompts is None:
        demo = isinstance(agent, str) and resolve_agent(agent).name == DEMO
        prompts = DEMO_PROMPTS if demo else Prompts()
    with tempfile.TemporaryDirectory(prefix="acp-report-card-") as scratch:
        run = Run(prompts=prompts, timeout=timeout, cwd=os.path.realpath(scratch))
        async with Stepper(agent, cwd=run.cwd, env=env, show=False, sandbox=True) as lab:
            run.lab = lab
            await run.drive()
    confined = lab.confinement
    card = ReportCard(label, sandbox=sandbox_line(confined.mode) if confined else "")
    for check in CHECKS:
        verdict, evidence = check.grade(run)
        card.checks.append(Check(check.id, check.title, verdict, evidence))
    card.hints = _hints(agent, env or {}, run.cwd, card.checks)
    return card


def _hints(
    agent: str | Sequence[str], env: dict[str, str], cwd: str, checks: list[Check]
) -> list[str]:
    """What a preset's agent surely lacks here, and the fix of each known failure the
    checks' evidence shows, once each."""
    try:
        spec = resolve_agent(agent) if isinstance(agent, str) else None
    except AgentNotFound:
        return []
    if spec is None or spec.preset is None:
        return []
    preset = spec.preset.id
    confined = spec.confinement(None, [cwd]).enforced
    findings = before_start(preset, env, confined=confined)
    findings += [
        finding
        for check in checks
        if check.verdict != "pass" and (finding := explain(preset, check.evidence)) is not None
    ]
    return list(dict.fromkeys(finding.text("terminal") for finding in findings))


class ReportCards(list[ReportCard]):
    """Several agents' cards: a notebook shows them side by side (:func:`compare`)."""

    def _repr_markdown_(self) -> str:
        return compare(self)

    def __repr__(self) -> str:
        return "\n\n".join(card.text() for card in self)

    def to_json(self) -> list[dict[str, Any]]:
        return [card.to_json() for card in self]


def run_report_cards(agents: Sequence[str], **options: Any) -> ReportCards:
    """:func:`report_card` for each of ``agents``, one after the other, on a loop of its own
    in a worker thread: callable from any thread, even one whose loop is running (a
    notebook's)."""

    def run_all() -> ReportCards:
        return ReportCards(asyncio.run(report_card(agent, **options)) for agent in agents)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="acp-report-card") as pool:
        return pool.submit(run_all).result()
