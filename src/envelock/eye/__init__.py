"""The model's eye: how a reader that is not a parser sees text, and the escape built on it.

Tables (generated ``unicode_tables``, hand-curated ``charsets``, ``tokens``), the one reader
(``reader``), the escape (``escape``: ``defang``/``undefang``) and its implementations
(``reference``, ``fastpath``, the native core), chosen in one place (``backend``).
"""
