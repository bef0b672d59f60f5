#!/usr/bin/env bash
# The sdist is a package: build it, unpack it in a temporary folder, install it (and the `test`
# dependency group) into a fresh venv and run the test suite from the unpacked files, not from the
# checkout.
# .ci/run calls this; run it alone with `bash scripts/ci_sdist.sh`.
#
# Environment: PYTHON (default python3), ENVELOCK_SDIST_PYTEST_ARGS (default "-q -p no:cacheprovider"),
# ENVELOCK_SDIST_WHEEL_ARGS (passed to `pip wheel`), ENVELOCK_SDIST_WHEELS (a folder to copy the built wheel to),
# ENVELOCK_SHARED (the shared data folder; default ../shared next to this checkout, passed on so
# that tests needing it run instead of skipping), ENVELOCK_SDIST_KEEP=1 keeps the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$(pwd)"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

work="$(mktemp -d)"
if [ "${ENVELOCK_SDIST_KEEP:-0}" != 1 ]; then
  trap 'rm -rf "$work"' EXIT
fi
echo "== sdist: working in $work"

# 1. Build the sdist through the PEP 517 backend (build_backend/envelock_build: the standard
#    library only, in an isolated build environment).
"$PYTHON" -m venv "$work/build"
"$work/build/bin/python" -m pip install -q build
"$work/build/bin/python" -m build --sdist --outdir "$work/dist" "$checkout"
sdist="$(ls "$work"/dist/envelock-*.tar.gz)"
echo "== built $(basename "$sdist") ($(du -h "$sdist" | cut -f1))"

# 2. Unpack it and check that it carries everything the tests read (a missing file would only
#    show as a confusing test failure or skip further down).
mkdir "$work/unpacked"
tar -xzf "$sdist" -C "$work/unpacked"
src="$(ls -d "$work"/unpacked/envelock-*)"
missing=0
for need in LICENSE README.md SECURITY.md CHANGELOG.md pyproject.toml PKG-INFO .pre-commit-hooks.yaml \
            docs/cli.md docs/design.md tests/conftest.py tests/helpers/strategies.py tests/helpers/diagnostics.py tests/data \
            corpus examples/turn.json fuzz/_common.py scripts/gen_unicode_tables.py src/envelock/__init__.py \
            src/envelock/_version.py build_backend/envelock_build/__init__.py rust/Cargo.toml rust/Cargo.lock \
            rust/envelock-core/src/lib.rs rust/envelock-py/src/lib.rs; do
  if [ ! -e "$src/$need" ]; then
    echo "sdist is missing: $need" >&2
    missing=1
  fi
done
while IFS= read -r t; do
  rel="${t#"$checkout"/}"
  if [ ! -e "$src/$rel" ]; then
    echo "sdist is missing: $rel" >&2
    missing=1
  fi
done < <(find "$checkout/tests" -name '*.py' -not -path '*/__pycache__/*')
if [ "$missing" = 1 ]; then
  echo "the sdist does not carry what the tests need: list it in [tool.envelock-build] sdist-include" >&2
  exit 1
fi

# 3. A fresh venv. The sdist's wheel is built through its own backend, as `pip install` of the
#    sdist does first (with cargo on PATH this builds the native core from the unpacked sources);
#    that wheel and the `test` dependency group from the unpacked pyproject.toml are installed, then
#    the suite runs from the unpacked folder. ENVELOCK_SDIST_WHEEL_ARGS are passed to `pip wheel`
#    (.ci/run: `-C build-args=--compatibility=pypi`, a manylinux tag); with ENVELOCK_SDIST_WHEELS
#    set, the wheel is also copied there (.ci/run checks and tests that one wheel, built once).
"$PYTHON" -m venv "$work/venv"
PY="$work/venv/bin/python"
"$PY" -m pip install -q --upgrade 'pip>=25.1'   # --group
# shellcheck disable=SC2086  # the arguments are split on purpose
"$PY" -m pip wheel -q --no-deps -w "$work/wheel" ${ENVELOCK_SDIST_WHEEL_ARGS:-} "$sdist"
wheel="$(ls "$work"/wheel/envelock-*.whl)"
echo "== built $(basename "$wheel") from the sdist"
if [ -n "${ENVELOCK_SDIST_WHEELS:-}" ]; then
  mkdir -p "$ENVELOCK_SDIST_WHEELS"
  cp "$wheel" "$ENVELOCK_SDIST_WHEELS/"
fi
"$PY" -m pip install -q "$wheel" --group "$src/pyproject.toml:test"
"$PY" -c "import envelock, envelock.cli, envelock.escape as e; print('envelock', envelock.__version__, e.implementation(), 'from', envelock.__file__)"
if [ "${ENVELOCK_REQUIRE_NATIVE:-0}" = 1 ]; then   # .ci/run: the wheel built from the sdist carries the native core
  (cd "$work" && "$PY" -c "import envelock.escape as e; assert e.implementation() == 'native', e.implementation()")
  test "$("$work/venv/bin/envelock" --version)" = "envelock $("$PY" -c 'import envelock; print(envelock.__version__)') (native)"
fi
case "$("$PY" -c 'import envelock; print(envelock.__file__)')" in
  "$checkout"/*) echo "the test venv imports envelock from the checkout, not from the sdist" >&2; exit 1 ;;
esac

if [ -z "${ENVELOCK_SHARED:-}" ] && [ -d "$checkout/../shared/corpora" ]; then
  ENVELOCK_SHARED="$(cd "$checkout/../shared" && pwd)"
  export ENVELOCK_SHARED
fi
echo "== tests from the unpacked sdist (shared data: ${ENVELOCK_SHARED:-none})"
cd "$src"
# shellcheck disable=SC2086  # the arguments are split on purpose
PATH="$work/venv/bin:$PATH" "$PY" -m pytest ${ENVELOCK_SDIST_PYTEST_ARGS:--q -p no:cacheprovider}
echo "== sdist OK"
