"""The package version, in a leaf module that any layer may import."""

__version__ = "0.1.0"
