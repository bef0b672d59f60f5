//! The sanitize pass of compose and verify (`src/envelock/envelope/invisible.py`) in one pass:
//! where the runs of invisible text and of characters XML cannot carry are.
//!
//! The Python reference finds them with two regexes:
//!
//! * `XML_IMPOSSIBLE_RE`: maximal runs of [`XML_IMPOSSIBLE_RANGES`] characters;
//! * `INVISIBLE_RE`: `(RGI_1|RGI_2|...)|([TAG and bidi class]+)`, scanned left to right: an RGI
//!   emoji tag sequence is consumed whole (its TAG characters are kept) and every other maximal
//!   run of TAG or bidi embedding characters is one run to strip.
//!
//! This pass gives the same runs, as code-point offsets (Python `str` indices), in text order.
//! The character sets and the sequences come from the generated tables.

use crate::tables::{
    BIDI_EMBEDDING_RANGES, RGI_EMOJI_TAG_SEQUENCES, TAG_CHARACTER_RANGES, XML_IMPOSSIBLE_RANGES,
};

/// A run `[start, end)` in code points.
pub type Span = (usize, usize);

/// What the sanitize pass found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SanitizeEvents {
    /// Runs of characters XML 1.0 cannot carry (`XML_IMPOSSIBLE_RE.finditer`).
    pub impossible: Vec<Span>,
    /// Runs of TAG or bidi embedding characters outside RGI emoji tag sequences
    /// (`INVISIBLE_RE.finditer`, the matches of group 2).
    pub invisible: Vec<Span>,
}

fn in_ranges(c: u32, ranges: &[(u32, u32)]) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

/// The first UTF-8 byte of code point `cp` (also for a surrogate, which no `str` holds).
pub(crate) fn lead_byte(cp: u32) -> u8 {
    // Each arm's value fits a byte: the shifts leave at most 7, 5, 4 and 3 bits.
    let b = match cp {
        0..=0x7F => cp,
        0x80..=0x7FF => 0xC0 | (cp >> 6),
        0x800..=0xFFFF => 0xE0 | (cp >> 12),
        _ => 0xF0 | (cp >> 18),
    };
    u8::try_from(b).unwrap_or(0xFF)
}

/// The bytes that can begin a character of the inclusive code point `ranges`: the lead byte grows
/// with the code point, so a range's characters begin with the bytes between its ends' lead bytes,
/// and a continuation byte begins none.
pub(crate) fn leads_of<'a>(ranges: impl IntoIterator<Item = &'a (u32, u32)>) -> [bool; 256] {
    let mut t = [false; 256];
    for &(lo, hi) in ranges {
        for b in lead_byte(lo)..=lead_byte(hi) {
            t[usize::from(b)] = true;
        }
    }
    t[0x80..=0xBF].fill(false);
    t
}

/// The bytes that can begin a character the pass must look at: one of the three sets, or the
/// first character of an RGI emoji tag sequence.
fn interesting_leads() -> [bool; 256] {
    let mut t = leads_of(
        TAG_CHARACTER_RANGES
            .iter()
            .chain(BIDI_EMBEDDING_RANGES)
            .chain(XML_IMPOSSIBLE_RANGES),
    );
    for seq in RGI_EMOJI_TAG_SEQUENCES {
        if let Some(&b) = seq.as_bytes().first() {
            t[usize::from(b)] = true;
        }
    }
    t
}

/// The first index at or after `i` where 8 bytes of printable ASCII (0x20..=0x7F) or the
/// blanks `\t`, `\n`, `\r` (text's own line ends) do not follow.
fn skip_printable_ascii(b: &[u8], mut i: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Bit 7 of each byte of `x` below 0x80: set where the byte equals `c` (exact per byte: the
    // additions stay inside their bytes).
    let equals = |x: u64, c: u8| {
        let t = x ^ (ONES * u64::from(c));
        !(((t & LOW7) + LOW7) | t) & HIGH
    };
    // A byte >= 0x80, or a byte below 0x20 other than the three blanks, among the eight of `x`.
    let stops = |x: u64| {
        let below = !((x & LOW7) + (ONES * 0x60)) & HIGH; // low seven bits below 0x20
        let blank = equals(x, b'\t') | equals(x, b'\n') | equals(x, b'\r');
        (x & HIGH) | (below & !blank)
    };
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    // Thirty-two bytes a step through long runs (one test for four words), then eight.
    while i + 32 <= b.len() {
        if stops(word(i)) | stops(word(i + 8)) | stops(word(i + 16)) | stops(word(i + 24)) != 0 {
            break;
        }
        i += 32;
    }
    while i + 8 <= b.len() {
        if stops(word(i)) != 0 {
            break;
        }
        i += 8;
    }
    i
}

/// Does one of the eight bytes begin a character the pass must look at? (No branch per byte.)
#[inline]
fn chunk_has_lead(chunk: &[u8], leads: &[bool; 256]) -> bool {
    chunk[..8]
        .iter()
        .fold(false, |any, &x| any | leads[usize::from(x)])
}

/// How many of the eight bytes begin a character (are not continuation bytes `10xxxxxx`).
#[inline]
fn chars_begun(chunk: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut w = [0u8; 8];
    w.copy_from_slice(&chunk[..8]);
    let x = u64::from_le_bytes(w);
    // Bit 7 of a byte stays set where bit 7 is set and bit 6 (shifted up into it) is clear.
    let continuation = x & !(x << 1) & HIGH;
    8 - continuation.count_ones() as usize
}

/// The runs one collector keeps (all, or only the first with `first`).
struct Runs {
    spans: Vec<Span>,
    open: Option<usize>,
    first: bool,
}

impl Runs {
    fn new(first: bool) -> Self {
        Runs {
            spans: Vec::new(),
            open: None,
            first,
        }
    }

    fn extend(&mut self, cp: usize) {
        if self.open.is_none() && !self.done() {
            self.open = Some(cp);
        }
    }

    fn close(&mut self, cp: usize) {
        if let Some(start) = self.open.take() {
            self.spans.push((start, cp));
        }
    }

    fn done(&self) -> bool {
        self.first && !self.spans.is_empty()
    }
}

/// The runs of `s` that the sanitize policies act on; with `first`, only the first run of each
/// kind (what `parse` reports), and the pass stops once it has both.
pub fn sanitize_events(s: &str, first: bool) -> SanitizeEvents {
    let b = s.as_bytes();
    let n = b.len();
    let leads = interesting_leads();
    // Eight bytes at a time through printable ASCII and blanks, valid while no such byte begins a character
    // of the sets (true of the tables: controls and non-ASCII only).
    let words = (0x20..0x80).chain([9, 10, 13]).all(|c| !leads[c]);
    let mut impossible = Runs::new(first);
    let mut invisible = Runs::new(first);
    let (mut i, mut cp) = (0usize, 0usize);
    while i < n {
        if !leads[usize::from(b[i])] {
            impossible.close(cp);
            invisible.close(cp);
            loop {
                if words {
                    let j = skip_printable_ascii(b, i);
                    cp += j - i;
                    i = j;
                }
                // Eight bytes at a time while none begins a character of the sets (words of
                // non-Latin text and the spaces between them), counting the code points begun.
                while i + 8 <= n && !chunk_has_lead(&b[i..i + 8], &leads) {
                    cp += chars_begun(&b[i..i + 8]);
                    i += 8;
                }
                // Byte by byte through the word that stopped the skip (or everything, without it).
                let stop = if words { (i + 8).min(n) } else { n };
                while i < stop && !leads[usize::from(b[i])] {
                    cp += usize::from(b[i] & 0xC0 != 0x80);
                    i += 1;
                }
                if i >= n || leads[usize::from(b[i])] {
                    break;
                }
            }
            if first && impossible.done() && invisible.done() {
                break;
            }
            continue;
        }
        let Some(ch) = s[i..].chars().next() else {
            break;
        };
        let c = u32::from(ch);
        if in_ranges(c, XML_IMPOSSIBLE_RANGES) {
            invisible.close(cp);
            impossible.extend(cp);
            i += ch.len_utf8();
            cp += 1;
            continue;
        }
        if in_ranges(c, TAG_CHARACTER_RANGES) || in_ranges(c, BIDI_EMBEDDING_RANGES) {
            impossible.close(cp);
            invisible.extend(cp);
            i += ch.len_utf8();
            cp += 1;
            continue;
        }
        impossible.close(cp);
        invisible.close(cp);
        // The regex tries the sequences first, in table order, where no run is open.
        match RGI_EMOJI_TAG_SEQUENCES
            .iter()
            .find(|seq| s[i..].starts_with(*seq))
        {
            Some(seq) => {
                i += seq.len();
                cp += seq.chars().count();
            }
            None => {
                i += ch.len_utf8();
                cp += 1;
            }
        }
    }
    impossible.close(cp);
    invisible.close(cp);
    SanitizeEvents {
        impossible: impossible.spans,
        invisible: invisible.spans,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> (Vec<Span>, Vec<Span>) {
        let e = sanitize_events(s, false);
        (e.impossible, e.invisible)
    }

    const ENGLAND: &str = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";

    #[test]
    fn plain_text_has_no_events() {
        assert_eq!(ev(""), (vec![], vec![]));
        assert_eq!(ev("plain text\twith\ttabs\r\n"), (vec![], vec![]));
        assert_eq!(ev("caf\u{e9} \u{2014} \u{1F600}"), (vec![], vec![]));
    }

    #[test]
    fn runs_in_code_points() {
        assert_eq!(ev("a\u{0}\u{1}b\u{B}"), (vec![(1, 3), (4, 5)], vec![]));
        assert_eq!(ev("\u{e9}\u{FFFE}\u{FFFF}x"), (vec![(1, 3)], vec![]));
        assert_eq!(
            ev("\u{e9}\u{E0041}\u{E0042}\u{202E}x\u{2066}"),
            (vec![], vec![(1, 4), (5, 6)])
        );
        // An impossible character ends an invisible run and the other way round.
        assert_eq!(
            ev("\u{E0041}\u{0}\u{E0041}"),
            (vec![(1, 2)], vec![(0, 1), (2, 3)])
        );
    }

    #[test]
    fn rgi_sequences_are_kept() {
        assert_eq!(ev(ENGLAND), (vec![], vec![]));
        assert_eq!(ev(&format!("x{ENGLAND}{ENGLAND}")), (vec![], vec![]));
        // A sequence right after a run: the run ends at the flag.
        let s = format!("\u{E0041}{ENGLAND}\u{E0041}");
        assert_eq!(ev(&s), (vec![], vec![(0, 1), (8, 9)]));
        // Broken: no cancel tag, an extra tag, the black flag alone before tags.
        let no_cancel = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}";
        assert_eq!(ev(no_cancel), (vec![], vec![(1, 6)]));
        let extra = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E0067}\u{E007F}";
        assert_eq!(ev(extra), (vec![], vec![(1, 8)]));
    }

    #[test]
    fn first_only() {
        let s = "\u{0}a\u{E0041}b\u{1}c\u{E0042}";
        let e = sanitize_events(s, true);
        assert_eq!(e.impossible, vec![(0, 1)]);
        assert_eq!(e.invisible, vec![(2, 3)]);
        assert_eq!(ev(s), (vec![(0, 1), (4, 5)], vec![(2, 3), (6, 7)]));
    }

    #[test]
    fn word_skip_stops_at_controls_and_non_ascii() {
        let s = b"abcdefghijklmnop\x01qrstuvwxyz0123456789";
        assert_eq!(skip_printable_ascii(s, 0), 16);
        assert_eq!(skip_printable_ascii(s, 17), 33);
        assert_eq!(
            skip_printable_ascii("abcdefg\u{e9}abcdefgh".as_bytes(), 0),
            0
        );
        assert_eq!(skip_printable_ascii(b"\x7f\x7f\x7f\x7f \x20~~x", 0), 8);
        // Every byte value at every position of a 48-byte run of printable bytes, from every
        // start: the skip stops where the byte-by-byte reference stops (eight bytes a step).
        let passes = |c: u8| (0x20..0x80).contains(&c) || matches!(c, b'\t' | b'\n' | b'\r');
        let reference = |b: &[u8], mut i: usize| {
            while i + 8 <= b.len() && b[i..i + 8].iter().all(|&c| passes(c)) {
                i += 8;
            }
            i
        };
        for c in 0u8..=255 {
            for k in 0..48 {
                let mut w = [b'x'; 48];
                w[k] = c;
                for start in [0, 1, 7, 8, 15] {
                    assert_eq!(
                        skip_printable_ascii(&w, start),
                        reference(&w, start),
                        "{c:#x} at {k} from {start}"
                    );
                }
            }
        }
        assert_eq!(
            skip_printable_ascii(b"line one\nline two\r\n\tthree.", 0),
            24 // three words of the 28 bytes
        );
        // Every position of an event agrees with the byte-by-byte walk.
        let long = format!(
            "{}\u{0}{}\u{E0041}{}",
            "a".repeat(37),
            "b".repeat(9),
            "c".repeat(20)
        );
        assert_eq!(ev(&long), (vec![(37, 38)], vec![(47, 48)]));
    }

    #[test]
    fn the_eight_byte_skip_counts_code_points() {
        for s in [
            "ждёт ",
            "ひらがな日本",
            "αβγ δ",
            "Größe – Maß ",
            "😀 e",
            "a\tb\nc",
        ] {
            let b = s.repeat(4);
            let b = b.as_bytes();
            for i in 0..b.len().saturating_sub(8) {
                let naive = b[i..i + 8].iter().filter(|&&x| x & 0xC0 != 0x80).count();
                assert_eq!(chars_begun(&b[i..i + 8]), naive, "{s:?} at {i}");
            }
        }
        // An event at every offset of a run of non-Latin text is found at its code point.
        for filler in ["ждёт ", "ひらがな", "Größe – Maß "] {
            for k in 0..30 {
                let text: String = filler.repeat(6);
                let at = k % text.chars().count();
                let mut chars: Vec<char> = text.chars().collect();
                chars.insert(at, '\u{202E}');
                chars.push('\u{1}');
                let s: String = chars.iter().collect();
                let last = chars.len() - 1;
                assert_eq!(
                    ev(&s),
                    (vec![(last, last + 1)], vec![(at, at + 1)]),
                    "{s:?}"
                );
            }
        }
    }

    #[test]
    fn leads_are_never_continuation_bytes() {
        let t = interesting_leads();
        assert!((0x80..=0xBF).all(|b| !t[b]));
        assert!(t[0] && !t[usize::from(b'\t')] && !t[usize::from(b'a')]);
    }
}
