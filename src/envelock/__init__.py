"""envelock: compose retrieved content into envelopes no body can leave.

See docs/design.md, README.md and SECURITY.md. This module only re-exports.
"""

from ._version import __version__
from .envelope.compose import compose_preface, entries_of
from .envelope.entry import PrefaceEntry, stamp
from .envelope.hygiene import HYGIENE_RULE, hygiene_rule
from .envelope.nesting import Preface
from .envelope.parse import parse_preface
from .envelope.policy import Envelock
from .envelope.provenance import Trust, trust_of
from .envelope.spotlight import SPOTLIGHT_MODES, new_nonce
from .envelope.verify import Verification, verify_preface
from .errors import EnvelockError, EnvelopeBreach, InvalidEntry, InvalidOption, NestingError
from .eye.escape import LEVELS, defang, undefang
from .eye.load_tokens import TokenizerFileError, Tokens, load_tokens
from .eye.tokens import RESERVED_NAMES
from .scan import scan_text
from .types import Envelope, Finding, Location, Problem, Spotlight, Transformation

__all__ = [
    "HYGIENE_RULE",
    "LEVELS",
    "RESERVED_NAMES",
    "SPOTLIGHT_MODES",
    "Envelock",
    "EnvelockError",
    "Envelope",
    "EnvelopeBreach",
    "Finding",
    "InvalidEntry",
    "InvalidOption",
    "Location",
    "NestingError",
    "Preface",
    "PrefaceEntry",
    "Problem",
    "Spotlight",
    "TokenizerFileError",
    "Tokens",
    "Transformation",
    "Trust",
    "Verification",
    "__version__",
    "compose_preface",
    "defang",
    "entries_of",
    "hygiene_rule",
    "load_tokens",
    "new_nonce",
    "parse_preface",
    "scan_text",
    "stamp",
    "trust_of",
    "undefang",
    "verify_preface",
]
