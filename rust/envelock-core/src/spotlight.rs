//! The spotlighting transforms of `envelock.envelope.spotlight`, natively: `datamark`, `interleave`
//! and their inverses. Held equal to the Python functions by `tests/envelope/test_spotlight_native.py`
//! and the `fuzz_native` harness. "Whitespace" here is every character of `BLANK_RANGES` except the
//! turn's marker (`spotlight._blank_class`): a marker may itself be in `BLANK_RANGES` (a middle dot,
//! a bullet), and it is never a blank of its own turn.

use crate::tables as t;

fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    crate::chars::in_ranges(ranges, u32::from(c))
}

fn is_interleave_letter(c: char) -> bool {
    in_ranges(t::INTERLEAVE_RANGES, c)
}

/// A blank between words of a turn marked with `marker` (`spotlight._blank_class`: every
/// character of `BLANK_RANGES` but the marker).
#[inline]
fn is_blank(c: char, marker: char) -> bool {
    c != marker && in_ranges(t::BLANK_RANGES, c)
}

/// The end (byte offset) of the run of blanks that starts at byte `i`.
fn blank_run_end(text: &str, i: usize, marker: char) -> usize {
    text[i..]
        .char_indices()
        .find(|&(_, c)| !is_blank(c, marker))
        .map_or(text.len(), |(k, _)| i + k)
}

/// `spotlight.datamark`: a single space (not before a literal marker) becomes the marker, any
/// other whitespace run `W` becomes marker + `W`, a literal marker is doubled.
pub fn datamark(text: &str, marker: char) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4 + 4);
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if is_blank(c, marker) {
            let j = blank_run_end(text, i, marker);
            let run = &text[i..j];
            out.push(marker);
            if run != " " || text[j..].starts_with(marker) {
                out.push_str(run);
            }
            i = j;
            continue;
        }
        out.push(c);
        if c == marker {
            out.push(marker);
        }
        i += c.len_utf8();
    }
    out
}

/// `spotlight.undatamark`: `MM` is a marker, a marker before whitespace is nothing, any other
/// marker is a space (left to right, as `str.split` pairs them).
pub fn undatamark(text: &str, marker: char) -> String {
    unmark(text, marker, Some(' '))
}

/// `spotlight.uninterleave`: `MM` is a marker, any other marker is nothing.
pub fn uninterleave(text: &str, marker: char) -> String {
    unmark(text, marker, None)
}

fn unmark(text: &str, marker: char, lone: Option<char>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != marker {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some(&n) if n == marker => {
                out.push(marker);
                chars.next();
            }
            Some(&n) if is_blank(n, marker) => {}
            // A lone marker: a space in datamark, an inserted marker (nothing) in interleave.
            _ => out.extend(lone),
        }
    }
    out
}

/// `spotlight.interleave`: whitespace runs `W` become marker + `W`, a literal marker is doubled,
/// and between two `INTERLEAVE_RANGES` letters a marker is inserted when Python's
/// `random.Random(seed).random() < 0.25` (one draw per such boundary, left to right).
pub fn interleave(text: &str, marker: char, seed: u64) -> String {
    let mut rng = Mt19937::python_seeded(seed);
    let mut out = String::with_capacity(text.len() + text.len() / 4 + 4);
    let mut prev_letter = false;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if is_blank(c, marker) {
            let j = blank_run_end(text, i, marker);
            out.push(marker);
            out.push_str(&text[i..j]);
            i = j;
            prev_letter = false;
            continue;
        }
        let letter = is_interleave_letter(c);
        if letter && prev_letter && rng.quarter() {
            out.push(marker);
        }
        out.push(c);
        if c == marker {
            // The doubled marker: a boundary between two letters if the marker were one (a
            // valid marker never is; the draw keeps the two sides equal on any marker).
            if letter && rng.quarter() {
                out.push(marker);
            }
            out.push(marker);
        }
        prev_letter = letter;
        i += c.len_utf8();
    }
    out
}

/// MT19937 as CPython's `random.Random(int)` seeds and draws it (`_randommodule.c`).
struct Mt19937 {
    mt: [u32; 624],
    idx: usize,
}

impl Mt19937 {
    fn init_genrand(s: u32) -> Self {
        let mut mt = [0u32; 624];
        mt[0] = s;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { mt, idx: 624 }
    }

    /// `random.Random(seed)` for a non-negative int `seed`: `init_by_array` of its 32-bit words,
    /// least significant first (one word `0` for zero).
    fn python_seeded(seed: u64) -> Self {
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        let mut g = Self::init_genrand(19_650_218);
        let mt = &mut g.mt;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624.max(key.len()) {
            let x = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ x.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let x = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ x.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        g
    }

    fn next_u32(&mut self) -> u32 {
        if self.idx >= 624 {
            for k in 0..624 {
                let y = (self.mt[k] & 0x8000_0000) | (self.mt[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = self.mt[(k + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.mt[k] = v;
            }
            self.idx = 0;
        }
        let mut y = self.mt[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `random() < 0.25`: `random()` is `((a >> 5) * 2**26 + (b >> 6)) / 2**53` of two draws, which
    /// is below 1/4 exactly when `a >> 5 < 2**25`, that is `a < 2**30` (both draws are consumed).
    fn quarter(&mut self) -> bool {
        let a = self.next_u32();
        let _b = self.next_u32();
        a < (1 << 30)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt_matches_cpython() {
        // random.Random(0).getrandbits(32) and random.Random(2**40 + 7).getrandbits(32) (CPython 3.11).
        let mut g = Mt19937::python_seeded(0);
        assert_eq!(g.next_u32(), 3_626_764_237);
        let mut h = Mt19937::python_seeded((1u64 << 40) + 7);
        let first = h.next_u32();
        assert_eq!(first, MT_2_40_PLUS_7);
    }

    const MT_2_40_PLUS_7: u32 = 2635837658;

    #[test]
    fn round_trips() {
        for text in [
            "a b  c\n d",
            "ˆ ˆˆ x ˆ",
            "今日は良い天気です。 ok",
            "",
            " ",
            "ˆ",
            "a\u{b7}b \u{b7} c",
        ] {
            assert_eq!(undatamark(&datamark(text, 'ˆ'), 'ˆ'), text);
            assert_eq!(uninterleave(&interleave(text, 'ˆ', 196), 'ˆ'), text);
            // U+00B7 MIDDLE DOT is a blank of BLANK_RANGES, and not one of a turn it marks.
            assert_eq!(undatamark(&datamark(text, '\u{b7}'), '\u{b7}'), text);
            assert_eq!(uninterleave(&interleave(text, '\u{b7}', 7), '\u{b7}'), text);
        }
        assert!(in_ranges(t::BLANK_RANGES, '\u{b7}') && in_ranges(t::BLANK_RANGES, ' '));
        assert_eq!(datamark("a\u{b7}b c", '\u{b7}'), "a\u{b7}\u{b7}b\u{b7}c");
    }
}
