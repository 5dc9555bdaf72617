"""Elicitation forms: one input per field type, defaults, required marks, inline
validation, Accept / Decline / Cancel through ``post``, URL mode with the host
highlighted and consent before any link, and the turn view showing them at once."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import pytest

from acp_notebook.client.elicitation import ElicitationBroker, ElicitationRequest
from acp_notebook.ui import layouts
from acp_notebook.ui.elicitation import NO_CHOICE, ElicitationForm, url_html
from acp_notebook.ui.turn import TurnView

from .conftest import FakeClock, FakeSession, Poster, Wire, all_html, tool_call

PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "title": "Name", "description": "Your *full* name", "minLength": 1},
    "bio": {"type": "string", "maxLength": 2000},
    "email": {"type": "string", "format": "email"},
    "born": {"type": "string", "format": "date"},
    "language": {"type": "string", "enum": ["Python", "Rust"], "default": "Rust"},
    "level": {
        "type": "string",
        "oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi", "title": "High"}],
    },
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
    "ratio": {"type": "number", "default": 0.5},
    "newsletter": {"type": "boolean", "default": True},
    "topics": {
        "type": "array",
        "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
        "default": ["b"],
    },
    "many": {"type": "array", "items": {"type": "string", "enum": [f"o{i}" for i in range(12)]}},
}


class Session(FakeSession):
    """The fake session with the elicitation broker a real Session has."""

    def __init__(self) -> None:
        super().__init__()
        self.elicitations = ElicitationBroker(
            interactive=True, on_change=lambda _r: self.transcript.changed()
        )

    def elicit(self, params: dict[str, Any]) -> ElicitationRequest:
        """What ``Session.create_elicitation`` does before it waits for the answer."""
        request = self.elicitations.open({"sessionId": "s1", **params}, agent="Demo agent")
        self.transcript.add_elicitation(request)
        return request


@pytest.fixture
def session() -> Session:
    return Session()


def form_for(
    session: Session, post: Poster, properties: dict[str, Any] | None = None, **extra: Any
) -> ElicitationForm:
    turn = session.submit()
    session.start(turn)
    schema = {"type": "object", "properties": properties or PROPERTIES, "required": ["name"]}
    request = session.elicit(
        {"mode": "form", "message": "Tell me **about** you", "requestedSchema": schema, **extra}
    )
    return ElicitationForm(
        request, broker=session.elicitations, post=post, transcript=session.transcript
    )


def url_form(session: Session, post: Poster, url: str, **extra: Any) -> ElicitationForm:
    turn = session.submit()
    session.start(turn)
    request = session.elicit(
        {"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": url, **extra}
    )
    return ElicitationForm(
        request, broker=session.elicitations, post=post, transcript=session.transcript
    )


# --- the form ----------------------------------------------------------------------------------


def test_one_input_per_field_type(session: Session, post: Poster, wire: Wire):
    form = form_for(session, post)
    controls = {name: field.control for name, field in form.inputs.items()}
    assert type(controls["name"]) is w.Text
    assert type(controls["bio"]) is w.Textarea  # long text
    assert type(controls["email"]) is w.Text and controls["email"].placeholder == "email address"
    assert controls["born"].placeholder == "date, YYYY-MM-DD"  # a date is validated text
    assert isinstance(controls["language"], w.Dropdown)
    assert isinstance(controls["level"], w.Dropdown)
    assert list(controls["level"].options) == [(NO_CHOICE, None), ("Low", "lo"), ("High", "hi")]
    # A number input only when there is a default: a 0 the user never typed is never sent.
    assert type(controls["age"]) is w.Text and "0–150" in controls["age"].placeholder
    count = controls["count"]
    assert isinstance(count, w.BoundedIntText) and (count.min, count.max) == (1, 9)
    assert isinstance(controls["ratio"], w.FloatText)
    assert isinstance(controls["newsletter"], w.Checkbox)
    assert list(form.inputs["topics"].checkboxes) == ["a", "b"]  # few choices: checkboxes
    assert isinstance(controls["many"], w.SelectMultiple)  # many: a list
    assert [b.description for b in form.widget.children[-3].children] == [
        "Accept",
        "Decline",
        "Cancel",
    ]
    assert any(msg.kind == "open" for msg in wire.messages)  # real widgets, through the comm


def test_defaults_are_prefilled_and_required_fields_marked(session: Session, post: Poster):
    form = form_for(session, post)
    assert form.values() == {
        "language": "Rust",
        "count": 3,
        "ratio": 0.5,
        "newsletter": True,
        "topics": ["b"],
    }
    assert "*</span>" in form.inputs["name"].label.value
    assert "*</span>" not in form.inputs["bio"].label.value
    assert "<em>full</em>" in form.inputs["name"].label.value  # the description, as Markdown
    assert "Demo agent" in form.question and "asks for input" in form.question
    assert "<strong>about</strong>" in form.question
    assert "Waiting for your answer" in form.decision


def test_accept_shows_validation_errors_inline_and_sends_nothing(session: Session, post: Poster):
    form = form_for(session, post)
    form.inputs["age"].control.value = "old"  # type: ignore[union-attr]
    form.inputs["email"].control.value = "nope"  # type: ignore[union-attr]
    form.accept()
    assert post.posted == 1 and not form.errors  # nothing happens off the loop
    post.run()
    assert form.errors == {
        "name": "Required.",
        "age": "Enter a whole number.",
        "email": "Enter an email address like name@example.com.",
    }
    assert "Required." in form.inputs["name"].error.value
    assert "Enter a whole number." in form.inputs["age"].error.value
    assert form.inputs["bio"].error.value == ""
    assert "Nothing was sent" in all_html(form.widget)
    assert form.request.pending and not form.accept_button.disabled


def test_accept_posts_the_values_then_everything_is_disabled(session: Session, post: Poster):
    form = form_for(session, post)
    form.inputs["name"].control.value = "Ada"  # type: ignore[union-attr]
    form.inputs["age"].control.value = "36"  # type: ignore[union-attr]
    form.inputs["topics"].checkboxes["a"].value = True
    form.accept()
    assert form.request.pending
    post.run()
    request = form.request
    assert request.state == "accepted" and request.decided_by == "user"
    assert request.content == {
        "name": "Ada",
        "language": "Rust",
        "age": 36,
        "count": 3,
        "ratio": 0.5,
        "newsletter": True,
        "topics": ["a", "b"],
    }
    assert request.response()["action"] == "accept"
    assert all(b.disabled for b in (form.accept_button, form.decline_button, form.cancel_button))
    assert form.inputs["name"].control.disabled  # type: ignore[union-attr]
    assert all(box.disabled for box in form.inputs["topics"].checkboxes.values())
    assert "Accepted by user: {name: &quot;Ada&quot;" in form.decision
    form.decline()
    post.run()
    assert request.state == "accepted"  # decided: the buttons change nothing any more


def test_accept_with_values_sends_those_values(session: Session, post: Poster):
    form = form_for(session, post, {"name": {"type": "string"}, "password": {"type": "string"}})
    form.accept({"name": "Ada", "password": "hunter2"})
    post.run()
    assert form.request.content == {"name": "Ada", "password": "hunter2"}  # sent as given
    assert form.inputs["name"].control.value == "Ada"  # type: ignore[union-attr]
    assert "hunter2" not in form.decision and "(redacted)" in form.decision


@pytest.mark.parametrize(("action", "state"), [("decline", "declined"), ("cancel", "cancelled")])
def test_decline_and_cancel(session: Session, post: Poster, action: str, state: str):
    form = form_for(session, post)
    getattr(form, action)()
    assert form.request.pending
    post.run()
    assert form.request.state == state and form.request.response() == {"action": action}
    assert f"{state.capitalize()} by user" in form.decision
    assert form.accept_button.disabled and form.accept_button.button_style == ""


def test_an_unknown_field_type_offers_only_decline_and_cancel(session: Session, post: Poster):
    form = form_for(session, post, {"name": {"type": "string"}, "shade": {"type": "color"}})
    assert form.inputs["shade"].control is None  # never shown as a known control
    assert "color" in all_html(form.widget) and "only decline or cancel" in form.question
    buttons = [b.description for b in form.widget.children[-3].children]
    assert buttons == ["Decline", "Cancel"]
    form.accept({"name": "x"})
    post.run()
    assert form.request.pending  # refused
    form.decline()
    post.run()
    assert form.request.state == "declined"


def test_a_tool_call_scoped_form_names_its_call(session: Session, post: Poster):
    session.transcript.apply(tool_call("c1", "Deploy `app`", "execute"))
    form = form_for(session, post, {"name": {"type": "string"}}, toolCallId="c1")
    assert "for tool call <b>Deploy" in form.question


# --- URL mode ----------------------------------------------------------------------------------


def test_url_mode_shows_the_whole_url_with_the_host_highlighted(session: Session, post: Poster):
    form = url_form(session, post, "https://login.example.com/device?code=DEMO-1234")
    question = form.question
    assert "https://" in question and "/device?code=DEMO-1234" in question
    assert "font-weight: 700" in url_html(form.request.url or "")
    assert (
        '700; color: var(--jp-brand-color1, #1976d2); background: rgba(25,118,210,0.10)">login.example.com</span>'
        in question
    )
    assert "outside the notebook" in question and "does not fetch" in question
    assert form.accept_button.description == "Open"
    assert "<a " not in all_html(form.widget)  # no link before consent


def test_the_highlighted_host_is_the_real_destination(session: Session, post: Poster):
    html = url_html("https://example.com@evil.test/login")
    assert ">evil.test</span>" in html and ">example.com</span>" not in html


def test_open_is_consent_and_only_then_a_link_appears(session: Session, post: Poster):
    form = url_form(session, post, "https://example.com/device")
    form.accept()
    post.run()
    assert form.request.state == "accepted" and form.request.response() == {"action": "accept"}
    assert (
        'href="https://example.com/device" target="_blank" rel="noopener noreferrer"'
        in form.decision
    )
    assert "not reported complete yet" in form.decision
    session.elicitations.complete("e1")
    form.refresh()
    assert "the agent reported the flow complete" in form.decision


def test_a_url_that_is_not_a_web_address_cannot_be_opened(session: Session, post: Poster):
    form = url_form(session, post, "javascript:alert(1)")
    assert [b.description for b in form.widget.children[-3].children] == ["Decline", "Cancel"]
    assert "not a web address" in form.question
    form.accept()
    post.run()
    assert form.request.pending and "<a " not in all_html(form.widget)


# --- in the turn view --------------------------------------------------------------------------


def test_the_turn_view_shows_an_elicitation_at_once_and_closes_it_at_the_end(
    session: Session, post: Poster, clock: FakeClock
):
    turn = session.submit()
    session.start(turn)
    view = TurnView(
        agent_label="demo", post=post, schedule_later=clock.schedule_later, interval=0.075
    )
    view.bind(session, turn)
    session.elicit(
        {
            "mode": "form",
            "message": "Name?",
            "requestedSchema": {"properties": {"n": {"type": "string"}}},
        }
    )
    # Shown now, not after the coalescing interval.
    assert len(view.forms) == 1 and view.status == "Waiting for your input"
    assert "Name?" in all_html(view.widget)
    session.end(turn)
    view.finish()
    form = view.forms[0]
    assert form.accept_button.disabled and "No longer answerable" in form.decision
    assert view.status == "Finished"


def test_a_decided_elicitation_shows_its_outcome_in_the_view(session: Session, post: Poster):
    turn = session.submit()
    session.start(turn)
    view = TurnView(agent_label="demo", post=post)
    view.bind(session, turn)
    request = session.elicit(
        {"mode": "url", "message": "Go", "elicitationId": "e", "url": "https://a.test/"}
    )
    session.elicitations.decline(request.key, by="headless", reason="no one to ask: headless run")
    view.refresh()
    assert view.status == "Running"
    assert "Declined (no one to ask: headless run)" in view.forms[0].decision


def test_closing_the_view_closes_every_comm_of_its_forms(
    session: Session, post: Poster, wire: Wire
):
    turn = session.submit()
    session.start(turn)
    mark = wire.mark()
    view = TurnView(agent_label="demo", post=post)
    view.bind(session, turn)
    session.elicit(
        {"mode": "form", "message": "All of it", "requestedSchema": {"properties": PROPERTIES}}
    )
    session.elicit({"mode": "url", "message": "Go", "elicitationId": "e", "url": "https://a.test/"})
    view.refresh()
    assert len(view.forms) == 2
    opened = {msg.comm_id for msg in wire.since(mark) if msg.kind == "open"}
    view.close()
    closed = {msg.comm_id for msg in wire.since(mark) if msg.kind == "close"}
    # All but the layouts and styles every view of the kernel shares (ui/layouts.py).
    assert opened - layouts.shared_ids() <= closed
