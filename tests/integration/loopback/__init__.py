"""A loopback model for the real agents (:mod:`.server`)."""

from .server import Call, LoopbackModel, Script, serve

__all__ = ["Call", "LoopbackModel", "Script", "serve"]
