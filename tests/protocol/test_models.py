"""Generated ACP models: golden round trips, lenient parsing, exact output."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from acp_notebook.protocol import models as m
from acp_notebook.protocol.conformance import load_schema, payload_errors
from acp_notebook.protocol.modelbase import AcpModel, UnknownVariant, parse

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "tests" / "data" / "golden"

# fixture name -> ($defs type, what we parse it as, the class it must become)
GOLDEN: dict[str, tuple[str, Any, type[BaseModel]]] = {
    "cancel_notification": ("CancelNotification", m.CancelNotification, m.CancelNotification),
    "content_audio": ("ContentBlock", m.ContentBlock, m.AudioContentBlock),
    "content_image": ("ContentBlock", m.ContentBlock, m.ImageContentBlock),
    "content_resource_blob": ("ContentBlock", m.ContentBlock, m.EmbeddedResourceContentBlock),
    "content_resource_link": ("ContentBlock", m.ContentBlock, m.ResourceLinkContentBlock),
    "content_resource_text": ("ContentBlock", m.ContentBlock, m.EmbeddedResourceContentBlock),
    "content_text": ("ContentBlock", m.ContentBlock, m.TextContentBlock),
    "fs_read_text_file_request": (
        "ReadTextFileRequest",
        m.ReadTextFileRequest,
        m.ReadTextFileRequest,
    ),
    "fs_read_text_file_response": (
        "ReadTextFileResponse",
        m.ReadTextFileResponse,
        m.ReadTextFileResponse,
    ),
    "fs_write_text_file_request": (
        "WriteTextFileRequest",
        m.WriteTextFileRequest,
        m.WriteTextFileRequest,
    ),
    "initialize_request": ("InitializeRequest", m.InitializeRequest, m.InitializeRequest),
    "initialize_response": ("InitializeResponse", m.InitializeResponse, m.InitializeResponse),
    "new_session_request": ("NewSessionRequest", m.NewSessionRequest, m.NewSessionRequest),
    "new_session_response": ("NewSessionResponse", m.NewSessionResponse, m.NewSessionResponse),
    "permission_outcome_cancelled": (
        "RequestPermissionOutcome",
        m.RequestPermissionOutcome,
        m.CancelledPermissionOutcome,
    ),
    "permission_outcome_selected": (
        "RequestPermissionOutcome",
        m.RequestPermissionOutcome,
        m.SelectedPermissionOutcome,
    ),
    "prompt_request": ("PromptRequest", m.PromptRequest, m.PromptRequest),
    "request_permission_request": (
        "RequestPermissionRequest",
        m.RequestPermissionRequest,
        m.RequestPermissionRequest,
    ),
    "request_permission_response_selected": (
        "RequestPermissionResponse",
        m.RequestPermissionResponse,
        m.RequestPermissionResponse,
    ),
    "session_update_agent_message_chunk": ("SessionUpdate", m.SessionUpdate, m.AgentMessageChunk),
    "session_update_agent_thought_chunk": ("SessionUpdate", m.SessionUpdate, m.AgentThoughtChunk),
    "session_update_config_option_update": ("SessionUpdate", m.SessionUpdate, m.ConfigOptionUpdate),
    "session_update_plan": ("SessionUpdate", m.SessionUpdate, m.AgentPlanUpdate),
    "session_update_tool_call": ("SessionUpdate", m.SessionUpdate, m.ToolCallStart),
    "session_update_tool_call_edit": ("SessionUpdate", m.SessionUpdate, m.ToolCallStart),
    "session_update_tool_call_locations_rawinput": (
        "SessionUpdate",
        m.SessionUpdate,
        m.ToolCallStart,
    ),
    "session_update_tool_call_read": ("SessionUpdate", m.SessionUpdate, m.ToolCallStart),
    "session_update_tool_call_update_content": (
        "SessionUpdate",
        m.SessionUpdate,
        m.ToolCallProgress,
    ),
    "session_update_tool_call_update_more_fields": (
        "SessionUpdate",
        m.SessionUpdate,
        m.ToolCallProgress,
    ),
    "session_update_user_message_chunk": ("SessionUpdate", m.SessionUpdate, m.UserMessageChunk),
    # written for this project (see SOURCE.md): the parts the SDK 2.4.0 schema added
    "session_update_notice": ("SessionUpdate", m.SessionUpdate, m.Notice),
    "session_update_compaction_update": ("SessionUpdate", m.SessionUpdate, m.CompactionUpdate),
    "session_update_compaction_summary_chunk": (
        "SessionUpdate",
        m.SessionUpdate,
        m.CompactionSummaryChunk,
    ),
    "session_update_tool_call_name": ("SessionUpdate", m.SessionUpdate, m.ToolCallStart),
    "set_session_config_option_request": (
        "SetSessionConfigOptionRequest",
        m.SetSessionConfigOptionRequest,
        m.SetSessionConfigOptionSelectRequest,
    ),
    "set_session_config_option_response": (
        "SetSessionConfigOptionResponse",
        m.SetSessionConfigOptionResponse,
        m.SetSessionConfigOptionResponse,
    ),
    "tool_content_content_text": ("ToolCallContent", m.ToolCallContent, m.ContentToolCallContent),
    "tool_content_diff": ("ToolCallContent", m.ToolCallContent, m.DiffToolCallContent),
    "tool_content_diff_no_old": ("ToolCallContent", m.ToolCallContent, m.DiffToolCallContent),
    "tool_content_terminal": ("ToolCallContent", m.ToolCallContent, m.TerminalToolCallContent),
}


def load_golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return data


def notification(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "sess_1", "update": update}


def assert_conforms(payload: Any, def_name: str) -> None:
    assert payload_errors(payload, def_name) == []


# --- golden fixtures --------------------------------------------------------------------------


def test_every_golden_file_is_mapped() -> None:
    files = {p.stem for p in GOLDEN_DIR.glob("*.json")}
    assert len(files) == 40
    assert files == set(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_round_trip(name: str) -> None:
    def_name, target, expected = GOLDEN[name]
    data = load_golden(name)
    assert_conforms(data, def_name)
    repairs: list[str] = []
    parsed = parse(target, data, repairs=repairs)
    assert repairs == []
    assert type(parsed) is expected
    wire = parsed.to_wire()
    assert wire == data
    assert_conforms(wire, def_name)


def test_golden_fields_are_typed() -> None:
    resp = m.RequestPermissionResponse.parse(load_golden("request_permission_response_selected"))
    assert isinstance(resp.outcome, m.SelectedPermissionOutcome)
    assert resp.outcome.option_id == "allow-once"
    upd = parse(m.SessionUpdate, load_golden("session_update_config_option_update"))
    assert isinstance(upd, m.ConfigOptionUpdate)
    flat, grouped = upd.config_options
    assert isinstance(flat, m.SessionConfigOptionSelect)
    assert isinstance(flat.options[0], m.SessionConfigSelectOption)
    assert isinstance(grouped, m.SessionConfigOptionSelect)
    assert isinstance(grouped.options[0], m.SessionConfigSelectGroup)
    assert grouped.options[0].options[1].value == "balanced"
    prompt = m.PromptRequest.parse(load_golden("prompt_request"))
    block = prompt.prompt[1]
    assert isinstance(block, m.EmbeddedResourceContentBlock)
    assert isinstance(block.resource, m.TextResourceContents)
    blob = parse(m.ContentBlock, load_golden("content_resource_blob"))
    assert isinstance(blob.resource, m.BlobResourceContents)


def test_notice_and_compaction_updates_are_typed() -> None:
    notice = parse(m.SessionUpdate, load_golden("session_update_notice"))
    assert isinstance(notice, m.Notice)
    assert (notice.severity, notice.title) == ("warning", "Context window 90% full")
    assert notice.description is not None and notice.description.startswith("Older turns")
    update = parse(m.SessionUpdate, load_golden("session_update_compaction_update"))
    assert isinstance(update, m.CompactionUpdate)
    assert (update.compaction_id, update.status, update.error) == ("cmp_001", "completed", None)
    assert update.summary is not None and isinstance(update.summary[0], m.TextContentBlock)
    chunk = parse(m.SessionUpdate, load_golden("session_update_compaction_summary_chunk"))
    assert isinstance(chunk, m.CompactionSummaryChunk)
    assert isinstance(chunk.content, m.TextContentBlock)
    assert chunk.content.text.startswith("The user is renaming")


def test_tool_calls_carry_their_name() -> None:
    start = parse(m.SessionUpdate, load_golden("session_update_tool_call_name"))
    assert isinstance(start, m.ToolCallStart)
    assert (start.name, start.title) == ("Bash", "Run command")
    assert parse(m.SessionUpdate, load_golden("session_update_tool_call")).name is None
    progress = m.ToolCallProgress(tool_call_id="c", name="Edit")
    assert progress.to_wire() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "name": "Edit",
    }
    assert_conforms(progress.to_wire(), "SessionUpdate")
    assert m.ToolCallUpdate.parse({"toolCallId": "c", "name": "Read"}).name == "Read"


def test_new_updates_built_in_code_validate() -> None:
    cases: list[AcpModel] = [
        m.Notice(severity="info", title="Indexed 120 files"),
        m.CompactionUpdate(compaction_id="k", status="in_progress"),
        m.CompactionUpdate(compaction_id="k", status="failed", summary=None, error="too long"),
        m.CompactionSummaryChunk(compaction_id="k", content=m.TextContentBlock(text="so far")),
    ]
    for update in cases:
        assert update.to_wire()["sessionUpdate"] == update.__acp_tag__
        assert_conforms(
            m.SessionNotification(session_id="s", update=update).to_wire(), "SessionNotification"
        )
    # summary and error are nullable: an explicit None clears them on the wire (patch semantics)
    assert cases[2].to_wire()["summary"] is None
    capabilities = m.ClientSessionCapabilities(
        notices=m.NoticeCapabilities(), compaction=m.CompactionCapabilities()
    )
    assert capabilities.to_wire() == {"notices": {}, "compaction": {}}
    assert_conforms(capabilities.to_wire(), "ClientSessionCapabilities")


def test_future_notice_severity_and_compaction_status_are_kept() -> None:
    data = notification({"sessionUpdate": "notice", "severity": "_acme_debug", "title": "t"})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.Notice)
    assert parsed.update.severity == "_acme_debug"
    assert parsed.to_wire() == data
    data = notification(
        {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "paused"}
    )
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.CompactionUpdate)
    assert parsed.update.status == "paused"
    assert parsed.to_wire() == data


# --- unknown variants and values are kept -----------------------------------------------------


def test_unknown_session_update_is_kept() -> None:
    data = notification({"sessionUpdate": "some_future_update", "whatever": [1, {"a": None}]})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.UnknownSessionUpdate)
    assert parsed.update.session_update == "some_future_update"
    assert parsed.update.raw == data["update"]
    assert parsed.update.to_wire() == data["update"]
    assert parsed.to_wire() == data


def test_missing_session_update_discriminator_is_unknown() -> None:
    parsed = m.SessionNotification.parse(notification({"content": {"type": "text", "text": "x"}}))
    assert isinstance(parsed.update, m.UnknownSessionUpdate)
    assert parsed.update.session_update is None


def test_unknown_content_block_type_inside_chunk() -> None:
    block = {"type": "future_block", "payload": {"x": 1}}
    data = notification({"sessionUpdate": "agent_message_chunk", "content": block})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.AgentMessageChunk)
    assert isinstance(parsed.update.content, m.UnknownContentBlock)
    assert parsed.update.content.type == "future_block"
    assert parsed.update.content.raw == block
    assert parsed.to_wire() == data


def test_unknown_tool_call_content_type() -> None:
    items = [
        {"type": "content", "content": {"type": "text", "text": "hi"}},
        {"type": "hologram", "frames": 3},
        {"type": "terminal", "terminalId": "t1"},
    ]
    data = notification(
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "T", "content": items}
    )
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.ToolCallStart)
    content = parsed.update.content
    assert content is not None
    assert [type(c) for c in content] == [
        m.ContentToolCallContent,
        m.UnknownToolCallContent,
        m.TerminalToolCallContent,
    ]
    unknown = content[1]
    assert isinstance(unknown, m.UnknownToolCallContent)
    assert unknown.type == "hologram"
    assert unknown.to_wire() == items[1]
    assert parsed.to_wire() == data


def test_unknown_auth_method_type_from_codex() -> None:
    methods = [
        {"id": "chatgpt", "name": "Login with ChatGPT", "description": "browser"},
        {
            "id": "codex-api-key",
            "name": "API key",
            "type": "env_var",
            "vars": [{"name": "CODEX_API_KEY"}],
        },
        {"id": "login", "name": "Log in", "type": "terminal", "args": ["--login"]},
        {"id": "explicit", "name": "Agent", "type": "agent"},
    ]
    data = {"protocolVersion": 1, "authMethods": methods}
    parsed = m.InitializeResponse.parse(data)
    kinds = [type(a) for a in parsed.auth_methods]
    assert kinds == [
        m.AuthMethodAgent,
        m.UnknownAuthMethod,
        m.AuthMethodTerminal,
        m.AuthMethodAgent,
    ]
    env_var = parsed.auth_methods[1]
    assert isinstance(env_var, m.UnknownAuthMethod)
    assert env_var.type == "env_var"
    assert env_var.raw["vars"] == [{"name": "CODEX_API_KEY"}]
    assert parsed.to_wire() == data


def test_mcp_server_without_type_is_stdio() -> None:
    assert type(parse(m.McpServer, {"name": "a", "command": "/bin/a", "args": [], "env": []})) is (
        m.McpServerStdio
    )
    assert type(parse(m.McpServer, {"type": "http", "name": "a", "url": "u", "headers": []})) is (
        m.McpServerHttp
    )
    unknown = parse(m.McpServer, {"type": "acp", "name": "a", "serverId": "s"})
    assert isinstance(unknown, m.UnknownMcpServer)
    assert unknown.type == "acp"


def test_unknown_tool_kind_and_status_values_are_kept() -> None:
    data = notification(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "T",
            "kind": "teleport",
            "status": "cancelled",
        }
    )
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.ToolCallStart)
    assert parsed.update.kind == "teleport"
    assert parsed.update.status == "cancelled"
    assert parsed.to_wire() == data


def test_schema_other_variants_map_to_unknown() -> None:
    req = {"mode": "wizard", "message": "hi", "sessionId": "s"}
    parsed = parse(m.CreateElicitationRequest, req)
    assert isinstance(parsed, m.UnknownCreateElicitationRequest)
    assert parsed.mode == "wizard"
    assert parsed.to_wire() == req
    prop = parse(m.ElicitationPropertySchema, {"type": "color", "title": "Colour"})
    assert isinstance(prop, m.UnknownElicitationPropertySchema)
    items = parse(m.MultiSelectItems, {"anyOf": [{"const": "a", "title": "A"}]})
    assert isinstance(items, m.TitledMultiSelectItems)


def test_unknown_variant_built_in_code() -> None:
    raw = {"sessionUpdate": "x_update", "n": 1}
    note = m.SessionNotification(session_id="s", update=m.UnknownSessionUpdate(raw=raw))
    assert note.to_wire() == {"sessionId": "s", "update": raw}
    assert isinstance(note.update, UnknownVariant)


# --- deviations, extras, repairs ----------------------------------------------------------------


def test_usage_update_with_null_used_parses() -> None:
    data = notification({"sessionUpdate": "usage_update", "used": None, "size": 200000})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.UsageUpdate)
    assert parsed.update.used is None
    assert parsed.update.size == 200000
    assert parsed.to_wire() == data


def test_extra_fields_are_kept_at_every_level() -> None:
    data = {
        "sessionId": "s",
        "topExtra": 1,
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "updateExtra": {"nested": [1, 2]},
            "content": [
                {
                    "type": "content",
                    "itemExtra": True,
                    "content": {
                        "type": "text",
                        "text": "x",
                        "blockExtra": None,
                        "annotations": {"priority": 0.5, "annExtra": "y"},
                    },
                }
            ],
            "locations": [{"path": "/a", "line": 3, "locExtra": "z"}],
            "_meta": {"claudeCode": {"toolName": "Edit"}},
        },
    }
    parsed = m.SessionNotification.parse(copy.deepcopy(data))
    assert parsed.model_extra == {"topExtra": 1}
    update = parsed.update
    assert isinstance(update, m.ToolCallProgress)
    assert update.model_extra == {"updateExtra": {"nested": [1, 2]}}
    assert update.field_meta == {"claudeCode": {"toolName": "Edit"}}
    assert parsed.to_wire() == data


def test_skip_invalid_items_keeps_the_other_items() -> None:
    good_a = {"type": "content", "content": {"type": "text", "text": "a"}}
    bad = {"type": "diff", "path": "/x"}  # newText missing
    good_b = {"type": "terminal", "terminalId": "t"}
    data = notification(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [good_a, bad, good_b]}
    )
    original = copy.deepcopy(data)
    repairs: list[str] = []
    parsed = m.SessionNotification.parse(data, repairs=repairs)
    assert data == original  # the input is not modified
    assert isinstance(parsed.update, m.ToolCallProgress)
    assert parsed.update.content is not None
    assert [c.to_wire() for c in parsed.update.content] == [good_a, good_b]
    assert len(repairs) == 1
    assert repairs[0].startswith("update.content[1]: dropped")


def test_default_on_error_resets_the_field() -> None:
    data = notification(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi", "annotations": {"priority": "high"}},
            "messageId": 42,
        }
    )
    repairs: list[str] = []
    parsed = m.SessionNotification.parse(data, repairs=repairs)
    assert isinstance(parsed.update, m.AgentMessageChunk)
    assert parsed.update.message_id is None
    content = parsed.update.content
    assert isinstance(content, m.TextContentBlock)
    assert content.text == "hi"
    assert sorted(r.split(":")[0] for r in repairs) == [
        "update.content.annotations.priority",
        "update.messageId",
    ]


def test_broken_known_variant_falls_back_to_unknown() -> None:
    data = notification({"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.AgentMessageChunk)
    assert isinstance(parsed.update.content, m.UnknownContentBlock)
    assert parsed.update.content.type == "text"
    assert parsed.to_wire() == data
    missing = notification({"sessionUpdate": "usage_update", "size": 5})
    assert isinstance(m.SessionNotification.parse(missing).update, m.UnknownSessionUpdate)


def test_required_list_with_default_on_error_becomes_empty() -> None:
    parsed = parse(m.SessionUpdate, {"sessionUpdate": "plan", "entries": None})
    assert isinstance(parsed, m.AgentPlanUpdate)
    assert parsed.entries == []


def test_default_on_null_reads_null_as_the_default() -> None:
    # spec: x-deserialize-default-on-null, e.g. McpServerStdio.args and .env (required lists)
    repairs: list[str] = []
    server = parse(
        m.McpServer,
        {"name": "fs", "command": "/bin/fs", "args": None, "env": None},
        repairs=repairs,
    )
    assert isinstance(server, m.McpServerStdio)
    assert (server.args, server.env) == ([], [])
    assert sorted(r.split(":")[0] for r in repairs) == ["args", "env"]
    # only null: a wrong type in such a field is still an error
    with pytest.raises(ValidationError):
        parse(m.McpServerStdio, {"name": "fs", "command": "/bin/fs", "args": "-v", "env": []})


def test_unrepairable_message_raises() -> None:
    with pytest.raises(ValidationError):
        m.SessionNotification.parse({"update": {"sessionUpdate": "plan", "entries": []}})
    with pytest.raises(ValidationError):
        m.PromptResponse.parse({"stopReason": 5})


def test_repairs_inside_dict_values_and_nested_unions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": "x"},
            "b": {"type": "teleport"},
            "c": {"type": "array", "items": {"type": "string", "enum": "not a list"}},
        },
    }
    data = {"mode": "form", "message": "m", "sessionId": "s", "requestedSchema": schema}
    repairs: list[str] = []
    parsed = parse(m.CreateElicitationRequest, data, repairs=repairs)
    assert isinstance(parsed, m.CreateElicitationFormRequest)
    props = parsed.requested_schema.properties
    assert isinstance(props["a"], m.StringPropertySchema)
    assert props["a"].min_length is None
    assert isinstance(props["b"], m.UnknownElicitationPropertySchema)
    multi = props["c"]
    assert isinstance(multi, m.MultiSelectPropertySchema)
    assert isinstance(multi.items, m.UnknownMultiSelectItems)
    assert [r.split(":")[0] for r in repairs] == [
        "requestedSchema.properties.a.minLength",
        "requestedSchema.properties.c.items",
    ]


def test_non_object_union_value_fails_up_to_the_enclosing_union() -> None:
    data = notification({"sessionUpdate": "agent_message_chunk", "content": "plain text"})
    parsed = m.SessionNotification.parse(data)
    assert isinstance(parsed.update, m.UnknownSessionUpdate)
    assert parsed.to_wire() == data


def test_null_result_reads_as_empty_object() -> None:
    repairs: list[str] = []
    assert m.LoadSessionResponse.parse(None, repairs=repairs).to_wire() == {}
    assert repairs == ["<root>: null read as {}"]
    with pytest.raises(ValidationError):
        m.PromptResponse.parse(None)


def test_union_at_top_level_can_fall_back_to_unknown() -> None:
    data = {"mode": "url", "message": "m", "sessionId": "s"}  # elicitationId and url missing
    parsed = parse(m.CreateElicitationRequest, data)
    assert isinstance(parsed, m.UnknownCreateElicitationRequest)
    assert parsed.to_wire() == data


# --- exact output for models built in code ------------------------------------------------------


def test_built_models_validate_against_the_schema() -> None:
    chunk = m.AgentMessageChunk(content=m.TextContentBlock(text="x"))
    assert chunk.to_wire() == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "x"},
    }
    assert_conforms(chunk.to_wire(), "SessionUpdate")
    note = m.SessionNotification(session_id="s1", update=chunk)
    assert_conforms(note.to_wire(), "SessionNotification")
    init = m.InitializeRequest(
        protocol_version=m.PROTOCOL_VERSION,
        client_capabilities=m.ClientCapabilities(
            fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        ),
        client_info=m.Implementation(name="acp-notebook", version="0.1.0"),
    )
    assert init.to_wire()["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    }
    assert_conforms(init.to_wire(), "InitializeRequest")
    for outcome in (
        m.SelectedPermissionOutcome(option_id="allow-once"),
        m.CancelledPermissionOutcome(),
    ):
        response = m.RequestPermissionResponse(outcome=outcome)
        assert_conforms(response.to_wire(), "RequestPermissionResponse")
    start = m.ToolCallStart(
        tool_call_id="c1",
        title="Edit config",
        kind="edit",
        content=[m.DiffToolCallContent(path="/p/config.json", new_text="{}")],
    )
    assert start.to_wire()["content"] == [
        {"type": "diff", "path": "/p/config.json", "newText": "{}"}
    ]
    assert_conforms(start.to_wire(), "SessionUpdate")
    prompt_response = m.PromptResponse(stop_reason="end_turn")
    assert prompt_response.to_wire() == {"stopReason": "end_turn"}
    assert_conforms(prompt_response.to_wire(), "PromptResponse")
    info = m.SessionInfoUpdate(title=None)
    assert info.to_wire() == {"sessionUpdate": "session_info_update", "title": None}
    assert_conforms(info.to_wire(), "SessionUpdate")


def test_more_built_messages_validate() -> None:
    cases: list[tuple[AcpModel, str]] = [
        (
            m.NewSessionRequest(
                cwd="/work",
                mcp_servers=[
                    m.McpServerStdio(name="fs", command="/bin/fs", args=[], env=[]),
                    m.McpServerHttp(name="web", url="http://127.0.0.1:1", headers=[]),
                ],
            ),
            "NewSessionRequest",
        ),
        (
            m.PromptRequest(
                session_id="s",
                prompt=[
                    m.TextContentBlock(text="hi"),
                    m.ResourceLinkContentBlock(uri="file:///a", name="a"),
                    m.EmbeddedResourceContentBlock(
                        resource=m.TextResourceContents(uri="file:///b", text="b")
                    ),
                    m.ImageContentBlock(data="AAAA", mime_type="image/png"),
                ],
            ),
            "PromptRequest",
        ),
        (
            m.SetSessionConfigOptionBooleanRequest(session_id="s", config_id="c", value=True),
            "SetSessionConfigOptionRequest",
        ),
        (
            m.SetSessionConfigOptionSelectRequest(session_id="s", config_id="c", value="v"),
            "SetSessionConfigOptionRequest",
        ),
        (m.AcceptElicitationResponse(content={"name": "x", "n": 2}), "CreateElicitationResponse"),
        (m.DeclineElicitationResponse(), "CreateElicitationResponse"),
        (m.WriteTextFileResponse(), "WriteTextFileResponse"),
        (m.ReadTextFileResponse(content="text"), "ReadTextFileResponse"),
        (m.CreateTerminalResponse(terminal_id="t"), "CreateTerminalResponse"),
        (m.TerminalOutputResponse(output="", truncated=False), "TerminalOutputResponse"),
        (m.CancelNotification(session_id="s"), "CancelNotification"),
        (m.CancelRequestNotification(request_id=3), "CancelRequestNotification"),
        (m.AuthenticateRequest(method_id="chatgpt"), "AuthenticateRequest"),
        (m.ToolCallProgress(tool_call_id="c", status="completed"), "SessionUpdate"),
        (m.UsageUpdate(used=1, size=2), "SessionUpdate"),
    ]
    for model, def_name in cases:
        assert payload_errors(model.to_wire(), def_name) == [], (
            type(model).__name__,
            model.to_wire(),
        )


def test_none_for_a_non_nullable_field_means_absent() -> None:
    start = m.ToolCallStart(tool_call_id="c", title="t", kind=None, content=None)
    assert start.to_wire() == {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"}
    assert_conforms(start.to_wire(), "SessionUpdate")
    # nullable: an explicit None is sent as null
    assert m.ToolCallProgress(tool_call_id="c", title=None).to_wire()["title"] is None


def test_default_variant_discriminators_are_not_invented() -> None:
    assert "type" not in m.AuthMethodAgent(id="a", name="A").to_wire()
    assert "type" not in m.McpServerStdio(name="n", command="/c", args=[], env=[]).to_wire()
    assert m.AuthMethodTerminal(id="t", name="T").to_wire()["type"] == "terminal"


def test_model_dump_stays_plain_pydantic() -> None:
    chunk = m.AgentMessageChunk(content=m.TextContentBlock(text="x"))
    assert "sessionUpdate" not in chunk.model_dump(by_alias=True, exclude_unset=True)


def test_schema_defaults_match_model_defaults() -> None:
    defs = load_schema()["$defs"]
    checked = 0
    for name, node in defs.items():
        cls = getattr(m, name, None)
        if not (isinstance(cls, type) and issubclass(cls, AcpModel)):
            continue
        for wire, prop in node.get("properties", {}).items():
            if not isinstance(prop, dict) or "default" not in prop:
                continue
            info = next(f for f in cls.model_fields.values() if f.alias == wire)
            value = info.get_default(call_default_factory=True)
            if isinstance(value, BaseModel):
                value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
            assert value == prop["default"], (name, wire)
            checked += 1
    assert checked >= 20


# --- the generated module -------------------------------------------------------------------------


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_models", ROOT / "scripts" / "gen_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_models_py_and_its_stub_are_generated_and_up_to_date() -> None:
    gen = _generator()
    first = gen.Generator(*gen.load()).render()
    second = gen.Generator(*gen.load()).render()
    assert first == second  # deterministic
    assert sorted(first) == ["models.py", "models.pyi"]
    for name, text in first.items():
        assert text == (ROOT / "acp_notebook" / "protocol" / name).read_text(encoding="utf-8")
        assert text.startswith(
            "# Generated by scripts/gen_models.py from the ACP JSON Schema"
            " @agentclientprotocol/sdk 2.4.0"
        )
        assert "python scripts/gen_models.py" in text.splitlines()[2]
    assert m.SCHEMA_RELEASE == "@agentclientprotocol/sdk 2.4.0"


def test_generator_refuses_a_field_that_hides_a_type() -> None:
    # The class body runs top to bottom: a field named ``str`` would turn the annotation
    # ``path: str`` after it into a lookup of that field's default.
    gen = _generator()
    schema, meta, release = gen.load()
    location = schema["$defs"]["ToolCallLocation"]
    location["properties"] = {"str": {"type": "integer"}, **location["properties"]}
    with pytest.raises(SystemExit, match=r"ToolCallLocation.path: a field hides \['str'\]"):
        gen.Generator(schema, meta, release).render()


def test_every_object_def_has_a_python_type() -> None:
    defs = load_schema()["$defs"]
    for name, node in defs.items():
        if node.get("x-docs-ignore"):
            continue
        assert hasattr(m, name), name
        if node.get("type") == "object" and "oneOf" not in node and "anyOf" not in node:
            cls = getattr(m, name)
            assert issubclass(cls, AcpModel), name
            wire_names = {f.alias for f in cls.model_fields.values()}
            assert set(node.get("properties", {})) <= wire_names, name


def test_method_tables_match_meta_json() -> None:
    meta = json.loads(
        (ROOT / "acp_notebook/protocol/schema/v1/meta.json").read_text(encoding="utf-8")
    )
    assert set(m.AGENT_METHODS) == set(meta["agentMethods"].values())
    assert set(m.CLIENT_METHODS) == set(meta["clientMethods"].values())
    assert set(m.PROTOCOL_METHODS) == set(meta["protocolMethods"].values())
    assert m.AGENT_METHODS["session/prompt"] == m.MethodSpec(
        "session/prompt", m.PromptRequest, m.PromptResponse
    )
    assert m.CLIENT_METHODS["session/update"].result is None
    assert m.CLIENT_METHODS["elicitation/create"].params is m.CreateElicitationRequest
    assert m.PROTOCOL_METHODS["$/cancel_request"].params is m.CancelRequestNotification


def test_models_are_built_on_first_use() -> None:
    # A fresh interpreter: importing builds no validator, parsing a chunk builds what it needs.
    code = """
import json
from acp_notebook.protocol import models as m
from acp_notebook.protocol.modelbase import AcpModel

def built():
    # vars(): the models made so far (each is made on first use); none is built at import.
    made = [c for c in vars(m).values() if isinstance(c, type) and issubclass(c, AcpModel)]
    return sorted(c.__name__ for c in made if c.__pydantic_complete__)
at_import = built()
update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
note = m.SessionNotification.parse({"sessionId": "s", "update": update})
print(json.dumps([at_import, built(), note.to_wire()["update"] == update]))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    at_import, after_parse, round_trip = json.loads(run.stdout)
    assert at_import == []
    assert "SessionNotification" in after_parse
    assert "InitializeResponse" not in after_parse  # nothing the chunk does not use
    assert round_trip


def test_a_model_is_made_on_first_use_with_what_it_uses() -> None:
    # A fresh interpreter: importing makes no model class; looking one up makes it and the
    # types its fields use, nothing else.
    code = """
import json
from acp_notebook.protocol import models as m
from acp_notebook.protocol.modelbase import AcpModel

def made():
    return sorted(
        n for n, v in vars(m).items()
        if isinstance(v, type) and issubclass(v, AcpModel) and n not in ("AcpModel", "UnknownVariant")
    )
at_import = made()
from acp_notebook.protocol.models import ToolCallLocation
print(json.dumps([at_import, made(), "ToolCallLocation" in dir(m), "InitializeResponse" in dir(m)]))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    at_import, after, listed, not_made_but_listed = json.loads(run.stdout)
    assert at_import == []
    assert after == ["ToolCallLocation"]
    assert listed and not_made_but_listed


def test_a_model_made_on_first_use_looks_like_a_module_level_class() -> None:
    import pickle

    chunk = m.AgentMessageChunk(content=m.TextContentBlock(text="hi"))
    assert m.AgentMessageChunk.__qualname__ == "AgentMessageChunk"
    assert m.AgentMessageChunk.__module__ == "acp_notebook.protocol.models"
    assert repr(chunk).startswith("AgentMessageChunk(content=TextContentBlock(")
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    with pytest.raises(ValidationError, match="ToolCallLocation"):
        m.ToolCallLocation.model_validate({})
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        _ = m.NoSuchModel


def test_every_exported_name_can_be_looked_up() -> None:
    namespace: dict[str, Any] = {}
    exec("from acp_notebook.protocol.models import *", namespace)
    assert set(m.__all__) <= set(namespace)
    assert set(m.__all__) <= set(dir(m))
    assert namespace["SessionNotification"] is m.SessionNotification


def test_threads_looking_a_model_up_at_once_get_the_same_class() -> None:
    # Two threads (the agent loop and the kernel's main thread) may make one name at once.
    code = """
import threading
from acp_notebook.protocol import models as m
found = []
start = threading.Barrier(4)
def look():
    start.wait()
    found.append(m.SessionNotification)
threads = [threading.Thread(target=look) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(len({id(c) for c in found}), len(found))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["1", "4"]


@pytest.mark.slow
def test_the_import_benchmark_runs() -> None:
    # benchmarks/models_import.py, at a tiny size: it must keep working for the benchmark table.
    script = ROOT / "benchmarks" / "models_import.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--reps", "1", "--chunks", "200"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert "| import acp_notebook.protocol.models (after pydantic) |" in proc.stdout
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    (run,) = record["runs"]["this"]
    assert run["built_after_first_parse"] < run["model_classes"]
    assert run["steady_ms"] > 0 and run["check_us"] > 0


def test_parse_cost_of_an_agent_message_chunk() -> None:
    data = notification(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}}
    )
    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        parsed = m.SessionNotification.parse(data)
    per_message = (time.perf_counter() - start) / n
    print(f"\nSessionNotification.parse(agent_message_chunk): {per_message * 1e6:.2f} µs")
    assert isinstance(parsed.update, m.AgentMessageChunk)
