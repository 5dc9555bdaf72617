"""The three permission policies (what each does: ``permissions.py``), in a module of
their own so the notebook's configuration can offer them without loading the broker."""

from __future__ import annotations

from typing import Literal

Policy = Literal["ask", "allow", "deny"]
POLICIES: tuple[Policy, ...] = ("ask", "allow", "deny")
