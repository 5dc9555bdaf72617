"""The elicitation demonstrations: ``/ask`` (a form: ``elicitation/create`` with a
``requestedSchema``) and ``/ask-url`` (a URL the user consents to open, inside a tool
call, then ``elicitation/complete``). Only when the client advertised the mode.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from ...protocol import models as m
from ...protocol.errors import REQUEST_CANCELLED, RpcError
from .content import text_content
from .replies import STEP_DELAY, StopReason, error_text, missing_capability
from .turn import Turn

__all__ = ["ASK_SCHEMA", "DEVICE_URL", "scene_ask", "scene_ask_url"]

#: The form of ``/ask``: one field of each kind the schema defines.
ASK_SCHEMA = m.ElicitationSchema(
    title="About you",
    description="A demonstration: nothing is stored.",
    properties={
        "name": m.StringPropertySchema(
            title="Name", description="What should I call you?", min_length=1, max_length=80
        ),
        "age": m.IntegerPropertySchema(title="Age", minimum=0, maximum=150),
        "language": m.StringPropertySchema(
            title="Favourite language", enum=["Python", "Rust", "Julia", "Other"]
        ),
        "newsletter": m.BooleanPropertySchema(
            title="Newsletter", description="Send me the pretend newsletter", default=False
        ),
        "topics": m.MultiSelectPropertySchema(
            title="Topics",
            items=m.TitledMultiSelectItems(
                any_of=[
                    m.EnumOption(const="protocol", title="The protocol"),
                    m.EnumOption(const="notebooks", title="Notebooks"),
                    m.EnumOption(const="tools", title="Tool calls"),
                    m.EnumOption(const="other", title="Something else"),
                ]
            ),
            max_items=3,
        ),
    },
    required=["name"],
)
#: Where ``/ask-url`` sends the user: a pretend device sign-in (the agent never opens it).
DEVICE_URL = "https://example.com/device?code=DEMO-1234"


async def _elicit(turn: Turn, message: str, **how: Any) -> Any | None:
    """``elicitation/create``; None (after saying why) when the client answered an error."""
    try:
        return await turn.elicit(message, **how)
    except RpcError as exc:
        if exc.code == REQUEST_CANCELLED:
            return m.CancelElicitationResponse()
        await turn.say(
            f"The client answered `elicitation/create` with an error: {error_text(exc)}."
        )
        return None


async def scene_ask(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.elicitation_form:
        return await turn.reply(missing_capability("elicitation.form", "ask you to fill in a form"))
    answer = await _elicit(
        turn,
        "Tell me a little about yourself, so I can show what a form elicitation sends back.",
        schema=ASK_SCHEMA,
    )
    if answer is None:
        return "end_turn"
    if isinstance(answer, m.AcceptElicitationResponse):
        content = answer.content or {}
        rows = [
            f"- {getattr(prop, 'title', None) or name}: `{json.dumps(content[name], ensure_ascii=False)}`"
            for name, prop in ASK_SCHEMA.properties.items()
            if name in content
        ]
        name = content.get("name")
        hello = f"Hello, {name}! " if isinstance(name, str) and name else ""
        return await turn.reply(
            f'{hello}You accepted (`action: "accept"`) and sent:\n\n'
            + ("\n".join(rows) or "(no values)")
            + "\n\nI asked with `elicitation/create` (mode `form`); a real agent would now use "
            "these values. I only repeat them."
        )
    if isinstance(answer, m.DeclineElicitationResponse):
        return await turn.reply(
            'The answer was `action: "decline"` (you declined, or your client had no one to '
            "ask), so I go on without your answers, as an agent must."
        )
    if isinstance(answer, m.CancelElicitationResponse):
        return await turn.reply(
            'The form was cancelled (`action: "cancel"`): dismissed without a choice. I stop here.',
            "cancelled" if turn.cancel_requested else "end_turn",
        )
    return await turn.reply(
        f"The client answered with an action I do not know (`{answer.action}`); I treat it "
        "as a decline."
    )


async def scene_ask_url(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.elicitation_url:
        return await turn.reply(missing_capability("elicitation.url", "ask you to open a web page"))
    call = await turn.start_tool_call("Sign in at example.com (pretend device flow)", "other")
    call.cancel_note = "Cancelled before the sign-in finished."
    elicitation_id = f"{call.id}-sign-in"  # deterministic, and opaque to the client
    answer = await _elicit(
        turn,
        "Sign in to the pretend example.com service with the code DEMO-1234.",
        url=DEVICE_URL,
        elicitation_id=elicitation_id,
        tool_call_id=call.id,
    )
    if answer is None:
        await call.fail("The client could not show the sign-in URL.")
        return "end_turn"
    if isinstance(answer, m.AcceptElicitationResponse):
        # accept = the user consented to open the URL; the flow itself ends out of band.
        await call.update(status="in_progress")
        await anyio.sleep(STEP_DELAY)
        await turn.complete_elicitation(elicitation_id)
        await call.update(
            status="completed",
            content=[text_content("Signed in (pretend): the device flow reported completion.")],
        )
        return await turn.reply(
            'You consented to open the URL (`action: "accept"` means only that). A real agent '
            "would now wait for its server to confirm the sign-in; there is no server behind "
            f"example.com, so after {STEP_DELAY:g} s I sent `elicitation/complete` for "
            f"`{elicitation_id}` myself. I never opened or fetched the page."
        )
    cancelled = isinstance(answer, m.CancelElicitationResponse)
    await call.fail("Cancelled: not signed in." if cancelled else "Declined: not signed in.")
    return await turn.reply(
        "The sign-in was cancelled, so I stop here."
        if cancelled
        else 'The answer was `action: "decline"`, so I go on without signing in.',
        "cancelled" if cancelled and turn.cancel_requested else "end_turn",
    )
