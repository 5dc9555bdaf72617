"""``python -m acp_notebook`` is the ``acp-notebook`` command."""

from .cli import entry

entry()
