//! A quick timing of the core without Python: `cargo run --release --example bench -- UNIT MB`.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let unit = args.get(1).map_or("\u{ff1c}\u{e9}", |s| s.as_str());
    let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let text = unit.repeat(mb * 1024 * 1024 / unit.len());
    let names = envelock_core::Names::default_names();
    let t0 = Instant::now();
    let out = envelock_core::defang(&text, envelock_core::Level::Reserved, &names);
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "{} MB in {:.3} s: {:.1} MB/s (out {} bytes)",
        mb,
        dt,
        mb as f64 / dt,
        out.len()
    );
}
