"""False-positive control: benign multilingual text, IPA, math, code.

Every ``tests/data/benign/*.txt`` file (the older ``multilingual.txt`` and: French, German, Vietnamese, Greek, Russian and
Japanese prose, IPA, math with ``≺`` and ``«»``, Scala type bounds, box-drawing art, C,
Rust, Python and HTML source) must round-trip through ``compose_preface`` /
``parse_preface`` at every level and come out of ``defang(level="reserved")`` unchanged:
none of them holds a reserved name or a chat-template token, not even to the model's eye.
Negative controls: deliberately over-eager defangs must make that same check fail.

Run as a script to measure how many of these files ``defang`` changes at ``reserved`` and
``markup`` and, with ``--stdlib``, how many standard-library modules it changes at
``reserved`` (before and after the reader rewrite)::

    python tests/test_benign.py                 # the benign set
    python tests/test_benign.py --stdlib        # also the stdlib of this interpreter
    python tests/test_benign.py --stdlib DIR    # also DIR/**/*.py
    PYTHONPATH=/other/checkout/src python tests/test_benign.py --stdlib   # another version
"""

from __future__ import annotations

import argparse
import sysconfig
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import pytest
from helpers.data import ROOT

import envelock
from envelock import LEVELS, PrefaceEntry, compose_preface, defang, parse_preface, verify_preface
from envelock.escape import Level
from envelock.eye.reader import reserved_tag_count

BENIGN_DIR = ROOT / "tests" / "data" / "benign"
BENIGN_TXT = sorted(BENIGN_DIR.glob("*.txt"))
T = "2026-11-29T21:29:03Z"

#: What the set must cover (file stem -> what it is); a missing file fails the presence test.
EXPECTED = {
    "prose_fr": "French prose with « » and ‹ ›",
    "prose_de": "German prose with „“ and »«",
    "prose_vi": "Vietnamese prose, NFC and one NFD paragraph",
    "prose_el": "Greek prose, upper-case headings and polytonic verse",
    "prose_ru": "Russian prose with «» and upper case",
    "prose_ja": "Japanese prose with ＜＞ 〈〉 《》 「」",
    "ipa_notes": "IPA transcriptions with ⟨⟩ spellings",
    "math_orders": "math with ≺ ≼ ≮ ⟨⟩ ‖‖ and «»",
    "scala_bounds": "Scala upper and lower type bounds",
    "box_drawing": "box-drawing diagrams, tree output, tables",
    "source_c": "C source",
    "source_rust": "Rust source",
    "source_python": "Python source",
    "source_html": "HTML page",
}

Defang = Callable[[str], str]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def changed_by(fn: Defang, items: Iterable[tuple[str, str]]) -> list[str]:
    """Names of the items whose text ``fn`` changes."""
    return [name for name, text in items if fn(text) != text]


def benign_items() -> list[tuple[str, str]]:
    return [(p.name, read(p)) for p in BENIGN_TXT]


def assert_unchanged(fn: Defang) -> None:
    """The false-positive check: ``fn`` leaves every benign file as it is."""
    changed = changed_by(fn, benign_items())
    assert changed == [], f"benign files changed: {changed}"


# --- the set ----------------------------------------------------------------------------


def test_benign_set_is_present_and_sized() -> None:
    stems = {p.stem for p in BENIGN_TXT}
    assert set(EXPECTED) <= stems, f"missing: {sorted(set(EXPECTED) - stems)}"
    for p in BENIGN_TXT:
        assert "\r" not in read(p), p.name
        if p.stem in EXPECTED:  # a few KB each (multilingual.txt, older and shorter, is measured too)
            assert 1500 <= len(p.read_bytes()) <= 16000, p.name


# --- round trip at every level ------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", BENIGN_TXT, ids=[p.name for p in BENIGN_TXT])
def test_benign_file_round_trips(path: Path, level: Level) -> None:
    text = read(path)
    entry = PrefaceEntry(source="external", origin="web:https://a.example/page", body=text, fetched_at=T)
    out = compose_preface([entry], level=level, verify=level == "reserved")
    assert not out.transformations, "benign text needs no stripping or replacement"
    assert reserved_tag_count(out) == 2
    envs = parse_preface(out, level=level)
    assert len(envs) == 1
    assert envs[0].body == text
    assert verify_preface(out, expected=[entry], level=level).ok


# --- unchanged at reserved, and the negative controls ----------------------------------------


def test_reserved_defang_leaves_benign_files_unchanged() -> None:
    assert_unchanged(lambda t: defang(t, level="reserved"))


def _escape_after(chars: str) -> Defang:
    return lambda t: "".join(c + "\\" if c in chars else c for c in t)


#: Over-eager defangs that a false-positive check must notice: each escapes something the
#: benign set really contains (so the set exercises it) but that forms no reserved name or token.
OVER_EAGER: dict[str, Defang] = {
    "every-ascii-lt": _escape_after("<"),
    "every-lookalike-opener": _escape_after("«‹⟨〈＜≺≮"),
    "every-bar": _escape_after("|│║┃"),
    "every-bracket": _escape_after("["),
}


@pytest.mark.parametrize("name", sorted(OVER_EAGER))
def test_negative_control_over_eager_defang_fails_the_check(name: str) -> None:
    with pytest.raises(AssertionError, match="benign files changed"):
        assert_unchanged(OVER_EAGER[name])


def test_negative_control_catches_a_single_file() -> None:
    # One escape in one file is enough to fail: the check is not a rate.
    target = BENIGN_TXT[0].name

    def one_file(t: str) -> str:
        return t.replace("\n", "\\\n", 1) if t == read(BENIGN_DIR / target) else t

    with pytest.raises(AssertionError, match=target):
        assert_unchanged(one_file)


def test_report_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """The measurement the script prints (``pytest -s`` shows it); reserved must be 0."""
    counts = measure(benign_items(), ("reserved", "markup"))
    with capsys.disabled():
        print()
        print(report("benign set (tests/data/benign/*.txt)", len(BENIGN_TXT), counts))
    assert counts["reserved"] == []


# --- measurement (also a script) ------------------------------------------------------------


def measure(items: list[tuple[str, str]], levels: Iterable[Level]) -> dict[str, list[str]]:
    """For each level, the names of the items ``defang`` changes at that level."""
    return {lv: changed_by(partial(defang, level=lv), items) for lv in levels}


def report(title: str, total: int, counts: dict[str, list[str]], show: int = 20) -> str:
    lines = [f"{title}: {total} files (envelock from {Path(envelock.__file__).parent})"]
    for lv, names in counts.items():
        pct = 100.0 * len(names) / total if total else 0.0
        more = f" ... (+{len(names) - show})" if len(names) > show else ""
        lines.append(f"  changed at {lv:<8}: {len(names):>4} / {total} ({pct:.1f} %)  {names[:show]}{more}")
    return "\n".join(lines)


#: Directory names not measured in the stdlib (test suites and third-party packages).
STDLIB_SKIP = frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__"})
STDLIB_CAP = 3000


def stdlib_items(root: Path, cap: int = STDLIB_CAP) -> tuple[list[tuple[str, str]], int]:
    """``root/**/*.py`` outside test and site-packages directories, sorted, at most ``cap``.

    Returns the (relative path, text) pairs and how many files were skipped as not UTF-8.
    """
    items: list[tuple[str, str]] = []
    undecodable = 0
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root)
        if STDLIB_SKIP & set(rel.parts[:-1]):
            continue
        try:
            items.append((str(rel), p.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            undecodable += 1
            continue
        if len(items) >= cap:
            break
    return items, undecodable


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="How many benign files defang changes.")
    ap.add_argument(
        "--stdlib",
        nargs="?",
        const=sysconfig.get_paths()["stdlib"],
        default=None,
        metavar="DIR",
        help="also measure DIR/**/*.py at reserved (default DIR: this interpreter's stdlib)",
    )
    args = ap.parse_args(argv)
    print(report("benign set (tests/data/benign/*.txt)", len(BENIGN_TXT), measure(benign_items(), ("reserved", "markup"))))
    if args.stdlib:
        root = Path(args.stdlib)
        items, undecodable = stdlib_items(root)
        print(
            report(
                f"stdlib {root} (*.py, no test dirs, cap {STDLIB_CAP}; {undecodable} not UTF-8, skipped)",
                len(items),
                measure(items, ("reserved",)),
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
