//! undefang(defang(s)) == s and undefang_body(defang_body(s)) == s at every level; defang
//! only inserts (below xml).
#![no_main]

use envelock_core::{defang, defang_body, undefang, undefang_body, Level, Names};
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static NAMES: LazyLock<Names> = LazyLock::new(Names::default_names);

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for level in [Level::Reserved, Level::Markup, Level::Xml] {
        let out = defang(s, level, &NAMES);
        let back = undefang(&out, level, &NAMES);
        if back != s {
            panic!("round trip broken at {level:?}: {s:?} -> {out:?} -> {back:?}");
        }
        if level != Level::Xml {
            assert!(out.len() >= s.len(), "defang deleted text");
        }
        let body = defang_body(s, level, &NAMES);
        let back = undefang_body(&body, level, &NAMES);
        if back != s {
            panic!("body round trip broken at {level:?}: {s:?} -> {body:?} -> {back:?}");
        }
    }
});
