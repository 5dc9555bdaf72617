"""The version of acp_notebook, in a leaf module that every layer may import."""

__version__ = "0.1.0"
