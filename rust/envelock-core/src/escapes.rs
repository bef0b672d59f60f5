//! Where the encoded pass's escapes can start (`envelock.scan.encoded._SCHEME_STARTS`): each scheme
//! is an introducer byte and the byte classes the next one or two bytes must be in, a necessary
//! condition the Python side derives from its regex and argues there. Here the text is only
//! searched for them; the regexes still decide every match (`tests/scan/test_scan_encoded_starts.py`
//! holds these starts equal to a Python loop and the windowed regex passes equal to whole ones).

use crate::opener::{Family, Openers};

/// One scheme's start: `introducer`, then a byte of `second`, then (when `third` is not empty) a byte
/// of `third`. All ASCII.
pub struct SchemeStart {
    introducer: u8,
    second: [bool; 256],
    third: Option<[bool; 256]>,
}

impl SchemeStart {
    /// `None` for a start that is not ASCII (the caller then runs its regex over the whole text).
    pub fn new(introducer: &str, second: &str, third: &str) -> Option<SchemeStart> {
        let set = |s: &str| {
            let mut t = [false; 256];
            s.bytes().for_each(|c| t[usize::from(c)] = true);
            t
        };
        let ascii = introducer.is_ascii() && second.is_ascii() && third.is_ascii();
        let introducer = match introducer.as_bytes() {
            [c] => *c,
            _ => return None,
        };
        (ascii && !second.is_empty()).then(|| SchemeStart {
            introducer,
            second: set(second),
            third: (!third.is_empty()).then(|| set(third)),
        })
    }

    fn starts_at(&self, b: &[u8], i: usize) -> bool {
        let second = b.get(i + 1).is_some_and(|&c| self.second[usize::from(c)]);
        second
            && self
                .third
                .as_ref()
                .map_or(true, |t| b.get(i + 2).is_some_and(|&c| t[usize::from(c)]))
    }
}

/// The characters an escape must decode to for the encoded pass to act on it: the first
/// characters of tags and tokens, and the escapes' own introducers (`encoded._loud`, from the
/// reader's tables). An escape of a fixed shape that decodes to none of them is quiet
/// ([`quiet_at`]). Also the escape plan's sets of characters (`escape_plan::CharSet`).
pub struct Loud {
    ascii: [bool; 128],
    other: Vec<u32>,
}

impl Loud {
    pub fn new(chars: &str) -> Loud {
        let mut ascii = [false; 128];
        let mut other = Vec::new();
        for c in chars.chars() {
            match usize::try_from(u32::from(c)) {
                Ok(k) if k < 128 => ascii[k] = true,
                _ => other.push(u32::from(c)),
            }
        }
        other.sort_unstable();
        other.dedup();
        Loud { ascii, other }
    }

    /// Is code point `v` one of the characters (a lone surrogate never is: a `&str` holds none)?
    pub(crate) fn has(&self, v: u32) -> bool {
        match usize::try_from(v) {
            Ok(k) if k < 128 => self.ascii[k],
            _ => self.other.binary_search(&v).is_ok(),
        }
    }

    /// `encoded._code_point(v)` (no character for 0, a surrogate or past U+10FFFF) is one of them.
    fn has_code_point(&self, v: u64) -> bool {
        match u32::try_from(v) {
            Ok(v) => v != 0 && v <= 0x10_FFFF && !(0xD800..=0xDFFF).contains(&v) && self.has(v),
            Err(_) => false,
        }
    }
}

fn hex_at(b: &[u8], k: usize) -> Option<u32> {
    b.get(k).and_then(|&c| char::from(c).to_digit(16))
}

/// The value of the `count` hex digits at `k`, when they all are.
fn hex_value(b: &[u8], k: usize, count: usize) -> Option<u64> {
    (k..k + count).try_fold(0u64, |v, j| Some(v << 4 | u64::from(hex_at(b, j)?)))
}

/// The escaped byte whose two hex digits are at `k`, when its escape (`_utf8_run` of `encoded.py`)
/// is surely read as that one byte: an ASCII byte; a byte that cannot lead a sequence (`80`-`BF`,
/// `F8`-`FF`); or a lead not followed by another escape (`intro`, the form's introducer: a
/// continuation byte there would make it a sequence, left to the regex).
fn byte_alone(b: &[u8], k: usize, intro: u8) -> Option<u32> {
    let v = hex_at(b, k)? << 4 | hex_at(b, k + 1)?;
    (v < 0x80 || !(0xC0..0xF8).contains(&v) || b.get(k + 2) != Some(&intro)).then_some(v)
}

/// The backslashes at `i` (one to four, the most the backslash scheme takes before its letter), as
/// the offset past them; `None` for five or more.
fn past_backslashes(b: &[u8], i: usize) -> Option<usize> {
    let j = i + b[i..].iter().take(5).take_while(|&&c| c == b'\\').count();
    (j - i <= 4).then_some(j)
}

/// An escape whose regex match at its start (`encoded._SCHEMES`), if any, is fixed by its bytes,
/// and what it decodes to (`encoded._decodings`).
enum Shape {
    /// `=` or `%` and a byte read alone ([`byte_alone`]; not `%25`, which may be a double
    /// encoding), or one to four backslashes, `x` and a byte read alone: read as that byte (an
    /// ASCII byte as its character; another as U+FFFD and as its Latin-1 character,
    /// `_bytes_read`). `len` is the whole escape's. (A lone continuation byte may not match at all,
    /// by the lookbehind of `_utf8_run`; when it does, it is this long.)
    Byte { v: u32, len: usize },
    /// One to four backslashes and `u` with four hex digits (not a surrogate: a pair is read as one
    /// character) or `U` with eight: that code point (`_code_point`).
    CodePoint { v: u64, len: usize },
    /// One to four backslashes and hex digits, of which the regex takes up to six then an optional
    /// space: their value in hex, and in octal each of their first one to three digits that are
    /// all octal. Its length depends on what follows, so it has none here.
    Digits { at: usize, count: usize },
    /// A UTF-7 shift sequence (`+` and base64 letters): its first 16-bit unit, from its first three
    /// letters (not a surrogate, which may pair with the next). The regex takes two to sixteen
    /// letters: with two it fails to decode (nothing); with more the decoding, when there is one,
    /// starts with that unit. Only when none of the sixteen letters after the `+` is another `+`:
    /// such a `+` would be a start of its own inside this match. Its length depends on what
    /// follows, so it has none here.
    Utf7 { unit: u32 },
}

/// The value of a base64 letter of a UTF-7 shift sequence other than `+` (which would start an
/// escape of its own).
fn utf7_letter(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// The [`Shape::Utf7`] of the `+` at `i`: three base64 letters and no `+` among the sixteen
/// characters the regex may take.
fn utf7_at(b: &[u8], i: usize) -> Option<Shape> {
    let letters = b.get(i + 1..)?;
    if letters
        .iter()
        .take(16)
        .take_while(|&&c| c == b'+' || utf7_letter(c).is_some())
        .any(|&c| c == b'+')
    {
        return None;
    }
    let (a, m, z) = (
        utf7_letter(*letters.first()?)?,
        utf7_letter(*letters.get(1)?)?,
        utf7_letter(*letters.get(2)?)?,
    );
    let unit = a << 10 | m << 4 | z >> 2;
    (!(0xD800..=0xDFFF).contains(&unit)).then_some(Shape::Utf7 { unit })
}

/// The [`Shape`] of the escape at `i`, or `None` for any other (its regex decides).
fn shape_at(b: &[u8], i: usize) -> Option<Shape> {
    let byte =
        |k: usize, intro: u8, len: usize| byte_alone(b, k, intro).map(|v| Shape::Byte { v, len });
    match *b.get(i)? {
        b'=' => byte(i + 1, b'=', 3),
        b'%' if b.get(i + 1..i + 3) != Some(b"25") => byte(i + 1, b'%', 3),
        b'\\' => {
            let j = past_backslashes(b, i)?;
            let slashes = j - i;
            match *b.get(j)? {
                b'x' => byte(j + 1, b'\\', slashes + 3),
                b'u' => hex_value(b, j + 1, 4)
                    .filter(|v| !(0xD800..=0xDFFF).contains(v))
                    .map(|v| Shape::CodePoint {
                        v,
                        len: slashes + 5,
                    }),
                b'U' => hex_value(b, j + 1, 8).map(|v| Shape::CodePoint {
                    v,
                    len: slashes + 9,
                }),
                _ if hex_at(b, j).is_some() => Some(Shape::Digits {
                    at: j,
                    count: (j..j + 6).take_while(|&k| hex_at(b, k).is_some()).count(),
                }),
                _ => None,
            }
        }
        b'+' => utf7_at(b, i),
        _ => None,
    }
}

/// Does the escape at `i` have no match of its pass, its fixed match (a [`Shape`] with a length)
/// being followed by `copies` copies of itself? The pass's regex rejects such a match
/// (`encoded._Candidates`: a negative lookahead for the escape repeated `copies` times, the most
/// any exact token starts with), and a fixed shape has no other match at `i` to fall back on. So
/// in a run of one escape repeated (`%3C%3C%3C…`, hostile text) only the last `copies` are starts,
/// and the run is searched in one small window, not by the regex at every copy.
pub fn repeated_at(b: &[u8], i: usize, copies: usize) -> bool {
    let n = match shape_at(b, i) {
        Some(Shape::Byte { len, .. } | Shape::CodePoint { len, .. }) => len,
        _ => return false,
    };
    let one = &b[i..i + n];
    (1..=copies).all(|c| b.get(i + c * n..i + (c + 1) * n) == Some(one))
}

/// Is the escape that starts at `i` quiet: of a [`Shape`], whose match of the encoded pass's regex
/// at `i` is determined by the next bytes, and whose every reading is a character outside `loud`?
/// Its verdict is then nothing (`encoded._verdict`: it starts no tag or token and is no layer of
/// another escape), so dropping it from the starts changes no report; and a quiet match holds no
/// start of its own scheme but quiet ones (the backslashes before its own; a UTF-7 one holds no
/// `+`), so the windows around the other starts find what they found. Any other shape is not quiet
/// (`false`: its regex decides, as before).
///
/// `tests/scan/test_scan_encoded_starts.py` holds the verdict of every dropped start nothing over
/// hypothesis texts and every value of each shape, with a control.
pub fn quiet_at(b: &[u8], i: usize, loud: &Loud) -> bool {
    match shape_at(b, i) {
        Some(Shape::Byte { v, .. }) if v < 0x80 => !loud.has(v),
        Some(Shape::Byte { v, .. }) => !loud.has(0xFFFD) && !loud.has(v),
        Some(Shape::CodePoint { v, .. }) => !loud.has_code_point(v),
        // The unit is a character even when it is U+0000 (`codecs.decode`, not `_code_point`).
        Some(Shape::Utf7 { unit }) => !loud.has(unit),
        Some(Shape::Digits { at, count }) => {
            let whole = hex_value(b, at, count).is_some_and(|v| loud.has_code_point(v));
            let octal = (1..=3.min(count)).any(|k| {
                let digits = &b[at..at + k];
                digits.iter().all(|c| (b'0'..=b'7').contains(c))
                    && loud.has_code_point(
                        digits
                            .iter()
                            .fold(0u64, |v, &c| v << 3 | u64::from(c - b'0')),
                    )
            });
            !whole && !octal
        }
        None => false,
    }
}

/// The byte offsets where each scheme can start, a sorted list per scheme, or `None` for a scheme
/// with more than `limit` starts (the caller then searches the whole text: where escapes are dense
/// its regex's own pass costs less than windows, and the search stops there, so a hostile run of
/// one escape is not collected). `memchr` finds each introducer (the bytes are sparse in most
/// text) and the next two bytes are looked up. With `loud`, a quiet start ([`quiet_at`]) is left
/// out (and not counted against `limit`): most escapes in source code (`\x00`, `\d`, `=Fa`) decode
/// to characters that start nothing. With `copies`, so is a start whose escape the regex rejects
/// for the copies of it that follow ([`repeated_at`]). Linear: one search of the text per scheme,
/// a bounded check per hit (the copies compared are at most `copies` times an escape's length).
pub fn scheme_starts(
    s: &str,
    schemes: &[SchemeStart],
    limit: usize,
    loud: Option<&Loud>,
    copies: Option<usize>,
) -> Vec<Option<Vec<usize>>> {
    let b = s.as_bytes();
    schemes
        .iter()
        .map(|k| {
            let mut out = Vec::new();
            for i in memchr::memchr_iter(k.introducer, b) {
                if k.starts_at(b, i)
                    && !loud.is_some_and(|l| quiet_at(b, i, l))
                    && !copies.is_some_and(|c| repeated_at(b, i, c))
                {
                    if out.len() == limit {
                        return None;
                    }
                    out.push(i);
                }
            }
            Some(out)
        })
        .collect()
}

/// The openers of both families (`reader.OPENER_PATTERN`, `BRACKET_OPENER_PATTERN`) whose reading
/// may pass over an escape (`encoded._raw_heads`): `(start, end, window_end)` in byte offsets. An
/// opener's `stop` is the start of the next opener of either family, or just past the first ASCII
/// closer (`>` after an angle opener, `]` after a bracket one) before it, or the text's end; its
/// window ends at `stop` or `window` code points after its start, whichever comes first. There is
/// one for every opener with a start of one of `schemes` at or after its `end` and before its window
/// ends. A reading stops at the next opener and at an ASCII closer (neither is read past), so an
/// escape after either cannot change what this one reads (`<%2Fretrieved_content>`, `[INST%5D`).
/// Linear: one search per scheme; the openers are searched only from `4 * window` bytes before each
/// escape that no earlier opener's window holds; the windows do not overlap.
pub fn openers_with_escapes(
    s: &str,
    schemes: &[SchemeStart],
    window: usize,
) -> Vec<(usize, usize, usize)> {
    let b = s.as_bytes();
    let mut escapes: Vec<usize> = scheme_starts(s, schemes, usize::MAX, None, None)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    if escapes.is_empty() {
        return Vec::new(); // most texts: no opener needs looking at
    }
    escapes.sort_unstable();
    let mut openers = BothOpeners::new(s);
    let mut out = Vec::new();
    let mut k = 0;
    while k < escapes.len() {
        // An opener more than `window` code points (at least as many bytes) before the escape
        // cannot hold it in its window.
        openers.skip_to(escapes[k].saturating_sub(4 * window));
        let Some((a, e, fam)) = openers.next() else {
            break;
        };
        let next = openers.peek_start().unwrap_or(b.len());
        while k < escapes.len() && escapes[k] < e {
            k += 1;
        }
        let Some(&p) = escapes.get(k) else {
            break;
        };
        let closer = if fam == Family::Angle { b'>' } else { b']' };
        let stop = memchr::memchr(closer, &b[e..next]).map_or(next, |c| e + c + 1);
        if p < stop && crate::code_points(&b[a..p]) < window {
            out.push((a, e, window_end(s, a, stop, window)));
        }
        // Every escape before the next opener has been looked at (this window holds it or none).
        while k < escapes.len() && escapes[k] < next {
            k += 1;
        }
    }
    out
}

/// `stop`, or the byte offset `window` code points after `a` when that comes first.
fn window_end(s: &str, a: usize, stop: usize, window: usize) -> usize {
    if stop - a <= window {
        return stop; // no more bytes than code points allowed: no count needed
    }
    s[a..stop]
        .char_indices()
        .nth(window)
        .map_or(stop, |(k, _)| a + k)
}

/// The heads (`(start, end, window_end)`, from [`openers_with_escapes`]) grouped by the text of
/// their window (`s[start..window_end]`): for each distinct text, in the order of its first head,
/// the indices of its heads. The scanner judges each text once and visits only the heads of one
/// that reads as a tag (hostile text repeats one window hundreds of thousands of times).
pub fn windows_by_text(s: &str, heads: &[(usize, usize, usize)]) -> Vec<Vec<usize>> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (k, &(a, _, w)) in heads.iter().enumerate() {
        let g = *index.entry(&s[a..w]).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(k);
    }
    groups
}

/// The openers of the two families in text order (they never overlap: no opener of one family
/// holds a character another of the other starts with), with the family of each.
struct BothOpeners<'a> {
    angle: Openers<'a>,
    bracket: Openers<'a>,
    next_angle: Option<(usize, usize)>,
    next_bracket: Option<(usize, usize)>,
}

impl<'a> BothOpeners<'a> {
    fn new(s: &'a str) -> Self {
        let mut angle = Openers::new(s, Family::Angle);
        let mut bracket = Openers::new(s, Family::Bracket);
        BothOpeners {
            next_angle: angle.next(),
            next_bracket: bracket.next(),
            angle,
            bracket,
        }
    }

    /// Leaves out the openers that start before `to`.
    fn skip_to(&mut self, to: usize) {
        if self.next_angle.is_some_and(|(a, _)| a < to) {
            self.angle.skip_to(to);
            self.next_angle = self.angle.next();
        }
        if self.next_bracket.is_some_and(|(a, _)| a < to) {
            self.bracket.skip_to(to);
            self.next_bracket = self.bracket.next();
        }
    }

    fn peek_start(&self) -> Option<usize> {
        match (self.next_angle, self.next_bracket) {
            (Some((a, _)), Some((b, _))) => Some(a.min(b)),
            (x, y) => x.or(y).map(|o| o.0),
        }
    }

    fn next(&mut self) -> Option<(usize, usize, Family)> {
        let angle_first = match (self.next_angle, self.next_bracket) {
            (Some((a, _)), Some((b, _))) => a < b,
            (x, _) => x.is_some(),
        };
        if angle_first {
            let (a, e) = self.next_angle?;
            self.next_angle = self.angle.next();
            Some((a, e, Family::Angle))
        } else {
            let (a, e) = self.next_bracket?;
            self.next_bracket = self.bracket.next();
            Some((a, e, Family::Bracket))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_as_a_byte_loop_finds_them() {
        // Every string of up to 6 bytes over introducers, class bytes and others, against the
        // definition read position by position.
        let schemes = [
            SchemeStart::new("%", "uU3", "C").unwrap(),
            SchemeStart::new("\\", "\\u", "").unwrap(),
        ];
        let alphabet = [b'%', b'\\', b'u', b'3', b'C', b'x'];
        for len in 0..=6u32 {
            for mut k in 0..6usize.pow(len) {
                let mut v = Vec::new();
                for _ in 0..len {
                    v.push(alphabet[k % 6]);
                    k /= 6;
                }
                let s = String::from_utf8(v).unwrap();
                let b = s.as_bytes();
                let want: Vec<Vec<usize>> = vec![
                    (0..b.len())
                        .filter(|&i| {
                            b[i] == b'%'
                                && b.get(i + 1).is_some_and(|c| b"uU3".contains(c))
                                && b.get(i + 2) == Some(&b'C')
                        })
                        .collect(),
                    (0..b.len())
                        .filter(|&i| {
                            b[i] == b'\\' && b.get(i + 1).is_some_and(|c| b"\\u".contains(c))
                        })
                        .collect(),
                ];
                // Every limit: the list while it holds at most that many, else none.
                for limit in 0..=3 {
                    let capped: Vec<Option<Vec<usize>>> = want
                        .iter()
                        .map(|w| (w.len() <= limit).then(|| w.clone()))
                        .collect();
                    assert_eq!(
                        scheme_starts(&s, &schemes, limit, None, None),
                        capped,
                        "{s:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn quiet_escapes_and_their_edges() {
        // The loud characters of the test: `<`, `%`, `\\`, `=`, `+`, `«` (U+00AB), `‹` (U+2039).
        let loud = Loud::new("<%\\=+\u{ab}\u{2039}");
        let quiet = |s: &str| quiet_at(s.as_bytes(), 0, &loud);
        for s in [
            "=41",
            "%41",
            "\\x41",
            "\\\\x41",
            "\\x00",
            "=FA",
            "\\xff\\xfe",
            "\\xc3z",
            "\\u00e9",
            "\\U0001F600",
            "\\d",
            "\\0",
            "\\U00110000",
            "+PC94Pg==",             // U+3C2F
            "+AAA-",                 // U+0000
            "+AAAA",                 // no decoding at all: nothing
            "+AGEAYQBhAGEAYQBh+ADw", // `a`; the `+` past sixteen letters is not inside
        ] {
            assert!(quiet(s), "{s}");
        }
        for s in [
            "=3C",
            "%3c",
            "\\x3c",
            "\\u003c",
            "\\U0000003C",
            "\\3c",
            "\\74", // `<`, hex and octal
            "\\xab",
            "=AB",
            "\\u2039",
            "\\253", // `«` (Latin-1 of one byte; octal 253), `‹`
            "=25",
            "%25",
            "\\x5c",
            "=2B",   // introducers: a layer of another escape
            "%2541", // `%25` may be a double encoding
            "\\xc3\\xa9",
            "=E2=80=B9",
            "%e2%80", // a lead followed by another escape
            "\\ud83d\\ude00",
            "\\udc00",       // surrogates
            "\\\\\\\\\\x41", // five backslashes
            "\\u12",
            "\\x{3c}",
            "\\u{3c}",
            "+ADw-",
            "+AKs-",                // `«`
            "+ACs-",                // `+`: a layer
            "+AB-",                 // two letters: the regex decides
            "+AD+w-",               // another `+` inside: a start of its own
            "+AGEAYQBhAGEAYQB+ADw", // the same, at the sixteenth letter
            "+2D3eAA-",             // a surrogate first unit (a pair)
            "+3gA-",
            "&lt;",
            "x",
            "", // other shapes
        ] {
            assert!(!quiet(s), "{s}");
        }
        // Control: without `<` among the loud characters, its escapes would be quiet.
        let deaf = Loud::new("%\\=+");
        assert!(quiet_at(b"\\x3c", 0, &deaf) && quiet_at(b"=3C", 0, &deaf));
        assert!(quiet_at(b"+ADw-", 0, &deaf));
    }

    #[test]
    fn repeated_escapes_and_their_edges() {
        let rep = |s: &str, i: usize, copies: usize| repeated_at(s.as_bytes(), i, copies);
        assert!(rep("%3C%3C%3C", 0, 2) && !rep("%3C%3C%3C", 3, 2) && !rep("%3C%3C%3C", 0, 3));
        assert!(rep("\\u003c\\u003c\\u003c", 0, 2) && rep("=3C=3C=3C", 0, 2));
        assert!(rep("\\U0000003c\\U0000003c\\U0000003c", 0, 2));
        // Two backslashes: the escape at the first is the whole `\\x3c`; the one at the second
        // is `\x3c`, which the next copy (`\\x3c`) does not repeat.
        let two = "\\\\x3c\\\\x3c\\\\x3c";
        assert!(rep(two, 0, 2) && !rep(two, 1, 2));
        // Not a fixed shape: `%25` (a double encoding?), a lead before another escape (a sequence?),
        // a surrogate, digits (their length depends on what follows), another scheme.
        for s in [
            "%25%25%25",
            "%C3%C3%C3",
            "\\ud83d\\ud83d\\ud83d",
            "\\3c\\3c\\3c",
            "+ADw+ADw+ADw",
            "&lt;&lt;&lt;",
        ] {
            assert!(!rep(s, 0, 2), "{s}");
        }
        // A byte that cannot lead a sequence is read alone even before another escape.
        assert!(rep("%FF%FF%FF", 0, 2) && rep("\\x80\\x80\\x80", 0, 2));
    }

    #[test]
    fn openers_with_an_escape_before_the_next_opener() {
        let schemes = [
            SchemeStart::new("%", "0123456789ABCDEFabcdef", "0123456789ABCDEFabcdef").unwrap(),
            SchemeStart::new("\\", "u", "").unwrap(),
        ];
        let heads = |s: &str| openers_with_escapes(s, &schemes, 192);
        assert_eq!(heads("<%2Fretrieved_content>"), vec![(0, 1, 22)]);
        assert_eq!(heads("[INST%5D"), vec![(0, 1, 8)]);
        assert_eq!(heads("&lt;|im_end|%3E"), vec![(0, 4, 15)]);
        assert_eq!(heads("a<b%41 [c <d\\u0041"), vec![(1, 2, 7), (10, 11, 18)]);
        // Not before the next opener, none at all, nothing after the opener: no head.
        assert!(heads("<a<b%41").iter().all(|h| h.0 == 2));
        assert!(heads("<retrieved_content>").is_empty());
        assert!(heads("%41<").is_empty());
        // A look-alike opener is an opener (`＜` is three bytes).
        assert_eq!(heads("\u{ff1c}%2F"), vec![(0, 3, 6)]);
        // An ASCII closer ends the window (`>` after an angle opener, `]` after a bracket one).
        assert!(heads("<a>%2F").is_empty() && heads("[a]%5D").is_empty());
        assert_eq!(heads("[a>%5D"), vec![(0, 1, 6)]);
        assert_eq!(heads("<a]%3E>"), vec![(0, 1, 7)]);
        // The window: fewer than 192 code points from the opener's start.
        let far = format!("<{}%41", "é".repeat(190));
        assert_eq!(heads(&far), vec![(0, 1, 1 + 2 * 190 + 1)]); // `<`, 190 `é` and the `%`
        let farther = format!("<{}%41", "é".repeat(191));
        assert!(heads(&farther).is_empty());
        // Openers far before an escape are skipped, not lost: the one before it is found.
        let skipped = format!("{}<%2F{}<%41", "<a ".repeat(500), "x".repeat(2000));
        assert_eq!(
            heads(&skipped),
            vec![(1500, 1501, 1692), (3504, 3505, 3508)]
        );
        // Grouped by window text, in the order of their first head.
        let text = "<%2F<%2F[%5D<%2F";
        let found = heads(text);
        assert_eq!(windows_by_text(text, &found), vec![vec![0, 1, 3], vec![2]]);
    }

    #[test]
    fn a_start_that_is_not_one_ascii_byte_is_refused() {
        assert!(SchemeStart::new("%%", "u", "").is_none());
        assert!(SchemeStart::new("\u{ff05}", "u", "").is_none());
        assert!(SchemeStart::new("%", "\u{ff55}", "").is_none());
        assert!(SchemeStart::new("%", "", "").is_none());
    }
}
