#!/usr/bin/env bash
# Run a command with no Rust toolchain on PATH (no cargo, rustc, rustup): every PATH directory
# that holds one is replaced by a shim directory of links to everything else in it. .ci/run's
# pure-Python stage and the install measurements use it: `bash scripts/without_cargo.sh CMD ARGS...`.
set -euo pipefail
shim="$(mktemp -d)"
trap 'rm -rf "$shim"' EXIT
new=""
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  if [ -e "$d/cargo" ] || [ -e "$d/rustc" ] || [ -e "$d/rustup" ]; then
    s="$shim/$(printf '%s' "$d" | sha256sum | cut -c1-16)"
    if [ ! -d "$s" ]; then
      mkdir "$s"
      for f in "$d"/* "$d"/.[!.]*; do
        [ -e "$f" ] || continue
        case "$(basename "$f")" in
          cargo | cargo-* | rustc | rustup | rustdoc | rustfmt | rust-* | clippy-driver | rls) ;;
          *) ln -s "$f" "$s/" ;;
        esac
      done
    fi
    new="$new:$s"
  else
    new="$new:$d"
  fi
done
export PATH="${new#:}"
if command -v cargo >/dev/null 2>&1; then
  echo "without_cargo: cargo is still on PATH ($(command -v cargo))" >&2
  exit 1
fi
"$@"
