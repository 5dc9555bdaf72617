"""A loopback model for the real agents: one HTTP server on 127.0.0.1 that answers the four
wire formats they speak, from a :class:`Script` a test sets, and keeps every request body.

==========================  ===============================================  ==================
format                      paths                                            module
==========================  ===============================================  ==================
Anthropic Messages          ``/v1/messages`` (``/count_tokens``)             ``anthropic_messages``
(claude-agent-acp)
OpenAI Responses (codex)    ``/v1/responses``                                ``openai_responses``
OpenAI Chat Completions     ``/v1/chat/completions``                         ``openai_chat``
(qwen, opencode, fast-agent)
Gemini (gemini-cli)         ``/v1beta/models/M:generateContent``,            ``gemini_content``
                            ``:streamGenerateContent``, ``:countTokens``
==========================  ===============================================  ==================

Each format's module reads a request into a :class:`~.script.Conversation` (``read``) and
writes the model's :class:`~.script.Answer` in that format (``write``); what the model
answers is decided once, in :mod:`.script`; :mod:`.server` routes the requests.
"""

from .script import Call, Script
from .server import LoopbackModel, serve

__all__ = ["Call", "LoopbackModel", "Script", "serve"]
