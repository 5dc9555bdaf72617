"""How long a cancelled turn waits for the agent to confirm, in a module of its own so the
command line can offer it without loading the session (and the protocol models)."""

#: Seconds a timed-out turn waits for the agent to answer its ``session/cancel``.
DEFAULT_CANCEL_GRACE = 10.0
