"""Environment variables meant for this process alone, never for the processes it starts.

Some libraries are configured only through the environment. ``acp-notebook run`` sets
pydantic's documented ``PYDANTIC_DISABLE_PLUGINS`` for itself (see :mod:`..cli.run`): the
agent and the commands it runs are the user's programs, whose environment stays theirs. So
every process this package starts takes its environment from :func:`for_children`, which
leaves out what :func:`set_own` added.
"""

import os

__all__ = ["for_children", "set_own"]

#: name -> value of the variables set_own() added (the user had not set them).
_OWN: dict[str, str] = {}


def set_own(name: str, value: str) -> None:
    """Set ``name`` to ``value`` in this process only, unless the user set it already."""
    if name in os.environ:
        return
    os.environ[name] = value
    _OWN[name] = value


def for_children() -> dict[str, str]:
    """This process's environment as a process it starts should get it: without the
    variables :func:`set_own` added (unless something changed them since)."""
    env = dict(os.environ)
    for name, value in _OWN.items():
        if env.get(name) == value:
            del env[name]
    return env
