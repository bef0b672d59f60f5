"""envelock: compose retrieved content into envelopes no body can leave.

See docs/design.md, README.md and SECURITY.md. This module only re-exports.
"""

from .common import Envelope, Finding, Location, Problem, Transformation
from .compose import compose_preface, entries_of
from .entry import PrefaceEntry, stamp
from .errors import EnvelockError, EnvelopeBreach, InvalidEntry, NestingError
from .escape import LEVELS, defang, undefang
from .nesting import Preface
from .parse import parse_preface
from .policy import Envelock
from .provenance import HYGIENE_RULE, Trust, trust_of
from .scan import scan_text
from .tokens import RESERVED_NAMES
from .verify import Verification, verify_preface

__version__ = "0.1.0"

__all__ = [
    "HYGIENE_RULE",
    "LEVELS",
    "RESERVED_NAMES",
    "Envelock",
    "EnvelockError",
    "Envelope",
    "EnvelopeBreach",
    "Finding",
    "InvalidEntry",
    "Location",
    "NestingError",
    "Preface",
    "PrefaceEntry",
    "Problem",
    "Transformation",
    "Trust",
    "Verification",
    "__version__",
    "compose_preface",
    "defang",
    "entries_of",
    "parse_preface",
    "scan_text",
    "stamp",
    "trust_of",
    "undefang",
    "verify_preface",
]
