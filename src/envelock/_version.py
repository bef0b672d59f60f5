"""The version of envelock: the one place it is written.

The build backend reads it (``build_backend/envelock_build``), ``envelock.__version__`` imports it,
and the Cargo workspace version (``rust/Cargo.toml``) must equal it (the build refuses otherwise;
``tests/test_package.py`` checks it too).
"""

__version__ = "0.2.0"
