"""The agent report card: the demo agent passes every check, the broken agent fails exactly
the checks its defects were planted for, and the JSON form is stable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp_notebook.lab.checks import CHECKS
from acp_notebook.lab.report import ReportCard, compare, report_card
from tests.agents.broken_agent import PLANTED

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BROKEN = [sys.executable, str(Path(__file__).resolve().parents[1] / "agents" / "broken_agent.py")]
ROOT = Path(__file__).resolve().parents[2]


async def test_the_demo_agent_passes_every_check() -> None:
    card = await report_card("demo")
    assert card.verdicts() == {check.id: "pass" for check in CHECKS}, card.text()
    assert card.passed


async def test_the_broken_agent_fails_each_planted_defect_and_nothing_else() -> None:
    card = await report_card(BROKEN, name="broken")
    expected = {check.id: "pass" for check in CHECKS}
    expected.update(dict.fromkeys(PLANTED, "fail"))
    # It does not claim image and sends no usage_update: nothing to grade there.
    expected.update({"image": "not-applicable", "usage-update": "not-applicable"})
    assert card.verdicts() == expected, card.text()
    assert not card.passed


async def test_the_json_form_is_the_same_on_every_run() -> None:
    first, second = await report_card("demo"), await report_card("demo")
    assert first.dumps() == second.dumps()
    data = json.loads(first.dumps())
    assert list(data) == sorted(data)
    assert [c["id"] for c in data["checks"]] == [c.id for c in CHECKS]
    assert all(list(c) == sorted(c) for c in data["checks"])


def test_cards_compare_side_by_side_in_one_table() -> None:
    demo = ReportCard("demo")
    other = ReportCard("other | agent")
    from acp_notebook.lab.report import Check

    demo.checks.append(Check("schema", "Schema", "pass", "fine"))
    other.checks.append(Check("schema", "Schema", "fail", "a | b"))
    table = compare([demo, other])
    assert table.splitlines()[0] == "| check | demo | other \\| agent |"
    assert "✅ pass<br>fine" in table and "❌ fail<br>a \\| b" in table


def test_doctor_report_json_on_the_broken_agent_lists_its_failures() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_notebook",
            "doctor",
            "--report",
            "--json",
            "--agent",
            " ".join(BROKEN),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
    )
    assert done.returncode != 0, done.stderr
    cards = json.loads(done.stdout)
    verdicts = {c["id"]: c["verdict"] for c in cards[0]["checks"]}
    assert {k for k, v in verdicts.items() if v == "fail"} == set(PLANTED)
