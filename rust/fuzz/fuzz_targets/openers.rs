//! `openers` stays in bounds: sorted by start, `start < opener_end <= len`, readings end in the
//! text, and the code-point offsets agree with the byte offsets.
#![no_main]

use envelock_core::{openers, Kind, Names};
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static NAMES: LazyLock<Names> = LazyLock::new(Names::default_names);

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let found = openers(s, &NAMES);
    let cp = |b: usize| s[..b].chars().count();
    let mut last = 0;
    for o in &found {
        assert!(o.start >= last, "openers out of order: {found:?}");
        assert!(
            o.start < o.opener_end && o.opener_end <= s.len(),
            "opener out of bounds: {o:?}"
        );
        assert!(o.reading_end <= s.len(), "reading out of bounds: {o:?}");
        assert_eq!(o.start_cp, cp(o.start));
        assert_eq!(o.opener_end_cp, cp(o.opener_end));
        if o.kind != Kind::None {
            assert!(o.reading_end >= o.opener_end);
            assert_eq!(o.reading_end_cp, cp(o.reading_end));
        } else {
            assert_eq!(s.as_bytes()[o.opener_end], b'\\');
        }
        last = o.opener_end;
    }
});
