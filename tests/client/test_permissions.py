"""The permission broker: policies, the UI path, cancellation, and how decisions read."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_notebook.client.permissions import (
    PermissionBroker,
    PermissionOption,
    PermissionRequest,
    pick_by_policy,
)

from .helpers import SAFETY, wait_until

pytestmark = pytest.mark.anyio

ALL_KINDS = [
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
ALWAYS_ONLY = [
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]
ALLOW_ONLY = [{"optionId": "once", "name": "Allow once", "kind": "allow_once"}]
TOOL_CALL = {"toolCallId": "call-1", "title": "Write notes.txt"}


async def decided(broker: PermissionBroker, options: list[dict[str, Any]]) -> PermissionRequest:
    with anyio.fail_after(SAFETY):
        return await broker.decide(broker.open(TOOL_CALL, options))


@pytest.mark.parametrize(
    ("policy", "options", "chosen"),
    [
        ("allow", ALL_KINDS, "once"),
        ("allow", ALWAYS_ONLY, "always"),
        ("deny", ALL_KINDS, "no"),
        ("deny", ALWAYS_ONLY, "never"),
    ],
)
async def test_policies_pick_the_right_option_kind(
    policy: str, options: list[dict[str, Any]], chosen: str
) -> None:
    request = await decided(PermissionBroker(policy), options)  # type: ignore[arg-type]
    assert request.state == "selected"
    assert request.chosen is not None and request.chosen.option_id == chosen
    assert request.decided_by == f"policy {policy}"
    assert request.outcome() == {"outcome": {"outcome": "selected", "optionId": chosen}}


async def test_a_policy_without_a_matching_option_cancels() -> None:
    request = await decided(PermissionBroker("deny"), ALLOW_ONLY)
    assert request.state == "cancelled"
    assert request.outcome() == {"outcome": {"outcome": "cancelled"}}
    assert request.decided_by == "policy deny: no matching option"
    request = await decided(PermissionBroker("allow"), [ALL_KINDS[3]])
    assert request.state == "cancelled"


async def test_ask_without_a_ui_rejects_and_never_allows() -> None:
    request = await decided(PermissionBroker("ask"), ALL_KINDS)
    assert request.chosen is not None and request.chosen.option_id == "no"
    assert not request.chosen.allows
    assert request.decided_by == "policy ask without a UI"
    request = await decided(PermissionBroker("ask"), ALLOW_ONLY)
    assert request.state == "cancelled" and request.chosen is None


async def test_ask_with_a_ui_waits_for_the_choice() -> None:
    changes: list[str] = []
    broker = PermissionBroker("ask", interactive=True, on_change=lambda r: changes.append(r.state))
    request = broker.open(TOOL_CALL, ALL_KINDS)
    result: list[PermissionRequest] = []

    async def wait() -> None:
        result.append(await broker.decide(request))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await wait_until(lambda: bool(changes))
        assert broker.pending == [request] and not result
        assert broker.choose(request.key, "once") is True
    assert result == [request]
    assert request.outcome() == {"outcome": {"outcome": "selected", "optionId": "once"}}
    assert request.decided_by == "user"
    assert changes == ["pending", "selected"]
    assert broker.pending == []


async def test_an_asker_decides_when_set() -> None:
    async def asker(request: PermissionRequest) -> None:
        broker.choose(request.key, "always", by="terminal")

    broker = PermissionBroker("ask", asker=asker)
    request = await decided(broker, ALL_KINDS)
    assert request.chosen is not None and request.chosen.option_id == "always"
    assert request.decided_by == "terminal"


def test_choose_validates_key_option_and_state() -> None:
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(TOOL_CALL, ALL_KINDS)
    assert broker.choose("perm-999", "once") is False
    assert broker.choose(request.key, "not-offered") is False
    assert request.pending
    assert broker.choose(request.key, "no") is True
    assert broker.choose(request.key, "once") is False  # already decided
    assert request.chosen is not None and request.chosen.option_id == "no"
    assert broker.cancel(request.key) is False


def test_cancel_all_answers_every_pending_request_cancelled() -> None:
    broker = PermissionBroker("ask", interactive=True)
    first = broker.open(TOOL_CALL, ALL_KINDS)
    second = broker.open({"toolCallId": "call-2"}, ALL_KINDS)
    done = broker.open({"toolCallId": "call-3"}, ALL_KINDS)
    broker.choose(done.key, "once")
    assert broker.cancel_all(by="timeout") == 2
    assert [r.state for r in (first, second, done)] == ["cancelled", "cancelled", "selected"]
    assert first.outcome() == second.outcome() == {"outcome": {"outcome": "cancelled"}}
    assert first._decided.is_set() and second._decided.is_set()
    assert broker.cancel_all() == 0
    assert broker.pending == []


async def test_a_withdrawn_request_is_cancelled() -> None:
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(TOOL_CALL, ALL_KINDS)
    with anyio.move_on_after(0.05):
        await broker.decide(request)
    assert request.state == "cancelled"
    assert request.describe() == "Cancelled (the agent withdrew the request)"


@pytest.mark.parametrize(
    ("by", "wording"),
    [
        ("cancel", "Cancelled (the turn was cancelled)"),
        ("timeout", "Cancelled (the turn timed out)"),
        ("withdrawn", "Cancelled (the agent withdrew the request)"),
        ("session closed", "Cancelled (the session closed)"),
        ("user", "Cancelled (by user)"),
        ("policy ask without a UI", "Cancelled (policy ask without a UI)"),
    ],
)
def test_describe_wording_of_cancellations(by: str, wording: str) -> None:
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(TOOL_CALL, ALL_KINDS)
    assert request.describe() == "waiting for permission"
    broker.cancel(request.key, by=by)
    assert request.describe() == wording


async def test_describe_wording_of_choices() -> None:
    assert (await decided(PermissionBroker("allow"), ALL_KINDS)).describe() == (
        "Allow once (chosen by policy allow)"
    )
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(TOOL_CALL, ALL_KINDS)
    broker.choose(request.key, "never")
    assert request.describe() == "Never (chosen by user)"


def test_malformed_options_are_skipped_and_names_fall_back_to_ids() -> None:
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(
        {"toolCallId": 7},
        [
            {"optionId": "a"},
            {"name": "no id"},
            "junk",
            {"optionId": "b", "name": 3, "kind": "allow_once"},
        ],
    )
    assert [(o.option_id, o.name, o.kind) for o in request.options] == [
        ("a", "a", ""),
        ("b", "b", "allow_once"),
    ]
    assert request.tool_call_id == "7"
    assert broker.open(TOOL_CALL, None).options == []


def test_requests_are_found_by_tool_call_in_order() -> None:
    broker = PermissionBroker("ask", interactive=True)
    first = broker.open(TOOL_CALL, ALL_KINDS)
    broker.open({"toolCallId": "other"}, ALL_KINDS)
    second = broker.open(TOOL_CALL, ALL_KINDS)
    assert broker.for_tool_call("call-1") == [first, second]
    assert first.key != second.key


def test_pick_by_policy_and_option_kinds() -> None:
    options = [PermissionOption.from_wire(o) for o in ALL_KINDS]
    assert all(o is not None for o in options)
    picked = pick_by_policy([o for o in options if o is not None], "ask")
    assert picked is None
    assert [o.allows for o in options if o is not None] == [True, False, True, False]
