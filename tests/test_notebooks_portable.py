"""The committed notebooks' outputs name no machine: no absolute path of this checkout,
no temp directory (transcripts show paths relative to the notebook's folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_saved_outputs_hold_no_machine_paths(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    outputs = json.dumps([cell.get("outputs", []) for cell in notebook["cells"]])
    for marker in (str(ROOT), str(Path.home()), "/tmp/"):
        assert marker not in outputs, f"{path.name} output contains {marker}"


def test_there_are_notebooks() -> None:
    assert {p.name for p in NOTEBOOKS} >= {
        "quickstart.ipynb",
        "protocol_tour.ipynb",
        "data_analysis.ipynb",
        "real_agents.ipynb",
    }
