"""The suite's tiers: every test gets one marker by where it lives, so one layer runs alone.

=========  ==========================================================  =====================
marker     what it holds                                               run by
=========  ==========================================================  =====================
fast       in-process tests (protocol, client, ui, notebook, lab,      ``./dev test --fast``
           cli's in-process parts, the demo agent): no kernel, no
           browser, nothing that waits on a third-party program
slow       subprocess-heavy tests: the CLI run as a command, hostile   ``./dev test``
           agents, property tests against bash, the wheel, the
           100,000-update tests, the benchmark command's smoke test
kernel     a real Jupyter kernel (kernel/, tools/, kernelspec/, the    ``./dev test``
           notebooks under nbval)
browser    JupyterLab or Notebook 7 in a real chromium                 ``./dev test``
deploy     servers of their own: a kernel gateway, JupyterHub          ``./dev test``
agents     real third-party agents installed from npm and PyPI         ``./dev test --agents``
=========  ==========================================================  =====================

A test belongs to the most demanding of the tiers its own markers and its place name
(a module marked ``slow`` in ``tests/kernel`` is ``kernel``); what is left is ``fast``. ``pytest -m kernel`` (or any marker) runs that layer alone.
"""

from __future__ import annotations

import pytest

#: Markers that place a test in a tier, from the most to the least demanding: a test
#: marked with several belongs to the first.
TIERS = ("agents", "deploy", "browser", "kernel", "slow")

#: Where a test lives (a directory, a module, or one test's node id) → its tier; the
#: longest match wins. Single tests listed here start interpreters or agents of their own,
#: or push 100,000 updates: seconds each, out of the one-minute loop.
BY_PATH = {
    "notebooks": "kernel",
    "tests/browser": "browser",
    "tests/deploy": "deploy",
    "tests/kernel": "kernel",
    "tests/kernelspec": "kernel",
    "tests/tools": "kernel",
    "tests/test_notebooks_portable.py": "kernel",
    "tests/cli": "slow",
    "tests/hostile": "slow",
    "tests/property": "slow",
    "tests/integration": "slow",
    "tests/integration/test_codex.py": "agents",
    "tests/integration/test_fast_agent.py": "agents",
    "tests/integration/test_real_agents_doctor.py": "agents",
    "tests/integration/test_real_agents_kernel.py": "agents",
    "tests/agents_demo": "slow",
    "tests/client/test_client_api.py::test_the_documented_example_runs_against_the_demo_agent": "slow",
    "tests/client/test_first_turn_prepared.py::test_the_first_turns_validators_are_built_while_the_agent_starts": "slow",
    "tests/client/test_long_session.py::test_100000_updates_keep_the_last_entries_whole_and_count_the_rest": "slow",
    "tests/notebook/test_early_start.py": "slow",
    "tests/notebook/test_evidence.py::test_an_opencode_turn_the_limit_ended_says_it_may_lack_a_provider": "slow",
    "tests/notebook/test_load_imports.py": "slow",
    "tests/notebook/test_message_log.py::test_huge_answers_stay_within_the_log_bytes_and_the_table_says_what_was_dropped": "slow",
    "tests/ui/test_long_turn.py::test_a_turn_of_100000_updates_keeps_a_bounded_view_and_says_what_went": "slow",
    "tests/ui/test_message.py::test_one_growing_html_widget_would_be_quadratic": "slow",
    "tests/test_benchmarks.py": "slow",
    "tests/test_dev_setup.py": "slow",
    "tests/test_extras.py": "slow",
    "tests/test_launch.py": "slow",
    "tests/test_servers.py": "slow",
}

DESCRIPTIONS = {
    "fast": "in-process, what ./dev test --fast runs (tests/tiers.py)",
    "slow": "subprocess-heavy: the CLI as a command, hostile agents, property tests against bash",
    "kernel": "starts a real Jupyter kernel",
    "browser": "drives JupyterLab or Notebook 7 in a real chromium",
    "deploy": "starts servers of its own (a kernel gateway, JupyterHub)",
    "agents": "real third-party agents installed from npm and PyPI (./dev test --agents)",
}


def tier_of(item: pytest.Item) -> str:
    """The tier ``item`` belongs to: the most demanding of its markers and its place's."""
    candidates = {mark.name for mark in item.iter_markers()} | {tier_of_place(item.nodeid)}
    return next((tier for tier in TIERS if tier in candidates), "fast")


def tier_of_place(node: str) -> str:
    """The tier :data:`BY_PATH` gives the test of node id ``node`` (``fast`` if none)."""
    matches = [p for p in BY_PATH if node == p or node.startswith((p + "/", p + "::", p + "["))]
    return BY_PATH[max(matches, key=len)] if matches else "fast"


def configure(config: pytest.Config) -> None:
    for name, description in DESCRIPTIONS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def mark(items: list[pytest.Item]) -> None:
    """Give every collected item the marker of its tier (``fast`` included)."""
    for item in items:
        tier = tier_of(item)
        if tier not in {m.name for m in item.iter_markers()}:
            item.add_marker(getattr(pytest.mark, tier))
