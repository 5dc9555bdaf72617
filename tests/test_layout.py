"""What issue 10 ("One concept, one place") left as the package's shape, kept so: no module
of about 500 lines or more but the generated protocol models, and no feature bolted on in
fenced blocks (``# --- elicitation`` … ``# --- end elicitation``) across modules."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "acp_notebook"
#: Written by scripts/gen_models.py from the JSON Schema, not by hand.
GENERATED = {PACKAGE / "protocol" / "models.py", PACKAGE / "protocol" / "models.pyi"}
#: "About 500 lines": a module past this needs splitting by concept, not a higher number.
MAX_LINES = 525
FENCE_END = re.compile(r"^\s*#\s*---\s*end\b", re.MULTILINE)


def modules() -> list[Path]:
    found = sorted(p for p in PACKAGE.rglob("*.py*") if p.suffix in (".py", ".pyi"))
    assert len(found) > 100, found  # the package itself, not an empty glob
    return [p for p in found if p not in GENERATED]


def test_no_hand_written_module_is_much_over_500_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_no_feature_lives_in_fenced_blocks() -> None:
    fenced = [
        str(p.relative_to(PACKAGE)) for p in modules() if FENCE_END.search(p.read_text("utf-8"))
    ]
    assert not fenced, fenced
