"""The kernel's agents: the agent loop thread, one runtime per agent, its process (started
early for the first prompt), what each session is doing, what the notebook remembers, the
folder's MCP servers, and read-only snapshots for other threads."""
