"""Third-party code the build backend carries, because it must run with nothing installed.

``tomli`` 2.5.0 (MIT, https://github.com/hukkin/tomli, the wheel's files unchanged, its LICENSE
beside them): the TOML parser for Python 3.10, which has no ``tomllib``. 3.11+ use ``tomllib``.
"""
