"""Baselines: the findings of an earlier ``envelock scan --format json`` report, not reported again.

A finding matches a baseline entry when its path, rule and content fingerprint
(:mod:`envelock.scan.fingerprints`) are equal; each entry matches once. :func:`suppress` gives the
findings of one input (or row) after the baseline, so that its result is built whole.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..types import Finding
from .read import PIPE_TIMEOUT, read_input, reason
from .report import JSON_SCHEMA_ID, Suppressed
from .walk import real


def baseline_path(path: str) -> str:
    """The path key of a baseline entry: normalised, relative to the working directory when inside it."""
    if path.startswith("<"):
        return path
    p = Path(path)
    try:
        return real(p).relative_to(real(Path.cwd())).as_posix()
    except (ValueError, OSError):
        return Path(os.path.normpath(path)).as_posix()


class Baseline:
    """Findings of an earlier ``--format json`` report, to leave out of this one.

    A finding matches when its path, rule and fingerprint equal a baseline entry's; each
    entry matches once (three identical findings against a baseline of two report one).
    """

    def __init__(self, entries: Iterable[tuple[str, str, str]]) -> None:
        self._left: Counter[tuple[str, str, str]] = Counter(entries)
        self.total = sum(self._left.values())

    @classmethod
    def load(cls, path: str, pipe_timeout: float = PIPE_TIMEOUT) -> Baseline:
        """Read a baseline; raises ``ValueError`` (with the reason) when it is not an envelock JSON report.
        Read as every input is (:func:`read_input`: a named pipe with no writer times out, stop 51; a
        UTF-8 BOM is allowed)."""
        try:
            doc = json.loads(read_input(path, pipe_timeout=pipe_timeout).decode("utf-8-sig"))
        except OSError as e:
            raise ValueError(f"cannot read baseline {path}: {reason(e)}") from e
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"baseline {path} is not JSON: {e}") from e
        except RecursionError:
            raise ValueError(f"baseline {path} is not JSON: nested too deeply to be read") from None
        if not isinstance(doc, dict) or doc.get("schema") != JSON_SCHEMA_ID or not isinstance(doc.get("findings"), list):
            raise ValueError(f"baseline {path} is not an envelock JSON report (envelock scan --format json)")
        suppressed = doc.get("suppressed", [])
        if not isinstance(suppressed, list):
            raise ValueError(f"baseline {path}: 'suppressed' is not a list")
        entries: list[tuple[str, str, str]] = []
        for item in [*doc["findings"], *suppressed]:
            if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("path", "rule", "fingerprint")):
                raise ValueError(f"baseline {path}: a finding without path, rule and fingerprint: {item!r}"[:300])
            entries.append((baseline_path(item["path"]), item["rule"], item["fingerprint"]))
        return cls(entries)

    def take(self, path: str, rule: str, fp: str) -> bool:
        """Does the baseline hold this finding (and one fewer from now on)?"""
        key = (baseline_path(path), rule, fp)
        if self._left[key] > 0:
            self._left[key] -= 1
            return True
        return False

    def split(
        self, path: str, findings: Sequence[Finding], prints: Sequence[str]
    ) -> tuple[tuple[Finding, ...], tuple[str, ...], tuple[Suppressed, ...]]:
        """(kept findings, their fingerprints, the findings the baseline holds as suppressed)."""
        kept: list[Finding] = []
        kept_fp: list[str] = []
        gone: list[Suppressed] = []
        for f, fp in zip(findings, prints, strict=True):
            if self.take(path, f.rule, fp):
                gone.append(Suppressed(f, fp, "baseline"))
            else:
                kept.append(f)
                kept_fp.append(fp)
        return tuple(kept), tuple(kept_fp), tuple(gone)


def suppress(
    path: str, findings: Sequence[Finding], prints: Sequence[str], suppressed: Sequence[Suppressed], baseline: Baseline | None
) -> tuple[tuple[Finding, ...], tuple[str, ...], tuple[Suppressed, ...]]:
    """The findings of one input (or row) after the baseline: kept, their fingerprints, every suppressed one
    (``suppressed``, already left out inline, first)."""
    if baseline is None:
        return tuple(findings), tuple(prints), tuple(suppressed)
    kept, kept_fp, gone = baseline.split(path, findings, prints)
    return kept, kept_fp, (*suppressed, *gone)
