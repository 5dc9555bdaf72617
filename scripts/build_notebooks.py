"""Write the tutorial notebooks in notebooks/ and execute them to store their outputs.

    python scripts/build_notebooks.py            # write sources, then execute (reference outputs)
    python scripts/build_notebooks.py --no-run   # only write the sources

The stored outputs are what `pytest --nbval notebooks/` compares a fresh run with, so
run this after changing the demo agent or the transcript format, and commit the
result. Cells marked NBVAL_SKIP need a real agent; NBVAL_IGNORE_OUTPUT marks
outputs that depend on timing or on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from notebook_cells import KERNEL, code, md, workspace_cell
from protocol_course import protocol_tour

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

UTILS_PY = """def mean(values):
    return sum(values) / len(values)


def spread(values):
    return max(values) - min(values)
"""


def quickstart() -> nbformat.NotebookNode:
    cells = [
        md("""
# acp_notebook quickstart

A coding agent, next to your kernel, in your notebook. This notebook runs on the **built-in demo
agent**: it needs no account and no network, and it does the same thing every time. It does not
understand language — it *demonstrates* what real agents (Claude Agent, Codex, Gemini CLI, …) send
over the [Agent Client Protocol](https://agentclientprotocol.com), and it really reads, writes and
runs things through this notebook.

Run the cells from top to bottom (Shift-Enter)."""),
        workspace_cell("quickstart-workspace", {"utils.py": UTILS_PY}),
        md("""
## 1. Load the extension

Nothing starts yet: the agent starts with the first prompt."""),
        code("%load_ext acp_notebook"),
        md("""
## 2. The first prompt

`%acp` sends the rest of the line as a prompt. The reply streams into the cell; when the turn ends
the live view is replaced by the transcript, which is what the saved notebook keeps."""),
        code("%acp Hello! What can you do?"),
        md("""
Slash commands are the demo agent's demonstrations. `%acp --commands` lists the commands the agent
announced (real agents announce theirs the same way)."""),
        code("%acp --commands"),
        md("""
## 3. A tool call: the agent reads a file

The agent asks the notebook to read `utils.py` (`fs/read_text_file`). The notebook answers only for
files inside its working directory."""),
        code("%acp /read utils.py"),
        md("""
## 4. A tool call that needs permission

Now the agent proposes an edit and asks before writing. In JupyterLab you see the diff and one
button per option the agent offers — **Allow once**, **Allow always**, **Reject** — and the file
changes only if you allow it.

When this notebook runs without a person (`nbconvert --execute`, papermill, CI), nobody can click, so
the request is rejected by policy and the file stays as it was; the transcript says so."""),
        code("%acp /edit utils.py"),
        code("print(pathlib.Path('utils.py').read_text())"),
        md("""
`-p allow` answers permission requests with the first "allow" option instead of asking (`-p deny`
rejects them). Here the agent runs a command in a terminal the notebook owns; its output stays in the
transcript."""),
        code('%acp -p allow /run python -c "print(sum(range(10)))"'),
        md("""
## 5. Cancel

`/slow` streams for five seconds. Press **Cancel** (or the kernel's stop button) while it runs: the
notebook sends `session/cancel`, answers any pending permission request `cancelled`, and the turn
ends with the stop reason `cancelled`. Here `-t 2` cancels it after two seconds, and `-s cancel` runs it
in a session of its own (several may run side by side): how much it said before the cancel depends on
timing, and it stays out of the default session's usage figures below."""),
        code("# NBVAL_IGNORE_OUTPUT\n%acp -s cancel -t 2 /slow"),
        md("""
## 6. Your data as context

`{name}` puts the value of a notebook variable into the prompt as an embedded resource, so the agent
sees exactly what you are looking at."""),
        code(
            'temperatures = {"mon": 21.5, "tue": 23.0, "wed": 19.8}\n%acp What stands out in {temperatures}?'
        ),
        md("""
## 7. The cell you just ran goes with the prompt

Every prompt carries the most recently executed code cell (its code, and its result or error) and
any code above the `%acp` line, so "this function" means something; the turn lists what was sent
("Sent: …"). `--no-context` sends only the words, `--dry-run` shows the content blocks and sends
nothing, and `%acp --fix` sends the last error with its cell."""),
        code(
            "def scale(values, factor):\n    scaled = []\n    for v in values:\n"
            "        scaled.append(v * factor)\n    return scaled"
        ),
        code("%acp refactor this function"),
        md("""
## 8. The agent works in your kernel

Every session is offered the notebook's own MCP server, `notebook`: the agent can list and inspect
your variables and run code in this kernel — after you allow it, like any other tool call (here
`-p allow`; the rule `allow notebook run_code` does the same). The demo agent's `/tools` uses it as
any MCP client would."""),
        code("%acp -p allow /tools doubled = scale(list(temperatures.values()), 2)"),
        code("doubled"),
        md("""
## 9. What went over the wire

Every JSON-RPC message is kept. `acp.messages()` shows them numbered; `.step(n)` shows one in full.
The [protocol tour](protocol_tour.ipynb) walks through them step by step."""),
        code('import acp_notebook as acp\n\nacp.messages(method="initialize")'),
        md("""
## 10. A real agent

Everything above works the same with a real agent. Install one (see
[real agents](real_agents.ipynb)), then either pass it per prompt or make it the default:

```python
%acp -a claude refactor utils.py       # one prompt
%config AcpMagics.agent = "claude"     # every prompt in this kernel
```

or set `ACP_NOTEBOOK_AGENT=claude` before starting Jupyter. `%acp --agents` lists the presets and
what is installed here; `%acp --status` shows what is running."""),
        code(
            "# NBVAL_SKIP\n# (needs a real agent and an account)\n%acp -a claude Explain utils.py in two sentences."
        ),
        code("# NBVAL_IGNORE_OUTPUT\n# (process ids differ)\n%acp --status"),
    ]
    return new_notebook(
        cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}}
    )


def data_analysis() -> nbformat.NotebookNode:
    cells = [
        md("""
# Agent-assisted data analysis

A small, made-up sales table (`sales.csv`, next to this notebook) in pandas. The agent sees what
you see: the cell you just ran, the variables you name in `{braces}`, the last error — and, with
your permission, it can look at and run code in this kernel itself. With the demo agent the
"analysis" demonstrates the mechanics; with a real agent (`-a claude`, `-a gemini`, …) the same
cells do real work."""),
        code("%load_ext acp_notebook"),
        code('import pandas as pd\n\nsales = pd.read_csv("sales.csv")\nsales.head()'),
        md("""
## Your data, as you see it

Name a variable in the prompt and the agent receives a summary built for its type: for a data
frame its shape, dtypes, null counts, `describe()` and the first rows as CSV (bounded, with a
note when rows were left out). `--dry-run` shows exactly what would be sent, and sends nothing."""),
        code("%acp --dry-run --no-context what stands out in {sales}?"),
        code("%acp what stands out in {sales}?"),
        md("""
## The cell you just ran is context

Every prompt carries the most recently executed code cell (and any code above the `%acp` line in
the same cell), so "this function" means something. The turn lists what was sent."""),
        code(
            'def monthly(frame):\n    return frame.groupby("month")["units"].sum()\n\n'
            "monthly(sales)"
        ),
        code("%acp refactor this function"),
        md("""
## Hand it an error: `--fix`

`%acp --fix` sends the last traceback and the code of the cell that raised it."""),
        new_code_cell(
            'returns = sales[sales["units"] > 1000]\naverage_return = int(returns["units"].sum()) / len(returns)',
            metadata={"tags": ["raises-exception"]},
        ),
        code("%acp --fix"),
        md("""
## The agent works in your kernel: the notebook tools

Every session is offered an MCP server named `notebook`: the agent can list and inspect your
variables, read your cells and the last error, and run code in this kernel — only after you allow
it (here with `-p allow`; a rule such as `allow notebook run_code` does it too). The code and its
output stay in the turn. The demo agent's `/tools` uses them as any MCP client would."""),
        code(
            "# NBVAL_IGNORE_OUTPUT\n# (the byte sizes list_variables reports depend on the pandas build)\n"
            '%acp -p allow /tools best = sales.groupby("region")["units"].sum().idxmax()'
        ),
        code("best"),
        md("""
## With a real agent

```python
%acp -a claude Plot units per month and region from {sales}, and tell me what stands out.
```"""),
        code(
            "# NBVAL_SKIP\n# (needs a real agent)\n%acp -a claude Summarise {sales} in three bullet points."
        ),
    ]
    return new_notebook(
        cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}}
    )


def real_agents() -> nbformat.NotebookNode:
    cells = [
        md("""
# Using real agents

acp_notebook speaks ACP to any agent that does. The presets below know how to start the common
ones; any other agent is a command line: `%acp -a "my-agent --acp" hello`.

| preset | agent | install | log in |
|---|---|---|---|
| `claude` | Claude Agent | `npm install -g @agentclientprotocol/claude-agent-acp` (or it runs with `npx`) | `claude /login` once, or `ANTHROPIC_API_KEY` |
| `codex` | Codex | `npm install -g @zed-industries/codex-acp` | `OPENAI_API_KEY`, then authenticate with `openai-api-key` |
| `gemini` | Gemini CLI | `npm install -g @google/gemini-cli` | `GEMINI_API_KEY`, or Google login |
| `qwen-code` | Qwen Code | `npm install -g @qwen-code/qwen-code` | authenticate with `openai` plus `OPENAI_API_KEY`/`OPENAI_BASE_URL` |
| `opencode` | OpenCode | `npm install -g opencode-ai` | `opencode auth login` or a provider in `opencode.json` |
| `fast-agent` | fast-agent | `uv tool install fast-agent-mcp` (Python ≥ 3.12) | pick a model: `--model` / `FAST_AGENT_MODEL` |
| `goose` | goose | the `goose` binary from its releases | `goose configure` |
| `copilot` | GitHub Copilot | `npm install -g @github/copilot` | `copilot` login once, or `GH_TOKEN` |

A preset prefers an installed binary, then `npx` / `uvx`. Agents start with the kernel's full
environment, so API keys set before Jupyter started reach them."""),
        code("%load_ext acp_notebook"),
        code("# NBVAL_IGNORE_OUTPUT\n# (depends on what is installed here)\n%acp --agents"),
        md("""
## Diagnose an agent

From a terminal, `acp-notebook doctor --agent claude` starts the agent and reports the command it
ran, its protocol version, capabilities, auth methods, and whether a session can be created, with a
hint for each failure."""),
        code("# NBVAL_IGNORE_OUTPUT\n# (timings differ)\n!acp-notebook doctor --agent demo"),
        md("""
## Talk to one

```python
%acp -a claude What does utils.py do?
%config AcpMagics.agent = "gemini"      # the default for this kernel
```

If an agent needs you to log in, the cell says so with the agent's own message and the methods it
offers."""),
        code(
            "# NBVAL_SKIP\n# (needs Claude Agent and an account)\n%acp -a claude Say hello in five words."
        ),
        code(
            "# NBVAL_SKIP\n# (needs Gemini CLI and an API key)\n%acp -a gemini Say hello in five words."
        ),
        code(
            "# NBVAL_SKIP\n# (needs Codex and an API key)\n%acp -a codex Say hello in five words."
        ),
        code(
            '# NBVAL_SKIP\n# (needs fast-agent; passthrough echoes, no account)\n%acp -a "fast-agent --no-update-check acp --model passthrough" Say hello.'
        ),
    ]
    return new_notebook(
        cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}}
    )


NOTEBOOK_BUILDERS = {
    "quickstart.ipynb": quickstart,
    "protocol_tour.ipynb": protocol_tour,
    "data_analysis.ipynb": data_analysis,
    "real_agents.ipynb": real_agents,
}


def execute(path: Path) -> None:
    from nbclient import NotebookClient

    class AsNbval(NotebookClient):
        """Runs every cell as nbval does, without storing history (no ``In``/``Out``, no
        new execution count): the stored outputs are what nbval's own run produces."""

        async def async_execute_cell(
            self,
            cell: nbformat.NotebookNode,
            cell_index: int,
            execution_count: int | None = None,
            store_history: bool = True,
        ) -> nbformat.NotebookNode:
            return await super().async_execute_cell(
                cell, cell_index, execution_count, store_history=False
            )

    nb = nbformat.read(path, as_version=4)
    # nbval never runs NBVAL_SKIP cells (they need a real agent): neither do we.
    skipped = {
        i: cell.source
        for i, cell in enumerate(nb.cells)
        if "# NBVAL_SKIP" in cell.source.splitlines()
    }
    for i in skipped:
        nb.cells[i].source = ""
    # A state directory of its own, as nbval's run gets (conftest.py): the demo agent's
    # session ids (demo-session-1) do not depend on earlier runs or other notebooks.
    with tempfile.TemporaryDirectory(prefix="acp-notebook-build-") as state:
        os.environ["XDG_STATE_HOME"] = state
        AsNbval(
            nb,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    for i, source in skipped.items():
        nb.cells[i].source = source
        nb.cells[i].outputs = []
        nb.cells[i].execution_count = None
    # Outputs nbval ignores depend on the machine (paths, pids, timing): not committed.
    for cell in nb.cells:
        if cell.cell_type == "code" and "# NBVAL_IGNORE_OUTPUT" in cell.source.splitlines():
            cell.outputs = []
    nbformat.write(nb, path)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-run", action="store_true", help="write the sources only")
    parser.add_argument("names", nargs="*", help="only these notebooks")
    args = parser.parse_args()
    NOTEBOOKS.mkdir(exist_ok=True)
    for name, build in NOTEBOOK_BUILDERS.items():
        if args.names and name not in args.names:
            continue
        path = NOTEBOOKS / name
        nb = build()
        nbformat.validate(nb)
        nbformat.write(nb, path)
        if not args.no_run:
            print("executing", name, flush=True)
            execute(path)
        print("wrote", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
