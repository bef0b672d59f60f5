//! Which of several character classes occur in a text at all, in one pass: the scanner's passes
//! over rare characters (TAG characters, bidi controls, invisible characters, controls) are Python
//! regexes, each a full pass over non-ASCII text; a class that does not occur lets its pass be
//! skipped, and its findings are then exactly the pass's (none).

use crate::chars::in_ranges;
use crate::sanitize::leads_of;

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
    let valid = |&&(lo, hi): &&(u32, u32)| lo <= hi && hi <= 0x10_FFFF;
    let mut blocks = vec![false; BLOCKS];
    for (k, ranges) in classes.iter().enumerate() {
        if !ranges.iter().all(|r| valid(&r)) && !found[k] {
            // A range no table should hold: the class is taken to occur (its pass runs).
            found[k] = true;
            left -= 1;
        }
        for &(lo, hi) in ranges.iter().filter(valid) {
            blocks[block(lo)..=block(hi)].fill(true);
        }
    }
    if left == 0 {
        return found;
    }
    let leads = leads_of(classes.iter().flatten().filter(valid));
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !leads[usize::from(b[i])] {
            i += 1;
            continue;
        }
        // A lead byte is never a continuation byte, so `i` is a character boundary; were it not,
        // every class is taken to occur (each pass runs) rather than the rest going unread.
        let Some(ch) = s.get(i..).and_then(|t| t.chars().next()) else {
            return vec![true; classes.len()];
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
/// offsets), of at least `shortest` characters: what the regex `[class]{shortest,}` finds
/// (`scan.hidden._CONTROL_RUN_RE`, `_LONG_RUN_RE`). Bytes that cannot begin one of its characters
/// end a run at a table lookup; `None` for a range no table should hold, or once there are more than
/// `limit` runs (the caller then runs its regex: where runs are dense, collecting them costs more
/// than the regex's own loop).
pub fn class_runs(
    s: &str,
    ranges: &[(u32, u32)],
    limit: usize,
    shortest: usize,
) -> Option<Vec<(usize, usize)>> {
    if ranges.iter().any(|&(lo, hi)| lo > hi || hi > 0x10_FFFF) {
        return None;
    }
    let leads = leads_of(ranges);
    let mut blocks = vec![false; BLOCKS];
    for &(lo, hi) in ranges {
        blocks[block(lo)..=block(hi)].fill(true);
    }
    let inside = |c: u32| blocks[block(c)] && ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
    let b = s.as_bytes();
    let mut out = Vec::new();
    // The run being read: its start and its length in characters.
    let mut run: Option<(usize, usize)> = None;
    let end_run =
        |run: &mut Option<(usize, usize)>, at: usize, out: &mut Vec<(usize, usize)>| match run
            .take()
        {
            Some((start, len)) if len >= shortest => {
                out.push((start, at));
                out.len() <= limit
            }
            _ => true,
        };
    let mut i = 0;
    while i < b.len() {
        if !leads[usize::from(b[i])] {
            if !end_run(&mut run, i, &mut out) {
                return None;
            }
            i += 1;
            continue;
        }
        // A lead byte is never a continuation byte, so `i` is a character boundary; were it not,
        // the caller's regex finds the runs (`None`) rather than the rest going unread.
        let ch = s.get(i..).and_then(|t| t.chars().next())?;
        if inside(u32::from(ch)) {
            run.get_or_insert((i, 0)).1 += 1;
        } else if !end_run(&mut run, i, &mut out) {
            return None;
        }
        i += ch.len_utf8();
    }
    if !end_run(&mut run, b.len(), &mut out) {
        return None;
    }
    Some(out)
}

/// Inclusive code point ranges, sorted and merged, for a membership test by binary search (by a
/// table for ASCII).
struct RangeSet {
    ranges: Vec<(u32, u32)>,
    ascii: [bool; 128],
}

impl RangeSet {
    fn new(ranges: &[(u32, u32)]) -> RangeSet {
        let mut v = ranges.to_vec();
        v.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        let mut set = RangeSet {
            ranges: merged,
            ascii: [false; 128],
        };
        for c in 0..128u8 {
            set.ascii[usize::from(c)] = set.search(u32::from(c));
        }
        set
    }

    fn search(&self, c: u32) -> bool {
        in_ranges(&self.ranges, c)
    }

    #[inline]
    fn contains(&self, c: char) -> bool {
        match usize::try_from(u32::from(c)) {
            Ok(a) if a < 128 => self.ascii[a],
            _ => self.search(u32::from(c)),
        }
    }
}

/// `scan.hidden._words_with_invisibles` over the maximal runs of `hidden` (byte spans, in order):
/// at the character before each run that is not inside the last word found, the regex
/// `_IN_WORD_RE` matched there, a `word` character then (one to three `hidden` characters, a
/// `word` character) once or more, each repetition taking the most `hidden` characters that leave
/// a `word` character after them and the repetition possessive, as the regex engine does. A run
/// with no `word` character before it starts no word, so a text of runs between other characters
/// (`<` U+200B U+200D U+2060 `/x`) costs one look each, not a regex search and match each. `None`
/// for a range no table should hold. Linear: the walk goes forward from the end of each word or
/// run, and a failed match reads at most four characters past its run's start.
pub fn words_with_runs(
    s: &str,
    hidden: &[(u32, u32)],
    word: &[(u32, u32)],
) -> Option<Vec<(usize, usize)>> {
    if hidden
        .iter()
        .chain(word)
        .any(|&(lo, hi)| lo > hi || hi > 0x10_FFFF)
    {
        return None;
    }
    let leads = leads_of(hidden);
    let (hid, wrd) = (RangeSet::new(hidden), RangeSet::new(word));
    let is_hidden = |c: char| hid.contains(c);
    let b = s.as_bytes();
    let run_end = |mut k: usize| {
        while let Some(c) = s[k..].chars().next().filter(|&c| is_hidden(c)) {
            k += c.len_utf8();
        }
        k
    };
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        // The next character of `hidden` at or after `i`: bytes that begin none are passed over.
        while i < b.len() && !leads[usize::from(b[i])] {
            i += 1;
        }
        // `i` is a character's first byte (a lead byte begins one); were it not, the walk gives up
        // (`None`: the caller searches with its regexes) rather than end with what it found so far.
        let rest = s.get(i..)?;
        let Some(c) = rest.chars().next() else {
            return Some(out);
        };
        if !is_hidden(c) {
            i += c.len_utf8();
            continue;
        }
        // A maximal run starts here unless the character before is of it too (a word may end
        // inside a run, on a character that is both): such a run was passed over already.
        let before = s[..i].chars().next_back();
        if before.is_some_and(&is_hidden) {
            i = run_end(i);
            continue;
        }
        let start = i;
        match before.filter(|&p| wrd.contains(p)) {
            Some(p) => match in_word_end(s, start, &hid, &wrd) {
                Some(end) => {
                    out.push((start - p.len_utf8(), end));
                    i = end;
                }
                None => i = run_end(start),
            },
            None => i = run_end(start),
        }
    }
}

/// The end of `(?:[hidden]{1,3}[word])++` matched at `i` (after a word character), if it matches
/// once at least: each repetition tries three, two, then one `hidden` characters followed by a
/// `word` character (the greedy quantifier's order of backtracking), and the repetitions stop at
/// the first that fails (possessive: none is undone).
fn in_word_end(s: &str, i: usize, hidden: &RangeSet, word: &RangeSet) -> Option<usize> {
    // A window of up to four characters ahead of the match's end: where each ends, and whether it
    // is hidden, a word character; each character is decoded and looked up once.
    let mut chars = s[i..].char_indices();
    let classify =
        |(off, c): (usize, char)| (i + off + c.len_utf8(), hidden.contains(c), word.contains(c));
    let mut ahead = [(0usize, false, false); 4];
    let mut n = 0;
    for a in chars.by_ref().take(4) {
        ahead[n] = classify(a);
        n += 1;
    }
    let mut end = None;
    loop {
        let lead = ahead[..n].iter().take_while(|a| a.1).count();
        let Some(k) = (1..=lead.min(3)).rev().find(|&k| k < n && ahead[k].2) else {
            return end;
        };
        end = Some(ahead[k].0);
        // The repetition took `k + 1` characters: the window moves on past them.
        ahead.copy_within(k + 1..n, 0);
        n -= k + 1;
        for a in chars.by_ref().take(4 - n) {
            ahead[n] = classify(a);
            n += 1;
        }
    }
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
        let mut bytes_differ = false;
        for len in 0..=5u32 {
            for mut k in 0..n.pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push(alphabet[k % n]);
                    k /= n;
                }
                let want = naive(&s);
                assert_eq!(
                    class_runs(&s, &ranges, usize::MAX, 1),
                    Some(want.clone()),
                    "{s:?}"
                );
                assert_eq!(
                    class_runs(&s, &ranges, want.len(), 1),
                    Some(want.clone()),
                    "{s:?}"
                );
                if let Some(fewer) = want.len().checked_sub(1) {
                    assert_eq!(class_runs(&s, &ranges, fewer, 1), None, "{s:?}");
                }
                // At least `shortest` characters: the runs of that many or more, counted in
                // characters (not bytes: the alphabet mixes one- to four-byte characters).
                for shortest in 2..=4 {
                    let long: Vec<_> = want
                        .iter()
                        .copied()
                        .filter(|&(a, e)| s[a..e].chars().count() >= shortest)
                        .collect();
                    assert_eq!(
                        class_runs(&s, &ranges, long.len(), shortest),
                        Some(long.clone()),
                        "{s:?} {shortest}"
                    );
                    // Control: a length in bytes is told apart somewhere in the sample.
                    bytes_differ |= want.iter().any(|&(a, e)| {
                        (e - a >= shortest) != (s[a..e].chars().count() >= shortest)
                    });
                }
            }
        }
        assert!(bytes_differ);
        assert_eq!(class_runs("x", &[(0x41, 0x40)], usize::MAX, 1), None);
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

    /// `_IN_WORD_RE` run over every maximal run, as the Python search does it, on characters.
    fn words_by_chars(s: &str, hidden: &[(u32, u32)], word: &[(u32, u32)]) -> Vec<(usize, usize)> {
        let inr = |r: &[(u32, u32)], c: char| {
            r.iter()
                .any(|&(lo, hi)| lo <= u32::from(c) && u32::from(c) <= hi)
        };
        let cs: Vec<(usize, char)> = s.char_indices().collect();
        let byte = |k: usize| cs.get(k).map_or(s.len(), |x| x.0);
        let (mut out, mut pos, mut k) = (Vec::new(), 0, 0);
        while k < cs.len() {
            if !inr(hidden, cs[k].1) || (k > 0 && inr(hidden, cs[k - 1].1)) {
                k += 1;
                continue; // not the start of a maximal run
            }
            if k > 0 && k >= pos && inr(word, cs[k - 1].1) {
                let (mut j, mut ok) = (k, false);
                while let Some(t) = (1..=3).rev().find(|&t| {
                    (j..j + t).all(|x| x < cs.len() && inr(hidden, cs[x].1))
                        && j + t < cs.len()
                        && inr(word, cs[j + t].1)
                }) {
                    j += t + 1;
                    ok = true;
                }
                if ok {
                    out.push((byte(k - 1), byte(j)));
                    pos = j;
                }
            }
            k += 1;
        }
        out
    }

    #[test]
    fn words_with_runs_as_the_search_over_characters_finds_them() {
        // Every string of up to 6 characters over word, invisible, both (U+3164), and other ones.
        let hidden = [(0x200B, 0x200D), (0x3164, 0x3164)];
        let word = [(0x61, 0x62), (0xE9, 0xE9), (0x3164, 0x3164)];
        let alphabet = ['a', '\u{e9}', '<', '\u{200b}', '\u{200d}', '\u{3164}'];
        let mut strings = vec![String::new()];
        let mut checked = 0;
        let mut words = 0;
        for _ in 0..6 {
            let mut next = Vec::new();
            for s in &strings {
                for &c in &alphabet {
                    let t = format!("{s}{c}");
                    let want = words_by_chars(&t, &hidden, &word);
                    assert_eq!(
                        words_with_runs(&t, &hidden, &word),
                        Some(want.clone()),
                        "{t:?}"
                    );
                    words += want.len();
                    checked += 1;
                    next.push(t);
                }
            }
            strings = next;
        }
        assert!(checked > 50_000 && words > 10_000, "{checked} {words}");
        assert_eq!(words_with_runs("a", &[(2, 1)], &word), None);
    }
}
