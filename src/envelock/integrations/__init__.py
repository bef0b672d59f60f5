"""Integrations with data engines and LLM frameworks (optional extras; nothing here is imported by ``envelock`` itself).

:mod:`envelock.integrations.ray`: scan a Ray Data dataset in Arrow batches (``envelock[ray]``).

Where prompts are assembled (see docs/integrations.md): :mod:`~envelock.integrations.langchain`
(``envelock[langchain]``), :mod:`~envelock.integrations.llamaindex` (``envelock[llamaindex]``),
:mod:`~envelock.integrations.anthropic` (``envelock[anthropic]``), :mod:`~envelock.integrations.openai`
(``envelock[openai]``), :mod:`~envelock.integrations.mcp` (``envelock[mcp]``); what they share, with
no third-party import, is :mod:`~envelock.integrations.common`.
"""
