//! The scanner's exact tokens (`envelock.scan.tags._scan_exact`): every place a tokenizer's exact
//! token starts, as `reader.exact_after` reads one. The regex of `reader.exact_finder` stays the
//! reference (`tests/scan/test_scan_native_text.py` holds the two equal).

/// `(start, end)` byte offsets of every exact token of `s`: a first character of `by_first`, any
/// backslashes, then the first of its rests (in the order given) that follows, as `exact_after`
/// takes it. Every start is tried, so tokens that overlap are all found. One pass: a table of the
/// first characters' first bytes picks the places to look.
pub fn exact_tokens(s: &str, by_first: &[(char, Vec<String>)]) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut lead = [false; 256];
    for (c, _) in by_first {
        let mut buf = [0u8; 4];
        lead[usize::from(c.encode_utf8(&mut buf).as_bytes()[0])] = true;
    }
    let mut out = Vec::new();
    for (i, &byte) in b.iter().enumerate() {
        if !lead[usize::from(byte)] || !s.is_char_boundary(i) {
            continue;
        }
        let rest_of = &s[i..];
        let Some((c, rests)) = by_first.iter().find(|(c, _)| rest_of.starts_with(*c)) else {
            continue;
        };
        let mut j = i + c.len_utf8();
        while b.get(j) == Some(&b'\\') {
            j += 1;
        }
        if let Some(rest) = rests.iter().find(|r| s[j..].starts_with(r.as_str())) {
            out.push((i, j + rest.len()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_past_backslashes_the_first_rest_that_follows() {
        let t = vec![
            ('<', vec!["NAME>".to_string(), "s>".to_string()]),
            (']', vec!["~b]".to_string()]),
            ('\u{ff5c}', vec!["DSML\u{ff5c}".to_string()]),
        ];
        assert_eq!(
            exact_tokens("a <NAME> <\\\\s> <x>", &t),
            vec![(2, 8), (9, 14)]
        );
        assert_eq!(exact_tokens("]~b]~b]", &t), vec![(0, 4), (3, 7)]);
        assert_eq!(
            exact_tokens("\u{e9}\u{ff5c}DSML\u{ff5c}", &t),
            vec![(2, 12)]
        );
        assert!(exact_tokens("NAME> s>", &t).is_empty());
    }
}
