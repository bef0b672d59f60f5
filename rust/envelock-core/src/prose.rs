//! The scanner's prose passes (`envelock.scan.text`) as one native walk each: the regexes there
//! stay the reference (`tests/scan/test_scan_native_text.py` holds every span equal).
//!
//! Both regexes are case-insensitive over ASCII words. Python's `re.IGNORECASE` also lets four
//! characters outside ASCII match an ASCII letter (`scan._base.ascii_case_folds`: `İ`, `ı`, `ſ`,
//! KELVIN SIGN); the caller runs the regex instead where one occurs, so here case folding is
//! ASCII's alone.

/// The offsets of the bytes of `b` that are in `set` (up to six bytes), in order: `memchr3` over
/// each three of them (these bytes are rare in most text, and a table lookup a byte cost more than
/// the walks they start), the lists merged.
fn positions(b: &[u8], set: &[u8]) -> Vec<usize> {
    let find = |part: &[u8]| -> Vec<usize> {
        match *part {
            [x] => memchr::memchr_iter(x, b).collect(),
            [x, y] => memchr::memchr2_iter(x, y, b).collect(),
            [x, y, z] => memchr::memchr3_iter(x, y, z, b).collect(),
            _ => Vec::new(),
        }
    };
    let mut groups = set.chunks(3);
    let first = groups.next().map(find).unwrap_or_default();
    groups.fold(first, |acc, part| {
        let other = find(part);
        let mut out = Vec::with_capacity(acc.len() + other.len());
        let (mut i, mut j) = (0, 0);
        while i < acc.len() || j < other.len() {
            if j == other.len() || (i < acc.len() && acc[i] < other[j]) {
                out.push(acc[i]);
                i += 1;
            } else {
                out.push(other[j]);
                j += 1;
            }
        }
        out
    })
}

/// Does `b[i..]` start with `word`, ASCII case-insensitively?
fn starts_with_ci(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.len() - i >= word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word)
}

/// The number of bytes of a line break at `i` (LF, CR, U+2028, U+2029, NEL), or 0.
fn break_len(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'\n' | b'\r' => 1,
        0xE2 if b.len() - i >= 3 && b[i + 1] == 0x80 && matches!(b[i + 2], 0xA8 | 0xA9) => 3,
        0xC2 if b.len() - i >= 2 && b[i + 1] == 0x85 => 2,
        _ => 0,
    }
}

/// `i` past at most `max` blanks (space, tab), or `None` when more follow (the regex's
/// `[ \t]{0,max}` then needs a word, and no word starts with a blank).
fn past_blanks(b: &[u8], mut i: usize, max: usize, blanks: &[u8]) -> Option<usize> {
    let start = i;
    while i < b.len() && blanks.contains(&b[i]) {
        if i - start == max {
            return None;
        }
        i += 1;
    }
    Some(i)
}

/// `text._PROSE_HEAD_RE` and `text._PROSE_RE`: the spans (byte offsets) of every marker at the
/// start of the text or after a line break and at most eight blanks, the longest marker that
/// matches at each. `markers` are ASCII, not empty, and hold no blank first and no line break
/// (an empty one is never matched).
pub fn line_markers(s: &str, markers: &[&str]) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut sorted: Vec<&[u8]> = markers.iter().map(|m| m.as_bytes()).collect();
    sorted.sort_by_key(|m| std::cmp::Reverse(m.len()));
    // The markers by their first byte, lowered, longest first: a line is compared with the markers
    // of its first character only (most lines of source code start with a letter some marker does).
    let mut by_first: Vec<Vec<&[u8]>> = vec![Vec::new(); 256];
    for m in &sorted {
        if let Some(&c) = m.first() {
            by_first[usize::from(c.to_ascii_lowercase())].push(m);
        }
    }
    let marker_at = |i: usize| -> Option<(usize, usize)> {
        let j = past_blanks(b, i, 8, b" \t")?;
        let bucket = &by_first[usize::from(b.get(j)?.to_ascii_lowercase())];
        bucket
            .iter()
            .find(|m| starts_with_ci(b, j, m))
            .map(|m| (j, j + m.len()))
    };
    let mut out: Vec<(usize, usize)> = marker_at(0).into_iter().collect();
    for p in positions(b, b"\n\r\xe2\xc2") {
        let len = break_len(b, p);
        if len > 0 {
            out.extend(marker_at(p + len));
        }
    }
    out
}

/// The quote forms of `text._ATTR_INJECTION_RE`, as it lists them (case-insensitive).
fn quote_len(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' | b'\'' => 1,
        b'&' => {
            for word in [&b"&quot;"[..], b"&apos;"] {
                if starts_with_ci(b, i, word) {
                    return word.len();
                }
            }
            // `&#0*3[49];` and `&#[xX]0*2[27];`
            let mut j = i + 1;
            if j >= b.len() || b[j] != b'#' {
                return 0;
            }
            j += 1;
            let hex = j < b.len() && (b[j] | 0x20) == b'x';
            if hex {
                j += 1;
            }
            while j < b.len() && b[j] == b'0' {
                j += 1;
            }
            let (lead, lasts): (u8, &[u8]) = if hex { (b'2', b"27") } else { (b'3', b"49") };
            if b.len() - j >= 3 && b[j] == lead && lasts.contains(&b[j + 1]) && b[j + 2] == b';' {
                j + 3 - i
            } else {
                0
            }
        }
        b'%' if starts_with_ci(b, i, b"%22") || starts_with_ci(b, i, b"%27") => 3,
        _ => 0,
    }
}

/// The blank forms of `text._ATTR_INJECTION_RE` (space, tab, U+2028, U+2029, `%20`, `+`).
fn blank_len(b: &[u8], i: usize) -> usize {
    match b[i] {
        b' ' | b'\t' | b'+' => 1,
        b'%' if starts_with_ci(b, i, b"%20") => 3,
        0xE2 if b.len() - i >= 3 && b[i + 1] == 0x80 && matches!(b[i + 2], 0xA8 | 0xA9) => 3,
        _ => 0,
    }
}

/// `text._ATTR_INJECTION_RE.finditer`: (start, end, name start, name end) in byte offsets of every
/// quote, at most eight blanks, one of `names` (ASCII, not empty), at most four blanks and `=` or `%3D`. A
/// match holds no quote after its first character, so the matches are the positions where one
/// starts, in order.
pub fn attribute_injections(s: &str, names: &[&str]) -> Vec<(usize, usize, usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    // Could a name start with this byte (ASCII case-insensitively)? Looked up before any name is
    // compared: most quotes in source code open a string that names none of them.
    let mut first = [false; 256];
    for n in names {
        if let Some(&c) = n.as_bytes().first() {
            first[usize::from(c.to_ascii_lowercase())] = true;
            first[usize::from(c.to_ascii_uppercase())] = true;
        }
    }
    let mut after = 0; // the end of the last match (``finditer`` goes on from there)
    for p in positions(b, b"\"'&%") {
        if p < after {
            continue;
        }
        let q = quote_len(b, p);
        if q == 0 {
            continue;
        }
        let mut j = p + q;
        let mut blanks = 0;
        while j < b.len() && blanks <= 8 {
            let l = blank_len(b, j);
            if l == 0 {
                break;
            }
            j += l;
            blanks += 1;
        }
        if blanks > 8 || !b.get(j).is_some_and(|&c| first[usize::from(c)]) {
            continue;
        }
        let Some(name) = names.iter().find(|n| starts_with_ci(b, j, n.as_bytes())) else {
            continue;
        };
        let name_end = j + name.len();
        let Some(mut e) = past_blanks(b, name_end, 4, b" \t") else {
            continue;
        };
        if e < b.len() && b[e] == b'=' {
            e += 1;
        } else if starts_with_ci(b, e, b"%3d") {
            e += 3;
        } else {
            continue;
        }
        out.push((p, e, j, name_end));
        after = e;
    }
    out
}

/// Where each of `words` (ASCII, lowercase or not) occurs in `s`, ASCII case-insensitively: the
/// byte offsets of every occurrence of any word, overlapping ones too, sorted and each once. The
/// scanner's cipher pass tries its regex there (`scan.encoded._cipher_matches`: `str.find` of each
/// word on `text.lower()`, whose offsets are the text's where no character folds to ASCII). The
/// text is lowered (ASCII only, so every offset stays) once, and each lowered word searched for
/// by `memchr::memmem` from one past each of its matches. `None` for an empty or non-ASCII word
/// (an empty one occurs everywhere, and one outside ASCII is no ASCII search): the caller then
/// searches itself.
pub fn ascii_word_starts(s: &str, words: &[&str]) -> Option<Vec<usize>> {
    if words.iter().any(|w| w.is_empty() || !w.is_ascii()) {
        return None;
    }
    let lowered = s.as_bytes().to_ascii_lowercase();
    let mut out = Vec::new();
    for w in words {
        let w = w.to_ascii_lowercase();
        let finder = memchr::memmem::Finder::new(w.as_bytes());
        let mut at = 0;
        while let Some(p) = finder.find(&lowered[at..]) {
            out.push(at + p);
            at += p + 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_at_line_starts_only() {
        let m = ["Human:", "USER:", "### Instruction:"];
        assert_eq!(line_markers("Human: hi", &m), vec![(0, 6)]);
        assert_eq!(
            line_markers("x\n  user: a\r\n### instruction: b", &m),
            vec![(4, 9), (13, 29)]
        );
        assert!(line_markers("a Human: b\n         Human: c", &m).is_empty()); // nine blanks
        assert_eq!(
            line_markers("a\u{2028}USER: b\u{85}USER:", &m),
            vec![(4, 9), (13, 18)]
        );
    }

    #[test]
    fn attribute_injections_as_the_regex_reads_them() {
        let n = ["provenance", "source", "origin", "fetched_at"];
        assert_eq!(
            attribute_injections("x\" provenance=\"system\"", &n),
            vec![(1, 14, 3, 13)]
        );
        assert_eq!(
            attribute_injections("&#x022;origin %3D", &n),
            vec![(0, 17, 7, 13)]
        );
        assert_eq!(attribute_injections("&#0039;+%20source=", &n).len(), 1);
        assert!(attribute_injections("\"         source=", &n).is_empty()); // nine blanks
        assert!(attribute_injections("\"source     =", &n).is_empty()); // five blanks
        assert!(attribute_injections("&#35;source=", &n).is_empty());
    }

    #[test]
    fn positions_are_the_bytes_in_the_set_in_order() {
        let b = b"a\"b'c&d%e\nf\rg\xe2h\xc2i\"";
        for set in [&b"\"'&%"[..], b"\n\r\xe2\xc2", b"%", b"ab", b"abcdef\""] {
            let want: Vec<usize> = (0..b.len()).filter(|&i| set.contains(&b[i])).collect();
            assert_eq!(positions(b, set), want, "{set:?}");
        }
    }

    #[test]
    fn word_starts_fold_ascii_only_and_overlap() {
        let w = ["abab", "ba"];
        assert_eq!(ascii_word_starts("xABaBab", &w), Some(vec![1, 2, 3, 4]));
        assert_eq!(ascii_word_starts("\u{e9}BA", &w), Some(vec![2]));
        assert_eq!(ascii_word_starts("x", &["", "a"]), None);
        assert_eq!(ascii_word_starts("x", &["\u{e9}"]), None);
    }
}
