//! The scanner's exact tokens (`envelock.scan.tags._scan_exact`): every place a tokenizer's exact
//! token starts, as the one reader's `exact_after` reads one. The regex of `reader.exact_finder`
//! with Python's `exact_after` stays the reference (`tests/scan/test_scan_native_text.py` holds
//! the two equal).

use crate::names::Names;
use crate::reader::exact_after;

/// `(start, end)` byte offsets of every exact token of `s` (`names.exact`): `exact_after` tried at
/// every byte that begins a first character of one, so tokens that overlap are all found. The lead
/// bytes are found by `memchr3`, three at a time (one search per three; a text holds them rarely,
/// so the searches cost less than a look at every byte), and the tokens put back in order.
pub fn exact_tokens(s: &str, names: &Names) -> Vec<(usize, usize)> {
    if names.exact.is_empty() {
        return Vec::new();
    }
    // `&` too: a first character may be written as a reference (`&gt;&gt;TITLE&lt;&lt;`).
    let mut leads = names.exact.first_bytes.clone();
    if !leads.contains(&b'&') {
        leads.push(b'&');
    }
    at_leads(s, names, &leads)
}

/// `exact_after` at every occurrence of a byte of `leads` that begins a character, in order.
fn at_leads(s: &str, names: &Names, leads: &[u8]) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut found = Vec::new();
    for group in leads.chunks(3) {
        let (x, y, z) = match *group {
            [x] => (x, x, x),
            [x, y] => (x, y, y),
            [x, y, z] => (x, y, z),
            _ => unreachable!("chunks of at most three"),
        };
        // A lead byte begins a character (it is the first byte of one), so each hit is a boundary.
        found.extend(
            memchr::memchr3_iter(x, y, z, b)
                .filter(|&i| s.is_char_boundary(i) && may_start_at(b, i, names))
                .filter_map(|i| exact_after(s, i, names).map(|end| (i, end))),
        );
    }
    if leads.len() > 3 {
        found.sort_unstable();
    }
    found
}

/// `exact_after`'s quick test, asked before the call (most hits are a `>` of a closing tag or a
/// `[` of code that no token goes on from): exact when it says no.
#[inline]
fn may_start_at(b: &[u8], i: usize, names: &Names) -> bool {
    let c = b[i];
    c >= 0x80 || c == b'&' || names.exact.may_start(c, b.get(i + 1).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_past_backslashes_overlapping_too() {
        let names = Names::new(&["retrieved_content"], true, true).expect("names");
        assert_eq!(
            exact_tokens("a <NAME> <\\\\NAME> <x>", &names),
            vec![(2, 8), (9, 17)]
        );
        assert_eq!(exact_tokens("]~b]~b]", &names), vec![(0, 4), (3, 7)]);
        assert_eq!(
            exact_tokens("\u{e9}\u{ff5c}DSML\u{ff5c}", &names),
            vec![(2, 12)]
        );
        assert!(exact_tokens("NAME> s>", &names).is_empty());
        // Written with references: the first character, the rest, or both.
        assert_eq!(
            exact_tokens(
                "&gt;&gt;TITLE&lt;&lt; ]~b&#93; &lt;NAME> [IMG&#x5D;",
                &names
            ),
            vec![(0, 21), (22, 30), (31, 40), (41, 51)]
        );
        assert!(exact_tokens("&gt;&gt;TITLE&lt;", &names).is_empty());
        assert_eq!(exact_tokens("&amp;gt;\\&gt;TITLE<<", &names), vec![(0, 20)]);
    }

    /// `exact_after` at every character boundary: what the searches by lead byte must find.
    fn at_every_boundary(s: &str, names: &Names) -> Vec<(usize, usize)> {
        (0..s.len())
            .filter(|&i| s.is_char_boundary(i))
            .filter_map(|i| exact_after(s, i, names).map(|end| (i, end)))
            .collect()
    }

    #[test]
    fn the_searches_by_lead_byte_find_what_every_boundary_finds_in_order() {
        let names = Names::new(&["retrieved_content"], true, true).expect("names");
        // More lead bytes than one memchr3 takes: the groups' tokens interleave and are sorted.
        assert!(names.exact.firsts().count() > 3);
        let pieces = [
            "<|im_end|>",
            ">>TITLE<<",
            "]~b]",
            "[INST]",
            "\u{ff5c}DSML\u{ff5c}",
            "<",
            ">",
            "[",
            "]",
            "\\",
            "a",
            "\u{e9}",
            "\u{ff5c}",
            "\n",
            "NAME>",
            "<NAME>",
            // References for first characters and rests (`&gt;&gt;TITLE&lt;&lt;`, `]~b&#93;`).
            "&gt;",
            "&gt;TITLE&lt;&lt;",
            "&#93;",
            "&lt;",
            "&amp;",
        ];
        let mut checked = 0;
        let mut tokens = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let s = format!("{a}{b}{c}{a}");
                    let want = at_every_boundary(&s, &names);
                    assert_eq!(exact_tokens(&s, &names), want, "{s:?}");
                    tokens += want.len();
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, pieces.len().pow(3));
        assert!(
            tokens > 1000,
            "the texts hold tokens of several lead bytes: {tokens}"
        );
        // Control: the same searches without the last lead byte are caught by this comparison.
        let mut leads: Vec<u8> = names
            .exact
            .firsts()
            .map(|c| c.to_string().as_bytes()[0])
            .collect();
        leads.sort_unstable();
        leads.dedup();
        assert_eq!(leads, names.exact.first_bytes);
        let missed = pieces.iter().any(|a| {
            let s = format!("x{a}{a}");
            at_leads(&s, &names, &leads[..leads.len() - 1]) != at_every_boundary(&s, &names)
        });
        assert!(missed, "a search without one lead byte must miss a token");
    }
}
