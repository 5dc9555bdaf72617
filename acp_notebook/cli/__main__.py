"""``python -m acp_notebook.cli ARGS``: the ``acp-notebook`` command."""

from . import entry

entry()
