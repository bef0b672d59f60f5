//! The scanner's exact tokens (`envelock.scan.tags._scan_exact`): every place a tokenizer's exact
//! token starts, as the one reader's `exact_after` reads one. The regex of `reader.exact_finder`
//! with Python's `exact_after` stays the reference (`tests/scan/test_scan_native_text.py` holds
//! the two equal).

use crate::names::Names;
use crate::reader::exact_after;

/// `(start, end)` byte offsets of every exact token of `s` (`names.exact`): `exact_after` tried at
/// every byte that begins a first character of one, so tokens that overlap are all found.
pub fn exact_tokens(s: &str, names: &Names) -> Vec<(usize, usize)> {
    let mut lead = [false; 256];
    for c in names.exact.firsts() {
        let mut buf = [0u8; 4];
        lead[usize::from(c.encode_utf8(&mut buf).as_bytes()[0])] = true;
    }
    s.as_bytes()
        .iter()
        .enumerate()
        .filter(|&(i, &byte)| lead[usize::from(byte)] && s.is_char_boundary(i))
        .filter_map(|(i, _)| exact_after(s, i, names).map(|end| (i, end)))
        .collect()
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
    }
}
