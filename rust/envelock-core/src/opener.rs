//! The openers, matched exactly as Python's `re` matches `modeleye.OPENER_PATTERN` and
//! `BRACKET_OPENER_PATTERN` (leftmost; among the matches at one position, the first in the
//! regex's backtracking order), by hand: no regex engine, constant work per opener.
//!
//! The pattern: one character of the family, or
//! `&` + up to 16 `&`-layers (`amp;?`, `#0{0,256}38(?![0-9]);?`, `#x0{0,256}26(?![0-9a-f]);?`,
//! case-insensitive letters) + one final reference (`[lL][tT];?` for '<' only, then the entity
//! names whose value is in the family, each with `;`, then `#0{0,256}CODE(?![0-9]);?`,
//! then `#[xX]0{0,256}HEX(?![0-9a-fA-F]);?`).

use crate::chars;
use crate::tables as t;

/// The two opener families.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// `<` and its look-alikes (`OPENER_PATTERN`).
    Angle,
    /// `[` and its look-alikes (`BRACKET_OPENER_PATTERN`).
    Bracket,
}

impl Family {
    fn set(self) -> &'static [u32] {
        match self {
            Family::Angle => t::LT,
            Family::Bracket => t::LBRACKET,
        }
    }
    fn names(self) -> &'static [&'static str] {
        match self {
            Family::Angle => t::LT_REF_NAMES,
            Family::Bracket => t::LBRACKET_REF_NAMES,
        }
    }
    fn bit(self) -> u16 {
        match self {
            Family::Angle => chars::LT,
            Family::Bracket => chars::LBRACKET,
        }
    }
    pub fn is_bracket(self) -> bool {
        self == Family::Bracket
    }
}

#[inline]
fn digit_run(b: &[u8], k: usize, hex: bool) -> usize {
    let mut e = k;
    while e < b.len()
        && (if hex {
            b[e].is_ascii_hexdigit()
        } else {
            b[e].is_ascii_digit()
        })
    {
        e += 1;
    }
    e
}

/// The digits after `#` (or `#x`) starting at `start`: if the maximal run is at most 256 zeros
/// followed by a non-empty value without leading zeros that `accept`s, the end of the run.
fn code_run(b: &[u8], start: usize, hex: bool, accept: &dyn Fn(u64) -> bool) -> Option<usize> {
    let end = digit_run(b, start, hex);
    let zeros = b[start..end].iter().take_while(|&&c| c == b'0').count();
    if zeros > t::MAX_ZEROS || zeros == end - start {
        return None;
    }
    let digits = &b[start + zeros..end];
    if digits.len() > 8 {
        return None; // longer than any code point
    }
    let radix = if hex { 16 } else { 10 };
    let mut v: u64 = 0;
    for &c in digits {
        v = v * radix + u64::from((c as char).to_digit(radix as u32).unwrap_or(0));
    }
    accept(v).then_some(end)
}

#[inline]
fn semi(b: &[u8], e: usize) -> usize {
    if e < b.len() && b[e] == b';' {
        e + 1
    } else {
        e
    }
}

/// One `&`-layer at `j`: its end (`;` taken greedily).
fn amp_layer(b: &[u8], j: usize) -> Option<usize> {
    if j + 3 <= b.len() && b[j..j + 3].eq_ignore_ascii_case(b"amp") {
        return Some(semi(b, j + 3));
    }
    if j < b.len() && b[j] == b'#' {
        let hex = j + 1 < b.len() && (b[j + 1] == b'x' || b[j + 1] == b'X');
        let start = if hex { j + 2 } else { j + 1 };
        let want = 38; // `&#38;` and `&#x26;`: the same code point
        return code_run(b, start, hex, &|v| v == want).map(|e| semi(b, e));
    }
    None
}

/// Calls `f` with every end of a final reference at `j`, in the regex's order, until `f`
/// returns true; returns that end.
fn final_ends(b: &[u8], j: usize, fam: Family, f: &mut dyn FnMut(usize) -> bool) -> Option<usize> {
    let n = b.len();
    if j >= n {
        return None;
    }
    let try_end = |e: usize, f: &mut dyn FnMut(usize) -> bool| -> Option<usize> {
        // `;?` greedy: with the ';' first, then without.
        let with = semi(b, e);
        if f(with) {
            return Some(with);
        }
        if with != e && f(e) {
            return Some(e);
        }
        None
    };
    if fam == Family::Angle && j + 2 <= n && (b[j] | 0x20) == b'l' && (b[j + 1] | 0x20) == b't' {
        if let Some(e) = try_end(j + 2, f) {
            return Some(e);
        }
    }
    let c0 = b[j];
    if c0.is_ascii_alphabetic() {
        // Names longest first; at most one `name;` can match at one position.
        for name in fam.names() {
            let nb = name.as_bytes();
            let e = j + nb.len();
            if e < n && b[e] == b';' && &b[j..e] == nb && f(e + 1) {
                return Some(e + 1);
            }
        }
        return None;
    }
    if c0 == b'#' {
        let set = fam.set();
        let accept = |v: u64| v <= u64::from(u32::MAX) && set.binary_search(&(v as u32)).is_ok();
        if let Some(e) = code_run(b, j + 1, false, &accept) {
            if let Some(x) = try_end(e, f) {
                return Some(x);
            }
        }
        if j + 1 < n && (b[j + 1] == b'x' || b[j + 1] == b'X') {
            if let Some(e) = code_run(b, j + 2, true, &accept) {
                if let Some(x) = try_end(e, f) {
                    return Some(x);
                }
            }
        }
    }
    None
}

/// Every end of an opener match at byte `p`, in the regex's order, until `f` accepts one.
pub fn opener_ends(
    s: &str,
    p: usize,
    fam: Family,
    f: &mut dyn FnMut(usize) -> bool,
) -> Option<usize> {
    let b = s.as_bytes();
    let c = b[p];
    if c != b'&' {
        if c < 0x80 {
            if chars::has(c as char, fam.bit()) && f(p + 1) {
                return Some(p + 1);
            }
            return None;
        }
        let ch = crate::decode::char_at(s, p);
        if chars::has(ch, fam.bit()) && f(p + ch.len_utf8()) {
            return Some(p + ch.len_utf8());
        }
        return None;
    }
    // Greedy layers, then the final reference; on failure, one layer fewer (backtracking).
    let mut starts = [0usize; t::MAX_AMP_LAYERS + 1];
    let mut count = 0;
    let mut j = p + 1;
    starts[0] = j;
    while count < t::MAX_AMP_LAYERS {
        match amp_layer(b, j) {
            Some(e) => {
                j = e;
                count += 1;
                starts[count] = j;
            }
            None => break,
        }
    }
    loop {
        if let Some(e) = final_ends(b, starts[count], fam, f) {
            return Some(e);
        }
        if count == 0 {
            return None;
        }
        count -= 1;
    }
}

/// The opener `re.match` finds at `p` (its end), if any.
#[inline]
pub fn opener_at(s: &str, p: usize, fam: Family) -> Option<usize> {
    opener_ends(s, p, fam, &mut |_| true)
}

/// The first byte at or after `from` that is not ASCII (`b.len()` if none), eight at a time.
#[inline]
pub fn find_non_ascii(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i + 8 <= b.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        let x = u64::from_le_bytes(w) & 0x8080_8080_8080_8080;
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] < 0x80 {
        i += 1;
    }
    i
}

/// Finds the bytes that may start an opener: memchr over plain ASCII runs, a lead-byte
/// table over non-ASCII runs. Positions must be asked for in increasing order.
pub struct Candidates<'a> {
    b: &'a [u8],
    fam: Family,
    fast: chars::Fast,
    /// The next non-ASCII byte at or after the last position asked for.
    na: usize,
}

impl<'a> Candidates<'a> {
    pub fn new(b: &'a [u8], fam: Family) -> Self {
        Candidates {
            b,
            fam,
            fast: chars::Fast::get(),
            na: find_non_ascii(b, 0),
        }
    }

    /// The next byte at or after `from` that may start an opener of the family.
    #[inline]
    pub fn next_from(&mut self, from: usize) -> Option<usize> {
        let b = self.b;
        let n = b.len();
        let (a1, a2) = if self.fam.is_bracket() {
            (b'[', b'&')
        } else {
            (b'<', b'&')
        };
        let mut i = from;
        // Dense openers (`<<<<`, `&lt;&lt;`): the next byte is often one.
        if i < n && (b[i] == a1 || b[i] == a2) {
            return Some(i);
        }
        while i < n {
            if self.na < i {
                self.na = find_non_ascii(b, i);
            }
            // Short ASCII runs (between words of non-Latin text) byte by byte, long ones by memchr.
            if self.na - i < 16 {
                while i < self.na {
                    if b[i] == a1 || b[i] == a2 {
                        return Some(i);
                    }
                    i += 1;
                }
            } else if let Some(k) = memchr::memchr2(a1, a2, &b[i..self.na]) {
                return Some(i + k);
            }
            if self.na >= n {
                return None;
            }
            i = self.na;
            let bracket = self.fam.is_bracket();
            // Byte by byte (continuation bytes never pass the lead-byte table; a loop without a
            // data-dependent step is faster than one that jumps a character at a time).
            while i < n && b[i] >= 0x80 {
                if self.fast.may_start(b, i, bracket) {
                    return Some(i);
                }
                i += 1;
            }
        }
        None
    }
}

/// Iterates the openers of one family as `re.finditer` does: (start, end) byte offsets.
pub struct Openers<'a> {
    s: &'a str,
    pos: usize,
    fam: Family,
    cand: Candidates<'a>,
}

impl<'a> Openers<'a> {
    pub fn new(s: &'a str, fam: Family) -> Self {
        Openers {
            s,
            pos: 0,
            fam,
            cand: Candidates::new(s.as_bytes(), fam),
        }
    }
}

impl Iterator for Openers<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let b = self.s.as_bytes();
        loop {
            let p = self.cand.next_from(self.pos)?;
            if let Some(e) = opener_at(self.s, p, self.fam) {
                self.pos = e;
                return Some((p, e));
            }
            // No match here: the next character.
            self.pos = p + crate::decode::utf8_width(b[p]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &str, fam: Family) -> Vec<&str> {
        Openers::new(s, fam).map(|(a, e)| &s[a..e]).collect()
    }

    #[test]
    fn openers() {
        assert_eq!(all("a<b", Family::Angle), vec!["<"]);
        assert_eq!(
            all("&lt;&LT&ltcc;&Lt;", Family::Angle),
            vec!["&lt;", "&LT", "&lt", "&Lt;"]
        );
        assert_eq!(
            all("&amp;lt;&amplt;&#38;lt;&#x26;#x3C;", Family::Angle),
            vec!["&amp;lt;", "&amplt;", "&#38;lt;", "&#x26;#x3C;"]
        );
        assert_eq!(
            all("&#0060;&#600;&#60x&lang;&lang", Family::Angle),
            vec!["&#0060;", "&#60", "&lang;"]
        );
        assert_eq!(
            all("\u{ff1c}x\u{2039}", Family::Angle),
            vec!["\u{ff1c}", "\u{2039}"]
        );
        assert_eq!(
            all("[a&lsqb;&#91;\u{ff3b}", Family::Bracket),
            vec!["[", "&lsqb;", "&#91;", "\u{ff3b}"]
        );
        let z = format!("&#{}60;&#{}60;", "0".repeat(256), "0".repeat(257));
        assert_eq!(all(&z, Family::Angle).len(), 1);
        let deep = format!("&{}lt;", "amp;".repeat(16));
        assert_eq!(all(&deep, Family::Angle), vec![deep.as_str()]);
        let deeper = format!("&{}lt;", "amp;".repeat(17));
        assert!(all(&deeper, Family::Angle).is_empty());
    }

    #[test]
    fn undo_order() {
        // `(OPENER)\\` backtracks into the names: `&ltcc;\` ends after `&ltcc;`.
        let s = "&ltcc;\\";
        assert_eq!(
            opener_ends(s, 0, Family::Angle, &mut |e| s.as_bytes().get(e)
                == Some(&b'\\')),
            Some(6)
        );
    }
}
