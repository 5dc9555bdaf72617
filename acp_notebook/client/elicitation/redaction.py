"""What of a submitted form a transcript may show: values as given, except fields named
like a secret (``password``, ``secret``, ``token``, ``key``, ...), which are redacted, so a
secret never reaches a saved notebook, a log or a trace rendered from the transcript."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "format_values", "is_secret_name", "recorded"]

#: Shown in place of a secret-looking field's value in transcripts.
REDACTED = "(redacted)"

_SECRET_WORDS = re.compile(r"pass(word|wd|phrase)|secret|token|api_?key|private_?key", re.I)


def is_secret_name(name: str) -> bool:
    """Field names whose values the transcript never shows: password, secret, token, key."""
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}
    return bool(_SECRET_WORDS.search(name)) or bool(words & {"key", "pwd", "pin"})


def recorded(content: Mapping[str, Any] | None) -> dict[str, Any]:
    """``content`` as transcripts show it: secret-looking fields redacted."""
    return {k: REDACTED if is_secret_name(k) else v for k, v in (content or {}).items()}


def format_values(content: Mapping[str, Any] | None) -> str:
    """``{name: "Ada", age: 36}``: the recorded values on one line."""
    parts = []
    for key, value in recorded(content).items():
        shown = value if value == REDACTED else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}: {shown}")
    return "{" + ", ".join(parts) + "}"
