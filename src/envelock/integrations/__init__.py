"""Integrations with data engines (optional extras; nothing here is imported by ``envelock`` itself).

:mod:`envelock.integrations.ray`: scan a Ray Data dataset in Arrow batches (``envelock[ray]``).
"""
