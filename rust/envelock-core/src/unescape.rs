//! `scan._base._decode_escapes` in Rust, held equal to the Python reference (which stays the
//! reference: `tests/scan/test_decode_escapes_native.py`).
//!
//! Up to `rounds` rounds (the caller's `_base.ESCAPE_LAYERS`), each: `html.unescape`, quoted-printable soft breaks removed,
//! `_ESC_RE.sub(_esc_char, …)`, then `urllib.parse.unquote(…, errors="replace")`. `_ESC_RE` is
//! matched by hand: every item of it is ASCII, so it is matched on bytes, and at each position
//! its alternatives are tried in the order Python's backtracking engine tries them.

use std::borrow::Cow;

use crate::decode;

/// `_decode_escapes(s)` in up to `rounds` rounds, or `None` where Python's answer holds a lone
/// surrogate (a UTF-7 segment decoding to one), which a `String` cannot: the caller then runs the
/// Python reference.
pub fn decode_escapes(s: &str, rounds: usize) -> Option<String> {
    let mut window: Cow<'_, str> = Cow::Borrowed(s);
    for _ in 0..rounds {
        let mut plain: Cow<'_, str> = if window.contains('&') {
            html_unescape(&window)
        } else {
            Cow::Borrowed(&window)
        };
        if plain.contains('=') {
            // Each a single pass, as `str.replace`: what a removal joins is not looked at again.
            for soft in ["=\r\n", "=\n"] {
                if plain.contains(soft) {
                    plain = Cow::Owned(plain.replace(soft, ""));
                }
            }
        }
        let subbed = escapes_sub(&plain)?;
        let new = unquote(&subbed);
        if *new == *window {
            break;
        }
        window = Cow::Owned(new.into_owned());
    }
    Some(window.into_owned())
}

/// `html.unescape(s)`: each `&` that starts a reference replaced by its value
/// ([`decode::decode_ref_body`], `html.unescape`'s rules), scanning on after it.
pub fn html_unescape(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'&', &b[from..]) {
        let i = from + k;
        match decode::decode_ref_body(b, i + 1) {
            Some((piece, end)) => {
                out.push_str(&s[last..i]);
                out.extend(piece.as_slice());
                last = end;
                from = end;
            }
            None => from = i + 1,
        }
    }
    if last == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `urllib.parse.unquote(s, errors="replace")`: `%XX` as a byte, the bytes read as UTF-8 with
/// U+FFFD for each maximal invalid subpart. Python decodes each ASCII run apart; decoding the
/// whole is the same, as the text between runs is whole UTF-8 sequences, which a lossy decoder
/// neither joins to an invalid subpart before them nor starts one inside.
pub fn unquote(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    if memchr::memchr(b'%', b).is_none() {
        return Cow::Borrowed(s);
    }
    // Text while every decoded byte is ASCII (no UTF-8 to check), bytes from the first other one on.
    let mut text = String::with_capacity(b.len());
    let mut bytes: Option<Vec<u8>> = None;
    let mut last = 0;
    for i in memchr::memchr_iter(b'%', b) {
        let digit = |k: usize| b.get(k).and_then(|&x| hex_val(x));
        let (Some(h), Some(l)) = (digit(i + 1), digit(i + 2)) else {
            continue;
        };
        let v = h << 4 | l;
        match bytes.as_mut() {
            Some(out) => {
                out.extend_from_slice(&b[last..i]);
                out.push(v);
            }
            None if v < 0x80 => {
                text.push_str(&s[last..i]);
                text.push(char::from(v));
            }
            None => {
                // `text` ends before a `%`: no sequence spans it and the bytes after.
                text.push_str(&s[last..i]);
                bytes = Some(vec![v]);
            }
        }
        last = i + 3;
    }
    Cow::Owned(match bytes {
        None => {
            text.push_str(&s[last..]);
            text
        }
        Some(mut out) => {
            out.extend_from_slice(&b[last..]);
            push_lossy(&mut text, &out);
            text
        }
    })
}

/// `String::from_utf8_lossy(b)` appended to `out`: U+FFFD for each maximal invalid subpart
/// (`Utf8Error::error_len`, what the lossy decoder replaces), the valid runs checked by `from_utf8`,
/// quicker than the lossy decoder's chunks.
fn push_lossy(out: &mut String, mut b: &[u8]) {
    loop {
        match std::str::from_utf8(b) {
            Ok(t) => return out.push_str(t),
            Err(e) => {
                let (good, rest) = b.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                out.push('\u{fffd}');
                match e.error_len() {
                    Some(k) => b = &rest[k..],
                    None => return,
                }
            }
        }
    }
}

#[inline]
fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[inline]
fn is_hex(b: &[u8], i: usize) -> bool {
    b.get(i).is_some_and(u8::is_ascii_hexdigit)
}

#[inline]
fn byte_is(b: &[u8], i: usize, f: impl Fn(u8) -> bool) -> bool {
    b.get(i).is_some_and(|&c| f(c))
}

/// The value of hex digits (at most eight: it fits).
fn hex_of(d: &[u8]) -> u32 {
    d.iter()
        .fold(0, |v, &c| v << 4 | u32::from(hex_val(c).unwrap_or(0)))
}

/// What one match of `_ESC_RE` is replaced by.
enum Repl {
    /// A code point from a numeric form (the match itself when it is no character).
    Code(u32),
    Char(char),
    /// A UTF-8 run (group 1): its bytes, read as UTF-8 or else as Latin-1.
    Utf8([u8; 4], usize),
    /// A UTF-7 segment (group 12): its UTF-16 units, or the match itself on a decoding error.
    Utf7(Option<Vec<u16>>),
}

/// `\{1,4}` at `p` followed by `x` (the backtracking engine can only end the run at its end, as
/// nothing after it is a backslash): the index of the `x`.
#[inline]
fn backslashes_then(b: &[u8], p: usize, then: u8) -> Option<usize> {
    let r = b[p..].iter().take(5).take_while(|&&c| c == b'\\').count();
    ((1..=4).contains(&r) && b.get(p + r) == Some(&then)).then_some(p + r)
}

/// Group 1 at `p`: a lead byte then one to three continuation bytes, each written `\{1,4}xHH`
/// (`bs`) or `=HH`. The end and the bytes.
fn utf8_run(b: &[u8], p: usize, bs: bool) -> Option<(usize, [u8; 4], usize)> {
    let unit = |at: usize, lead: bool| -> Option<(usize, u8)> {
        let h = if bs {
            backslashes_then(b, at, b'x')? + 1
        } else if b.get(at) == Some(&b'=') {
            at + 1
        } else {
            return None;
        };
        let ok = |c: u8| {
            if lead {
                matches!(c, b'c'..=b'f' | b'C'..=b'F')
            } else {
                matches!(c, b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
            }
        };
        if !byte_is(b, h, ok) || !is_hex(b, h + 1) {
            return None;
        }
        Some((h + 2, hex_of(&b[h..h + 2]) as u8))
    };
    let (mut at, lead) = unit(p, true)?;
    let mut bytes = [lead, 0, 0, 0];
    let mut n = 1;
    while n < 4 {
        let Some((e, c)) = unit(at, false) else { break };
        bytes[n] = c;
        n += 1;
        at = e;
    }
    (n >= 2).then_some((at, bytes, n))
}

/// `\{0,16}` zeros then one to six hex digits then `}`, from `at` (just after the `{`): the end
/// and the value. The digits taken must reach `}`, so the hex run from `at` is all of them: at
/// most 22, at most six past its leading zeros.
fn braced(b: &[u8], at: usize) -> Option<(usize, u32)> {
    let run = b[at..]
        .iter()
        .take(23)
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    let zeros = b[at..at + run].iter().take_while(|&&c| c == b'0').count();
    if run == 0 || run > 22 || run > zeros + 6 || b.get(at + run) != Some(&b'}') {
        return None;
    }
    Some((at + run + 1, hex_of(&b[at + zeros..at + run])))
}

/// The backslash forms after the run of backslashes (`q`, its end): `u`, `u{}`, `x`, `x{}`, `U`,
/// octal unless a hex digit follows, one to six hex digits and an optional space.
fn backslash_form(b: &[u8], q: usize) -> Option<(usize, Repl)> {
    let hex_n = |at: usize, k: usize| (0..k).all(|j| is_hex(b, at + j));
    match b.get(q)? {
        c @ (b'u' | b'x') => {
            let k = if *c == b'u' { 4 } else { 2 };
            if hex_n(q + 1, k) {
                return Some((q + 1 + k, Repl::Code(hex_of(&b[q + 1..q + 1 + k]))));
            }
            if b.get(q + 1) == Some(&b'{') {
                let (e, v) = braced(b, q + 2)?;
                return Some((e, Repl::Code(v)));
            }
            None
        }
        b'U' => hex_n(q + 1, 8).then(|| (q + 9, Repl::Code(hex_of(&b[q + 1..q + 9])))),
        _ => {
            let oct = |c: u8| (b'0'..=b'7').contains(&c);
            if (0..3).all(|j| byte_is(b, q + j, oct)) && !is_hex(b, q + 3) {
                let v = b[q..q + 3]
                    .iter()
                    .fold(0, |v, &c| v * 8 + u32::from(c - b'0'));
                return Some((q + 3, Repl::Code(v)));
            }
            let run = b[q..]
                .iter()
                .take(6)
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if run == 0 {
                return None;
            }
            let v = hex_of(&b[q..q + run]);
            let e = q + run + usize::from(b.get(q + run) == Some(&b' '));
            Some((e, Repl::Code(v)))
        }
    }
}

#[inline]
fn base64_val(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// `+` base64 `-` decoded by CPython's UTF-7 decoder (strict): its UTF-16 units, or `None` on its
/// errors at the closing `-` (a partial character: six bits or more left; non-zero padding bits).
pub(crate) fn utf7_units(digits: &[u8]) -> Option<Vec<u16>> {
    let mut units = Vec::new();
    let (mut buf, mut bits) = (0u32, 0u32);
    for &c in digits {
        buf = buf << 6 | base64_val(c)?;
        bits += 6;
        if bits >= 16 {
            units.push((buf >> (bits - 16)) as u16);
            bits -= 16;
            buf &= (1 << bits) - 1;
        }
    }
    (bits < 6 && buf == 0).then_some(units)
}

/// The match of `_ESC_RE` at `p` (leftmost-first: its alternatives in order): its end and what
/// replaces it.
fn match_at(b: &[u8], p: usize) -> Option<(usize, Repl)> {
    match b[p] {
        b'\\' => {
            if let Some((e, bytes, n)) = utf8_run(b, p, true) {
                return Some((e, Repl::Utf8(bytes, n)));
            }
            let r = b[p..].iter().take(5).take_while(|&&c| c == b'\\').count();
            if r > 4 {
                return None;
            }
            backslash_form(b, p + r)
        }
        b'=' => {
            if let Some((e, bytes, n)) = utf8_run(b, p, false) {
                return Some((e, Repl::Utf8(bytes, n)));
            }
            (is_hex(b, p + 1) && is_hex(b, p + 2))
                .then(|| (p + 3, Repl::Code(hex_of(&b[p + 1..p + 3]))))
        }
        b'%' => (byte_is(b, p + 1, |c| c == b'u' || c == b'U') && (2..6).all(|j| is_hex(b, p + j)))
            .then(|| (p + 6, Repl::Code(hex_of(&b[p + 2..p + 6])))),
        b'+' => {
            let short = match b.get(p + 1..p + 4) {
                Some(b"ADw") => Some('<'),
                Some(b"AD4") => Some('>'),
                Some(b"AC8") => Some('/'),
                _ => None,
            };
            if let Some(c) = short {
                return Some((
                    p + 4 + usize::from(b.get(p + 4) == Some(&b'-')),
                    Repl::Char(c),
                ));
            }
            let run = b[p + 1..]
                .iter()
                .take(17)
                .take_while(|&&c| base64_val(c).is_some())
                .count();
            if !(2..=16).contains(&run) || b.get(p + 1 + run) != Some(&b'-') {
                return None;
            }
            Some((p + run + 2, Repl::Utf7(utf7_units(&b[p + 1..p + 1 + run]))))
        }
        _ => None,
    }
}

/// `_ESC_RE.sub(_esc_char, s)`; `None` when a replacement is a lone surrogate.
fn escapes_sub(s: &str) -> Option<Cow<'_, str>> {
    let b = s.as_bytes();
    let mut out: Option<String> = None;
    let mut last = 0;
    let n = b.len();
    // The next `%` and the next of `\\`, `=`, `+` at or after `i` (where a match can start).
    let mut pct = memchr::memchr(b'%', b).unwrap_or(n);
    let mut other = memchr::memchr3(b'\\', b'=', b'+', b).unwrap_or(n);
    let mut i = 0;
    loop {
        if pct < i {
            pct = memchr::memchr(b'%', &b[i..]).map_or(n, |k| i + k);
        }
        if other < i {
            other = memchr::memchr3(b'\\', b'=', b'+', &b[i..]).map_or(n, |k| i + k);
        }
        i = pct.min(other);
        if i >= n {
            break;
        }
        let Some((end, repl)) = match_at(b, i) else {
            i += 1;
            continue;
        };
        let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
        o.push_str(&s[last..i]);
        let matched = &s[i..end];
        match repl {
            // NUL too, as Python's `chr` (no surrogate, nothing past U+10FFFF).
            Repl::Code(v) => match char::from_u32(v) {
                Some(c) => o.push(c),
                None => o.push_str(matched),
            },
            Repl::Char(c) => o.push(c),
            Repl::Utf8(bytes, n) => match std::str::from_utf8(&bytes[..n]) {
                Ok(t) => o.push_str(t),
                Err(_) => o.extend(bytes[..n].iter().map(|&c| char::from(c))),
            },
            Repl::Utf7(None) => o.push_str(matched),
            Repl::Utf7(Some(units)) => {
                for c in char::decode_utf16(units) {
                    o.push(c.ok()?);
                }
            }
        }
        last = end;
        i = end;
    }
    Some(match out {
        None => Cow::Borrowed(s),
        Some(mut o) => {
            o.push_str(&s[last..]);
            Cow::Owned(o)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::decode_escapes as d;

    fn de(s: &str) -> String {
        d(s, 3).expect("a string")
    }

    #[test]
    fn fixed_cases() {
        assert_eq!(de("plain text"), "plain text");
        assert_eq!(de("%3Cs%3E"), "<s>");
        assert_eq!(de("\\x3cs\\x3e"), "<s>");
        assert_eq!(de("%253C"), "<"); // two rounds
        assert_eq!(de("%25253C"), "<"); // three
        assert_eq!(de("%2525253C"), "%3C"); // not four
        assert_eq!(d("%252525252525253C", 8).as_deref(), Some("<")); // eight, when asked
        assert_eq!(de("&amp;lt;"), "<");
        assert_eq!(
            de("&lt &ltx &#0; &#x110000; &#1;"),
            "< <x \u{fffd} \u{fffd} "
        );
        assert_eq!(de("\\fB"), "\u{fb}"); // roff read as CSS
        assert_eq!(de("\\00002f"), "/"); // octal needs no hex digit after it
        assert_eq!(de("\\101z \\1012"), "Az \u{1012}");
        assert_eq!(de("\\41 x"), "Ax");
        // Five backslashes: the first stays, and round two reads `\A` as hex.
        assert_eq!(de("\\\\\\\\\\x41"), "\n");
        assert_eq!(de("\\u{000000007c}"), "|");
        assert_eq!(de("\\ud800"), "\\ud800");
        assert_eq!(de("\\U0010FFFF\\U00110000"), "\u{10ffff}\\U00110000");
        assert_eq!(de("\\xef\\xbd\\x9c"), "\u{ff5c}");
        assert_eq!(de("=C3=A9=\n=3C"), "\u{e9}<");
        assert_eq!(de("=c3=c3"), "\u{c3}\u{c3}");
        assert_eq!(de("\\xc3\\xa9\\xa9"), "\u{c3}\u{a9}\u{a9}"); // not UTF-8: Latin-1
        assert_eq!(de("+ADw-s+AD4"), "<s>");
        assert_eq!(de("+AF8-"), "_");
        assert_eq!(de("+2D3cAA-"), "\u{1f400}");
        assert_eq!(de("+AG-"), "+AG-");
        assert_eq!(d("+3AA-", 3), None); // a lone surrogate
        assert_eq!(de("%u003C%C3%A9%C3"), "<\u{e9}\u{fffd}");
        assert_eq!(de("%F0%80%80"), "\u{fffd}\u{fffd}\u{fffd}");
    }
}
