"""LangChain: retrieved ``Document`` lists into a verified preface, and a scanning document transformer.

Needs ``pip install 'envelock[langchain]'`` (``langchain-core``).

* :class:`DocumentsToPreface` is a ``Runnable[Sequence[Document], Preface]``: it goes where a
  ``format_docs`` function or a stuff-documents prompt goes in an LCEL chain
  (``{"preface": retriever | DocumentsToPreface(), "question": RunnablePassthrough()}``). Each
  document becomes one envelope, in order; the result is composed with ``verify=True``.
* :func:`preface_prompt` is the prompt that puts the preface where the pattern says: the hygiene
  rule (``preface.hygiene_rule()``) first in the system message, the preface as a synthetic first
  user message followed by an assistant acknowledgement, then the stored history (optional) and
  the question. The preface is rebuilt by the chain every turn; only ``history`` is yours to store.
* :class:`ScanDocuments` is a ``BaseDocumentTransformer`` (and a ``Runnable``) that runs
  :func:`envelock.scan_text` over each ``page_content`` and records the findings in
  ``metadata["envelock_findings"]`` (a list of ``Finding.as_dict()``, empty when clean); with
  ``on_finding="drop"`` documents with a finding at or above ``threshold`` are dropped, with
  ``"fail"`` they raise :class:`~envelock.integrations.common.FindingsRefused`.

**Mapping** (:data:`LANGCHAIN_MAP`): ``origin`` from ``metadata["origin"]``, else
``metadata["source"]`` (where LangChain's loaders put the URL or file path); a document with
neither raises :class:`~envelock.integrations.common.MissingMetadata` naming the document index
and the key. ``source`` (the provenance tier) from ``metadata["provenance"]``, ``external`` when
absent; a value outside the trust tiers is refused (``InvalidEntry``, ``strict_provenance``).
``fetched_at`` from ``metadata["fetched_at"]``, or the ``clock`` for documents without one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from envelock import Envelock, Preface, PrefaceEntry

from .common import (
    ACKNOWLEDGEMENT,
    FINDINGS_KEY,
    STRICT_POLICY,
    FindingsRefused,
    InvalidDocument,
    MetadataMap,
    OnFinding,
    Severity,
    check_on_finding,
    checked_preface,
    findings_at_or_above,
    missing_extra,
)

try:
    from langchain_core.documents import BaseDocumentTransformer, Document
    from langchain_core.prompt_values import PromptValue
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
except ImportError as exc:  # an optional extra, never a dependency of envelock
    raise missing_extra(__name__, "langchain-core", "langchain", exc) from exc

__all__ = ["LANGCHAIN_MAP", "DocumentsToPreface", "ScanDocuments", "documents_to_entries", "preface_prompt"]

#: LangChain's loaders put the URL or path in ``metadata["source"]``: it is the *origin*, not a tier.
LANGCHAIN_MAP = MetadataMap(origin=("origin", "source"))


def documents_to_entries(
    documents: Sequence[Document],
    *,
    mapping: MetadataMap = LANGCHAIN_MAP,
    clock: Callable[[], datetime] | None = None,
) -> list[PrefaceEntry]:
    """One :class:`~envelock.PrefaceEntry` per document, in order (see the module's mapping).

    ``clock`` (called once) gives ``fetched_at`` to the documents whose metadata has none.
    """
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise InvalidDocument(None, f"expected a sequence of Document, got {type(documents).__name__}")
    now = clock() if clock is not None else None
    entries: list[PrefaceEntry] = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise InvalidDocument(i, f"expected a langchain_core Document, got {type(doc).__name__}")
        entry = mapping.entry(doc.metadata, doc.page_content, index=i)
        if entry.fetched_at is None and now is not None:
            entry = replace(entry, fetched_at=now)
        entries.append(entry)
    return entries


class DocumentsToPreface(Runnable[Sequence[Document], Preface]):
    """``Sequence[Document]`` -> a verified :class:`~envelock.Preface` (one envelope per document).

    ``mapping``: which metadata keys give origin, provenance and fetch time (:data:`LANGCHAIN_MAP`);
    ``policy``: the :class:`~envelock.Envelock` to compose with (level, spotlighting, nonce;
    default: defaults with ``strict_provenance=True``); ``clock``: ``fetched_at`` for documents
    without one. Errors: :class:`~envelock.integrations.common.MissingMetadata` /
    :class:`~envelock.integrations.common.InvalidMetadata` (document index and key),
    :class:`~envelock.InvalidEntry` (entry index = document index, and field).
    """

    def __init__(
        self,
        *,
        mapping: MetadataMap = LANGCHAIN_MAP,
        policy: Envelock = STRICT_POLICY,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not isinstance(mapping, MetadataMap):
            raise TypeError(f"mapping must be a MetadataMap, got {type(mapping).__name__}")
        if not isinstance(policy, Envelock):
            raise TypeError(f"policy must be an envelock.Envelock, got {type(policy).__name__}")
        self.mapping = mapping
        self.policy = policy
        self.clock = clock

    def compose(self, documents: Sequence[Document]) -> Preface:
        """The preface of ``documents`` (what :meth:`invoke` returns, without LangChain's callbacks)."""
        entries = documents_to_entries(documents, mapping=self.mapping, clock=self.clock)
        return self.policy.compose(entries, verify=True)

    def invoke(self, input: Sequence[Document], config: RunnableConfig | None = None, **kwargs: Any) -> Preface:
        return self._call_with_config(self.compose, input, config)


class ScanDocuments(BaseDocumentTransformer, Runnable[Sequence[Document], list[Document]]):
    """Scan each document's ``page_content`` and record the findings in its metadata.

    Returns new ``Document`` objects (the input is not modified) whose ``metadata[key]`` is the
    list of ``Finding.as_dict()`` (``[]`` when clean: the key says the document was scanned).
    ``on_finding``: ``keep`` (record only), ``drop`` (leave out documents with a finding at or
    above ``threshold``) or ``fail`` (raise :class:`~envelock.integrations.common.FindingsRefused`
    naming the document index and id). ``policy`` gives the reserved names and disabled rules.
    """

    def __init__(
        self,
        on_finding: OnFinding = "keep",
        *,
        threshold: Severity = "error",
        policy: Envelock = STRICT_POLICY,
        key: str = FINDINGS_KEY,
    ) -> None:
        check_on_finding(on_finding, threshold)
        self.on_finding: OnFinding = on_finding
        self.threshold: Severity = threshold
        self.policy = policy
        self.key = key

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        out: list[Document] = []
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise InvalidDocument(i, f"expected a langchain_core Document, got {type(doc).__name__}")
            findings = self.policy.scan(doc.page_content)
            over = findings_at_or_above(findings, self.threshold)
            if over and self.on_finding == "fail":
                raise FindingsRefused(i, over, doc.id)
            if over and self.on_finding == "drop":
                continue
            metadata = {**doc.metadata, self.key: [f.as_dict() for f in findings]}
            out.append(doc.model_copy(update={"metadata": metadata}))
        return out

    def invoke(self, input: Sequence[Document], config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return self._call_with_config(self.transform_documents, input, config)


def _braces(text: str) -> str:
    """``text`` as a literal inside an f-string prompt template."""
    return text.replace("{", "{{").replace("}", "}}")


def preface_prompt(
    instructions: str = "",
    *,
    acknowledgement: str | None = ACKNOWLEDGEMENT,
    history: bool = False,
    policy: Envelock = STRICT_POLICY,
) -> Runnable[dict[str, Any], PromptValue]:
    """The chat prompt for a turn: input ``{"preface": Preface, "question": str[, "history": messages]}``.

    Messages: system = the preface's hygiene rule, a blank line and ``instructions`` (the rule
    first: a byte-stable prefix a provider can cache); human = the preface (verified again here:
    :class:`~envelock.EnvelopeBreach` if it does not); ai = ``acknowledgement`` (``None``: no
    assistant turn); then ``history`` when ``history=True``; human = the question. Braces in
    ``instructions`` and ``acknowledgement`` are literal text, and so is everything the preface
    and the question hold (template variables are substituted, never re-read as a template).
    """
    system = "{hygiene_rule}" + (f"\n\n{_braces(instructions)}" if instructions else "")
    messages: list[Any] = [("system", system), ("human", "{preface}")]
    if acknowledgement is not None:
        messages.append(("ai", _braces(acknowledgement)))
    if history:
        messages.append(MessagesPlaceholder("history"))
    messages.append(("human", "{question}"))
    template = ChatPromptTemplate.from_messages(messages)

    def with_rule(inputs: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(inputs, dict) or "preface" not in inputs:
            raise TypeError('preface_prompt expects a dict with a "preface" (and "question")')
        preface = checked_preface(inputs["preface"], policy)
        return {**inputs, "preface": str(preface), "hygiene_rule": preface.hygiene_rule()}

    return RunnableLambda(with_rule) | template
