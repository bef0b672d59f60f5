//! The reader never panics, and every reading stays in bounds: at every character boundary,
//! `read_after` (with and without tokens and bars) and `read_bracket` end inside the text,
//! after the position they started at, and `end_rel` counts the code points read.
#![no_main]

use envelock_core::{read_after, read_bracket, Names, Scratch};
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static NAMES: LazyLock<[Names; 2]> = LazyLock::new(|| {
    [
        Names::default_names(),
        Names::new(&["retrieved_content"], false, false).unwrap(),
    ]
});

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let mut scratch = Scratch::default();
    let positions: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    for &pos in positions.iter().take(512) {
        for names in NAMES.iter() {
            for r in [
                read_after(s, pos, names, &mut scratch),
                read_bracket(s, pos, names, &mut scratch),
            ] {
                if r.is_none() {
                    continue;
                }
                assert!(
                    pos <= r.end && r.end <= s.len(),
                    "reading out of bounds at {pos}: {r:?} in {s:?}"
                );
                assert!(
                    s.is_char_boundary(r.end),
                    "reading ends inside a character: {r:?}"
                );
                assert_eq!(
                    s[pos..r.end].chars().count(),
                    r.end_rel,
                    "code points miscounted: {r:?} in {s:?}"
                );
            }
        }
    }
});
