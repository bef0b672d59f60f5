"""The package version, in one place (read by the build and by ``envelock.__version__``)."""

__version__ = "0.2.0"
