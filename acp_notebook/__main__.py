"""``python -m acp_notebook`` is the ``acp-notebook`` command."""

import sys

from .cli import main

sys.exit(main())
