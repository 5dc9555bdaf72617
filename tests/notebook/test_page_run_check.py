"""The page's half of "run_cell runs what was approved", without a browser: the
extension's request parser and staleness check (``labextension/src/protocol.ts``),
transpiled by the extension's own TypeScript and run in node.

An agent rewrote a cell while the card showing its code waited, and the page ran the new
source. The kernel now sends the approved source with ``run_cell``; the page refuses a
request without it and runs nothing when the cell holds anything else.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "labextension" / "src" / "protocol.ts"
TYPESCRIPT = ROOT / "labextension" / "node_modules" / "typescript"

#: Transpiles protocol.ts (its one import is a type, erased), then answers each case.
SCRIPT = """
const ts = require(process.argv[1]);
const fs = require('fs');
const source = fs.readFileSync(process.argv[2], 'utf8');
const js = ts.transpileModule(source, {compilerOptions: {module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2019}}).outputText;
const module_ = {exports: {}};
new Function('module', 'exports', 'require', js)(module_, module_.exports, require);
const p = module_.exports;
const answers = JSON.parse(fs.readFileSync(0, 'utf8')).map(([data, current]) => {
  try {
    const request = p.parseRun(data);
    return {request, stale: p.staleRun(current, request)};
  } catch (error) {
    return {error: [error.code, error.message]};
  }
});
process.stdout.write(JSON.stringify(answers));
"""


def page(cases: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None or not TYPESCRIPT.is_dir():
        skip_or_fail("node and the extension's node_modules (./dev setup) are needed")
    done = subprocess.run(
        [node, "-e", SCRIPT, str(TYPESCRIPT), str(PROTOCOL)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


def test_the_page_runs_a_cell_only_while_it_holds_the_approved_source() -> None:
    approved = {"v": 2, "type": "run_cell", "id": 4, "cell_id": "c1", "source": "x = 1"}
    held, edited, queued = page(
        [
            (approved, "x = 1"),
            (approved, "import shutil; shutil.rmtree('data')"),
            ({**approved, "wait": False}, "x = 1"),
        ]
    )
    assert held == {"request": {"cell_id": "c1", "source": "x = 1", "wait": True}, "stale": False}
    assert edited["stale"] is True
    assert queued == {
        "request": {"cell_id": "c1", "source": "x = 1", "wait": False},
        "stale": False,
    }


def test_a_run_request_without_the_approved_source_is_refused() -> None:
    (answer,) = page([({"v": 2, "type": "run_cell", "id": 5, "cell_id": "c1"}, "x = 1")])
    assert answer == {"error": ["invalid", "source must be a string"]}
