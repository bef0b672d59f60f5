//! Which of several character classes occur in a text at all, in one pass: the scanner's passes
//! over rare characters (TAG characters, bidi controls, invisible characters, controls) are Python
//! regexes, each a full pass over non-ASCII text; a class that does not occur lets its pass be
//! skipped, and its findings are then exactly the pass's (none).

use crate::sanitize::lead_byte;

/// Blocks of 64 code points: one flag per block that any class touches.
const BLOCKS: usize = 0x11_0000 >> 6;

fn block(cp: u32) -> usize {
    usize::try_from(cp >> 6).unwrap_or(BLOCKS - 1)
}

/// For each class (inclusive code point ranges), whether one of its characters occurs in `s`.
/// Stops once every non-empty class is found.
pub fn classes_present(s: &str, classes: &[Vec<(u32, u32)>]) -> Vec<bool> {
    let mut found = vec![false; classes.len()];
    let mut left = classes.iter().filter(|c| !c.is_empty()).count();
    if left == 0 {
        return found;
    }
    let mut leads = [false; 256];
    let mut blocks = vec![false; BLOCKS];
    for (k, ranges) in classes.iter().enumerate() {
        for &(lo, hi) in ranges {
            if lo > hi || hi > 0x10_FFFF {
                // A range no table should hold: the class is taken to occur (its pass runs).
                if !found[k] {
                    found[k] = true;
                    left -= 1;
                }
                continue;
            }
            for b in lead_byte(lo)..=lead_byte(hi) {
                leads[usize::from(b)] = true;
            }
            blocks[block(lo)..=block(hi)].fill(true);
        }
    }
    if left == 0 {
        return found;
    }
    leads[0x80..=0xBF].fill(false); // a continuation byte never begins a character
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !leads[usize::from(b[i])] {
            i += 1;
            continue;
        }
        // A lead byte is never a continuation byte, so `i` is a character boundary.
        let Some(ch) = s.get(i..).and_then(|t| t.chars().next()) else {
            break;
        };
        let c = u32::from(ch);
        if blocks[block(c)] {
            for (k, ranges) in classes.iter().enumerate() {
                if !found[k] && ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) {
                    found[k] = true;
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        i += ch.len_utf8();
    }
    found
}

/// The maximal runs of characters of `ranges` (inclusive code point ranges) in `s`, in order (byte
/// offsets): what the regex `[class]+` finds (`scan.hidden._CONTROL_RUN_RE`). Bytes that cannot
/// begin one of its characters end a run at a table lookup; `None` for a range no table should
/// hold, or once there are more than `limit` runs (the caller then runs its regex: where runs are
/// dense, collecting them costs more than the regex's own loop).
pub fn class_runs(s: &str, ranges: &[(u32, u32)], limit: usize) -> Option<Vec<(usize, usize)>> {
    let mut leads = [false; 256];
    let mut blocks = vec![false; BLOCKS];
    for &(lo, hi) in ranges {
        if lo > hi || hi > 0x10_FFFF {
            return None;
        }
        for b in lead_byte(lo)..=lead_byte(hi) {
            leads[usize::from(b)] = true;
        }
        blocks[block(lo)..=block(hi)].fill(true);
    }
    leads[0x80..=0xBF].fill(false);
    let inside = |c: u32| blocks[block(c)] && ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut run: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        if !leads[usize::from(b[i])] {
            if let Some(start) = run.take() {
                out.push((start, i));
                if out.len() > limit {
                    return None;
                }
            }
            i += 1;
            continue;
        }
        // A lead byte is never a continuation byte, so `i` is a character boundary.
        let Some(ch) = s.get(i..).and_then(|t| t.chars().next()) else {
            break;
        };
        if inside(u32::from(ch)) {
            run.get_or_insert(i);
        } else if let Some(start) = run.take() {
            out.push((start, i));
            if out.len() > limit {
                return None;
            }
        }
        i += ch.len_utf8();
    }
    if let Some(start) = run {
        out.push((start, b.len()));
    }
    (out.len() <= limit).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(s: &str, classes: &[Vec<(u32, u32)>]) -> Vec<bool> {
        classes
            .iter()
            .map(|r| {
                s.chars().any(|c| {
                    r.iter()
                        .any(|&(lo, hi)| lo <= u32::from(c) && u32::from(c) <= hi)
                })
            })
            .collect()
    }

    #[test]
    fn equals_the_naive_check() {
        let classes = vec![
            vec![(0xE0000, 0xE007F)],
            vec![(0x202A, 0x202E), (0x2066, 0x2069)],
            vec![(0x0, 0x8), (0xB, 0xB), (0x80, 0x9F)],
            vec![(0x200B, 0x200F), (0x3164, 0x3164), (0xFE00, 0xFE0F)],
            vec![],
        ];
        for s in [
            "",
            "plain ascii",
            "caf\u{e9} \u{ab}quote\u{bb} \u{3042}\u{3044} \u{1F600}",
            "a\u{200b}b",
            "\u{E0041}",
            "x\u{2067}",
            "\u{0}",
            "\u{85}",
            "\u{3163}\u{3165}\u{3164}",
            "\u{fe0f}\u{1F3F4}\u{E0067}\u{E007F}",
        ] {
            assert_eq!(classes_present(s, &classes), naive(s, &classes), "{s:?}");
        }
    }

    #[test]
    fn runs_as_the_naive_walk_finds_them() {
        // Every string of up to 5 characters over class members (one- to three-byte) and
        // neighbours, against a walk over `chars()`.
        let ranges = [(0x0, 0x8), (0xB, 0xB), (0x7F, 0x9F), (0xFFFE, 0xFFFF)];
        let alphabet = [
            '\u{0}',
            '\u{8}',
            '\t',
            '\u{b}',
            '\u{c}',
            'a',
            '\u{7f}',
            '\u{9f}',
            '\u{a0}',
            '\u{fffd}',
            '\u{fffe}',
            '\u{1f600}',
        ];
        let naive = |s: &str| {
            let mut out = Vec::new();
            let mut run = None;
            for (i, c) in s.char_indices() {
                let yes = ranges
                    .iter()
                    .any(|&(lo, hi)| lo <= u32::from(c) && u32::from(c) <= hi);
                match (yes, run) {
                    (true, None) => run = Some(i),
                    (false, Some(st)) => {
                        out.push((st, i));
                        run = None;
                    }
                    _ => {}
                }
            }
            if let Some(st) = run {
                out.push((st, s.len()));
            }
            out
        };
        let n = alphabet.len();
        for len in 0..=5u32 {
            for mut k in 0..n.pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push(alphabet[k % n]);
                    k /= n;
                }
                let want = naive(&s);
                assert_eq!(
                    class_runs(&s, &ranges, usize::MAX),
                    Some(want.clone()),
                    "{s:?}"
                );
                assert_eq!(
                    class_runs(&s, &ranges, want.len()),
                    Some(want.clone()),
                    "{s:?}"
                );
                if let Some(fewer) = want.len().checked_sub(1) {
                    assert_eq!(class_runs(&s, &ranges, fewer), None, "{s:?}");
                }
            }
        }
        assert_eq!(class_runs("x", &[(0x41, 0x40)], usize::MAX), None);
    }

    #[test]
    fn a_range_no_table_holds_fails_closed() {
        let classes = vec![
            vec![(0x41, 0x40)],
            vec![(0x10_FFFF, 0x11_0000)],
            vec![(0x61, 0x61)],
        ];
        assert_eq!(classes_present("xyz", &classes), vec![true, true, false]);
    }

    #[test]
    fn neighbours_of_a_range_are_not_in_it() {
        let classes = vec![vec![(0x3164, 0x3164)]];
        assert_eq!(
            classes_present("\u{3163}\u{3165}\u{3100}", &classes),
            vec![false]
        );
        assert_eq!(classes_present("\u{3163}\u{3164}", &classes), vec![true]);
    }
}
