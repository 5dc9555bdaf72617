"""The notebook tools in a real kernel, called by the official MCP client through the relay.

What an agent sees of the user's notebook (variables, summaries, cells, the last error),
and run_code: approved code runs on the kernel's main thread — while the kernel is
idle, while a cell awaits, and while a cell blocks in the runner's wait (the headless
turn) — without a trace in the notebook's history; denied code does not run.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import mcp_types
import pytest

from tests.kernel.conftest import Kernel
from tests.tools.helpers import McpAgent, images_of, kernel_value, text_of, wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def test_the_server_offers_the_notebook_tools(agent: McpAgent) -> None:
    assert agent.tool_names() == [
        "list_variables",
        "inspect_variable",
        "run_code",
        "list_cells",
        "read_cell",
        "last_error",
    ]


def test_list_variables_gives_names_types_shapes_and_sizes(kernel: Kernel, agent: McpAgent) -> None:
    kernel.text(
        "import numpy as np\nimport pandas as pd\n"
        "stock = pd.DataFrame({'item': ['a', None, 'c'], 'count': [1.0, None, 3.0]})\n"
        "grid = np.zeros((1000, 3))"
    )
    text = text_of(agent.call("list_variables"))
    assert "- `stock`: DataFrame 3×2" in text
    assert "- `grid`: ndarray float64 (1000, 3), 24,000 bytes" in text
    # Modules and names starting with "_" (IPython's, the test's setup) are not variables.
    assert "`np`" not in text
    assert "_tools" not in text


def test_list_variables_names_a_matplotlib_axes_as_axes(kernel: Kernel, agent: McpAgent) -> None:
    # `fig, ax = plt.subplots()` was listed as two Figures, `ax` included.
    kernel.text(
        "from matplotlib.figure import Figure\n"
        "chart_fig = Figure(figsize=(4, 3), dpi=100)\nchart_ax = chart_fig.add_subplot()"
    )
    text = text_of(agent.call("list_variables"))
    assert "- `chart_fig`: Figure 400×300 px, 1 axes" in text
    assert "- `chart_ax`: Axes of a Figure 400×300 px, 1 axes" in text


def test_inspect_variable_summarises_a_dataframe(kernel: Kernel, agent: McpAgent) -> None:
    kernel.text(
        "import pandas as pd\n"
        "sales = pd.DataFrame({'region': ['north', None, 'south'], 'amount': [1.5, 2.0, None]})"
    )
    result = agent.call("inspect_variable", {"name": "sales"})
    text = text_of(result)
    assert not result.is_error
    assert "`sales`: DataFrame 3×2" in text
    assert "- `amount`: float64, 1 null" in text
    assert "0,north,1.5\n1,,2.0\n2,south," in text
    assert "describe():" in text


def test_inspect_variable_follows_attributes_and_literal_keys(
    kernel: Kernel, agent: McpAgent
) -> None:
    kernel.text("settings = {'paths': {'data': '/srv/data'}}")
    assert "/srv/data" in text_of(agent.call("inspect_variable", {"name": "settings['paths']"}))
    call = agent.call("inspect_variable", {"name": "settings.get('paths')"})
    assert call.is_error  # a call is never evaluated


def test_inspect_variable_gives_a_figure_as_an_image(kernel: Kernel, agent: McpAgent) -> None:
    kernel.text(
        "import matplotlib.pyplot as plt\n"
        "chart, axes = plt.subplots()\naxes.plot([1, 3, 2])\naxes.set_title('trend')\n"
        "plt.close(chart)"
    )
    result = agent.call("inspect_variable", {"name": "chart"})
    [png] = images_of(result)
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    assert "title 'trend'" in text_of(result)


def test_inspect_variable_gives_the_source_of_code_defined_in_cells(
    kernel: Kernel, agent: McpAgent
) -> None:
    kernel.text("def tidy(rows):\n    return [r.strip() for r in rows]")
    kernel.text("class Loader:\n    def load(self):\n        return 1")
    assert text_of(agent.call("inspect_variable", {"name": "tidy"})) == (
        "`tidy`: function tidy() (text/x-python)\n\n"
        "def tidy(rows):\n    return [r.strip() for r in rows]\n"
    )
    loader = text_of(agent.call("inspect_variable", {"name": "Loader"}))
    assert loader.endswith("class Loader:\n    def load(self):\n        return 1\n")


def test_inspect_variable_of_an_unknown_name_says_so(agent: McpAgent) -> None:
    result = agent.call("inspect_variable", {"name": "no_such_thing"})
    assert result.is_error
    assert text_of(result) == (
        "The notebook has no variable `no_such_thing`; list_variables gives the names."
    )


def test_approved_code_runs_on_the_main_thread_and_leaves_no_trace_in_history(
    kernel: Kernel, agent: McpAgent
) -> None:
    count, cells = kernel_value(kernel, "[get_ipython().execution_count, len(In)]")
    code = (
        "import threading\nmade_by_agent = 6 * 7\n"
        "print(threading.current_thread() is threading.main_thread())\nmade_by_agent"
    )
    result = agent.call("run_code", {"code": code})
    assert not result.is_error
    assert text_of(result) == "stdout:\nTrue\n\nvalue:\n42"
    # The next cell sees the variable; only that cell counts in the history.
    assert kernel_value(kernel, "[made_by_agent, get_ipython().execution_count, len(In)]") == [
        42,
        count + 1,
        cells + 1,
    ]
    # No cell before this one holds the agent's code.
    assert kernel_value(kernel, "[c for c in In[:-1] if 'made_by_agent = 6' in c]") == []
    asked = kernel_value(kernel, "[[r.session, r.tool, r.code] for r in _tools_asked]")
    assert asked[-1] == ["s1", "run_code", code]
    assert kernel_value(kernel, "[r.stdout for r in _tools_shown]")[-1] == "True\n"


def test_denied_code_does_not_run_and_the_agent_is_told_who_denied_it(
    kernel: Kernel, agent: McpAgent, policy: Callable[[str], None]
) -> None:
    policy("deny")
    result = agent.call("run_code", {"code": "denied_variable = 1"})
    assert result.is_error
    assert text_of(result) == "The code did not run: denied by the test's policy."
    assert kernel_value(kernel, "'denied_variable' in globals()") is False


def test_run_code_runs_while_a_cell_awaits(kernel: Kernel, agent: McpAgent) -> None:
    waiting = kernel.execute(
        "import asyncio\nprint('waiting', flush=True)\n"
        "while not globals().get('released'):\n    await asyncio.sleep(0.05)\n"
        "print('released')",
        until=lambda execution: "waiting" in execution.stdout,
    )
    result = agent.call("run_code", {"code": "released = True\n'from the agent'"})
    assert text_of(result) == "value:\n'from the agent'"
    waiting.wait("idle")
    assert waiting.stdout == "waiting\nreleased\n"
    assert not waiting.errors


def test_run_code_runs_while_a_cell_blocks_in_the_runners_wait(
    kernel: Kernel, agent: McpAgent
) -> None:
    # A headless turn blocks the main thread (TurnHandle.wait); the kernel's loop is
    # not running, so only the runner's wait can run the agent's code.
    blocked = kernel.execute(
        "import concurrent.futures\n_turn = concurrent.futures.Future()\n"
        "print('blocked', flush=True)\nprint(_tools_runner.wait(_turn, timeout=120))",
        allow_stdin=False,
        until=lambda execution: "blocked" in execution.stdout,
    )
    result = agent.call("run_code", {"code": "ran_while_blocked = True\n_turn.set_result(None)"})
    assert not result.is_error
    blocked.wait("idle")
    assert blocked.stdout == "blocked\nTrue\n"
    assert kernel_value(kernel, "ran_while_blocked") is True


def test_run_code_returns_streams_traceback_and_figures(kernel: Kernel, agent: McpAgent) -> None:
    code = (
        "import sys\nimport matplotlib.pyplot as plt\n"
        "print('to stdout')\nprint('to stderr', file=sys.stderr)\n"
        "plt.plot([1, 2, 3])\n"
        "def explode():\n    return 1 / 0\nexplode()"
    )
    result = agent.call("run_code", {"code": code})
    text = text_of(result)
    assert result.is_error
    assert "stdout:\nto stdout" in text
    assert "stderr:\nto stderr" in text
    assert "ZeroDivisionError: division by zero" in text
    assert "    return 1 / 0" in text  # the traceback shows the agent's source
    assert "execute.py" not in text  # and none of the tool's own frames
    [png] = images_of(result)
    assert base64.b64decode(png).startswith(b"\x89PNG")
    # The figure was closed: it does not show up under the user's next cell.
    after = kernel.execute("print(plt.get_fignums())", allow_stdin=False)
    assert after.stdout == "[]\n"
    assert not after.displays


def test_list_cells_read_cell_and_last_error(kernel: Kernel, agent: McpAgent) -> None:
    number = kernel_value(kernel, "len(In)")  # the number of the next cell
    kernel.execute("cell_total = 40\ncell_total + 2")
    failing = kernel.execute("def explode():\n    return 1 / 0\n\nexplode()")
    assert failing.errors
    listed = text_of(agent.call("list_cells"))
    assert f"- [{number}] cell_total = 40 (2 lines) → int" in listed
    cell = text_of(agent.call("read_cell", {"n": number}))
    assert "cell_total = 40\ncell_total + 2" in cell
    assert f"Out [{number}] (int):\n42" in cell
    error = text_of(agent.call("last_error"))
    assert "ZeroDivisionError: division by zero" in error
    assert f"It was raised in cell [{number + 1}]:" in error
    assert "def explode():\n    return 1 / 0" in error
    missing = agent.call("read_cell", {"n": 100_000})
    assert missing.is_error


def test_a_tool_registered_later_is_announced_and_callable(kernel: Kernel, agent: McpAgent) -> None:
    kernel.text(
        "from acp_notebook.notebook.tools import NotebookTool as _Tool, ToolResult as _Result\n"
        "async def _hello(ctx, arguments):\n"
        "    return _Result.text('hello from session ' + ctx.session)\n"
        "_unregister = _tools_server.registry.register(\n"
        "    _Tool('hello', 'Say hello.', {'type': 'object', 'properties': {}}, _hello))"
    )
    wait_until(
        lambda: any(
            isinstance(n, mcp_types.ToolListChangedNotification) for n in agent.notifications
        ),
        "notifications/tools/list_changed",
    )
    assert "hello" in agent.tool_names()
    assert text_of(agent.call("hello")) == "hello from session s1"
    kernel.text("_unregister()")
    assert "hello" not in agent.tool_names()


def test_arguments_the_schema_refuses_get_what_is_wrong_and_run_nothing(
    kernel: Kernel, agent: McpAgent
) -> None:
    kernel.text("ran_by_a_bad_call = False")
    missing = agent.call("run_code", {})
    assert missing.is_error
    assert text_of(missing) == (
        "Invalid arguments for run_code: the arguments must contain ['code'] properties"
    )
    wrong_type = agent.call("run_code", {"code": ["ran_by_a_bad_call = True"]})
    assert wrong_type.is_error
    assert text_of(wrong_type) == "Invalid arguments for run_code: code must be string"
    assert text_of(agent.call("read_cell", {"n": "1"})) == (
        "Invalid arguments for read_cell: n must be integer"
    )
    assert kernel_value(kernel, "ran_by_a_bad_call") is False


def test_a_tool_call_does_not_import_jsonschema_into_the_kernel(
    kernel: Kernel, agent: McpAgent
) -> None:
    # Importing jsonschema costs the kernel about a second of CPU (its URI format parser),
    # on the first tool call, for schemas that use none of it.
    kernel.text("import sys\nsys.modules.pop('jsonschema', None)")
    assert "Invalid arguments" in text_of(agent.call("inspect_variable", {}))
    assert text_of(agent.call("list_cells"))
    assert kernel_value(kernel, "'jsonschema' in sys.modules") is False
