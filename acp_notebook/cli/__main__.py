"""``python -m acp_notebook.cli ARGS``: the ``acp-notebook`` command."""

import sys

from . import main

sys.exit(main())
