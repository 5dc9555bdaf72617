"""``python -m acp_notebook.agents.demo``: the demo agent on stdin/stdout."""

import sys

from .command import main

sys.exit(main())
