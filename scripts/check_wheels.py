"""Check the two wheels of a release against each other: the native one (maturin) and the pure one
(build_backend). ``.ci/run`` runs it on the wheels it builds; the release workflow on its own.

    python scripts/check_wheels.py dist/envelock-*-abi3-*.whl pure/envelock-*-py3-none-any.whl

* the native wheel is abi3 (``cp310-abi3``) and, on Linux, manylinux (every tag); its extension module is
  stripped (an ELF without ``.symtab`` or ``.debug_*`` sections);
* the pure wheel is ``py3-none-any`` and carries no compiled file;
* both carry the same package files (the native one also ``envelock/_native.*``) and say the same
  in their METADATA (name, version, summary, Python range, license, requirements, extras,
  classifiers, project URLs, readme).

Prints one line per wheel (tag, size, extension size) and every problem; exit status 1 if any.
"""

from __future__ import annotations

import email.parser
import re
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

NATIVE_RE = re.compile(r"envelock/_native(\.[^/]*)?\.(so|pyd)$")
COMPARED = (
    "Name",
    "Version",
    "Summary",
    "Requires-Python",
    "License-Expression",
    "Keywords",
    "Author",
    "Description-Content-Type",
)
LISTS = ("Classifier", "Provides-Extra", "Project-URL", "License-File")


def elf_sections(data: bytes) -> list[str]:
    """Section names of a 64- or 32-bit little- or big-endian ELF file."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if wide:
        shoff, shentsize, shnum, shstrndx = struct.unpack_from(end + "Q10xHHH", data, 0x28)
    else:
        shoff, shentsize, shnum, shstrndx = struct.unpack_from(end + "I10xHHH", data, 0x20)

    def header(i: int) -> tuple[int, int, int]:
        base = shoff + i * shentsize
        name = struct.unpack_from(end + "I", data, base)[0]
        off, size = struct.unpack_from(end + ("QQ" if wide else "II"), data, base + (0x18 if wide else 0x10))
        return name, off, size

    _, stroff, _ = header(shstrndx)
    names = []
    for i in range(shnum):
        n, _, _ = header(i)
        names.append(data[stroff + n : data.index(b"\0", stroff + n)].decode("ascii", "replace"))
    return names


def _requirement(r: str) -> str:
    """A Requires-Dist line with spacing and quotes normalised (maturin and the backend write
    ``x ; extra == 'y'`` and ``x; extra == "y"``)."""
    req, _, marker = r.partition(";")
    return re.sub(r"\s+", "", req) + (";" + re.sub(r"\s+", "", marker).replace('"', "'") if marker else "")


def read(path: Path) -> tuple[dict[str, bytes], Any, Any]:
    with zipfile.ZipFile(path) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    dist = next(n.split("/")[0] for n in files if n.endswith(".dist-info/METADATA"))
    meta = email.parser.BytesParser().parsebytes(files[f"{dist}/METADATA"])
    wheel = email.parser.BytesParser().parsebytes(files[f"{dist}/WHEEL"])
    return files, meta, wheel


def check(native_path: Path, pure_path: Path) -> list[str]:
    problems: list[str] = []
    native, nmeta, nwheel = read(native_path)
    pure, pmeta, pwheel = read(pure_path)

    tags = nwheel.get_all("Tag") or []
    if not tags or not all(re.fullmatch(r"cp310-abi3-\S+", t) for t in tags):
        problems.append(f"native wheel tags {tags}: expected cp310-abi3 tags only")
    # manylinux2014 wheels carry the legacy alias and the PEP 600 tag (manylinux2014 = manylinux_2_17)
    problems += [
        f"native wheel tag {t}: not manylinux (PyPI refuses linux_* wheels)"
        for t in tags
        if "linux" in t and not re.search(r"-(manylinux_\d+_\d+|manylinux2014|manylinux2010|manylinux1)_\w+$", t)
    ]
    if pwheel.get_all("Tag") != ["py3-none-any"] or pwheel["Root-Is-Purelib"] != "true":
        problems.append(f"pure wheel: tags {pwheel.get_all('Tag')}, Root-Is-Purelib {pwheel['Root-Is-Purelib']}")

    modules = [n for n in native if NATIVE_RE.fullmatch(n)]
    if len(modules) != 1:
        problems.append(f"native wheel: expected one extension module, found {modules}")
    for name in modules:
        if name.endswith(".so") and native[name][:4] == b"\x7fELF":
            kept = [s for s in elf_sections(native[name]) if s == ".symtab" or s.startswith(".debug")]
            if kept:
                problems.append(f"{name} is not stripped: it has {', '.join(kept)}")
    compiled = [n for n in pure if n.endswith((".so", ".pyd", ".dylib", ".pyc"))]
    if compiled:
        problems.append(f"pure wheel carries compiled files: {compiled}")

    def package(files: dict[str, bytes]) -> set[str]:
        return {n for n in files if ".dist-info/" not in n and not NATIVE_RE.fullmatch(n)}

    problems += [f"only in the {'native' if n in native else 'pure'} wheel: {n}" for n in sorted(package(native) ^ package(pure))]
    problems += [f"differs between the wheels: {n}" for n in sorted(package(native) & package(pure)) if native[n] != pure[n]]
    problems += [f"METADATA {f}: native {nmeta[f]!r}, pure {pmeta[f]!r}" for f in COMPARED if nmeta[f] != pmeta[f]]
    problems += [
        f"METADATA {f}: native {nmeta.get_all(f)}, pure {pmeta.get_all(f)}"
        for f in LISTS
        if sorted(nmeta.get_all(f) or []) != sorted(pmeta.get_all(f) or [])
    ]
    nreq = sorted(_requirement(r) for r in nmeta.get_all("Requires-Dist") or [])
    preq = sorted(_requirement(r) for r in pmeta.get_all("Requires-Dist") or [])
    if nreq != preq:
        problems.append(f"METADATA Requires-Dist: native {nreq}, pure {preq}")
    if nmeta.get_payload().strip() != pmeta.get_payload().strip():
        problems.append("METADATA description (the readme) differs")

    size = {n: len(native[n]) for n in modules}
    print(f"native: {native_path.name} ({native_path.stat().st_size} bytes; extension {size})")
    print(f"pure:   {pure_path.name} ({pure_path.stat().st_size} bytes)")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(Path(argv[0]), Path(argv[1]))
    for p in problems:
        print(f"check_wheels: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
