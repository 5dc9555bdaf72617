"""A kernel on a Jupyter Kernel Gateway (the gateway and server of ``test_gateway.py``,
started again for this module so the two run on separate workers) that the gateway shuts
down (what its culler does) or that is restarted leaves no agent, terminal or relay, and
``%acp --resume`` continues the notebook's session after the restart."""

from __future__ import annotations

from ..browser.conftest import NotebookPage
from . import test_gateway
from .lifecycle import Running, check_ended, check_restarted_then_resumed, wait_culled
from .servers import Gateway

# The same gateway and server as test_gateway.py's, started for this module.
gateway = test_gateway.gateway
lab_args = test_gateway.lab_args
_gateway_kernels_start_on_another_server = test_gateway._gateway_kernels_start_on_another_server


def test_a_kernel_the_gateway_shuts_down_leaves_no_agent_terminal_or_relay(
    notebook: NotebookPage, gateway: Gateway
) -> None:
    # The gateway's own culler needs cull_connected: the server keeps its websocket to the
    # gateway open after the page closed. Its cull is this shutdown, on an idle kernel.
    def end(running: Running) -> None:
        gateway.api("DELETE", f"/api/kernels/{running.kernel_id}")
        wait_culled(notebook, running.kernel_id)

    check_ended(notebook, end)


def test_a_kernel_restarted_through_the_gateway_leaves_nothing_and_resume_continues(
    notebook: NotebookPage,
) -> None:
    # JupyterLab 4.6's page stays at "Starting" after a restart through Kernel Gateway
    # 3.0.1 (its kernel websocket is not reopened); a page opened again gets the kernel.
    check_restarted_then_resumed(notebook, reload=True)
