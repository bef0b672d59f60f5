"""``envelock.escape``: the body escape, where users import it from (see :mod:`envelock.eye.escape`)."""

from .eye.escape import (
    BODY_CONTEXT,
    IMPLEMENTATIONS,
    LEVELS,
    Level,
    check_level,
    defang,
    defang_body,
    implementation,
    opener_readings,
    undefang,
    undefang_body,
    xml_escape_text,
    xml_unescape_text,
)

__all__ = [
    "BODY_CONTEXT",
    "IMPLEMENTATIONS",
    "LEVELS",
    "Level",
    "check_level",
    "defang",
    "defang_body",
    "implementation",
    "opener_readings",
    "undefang",
    "undefang_body",
    "xml_escape_text",
    "xml_unescape_text",
]
