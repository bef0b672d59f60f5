//! A quick timing of the core without Python:
//!
//! * `cargo run --release --example bench -- UNIT MB`: `UNIT` repeated to `MB` megabytes;
//! * `cargo run --release --example bench -- --file PATH [REPS]`: the UTF-8 text of a file, the
//!   best of `REPS` runs (default 5) of `defang_body` and of `canonical_body` of its output, at every
//!   level (`--file PATH REPS LEVEL`: at one).
use std::time::Instant;

use envelock_core::{canonical_body, defang_body, Level, Names};

fn best(text: &str, level: Level, names: &Names, reps: usize) -> (f64, usize) {
    let mut best = f64::INFINITY;
    let mut len = 0;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        let out = defang_body(text, level, names);
        best = best.min(t0.elapsed().as_secs_f64());
        len = out.len();
    }
    (best, len)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let names = Names::default_names();
    if args.get(1).map(String::as_str) == Some("--file") {
        let path = args.get(2).expect("--file PATH");
        let text = std::fs::read_to_string(path).expect("a UTF-8 file");
        let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
        let mb = text.len() as f64 / (1024.0 * 1024.0);
        for (label, level) in [
            ("reserved", Level::Reserved),
            ("markup", Level::Markup),
            ("xml", Level::Xml),
        ] {
            if args.get(4).is_some_and(|only| only != label) {
                continue;
            }
            let (dt, out) = best(&text, level, &names, reps);
            println!(
                "{path} {label}: {mb:.2} MB in {dt:.4} s: {:.1} MB/s (out {out} bytes, best of {reps})",
                mb / dt
            );
            let body = defang_body(&text, level, &names).into_owned();
            let mut cbest = f64::INFINITY;
            for _ in 0..reps.max(1) {
                let t0 = Instant::now();
                let (_, ok) = canonical_body(&body, level, &names);
                assert!(ok, "the defanged body is canonical");
                cbest = cbest.min(t0.elapsed().as_secs_f64());
            }
            println!(
                "  canonical_body of it: {cbest:.4} s ({:.2}x the defang)",
                cbest / dt
            );
        }
        return;
    }
    let unit = args.get(1).map_or("\u{ff1c}\u{e9}", |s| s.as_str());
    let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let text = unit.repeat(mb * 1024 * 1024 / unit.len());
    let (dt, out) = best(&text, Level::Reserved, &names, 1);
    println!(
        "{} MB in {:.3} s: {:.1} MB/s (out {} bytes)",
        mb,
        dt,
        mb as f64 / dt,
        out
    );
}
