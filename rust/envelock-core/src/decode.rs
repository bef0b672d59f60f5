//! Character references decoded exactly as `reader._decode_at` does (which decodes as
//! Python's `html.unescape` would, one reference at a time, with `&`-layers).
//!
//! Every reference consumed is ASCII (`&#…;`, `&#x…;`, or an HTML5 name), so the number of
//! bytes a reference takes is also its number of code points.

use crate::tables as t;

/// What the eye reads at one position: at most two characters (an HTML5 value is at most
/// two; a numeric reference may decode to nothing).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Piece {
    chars: [char; 2],
    len: u8,
}

impl Piece {
    pub const EMPTY: Piece = Piece {
        chars: ['\0'; 2],
        len: 0,
    };

    pub fn one(c: char) -> Piece {
        Piece {
            chars: [c, '\0'],
            len: 1,
        }
    }

    fn from_str(s: &str) -> Piece {
        let mut p = Piece::EMPTY;
        for c in s.chars() {
            // HTML5 values are at most two characters (checked by a test).
            if usize::from(p.len) < 2 {
                p.chars[usize::from(p.len)] = c;
                p.len += 1;
            }
        }
        p
    }

    pub fn as_slice(&self) -> &[char] {
        &self.chars[..usize::from(self.len)]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn first(&self) -> Option<char> {
        self.as_slice().first().copied()
    }

    pub fn is_char(&self, c: char) -> bool {
        self.len == 1 && self.chars[0] == c
    }
}

/// An open-addressing hash table over `HTML5` (FNV-1a), built once: a lookup hashes the name
/// once and compares one or two keys (a binary search compares eleven).
struct Html5Index {
    slots: Vec<u16>,
    mask: usize,
}

#[inline]
fn fnv(name: &[u8]) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as usize
}

static HTML5_INDEX: std::sync::LazyLock<Html5Index> = std::sync::LazyLock::new(|| {
    let size = (t::HTML5.len() * 4).next_power_of_two();
    let mask = size - 1;
    let mut slots = vec![0u16; size];
    for (k, (name, _)) in t::HTML5.iter().enumerate() {
        let mut h = fnv(name.as_bytes()) & mask;
        while slots[h] != 0 {
            h = (h + 1) & mask;
        }
        slots[h] = u16::try_from(k + 1).unwrap_or(u16::MAX);
    }
    Html5Index { slots, mask }
});

/// `html.entities.html5[name]`.
pub fn html5(name: &[u8]) -> Option<&'static str> {
    if name.len() > 33 {
        return None;
    }
    let idx: &Html5Index = &HTML5_INDEX;
    let mut h = fnv(name) & idx.mask;
    loop {
        match idx.slots[h] {
            0 => return None,
            k => {
                let (key, value) = t::HTML5[usize::from(k) - 1];
                if key.as_bytes() == name {
                    return Some(value);
                }
            }
        }
        h = (h + 1) & idx.mask;
    }
}

/// The character `html.unescape` gives a numeric reference (`None`: nothing, an invalid code point).
pub fn numeric_value(num: u64) -> Option<char> {
    if num <= u64::from(u32::MAX) {
        let n = num as u32;
        if let Ok(k) = t::INVALID_CHARREFS.binary_search_by(|(c, _)| c.cmp(&n)) {
            return char::from_u32(t::INVALID_CHARREFS[k].1);
        }
    }
    if (0xD800..=0xDFFF).contains(&num) || num > 0x10FFFF {
        return Some('\u{fffd}');
    }
    let n = num as u32;
    if t::INVALID_CODEPOINTS.binary_search(&n).is_ok() {
        return None;
    }
    char::from_u32(n)
}

#[inline]
fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Significant digits beyond which a numeric reference is certainly above U+10FFFF (eight hex
/// digits, nine decimal ones): `reader._BIG_DIGITS`. Its value is U+FFFD whatever the digits.
const BIG_DIGITS: usize = 8;

/// `_REF_BODY_RE` matched at `body` (just after an `&`, or after a layer), decoded as
/// `reader._decode_body` does: the piece and the index after the reference, or `None`
/// when no reference is there (the `&` reads as itself).
#[inline]
pub fn decode_ref_body(b: &[u8], body: usize) -> Option<(Piece, usize)> {
    let n = b.len();
    if body >= n {
        return None;
    }
    if b[body] == b'#' {
        let (hex, start) = if body + 1 < n && (b[body + 1] == b'x' || b[body + 1] == b'X') {
            (true, body + 2)
        } else {
            (false, body + 1)
        };
        let mut k = start;
        while k < n
            && (if hex {
                is_hex(b[k])
            } else {
                b[k].is_ascii_digit()
            })
        {
            k += 1;
        }
        let run = k - start;
        if run == 0 {
            return None; // '#' cannot start a name either
        }
        // Every digit belongs to the reference (`html.unescape`: any number of leading zeros);
        // the value is computed from the significant digits only, once.
        let zeros = b[start..k].iter().take_while(|&&c| c == b'0').count();
        let digits = &b[start + zeros..k];
        let mut num: u64 = 0;
        if digits.len() > BIG_DIGITS {
            num = u64::from(u32::MAX) + 1; // above U+10FFFF: U+FFFD
        } else {
            for &c in digits {
                let v = (c as char).to_digit(if hex { 16 } else { 10 }).unwrap_or(0);
                num = num * if hex { 16 } else { 10 } + u64::from(v);
            }
        }
        let mut end = k;
        if end < n && b[end] == b';' {
            end += 1;
        }
        let piece = match numeric_value(num) {
            Some(c) => Piece::one(c),
            None => Piece::EMPTY,
        };
        return Some((piece, end));
    }
    // A name: up to 32 characters outside "\t\n\f <&#;", then an optional ';'.
    let s = &b[body..];
    let mut k = 0; // bytes
    let mut cps = 0;
    let mut ascii_prefix = 0; // leading ASCII characters
    while k < s.len() && cps < 32 {
        let c = s[k];
        if matches!(
            c,
            b'\t' | b'\n' | b'\x0c' | b' ' | b'<' | b'&' | b'#' | b';'
        ) {
            break;
        }
        let w = utf8_width(c);
        if c < 0x80 && ascii_prefix == cps {
            ascii_prefix += 1;
        }
        k += w;
        cps += 1;
    }
    if cps == 0 {
        return None;
    }
    let mut name_end = k;
    let mut name_cps = cps;
    if k < s.len() && s[k] == b';' {
        name_end += 1;
        name_cps += 1;
        if ascii_prefix == cps {
            ascii_prefix += 1;
        }
    }
    if ascii_prefix == name_cps {
        if let Some(v) = html5(&s[..name_end]) {
            return Some((Piece::from_str(v), body + name_end));
        }
    }
    let top = name_cps.min(t::LEGACY_MAX);
    let mut kk = top;
    while kk >= 2 {
        if kk <= ascii_prefix {
            if let Some(v) = html5(&s[..kk]) {
                return Some((Piece::from_str(v), body + kk));
            }
        }
        kk -= 1;
    }
    None
}

/// Width of the UTF-8 sequence a lead byte starts.
#[inline]
pub fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The character at byte `i` of valid UTF-8 (`i` on a boundary).
#[inline]
pub fn char_at(s: &str, i: usize) -> char {
    let b = s.as_bytes()[i];
    if b < 0x80 {
        b as char
    } else {
        s[i..].chars().next().unwrap_or('\u{fffd}')
    }
}

/// `reader._decode_at`: (piece, byte index after it, code points consumed).
#[inline]
pub fn decode_at(s: &str, i: usize) -> (Piece, usize, usize) {
    let b = s.as_bytes();
    if b[i] != b'&' {
        let c = char_at(s, i);
        return (Piece::one(c), i + c.len_utf8(), 1);
    }
    let Some((mut piece, mut nxt)) = decode_ref_body(b, i + 1) else {
        return (Piece::one('&'), i + 1, 1);
    };
    let mut layers = 0;
    while piece.is_char('&') && layers < t::MAX_AMP_LAYERS && nxt < b.len() {
        // `_decode_body(text, nxt)`: the rest read as the body of another reference.
        match decode_ref_body(b, nxt) {
            Some((inner, e)) => {
                piece = inner;
                nxt = e;
                layers += 1;
            }
            None => break,
        }
    }
    (piece, nxt, nxt - i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> (String, usize) {
        let (p, e, cps) = decode_at(s, 0);
        assert_eq!(cps, s[..e].chars().count());
        (p.as_slice().iter().collect(), e)
    }

    #[test]
    fn references() {
        assert_eq!(d("&lt;x"), ("<".into(), 4));
        assert_eq!(d("&ltx"), ("<".into(), 3));
        assert_eq!(d("&LTfoo"), ("<".into(), 3));
        assert_eq!(d("&amp;lt;"), ("<".into(), 8));
        assert_eq!(d("&amplt;"), ("<".into(), 7));
        assert_eq!(d("&#38;lt;"), ("<".into(), 8));
        assert_eq!(d("&#x26;#x3c;"), ("<".into(), 11));
        assert_eq!(d("&#0000060"), ("<".into(), 9));
        assert_eq!(d("&#1;"), ("".into(), 4));
        assert_eq!(d("&#0;"), ("\u{fffd}".into(), 4));
        assert_eq!(d("&#13;"), ("\r".into(), 5));
        assert_eq!(d("&#x80;"), ("\u{20ac}".into(), 6));
        assert_eq!(d("&#123456789"), ("\u{fffd}".into(), 11));
        assert_eq!(d("&#xD800;"), ("\u{fffd}".into(), 8));
        assert_eq!(d("&#;"), ("&".into(), 1));
        assert_eq!(d("&#x;"), ("&".into(), 1));
        assert_eq!(d("&nosuch;"), ("&".into(), 1));
        assert_eq!(d("&notin;"), ("\u{2209}".into(), 7));
        assert_eq!(d("&notit;"), ("\u{ac}".into(), 4));
        assert_eq!(d("&fjlig;"), ("fj".into(), 7));
        assert_eq!(d("&amp;"), ("&".into(), 5));
        assert_eq!(d("&amp;amp;"), ("&".into(), 9));
        assert_eq!(d("&amp;é"), ("&".into(), 5));
        // Any number of leading zeros, and any number of significant digits (U+FFFD past U+10FFFF).
        for zeros in [0, 1, 255, 256, 257, 300, 10_000] {
            let z = format!("&#{}60;", "0".repeat(zeros));
            assert_eq!(d(&z), ("<".into(), z.len()));
            let x = format!("&#x{}3C;", "0".repeat(zeros));
            assert_eq!(d(&x), ("<".into(), x.len()));
        }
        assert_eq!(d("&#123456789;"), ("\u{fffd}".into(), 12));
        assert_eq!(d("&#x123456789;"), ("\u{fffd}".into(), 13));
        assert_eq!(d("&#0000000000000;"), ("\u{fffd}".into(), 16));
    }
}
