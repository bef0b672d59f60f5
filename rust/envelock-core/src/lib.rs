//! envelock-core: the model's-eye reader of envelock in Rust, held equal to the Python
//! reference (`src/envelock/eye/reader.py`, `src/envelock/eye/reference.py`) byte for byte.
//!
//! Offsets are byte offsets into UTF-8 text; [`openers`] also gives code-point offsets (what
//! Python's `str` indices are).
#![forbid(unsafe_code)]

pub mod blobs;
pub mod chars;
pub mod classes;
pub mod decode;
pub mod defang;
pub mod escape_plan;
pub mod escapes;
pub mod exact;
pub mod names;
pub mod opener;
pub mod prose;
pub mod reader;
pub mod repeats;
pub mod sanitize;
pub mod spotlight;
pub mod unescape;
#[rustfmt::skip]
#[allow(clippy::all)]
pub mod tables;

pub use blobs::{binary_group_starts, blob_runs, Triggers};
pub use classes::{class_runs, classes_present, words_with_runs};
pub use defang::{
    canonical_body, canonical_body_start, canonical_round_trip, defang, defang_body,
    defang_body_start, undefang, undefang_body, xml_escape, xml_unescape, xml_unescaped_equals,
    BodyRest, Level, UndoRest,
};
pub use escape_plan::{escape_plan, CharSet, EscapePlan, ExactSet, PlanSets};
pub use escapes::{
    openers_with_escapes, quiet_at, repeated_at, scheme_starts, windows_by_text, Loud, SchemeStart,
};
pub use exact::exact_tokens;
pub use names::{EmptySkeleton, Names};
pub use opener::Family;
pub use prose::{ascii_word_starts, attribute_injections, line_markers};
pub use reader::{exact_after, read_after, read_bracket, Kind, Reading, Scratch};
pub use sanitize::{sanitize_events, SanitizeEvents};

/// The first `needle` in `hay` at or after byte `from` (`str.find`'s answer on bytes; `memchr`'s
/// `memmem`). Verify finds each body's close tag with it: CPython's search is the slower one there.
pub fn find_from(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let rest = hay.as_bytes().get(from..)?;
    memchr::memmem::find(rest, needle.as_bytes()).map(|k| from + k)
}

/// One opener whose reading is not none, or that is followed by a backslash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenerReading<'n> {
    pub family: Family,
    /// Byte offsets of the opener.
    pub start: usize,
    pub opener_end: usize,
    pub kind: Kind,
    /// The name read (the reader's own: no copy per opener).
    pub name: &'n str,
    pub slash: bool,
    /// Byte offset where the reading stopped.
    pub reading_end: usize,
    /// The same positions in code points.
    pub start_cp: usize,
    pub opener_end_cp: usize,
    pub reading_end_cp: usize,
}

/// Converts increasing byte offsets of one text to code-point offsets in one pass.
pub struct CpCounter<'a> {
    b: &'a [u8],
    byte: usize,
    cp: usize,
}

impl<'a> CpCounter<'a> {
    pub fn new(s: &'a str) -> Self {
        CpCounter {
            b: s.as_bytes(),
            byte: 0,
            cp: 0,
        }
    }

    /// The code-point offset of byte offset `at` (on a character boundary).
    pub fn at(&mut self, at: usize) -> usize {
        if at < self.byte {
            self.byte = 0;
            self.cp = 0;
        }
        self.cp += code_points(&self.b[self.byte..at]);
        self.byte = at;
        self.cp
    }
}

/// The code-point offset of each line's start in `b` (UTF-8; the first line at 0, each other after a
/// `\n`) and the code points of `b`, eight bytes at a time: a mask of the word's continuation bytes
/// ([`code_points`]) and one of its `\n` bytes (exact: the sum cannot carry into the next byte).
/// (`memchr` paid more per line than the line cost; source code has a line every 35 bytes.)
pub fn line_starts(b: &[u8]) -> (Vec<usize>, usize) {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut starts = vec![0usize];
    let mut n = 0usize; // code points before the current word
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        let x = u64::from_le_bytes(x);
        let cont = x & !(x << 1) & HIGH;
        let y = x ^ 0x0A0A_0A0A_0A0A_0A0A; // a zero byte where `x` has `\n`
        let mut nl = !(((y & LOW7) + LOW7) | y | LOW7);
        while nl != 0 {
            let k = nl.trailing_zeros() as usize / 8; // the byte of the lowest `\n`
            let upto = if k == 7 {
                u64::MAX
            } else {
                (1u64 << (8 * (k + 1))) - 1
            };
            starts.push(n + k + 1 - (cont & upto).count_ones() as usize);
            nl &= nl - 1;
        }
        n += 8 - cont.count_ones() as usize;
    }
    for &c in words.remainder() {
        n += usize::from(c & 0xC0 != 0x80);
        if c == b'\n' {
            starts.push(n);
        }
    }
    (starts, n)
}

/// From `byte`, with `cp` the characters that start before it, forward to the first byte of
/// character `target` (or the end of `b`): that byte and the characters before it. Whole words
/// of eight bytes are skipped while their characters all come before `target` ([`code_points`]'
/// mask), then bytes one at a time.
pub fn cp_advance(b: &[u8], mut byte: usize, mut cp: usize, target: usize) -> (usize, usize) {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while byte + 8 <= b.len() && cp < target {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[byte..byte + 8]);
        let x = u64::from_le_bytes(x);
        let starts = 8 - (x & !(x << 1) & HIGH).count_ones() as usize;
        if cp + starts > target {
            break;
        }
        cp += starts;
        byte += 8;
    }
    // `cp` counts the characters that start before `byte`, which may be inside one.
    while byte < b.len() {
        let first = b[byte] & 0xC0 != 0x80;
        if first && cp >= target {
            break;
        }
        cp += usize::from(first);
        byte += 1;
    }
    (byte, cp)
}

/// Line, column (1-based, in code points, as [`line_starts`] gives them) and byte offset of
/// code-point offsets taken in increasing order, found by walking forward from the previous one:
/// for a few reports in a long text, instead of a table of every line. The walk skips eight bytes
/// at a time ([`code_points`]' mask) and counts lines with `memchr`; every byte is read once over
/// all the calls to [`LineWalker::to`], and a [`LineWalker::peek`] reads from the current offset.
#[derive(Clone, Copy)]
pub struct LineWalker<'a> {
    b: &'a [u8],
    /// A character's first byte (or the end), and the code points before it.
    byte: usize,
    cp: usize,
    line: usize,
    /// The code-point offset of the current line's start.
    line_cp: usize,
    /// Whether lines are counted ([`LineWalker::positions`]: byte offsets alone).
    lines: bool,
}

/// Where a code-point offset lies: its line and column (1-based) and its byte offset (clamped to
/// the end of the text, as the column is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    pub line: usize,
    pub column: usize,
    pub byte: usize,
}

impl<'a> LineWalker<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        LineWalker {
            b,
            byte: 0,
            cp: 0,
            line: 1,
            line_cp: 0,
            lines: true,
        }
    }

    /// A walker for byte offsets alone, for a caller that has a table of the lines: the line it
    /// gives is always 1 and the column the offset plus one.
    pub fn positions(b: &'a [u8]) -> Self {
        LineWalker {
            lines: false,
            ..LineWalker::new(b)
        }
    }

    /// Moves to code point `target` (an offset before the current one is not moved back to: the
    /// caller asks in order) and says where it lies.
    pub fn to(&mut self, target: usize) -> Spot {
        let b = self.b;
        let from = self.byte;
        let (byte, cp) = cp_advance(b, self.byte, self.cp, target);
        let seg = &b[from..byte];
        if let Some(k) = memchr::memrchr(b'\n', seg).filter(|_| self.lines) {
            self.line += memchr::memchr_iter(b'\n', seg).count();
            self.line_cp = cp - code_points(&seg[k + 1..]);
        }
        self.byte = byte;
        self.cp = cp;
        Spot {
            line: self.line,
            column: target.max(self.cp) - self.line_cp + 1,
            byte,
        }
    }

    /// Where `target` (at or after the current offset) lies, without moving.
    pub fn peek(&self, target: usize) -> Spot {
        let mut w = *self;
        w.to(target)
    }
}

/// The number of code points in `b` (UTF-8, whole characters): its bytes less its continuation
/// bytes (`10xxxxxx`), counted eight at a time (bit 7 set and bit 6 clear in each byte; the shift
/// carries a bit across bytes only into bit 0, which the mask drops).
pub fn code_points(b: &[u8]) -> usize {
    let mut words = b.chunks_exact(8);
    let mut cont = 0usize;
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        let x = u64::from_le_bytes(x);
        cont += (x & !(x << 1) & 0x8080_8080_8080_8080).count_ones() as usize;
    }
    cont += words
        .remainder()
        .iter()
        .filter(|&&c| c & 0xC0 == 0x80)
        .count();
    b.len() - cont
}

/// The byte offset of code-point offset `cp` (`None` past the end).
pub fn byte_offset(s: &str, cp: usize) -> Option<usize> {
    if s.is_ascii() {
        return (cp <= s.len()).then_some(cp);
    }
    if cp == 0 {
        return Some(0);
    }
    let mut seen = 0;
    for (i, _) in s.char_indices() {
        if seen == cp {
            return Some(i);
        }
        seen += 1;
    }
    (seen == cp).then_some(s.len())
}

/// Every angle opener and every bracket opener, in text order, whose reading is not none or
/// which is followed by `\` (what the scanner consumes).
pub fn openers<'n>(s: &str, names: &'n Names) -> Vec<OpenerReading<'n>> {
    openers_of(s, names, &[Family::Angle, Family::Bracket])
}

/// [`openers`] of the given families only.
pub fn openers_of<'n>(s: &str, names: &'n Names, families: &[Family]) -> Vec<OpenerReading<'n>> {
    openers_using(s, names, families, repeats::Reuse::DEFAULT)
}

/// [`openers_of`] with readings reused as `reuse` says (tests: none reused, or a broken window).
fn openers_using<'n>(
    s: &str,
    names: &'n Names,
    families: &[Family],
    reuse: repeats::Reuse,
) -> Vec<OpenerReading<'n>> {
    let b = s.as_bytes();
    let n = b.len();
    let mut scratch = Scratch::default();
    let mut out = Vec::new();
    for &fam in families {
        let mut repeats = repeats::Repeats::with(s, reuse);
        for (a, e) in opener::Openers::new(s, fam) {
            let r = read_repeated(s, a, e, fam, names, &mut scratch, &mut repeats);
            if r.is_none() && !(e < n && b[e] == b'\\') {
                continue;
            }
            out.push(OpenerReading {
                family: fam,
                start: a,
                opener_end: e,
                kind: r.kind,
                name: r.name,
                slash: r.slash,
                reading_end: r.end,
                start_cp: 0,
                opener_end_cp: 0,
                // The code points read after the opener; made absolute below.
                reading_end_cp: r.end_rel,
            });
        }
    }
    out.sort_by_key(|o| o.start);
    let mut cc = CpCounter::new(s);
    for o in &mut out {
        o.start_cp = cc.at(o.start);
        o.opener_end_cp = cc.at(o.opener_end);
        // `Reading.end` is 0 for a none reading (as in Python).
        o.reading_end_cp = if o.kind == Kind::None {
            0
        } else {
            o.opener_end_cp + o.reading_end_cp
        };
    }
    out
}

/// The reading after the opener `a..e`: plain ASCII's quick answer, else an earlier opener's, moved,
/// where the text around the two is the same ([`repeats`]), else read.
pub fn read_repeated<'n>(
    s: &str,
    a: usize,
    e: usize,
    fam: Family,
    names: &'n Names,
    scratch: &mut Scratch,
    repeats: &mut repeats::Repeats<'_, Reading<'n>>,
) -> Reading<'n> {
    if let Some(r) = reader::quick_reading(s, e, names, fam.is_bracket()) {
        return r;
    }
    let r = if let Some((r, d)) = repeats.get(a, e) {
        // A none reading has no end (0); any other ends past the opener.
        Reading {
            end: if r.end == 0 { 0 } else { r.end + d },
            ..r
        }
    } else if fam.is_bracket() {
        read_bracket(s, e, names, scratch)
    } else {
        read_after(s, e, names, scratch)
    };
    repeats.record(a, e, r);
    r
}

#[cfg(test)]
mod tests;
