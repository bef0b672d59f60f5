"""The ``envelock`` command (``envelock compose|wrap|verify|scan``); ``main(argv)`` runs it in-process."""

from .main import main

__all__ = ["main"]
