#!/usr/bin/env bash
# Fresh-venv installs of the source tree, timed: every Python given (default: 3.10-3.13 under
# /root/.pyenv/versions), with and without cargo on PATH (scripts/without_cargo.sh), online (no
# pip cache: what a new user downloads) and offline (a network namespace with no network, pip
# limited to a wheelhouse holding lxml only); offline with cargo also with ENVELOCK_BUILD=python.
# Each venv keeps the pip its Python bundles. Prints one Markdown table row per install:
#   bash scripts/measure_installs.sh [python ...] | tee install-times.md
# Not part of CI (the native builds take minutes); CI's pure-Python stage checks the same paths.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  for v in 3.10 3.11 3.12 3.13; do
    p="$(ls -d /root/.pyenv/versions/"$v".*/bin/python"$v" 2>/dev/null | head -1)"
    [ -n "$p" ] && pythons+=("$p")
  done
fi
offline=(env PIP_NO_INDEX=1)
if unshare -rn true 2>/dev/null; then offline=(unshare -rn env PIP_NO_INDEX=1); fi

echo "| Python | pip | cargo | network | ENVELOCK_BUILD | wall s | result | implementation |"
echo "|---|---|---|---|---|---|---|---|"
n=0
for py in "${pythons[@]}"; do
  ver="$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
  wh="$work/wh-$ver"
  "$py" -m pip download -q -d "$wh" lxml >/dev/null 2>&1 || { echo "cannot fill the wheelhouse for $py" >&2; exit 1; }
  for case in "no online" "no offline" "yes online" "yes offline" "yes offline python"; do
    read -r cargo net build <<< "$case"
    n=$((n + 1))
    venv="$work/v$n"
    "$py" -m venv "$venv"
    pipver="$("$venv/bin/python" -m pip --version | cut -d' ' -f2)"
    cmd=("$venv/bin/python" -m pip install "$root")
    [ "$cargo" = no ] && cmd=(bash "$root/scripts/without_cargo.sh" "${cmd[@]}")
    if [ "$net" = offline ]; then
      cmd=("${offline[@]}" PIP_FIND_LINKS="$wh" "${cmd[@]}")
    else
      cmd=(env PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS= "${cmd[@]}")
    fi
    [ -n "${build:-}" ] && cmd=(env ENVELOCK_BUILD="$build" "${cmd[@]}")
    t0=$(date +%s.%N)
    "${cmd[@]}" > "$work/log$n" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc = 0 ]; then
      result="installed"
      impl="$("$venv/bin/envelock" --version 2>&1)"
      "$venv/bin/envelock" compose "$root/examples/turn.json" --verify > /dev/null 2>&1 || result="installed; compose FAILED"
    else
      result="failed (exit $rc): $(grep -m1 -E '^ *(ERROR|envelock:)' "$work/log$n" | sed 's/^ *//' | cut -c1-110)"
      impl="-"
    fi
    printf '| %s | %s | %s | %s | %s | %.1f | %s | %s |\n' "$ver" "$pipver" "$cargo" "$net" "${build:-auto}" \
      "$(echo "$t1 - $t0" | bc)" "$result" "$impl"
    build=""
  done
done
