"""Content-based fingerprints of findings: what SARIF ``partialFingerprints`` and baselines key on."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

from envelock.types import Finding, line_bounds

_WS_RE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def fingerprints(findings: Sequence[Finding], text: str) -> list[str]:
    """A content-based fingerprint per finding: a hash of the rule, the matched text and the
    text of its line(s), whitespace-normalised, plus the count of identical ones before it
    in the file (``<hash>:<n>``). It survives edits elsewhere in the file (lines moving,
    other findings appearing), unlike offsets, and changes when the finding's own line does
    (as GitHub recommends for ``partialFingerprints``)."""
    seen: Counter[str] = Counter()
    out: list[str] = []
    for f in findings:
        line_start = line_bounds(text, f.offset)[0]
        line_end = line_bounds(text, f.end_offset)[1]
        context = text[max(line_start, f.offset - 200) : min(line_end, f.end_offset + 200)]
        matched = text[f.offset : min(f.end_offset, f.offset + 400)]
        digest = hashlib.sha256("\0".join((f.rule, _norm(matched), _norm(context))).encode("utf-8", "surrogatepass")).hexdigest()
        key = digest[:32]
        out.append(f"{key}:{seen[key]}")
        seen[key] += 1
    return out
