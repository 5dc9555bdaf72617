"""From a ``%acp`` line to its session: what the line does (``line.py``), a turn as the main
thread holds it (``handle.py``) and as it runs on the agent loop (``run.py``), logging in
during a turn, ``--dry-run``, and the status of widget messages while a cell awaits its turn."""
