"""envelock: compose retrieved content into envelopes no body can leave.

See docs/design.md, README.md and SECURITY.md. This module only re-exports.
"""

from ._version import __version__
from .common import Envelope, Finding, Location, Problem, Spotlight, Transformation
from .compose import compose_preface, entries_of
from .entry import PrefaceEntry, stamp
from .errors import EnvelockError, EnvelopeBreach, InvalidEntry, InvalidOption, NestingError
from .escape import LEVELS, defang, undefang
from .hygiene import HYGIENE_RULE, hygiene_rule
from .nesting import Preface
from .parse import parse_preface
from .policy import Envelock
from .provenance import Trust, trust_of
from .scan import scan_text
from .spotlight import SPOTLIGHT_MODES, new_nonce
from .tokens import RESERVED_NAMES
from .verify import Verification, verify_preface

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
    "Transformation",
    "Trust",
    "Verification",
    "__version__",
    "compose_preface",
    "defang",
    "entries_of",
    "hygiene_rule",
    "new_nonce",
    "parse_preface",
    "scan_text",
    "stamp",
    "trust_of",
    "undefang",
    "verify_preface",
]
