"""The command line of ``envelock``: one :mod:`argparse` parser for the four commands (docs/cli.md)."""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
from typing import Any

from .._version import __version__
from ..envelope.nesting import NESTING_POLICIES
from ..envelope.spotlight import SPOTLIGHT_MODES, check_marker, check_nonce
from ..errors import InvalidOption
from ..eye.backend import implementation
from ..eye.escape import LEVELS
from ..eye.load_tokens import TokenizerFileError, Tokens, load_tokens, tokens_of_file_bytes
from ..scan.rules import RULES_BY_ID, SEVERITIES
from .exits import EXIT_USAGE
from .read import PIPE_TIMEOUT, read_input, reason

#: The documentation, shipped in the sdist and online.
DOCS_URL = "https://github.com/envelock/envelock/blob/main/docs/cli.md"
EPILOG = f"Exit codes: 0 clean, 1 findings/problems, 2 usage or I/O error. Documentation: docs/cli.md ({DOCS_URL})."
COMMANDS = ("scan", "verify", "compose", "wrap")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 on usage errors; keep it, with our prefix
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"envelock: error: {message}\n")


def _rule_id(value: str) -> str:
    if value not in RULES_BY_ID:
        raise argparse.ArgumentTypeError(f"unknown rule id {value!r} (see docs/cli.md#rules)")
    return value


def _nonce(value: str) -> str:
    if value == "new":
        return value
    try:
        return check_nonce(value)
    except InvalidOption as e:
        raise argparse.ArgumentTypeError(e.reason) from None


def _verify_nonce(value: str) -> str:
    if value == "new":
        raise argparse.ArgumentTypeError("'new' only makes sense when composing; give the turn's nonce")
    return _nonce(value)


def _marker(value: str) -> str:
    try:
        return check_marker(value)
    except InvalidOption as e:
        raise argparse.ArgumentTypeError(e.reason) from None


def _file_name(value: str) -> str:
    """A name to report stdin as: not empty (an empty name is the URI ``.``, the root itself)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _seconds(value: str) -> float:
    try:
        s = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not math.isfinite(s) or s <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return s


def _tokenizer(value: str) -> Tokens:
    try:
        if _is_pipe(value):
            # Read as every input is, with the default timeout (``--pipe-timeout`` is not parsed yet): a
            # named pipe with no writer blocked forever (stop 51, a CLI-probe find).
            try:
                raw = read_input(value)
            except OSError as e:
                raise argparse.ArgumentTypeError(f"tokenizer {value!r}: cannot be read: {reason(e)}") from None
            return tokens_of_file_bytes(raw, value)
        return load_tokens(value)
    except TokenizerFileError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _is_pipe(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False  # load_tokens says why it cannot be read


class _TokensUnion(argparse.Action):
    """``--tokenizer`` may be given more than once: the tokens of every file, together."""

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, option: str | None = None) -> None:
        before = getattr(ns, self.dest, None)
        setattr(ns, self.dest, value if before is None else before | value)


def _common(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    p.add_argument("--version", action="version", version=f"envelock {__version__} ({implementation()})")
    p.add_argument(
        "--tokenizer",
        type=_tokenizer,
        action=_TokensUnion,
        default=None,
        metavar="PATH",
        help="also the control tokens of this tokenizer.json or tekken.json (repeatable): escaped, verified, scanned",
    )
    p.add_argument("--format", choices=formats, default="text", help="output format (default text)")
    p.add_argument("--stdin-filename", type=_file_name, default="<stdin>", metavar="NAME", help="name to report for '-'")
    p.add_argument(
        "--pipe-timeout",
        type=_seconds,
        default=PIPE_TIMEOUT,
        metavar="SECONDS",
        help=f"a named pipe that sends no data for this long is an error (default {PIPE_TIMEOUT:g})",
    )


def _walking(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("walking directories")
    g.add_argument("--include", action="append", default=[], metavar="GLOB", help="only files matching (repeatable)")
    g.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and prune directories matching (repeatable)",
    )
    g.add_argument(
        "--no-default-excludes",
        action="store_true",
        help="also walk .git, .venv, node_modules, __pycache__, tool caches and virtual environments",
    )
    g.add_argument("--no-gitignore", action="store_true", help="do not apply .gitignore files (applying them needs pathspec)")
    g.add_argument(
        "--follow-symlinks", action="store_true", help="walk symbolic links to directories (reported as skipped otherwise)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only: no skipped files, notes, summary or progress")
    p.add_argument("--srcroot", metavar="DIR", help="SARIF %%SRCROOT%% (default: the working directory)")
    p.add_argument(
        "--allow-empty", action="store_true", help="exit 0 when no file was read (else exit 2: a gate that read nothing fails)"
    )


def _columnar(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("columnar input (Parquet, JSON Lines): one document per row")
    g.add_argument("--column", "--field", dest="column", metavar="NAME", help="the text column (Parquet) or field (JSON Lines)")
    g.add_argument(
        "--id-column", "--id-field", dest="id_column", metavar="NAME", help="a column/field naming each row in reports"
    )
    g.add_argument("--jsonl", action="store_true", help="read JSON Lines (one object per line; also '-'); else by suffix")


def _composing(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", choices=LEVELS, default="reserved", help="defang level (default reserved)")
    p.add_argument("--verify", action="store_true", help="verify the output against the entries (exit 1 on a problem)")
    p.add_argument(
        "--strict-provenance",
        action="store_true",
        help="refuse a source that is not a trust tier or a content key of a known kind (exit 2)",
    )
    p.add_argument(
        "--spotlight", choices=SPOTLIGHT_MODES, help="transform every text body: datamark, interleave, base64 (default none)"
    )
    p.add_argument("--marker", type=_marker, help="the datamark/interleave marker (default: one chosen per turn)")
    p.add_argument("--nonce", type=_nonce, help="write this nonce on every envelope ('new': a fresh one from secrets)")
    p.add_argument(
        "--hygiene-out", metavar="FILE", help="write the matching system-prompt text (marker and nonce included) to FILE"
    )
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the output to FILE (exactly the preface's bytes) instead of stdout",
    )
    _common(p, ("text", "json"))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="envelock",
        description="Security gate for retrieved content: scan raw text, verify composed prefaces, compose entries, wrap a file.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"envelock {__version__} ({implementation()})")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    scan = sub.add_parser(
        "scan",
        help="report hostile constructs in raw retrieved text",
        description="Report hostile constructs in raw retrieved text.",
        epilog=EPILOG,
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (walked recursively) or '-'")
    scan.add_argument("--fail-on", choices=SEVERITIES, default="error", help="lowest severity that fails (default error)")
    scan.add_argument(
        "--fail-on-skip", action="store_true", help="exit 1 when a file was skipped (binary, special, a link not followed)"
    )
    scan.add_argument("--jobs", "-j", type=_positive, default=1, metavar="N", help="worker processes (default 1)")
    scan.add_argument("--baseline", metavar="FILE", help="leave out findings listed in this earlier --format json report")
    scan.add_argument(
        "--no-inline-ignore", action="store_true", help="report findings that envelock: ignore[rule] comments suppress"
    )
    scan.add_argument(
        "--disable", action="append", default=[], type=_rule_id, metavar="RULE", help="rule id not to report (repeatable)"
    )
    _common(scan, ("text", "json", "sarif"))
    _walking(scan)
    _columnar(scan)

    verify = sub.add_parser(
        "verify",
        help="check composed prefaces with verify_preface",
        description="Check composed prefaces with verify_preface.",
        epilog=EPILOG,
    )
    verify.add_argument("paths", nargs="+", metavar="FILE", help="files, directories or '-'")
    verify.add_argument(
        "--level", choices=LEVELS, default="reserved", help="level the prefaces were composed at (default reserved)"
    )
    verify.add_argument(
        "--nonce", type=_verify_nonce, help="every envelope must carry this nonce (problems nonce-missing, nonce-mismatch)"
    )
    verify.add_argument(
        "--spotlight", choices=SPOTLIGHT_MODES, help="every text body must use this transform (problem spotlight-mismatch)"
    )
    _common(verify, ("text", "json", "sarif"))
    _walking(verify)
    _columnar(verify)
    verify.set_defaults(jobs=1)

    compose = sub.add_parser(
        "compose",
        help="compose a JSON array / JSON Lines of entries into a preface",
        description="Compose a JSON array or JSON Lines of entries {source, origin, body, fetched_at?} into a preface.",
        epilog=EPILOG,
    )
    compose.add_argument("file", metavar="FILE", help="JSON file or '-'")
    compose.add_argument("--nesting", choices=NESTING_POLICIES, default="allow", help="array bodies nest (default allow)")
    _composing(compose)

    wrap = sub.add_parser(
        "wrap",
        help="compose one plain text file into a preface",
        description="Compose one plain text file (or '-') into a one-envelope preface, without writing JSON.",
        epilog=EPILOG,
    )
    wrap.add_argument("file", metavar="FILE", help="text file or '-' (the body, as is)")
    wrap.add_argument(
        "--source", required=True, help="provenance: a trust tier or a content key (e.g. external, web:https://...)"
    )
    wrap.add_argument("--origin", required=True, help="where the text came from (e.g. web:https://a.example/)")
    wrap.add_argument("--fetched-at", metavar="ISO8601", help="when it was fetched, with an offset (e.g. 2026-11-29T21:29:03Z)")
    _composing(wrap)
    wrap.set_defaults(nesting="allow")
    return parser
