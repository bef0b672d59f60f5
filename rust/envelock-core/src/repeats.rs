//! Readings reused where the text repeats: hostile text is one construct hundreds of thousands of
//! times (`<|` repeated: a million openers, each read through the general reader), and an opener
//! whose surroundings are byte for byte an earlier opener's has that opener's reading, moved.
//!
//! What a reading depends on: the opener itself and the byte before its start (`quote_opener`, and
//! since stop 48 `quoted_opener`: an ASCII quote there and after it makes a quoted `<`), and the text
//! from the opener's end to at most [`MAX_LOOKAHEAD`] code points further, plus the one piece that
//! starts inside that bound and a character's peek past it. Every reader loop stops at
//! `before_end` (`rel < MAX_LOOKAHEAD`, code points from the opener's end) or after `MAX_RUN`
//! steps. A piece is one character (at most 4 bytes) or a reference; a named reference is at most
//! 32 code points and a `;`, in at most `MAX_AMP_LAYERS + 1` layers (about 2.2 KB at four bytes a
//! code point). A numeric reference has no bound (`&#` and any number of zeros), so a window in
//! which [`LONG_DIGITS`] hex digits follow one another is never reused; with shorter digit runs
//! every piece that starts inside the bound ends inside [`WINDOW`] (4 KB past the opener's end,
//! with room to spare). The window also takes the opener itself and [`BEHIND`] bytes before it.
//!
//! Two windows are equal when the text is periodic with their distance over the later one: that is
//! followed per distance as one verified run (`from..to`, every `b[k] == b[k - d]`), so repeated
//! text compares each byte about once. Comparisons are counted and bounded ([`Repeats::compared`]):
//! past the budget (twice the text and a few windows) every opener is read again, as without this.

use crate::tables::{MAX_AMP_LAYERS, MAX_LOOKAHEAD};

/// How far past an opener's end its window reaches (bytes); see the module's comment.
pub const WINDOW: usize = 4096;
/// How far before an opener's start its window begins (one character: `quoted_opener` reads one byte).
pub const BEHIND: usize = 4;
/// A run of this many ASCII hex digits in a window keeps it from being reused (a numeric
/// reference that long may run past the window).
pub const LONG_DIGITS: usize = 32;
/// How far back an earlier opener is tried (bytes): hostile text repeats short constructs.
pub const MAX_DISTANCE: usize = 512;
/// The most openers read afresh between two tries after tries that found nothing.
const MAX_BACKOFF: usize = 64;
/// How many earlier openers are tried.
const RECENT: usize = 4;
/// How many distances keep a verified run.
const RUNS: usize = 8;

// The longest reading: the bound in code points of four bytes, then a piece of `MAX_AMP_LAYERS`
// named layers and a last reference (a name, or `&#x`, digits and `;`), and a character's peek.
const _: () = assert!(
    4 * MAX_LOOKAHEAD + (MAX_AMP_LAYERS + 1) * (1 + 4 * 32 + 1) + LONG_DIGITS + 4 + 4 < WINDOW
);

/// What keeps a window from being reused: text past which an answer may depend further than the
/// window reaches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Guard {
    /// A reading (`read_after`, `read_bracket`): a run of [`LONG_DIGITS`] hex digits.
    LongDigits,
    /// The defang's decision, which also reads an exact token through references (any `&`), and
    /// an exact token and markup past any number of backslashes (any `\`: kept out too, though no
    /// text was found where it matters: a run of backslashes after an opener is a padding reading,
    /// escaped whatever follows, and the tests' attempt at a control was not caught).
    Plain,
    /// Nothing (tests: a control that must be caught).
    Off,
}

/// How answers are reused: the window past an opener's end, and the guard.
#[derive(Clone, Copy, Debug)]
pub struct Reuse {
    pub window: usize,
    pub guard: Guard,
    /// How far back an earlier opener is tried ([`MAX_DISTANCE`]; tests: further, where a guard
    /// alone keeps a window with a long reference from being reused).
    pub max_distance: usize,
}

impl Reuse {
    /// The readings' reuse.
    pub const DEFAULT: Reuse = Reuse {
        window: WINDOW,
        guard: Guard::LongDigits,
        max_distance: MAX_DISTANCE,
    };
    /// No reuse: every answer worked out afresh (the reference of the tests).
    pub const NONE: Reuse = Reuse {
        window: usize::MAX,
        guard: Guard::LongDigits,
        max_distance: MAX_DISTANCE,
    };
}

/// What a guard refuses, found only where a window asks: `len` bytes of a class in a row (hex
/// digits; a single `&` or `\`). `from..checked` holds no such run; `stop` is where the first one
/// found starts.
struct Hazards {
    class: [bool; 256],
    len: usize,
    plain: bool,
    from: usize,
    checked: usize,
    stop: usize,
}

impl Hazards {
    fn new(guard: Guard) -> Hazards {
        let mut class = [false; 256];
        let (len, plain) = match guard {
            Guard::LongDigits => {
                for c in (b'0'..=b'9').chain(b'a'..=b'f').chain(b'A'..=b'F') {
                    class[usize::from(c)] = true;
                }
                (LONG_DIGITS, false)
            }
            Guard::Plain => {
                class[usize::from(b'&')] = true;
                class[usize::from(b'\\')] = true;
                (1, true)
            }
            Guard::Off => (usize::MAX, false),
        };
        Hazards {
            class,
            len,
            plain,
            from: 0,
            checked: 0,
            stop: usize::MAX,
        }
    }

    /// Whether a refused run lies in `lo..hi` (one that began before `lo` and goes on into it counts
    /// as well: refused, never missed; a digit run that starts too near `hi` to be whole in it is one
    /// no reading reaches: a reading's last piece starts 1 KB past the opener at most, and its
    /// digits, after at most 17 named layers, start more than 32 bytes before `hi`). Windows are
    /// asked in increasing order of `lo`; each byte is looked at about once.
    fn in_window(&mut self, b: &[u8], lo: usize, hi: usize) -> bool {
        if lo < self.from || lo > self.checked || self.stop < lo {
            (self.from, self.checked, self.stop) = (lo, lo, usize::MAX);
        }
        if self.stop == usize::MAX && self.checked < hi {
            // A run may cross the end of what was checked: from `len - 1` bytes before it.
            let start = self
                .checked
                .saturating_sub(self.len.saturating_sub(1))
                .max(self.from);
            let found = if self.plain {
                memchr::memchr2(b'&', b'\\', &b[start..hi]).map(|k| start + k)
            } else {
                self.run_in(b, start, hi)
            };
            self.stop = found.unwrap_or(usize::MAX);
            self.checked = hi;
        }
        self.stop < hi
    }

    /// The first `i` in `from..` with `b[i..i + len]` of the class, inside `..end`: the last byte of
    /// each candidate looked at first, so text with few class bytes is read about one byte in `len`.
    fn run_in(&self, b: &[u8], mut i: usize, end: usize) -> Option<usize> {
        while i.checked_add(self.len)? <= end {
            let last = i + self.len - 1;
            if !self.class[usize::from(b[last])] {
                i = last + 1;
                continue;
            }
            match (i..last).rev().find(|&k| !self.class[usize::from(b[k])]) {
                None => return Some(i),
                Some(k) => i = k + 1,
            }
        }
        None
    }
}

/// The first index where `x` and `y` (of one length) differ: 64 bytes at a time by slice equality
/// (the library's `memcmp`), then byte by byte inside the chunk that differs.
fn first_difference(x: &[u8], y: &[u8]) -> Option<usize> {
    if x.len() <= 16 {
        // (Repeated text extends a run by its period, a few bytes: no library call for those.)
        return x.iter().zip(y).position(|(a, b)| a != b);
    }
    let mut k = 0;
    for (p, q) in x.chunks(64).zip(y.chunks(64)) {
        if p != q {
            return p.iter().zip(q).position(|(a, b)| a != b).map(|i| k + i);
        }
        k += p.len();
    }
    None
}

/// A verified periodic run: every `b[k] == b[k - d]` for `k` in `from..to`.
#[derive(Clone, Copy, Default)]
struct Run {
    d: usize,
    from: usize,
    to: usize,
}

/// The recent openers' answers and the runs that say where the text repeats.
pub struct Repeats<'s, T: Copy> {
    b: &'s [u8],
    window: usize,
    recent: [Option<(usize, usize, T)>; RECENT],
    next: usize,
    hazards: Hazards,
    max_distance: usize,
    periodic: Periodic<'s>,
    /// After a try that found nothing, how many openers are read before the next try (doubling to
    /// [`MAX_BACKOFF`], back to none at a reuse): dense text that does not repeat (HTML's tags)
    /// paid a try per opener.
    backoff: usize,
    wait: usize,
    /// [`MAX_BACKOFF`] (tests: 0, the control that tries at every opener).
    max_backoff: usize,
    /// Windows compared with an earlier opener's so far (the tries; tests count them).
    pub tries: usize,
}

/// Where a text repeats itself: per distance `d` (eight at most), a verified run on which every
/// `b[k] == b[k - d]`, extended as the questions advance, and a bound on the bytes compared.
pub struct Periodic<'s> {
    b: &'s [u8],
    runs: [Run; RUNS],
    next_run: usize,
    last: usize,
    budget: usize,
    /// Bytes compared so far (the work this adds; tests bound it).
    pub compared: usize,
}

impl<'s, T: Copy> Repeats<'s, T> {
    pub fn new(s: &'s str) -> Self {
        Self::with(s, Reuse::DEFAULT)
    }

    pub fn with(s: &'s str, reuse: Reuse) -> Self {
        let b = s.as_bytes();
        let window = reuse.window;
        Repeats {
            b,
            window,
            recent: [None; RECENT],
            next: 0,
            hazards: Hazards::new(reuse.guard),
            max_distance: reuse.max_distance,
            backoff: 0,
            wait: 0,
            max_backoff: MAX_BACKOFF,
            tries: 0,
            periodic: Periodic::new(b, window),
        }
    }

    /// Bytes compared so far.
    pub fn compared(&self) -> usize {
        self.periodic.compared
    }

    /// The answer of an earlier opener whose window equals this one's (`a..e` the opener), and how
    /// far back it is (bytes). Openers are asked in increasing order of start.
    pub fn get(&mut self, a: usize, e: usize) -> Option<(T, usize)> {
        // Only where openers are close (the last one within `max_distance`): there reading each is
        // the cost; in ordinary text the openers are far apart and a try would be work for nothing.
        let last = self.recent[(self.next + RECENT - 1) % RECENT]?.0;
        if last >= a || a - last > self.max_distance {
            return None;
        }
        let lo = a.checked_sub(BEHIND)?;
        let hi = e.checked_add(self.window).filter(|&h| h <= self.b.len())?;
        if self.wait > 0 {
            self.wait -= 1;
            return None;
        }
        if !self.hazards.in_window(self.b, lo, hi) {
            if let Some(hit) = self.try_recent(a, e, lo, hi) {
                self.backoff = 0;
                return Some(hit);
            }
        }
        self.backoff = (2 * self.backoff + 1).min(self.max_backoff);
        self.wait = self.backoff;
        None
    }

    /// The answer of one of the recent openers whose window equals `lo..hi`.
    fn try_recent(&mut self, a: usize, e: usize, lo: usize, hi: usize) -> Option<(T, usize)> {
        for k in 0..RECENT {
            let slot = (self.next + RECENT - 1 - k) % RECENT;
            let Some((qa, qe, v)) = self.recent[slot] else {
                continue;
            };
            if qa < BEHIND || qa >= a || a - qa > self.max_distance || a - qa != e - qe {
                continue;
            }
            self.tries += 1;
            if self.periodic.holds(a - qa, lo, hi) {
                return Some((v, a - qa));
            }
        }
        None
    }

    /// Keeps an opener's answer for the openers after it.
    pub fn record(&mut self, a: usize, e: usize, v: T) {
        self.recent[self.next] = Some((a, e, v));
        self.next = (self.next + 1) % RECENT;
    }
}

impl<'s> Periodic<'s> {
    /// For `b`, comparing at most twice its length and four times `slack` bytes in all.
    pub fn new(b: &'s [u8], slack: usize) -> Self {
        Periodic {
            b,
            runs: [Run::default(); RUNS],
            next_run: 0,
            last: 0,
            budget: (2 * b.len()).saturating_add(slack.saturating_mul(4)),
            compared: 0,
        }
    }

    /// Whether `b[k] == b[k - d]` for every `k` in `lo..hi` (`false` past the budget, or where the
    /// question does not fit the text: a distance of 0 or past `lo`, an end past the text).
    pub fn holds(&mut self, d: usize, lo: usize, hi: usize) -> bool {
        if d == 0 || d > lo || hi > self.b.len() {
            return false;
        }
        // The run used last first: repeated text asks one distance again and again.
        let found = if self.runs[self.last].d == d {
            Some(self.last)
        } else {
            self.runs.iter().position(|r| r.d == d)
        };
        let at = match found {
            Some(i) => i,
            None => {
                let i = self.next_run;
                self.next_run = (i + 1) % RUNS;
                self.runs[i] = Run {
                    d,
                    from: lo,
                    to: lo,
                };
                i
            }
        };
        self.last = at;
        let run = &mut self.runs[at];
        if run.from > lo {
            return false; // a known difference inside the window
        }
        if run.to < lo {
            *run = Run {
                d,
                from: lo,
                to: lo,
            };
        }
        if run.to >= hi {
            return true;
        }
        let len = hi - run.to;
        if len > self.budget {
            return false;
        }
        self.budget -= len;
        let (x, y) = (&self.b[run.to..hi], &self.b[run.to - d..hi - d]);
        match first_difference(x, y) {
            Some(k) => {
                self.compared += k + 1;
                run.from = run.to + k + 1;
                run.to = run.from;
                false
            }
            None => {
                self.compared += len;
                run.to = hi;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{openers_using, Family, Names, OpenerReading, Reading};

    const BOTH: [Family; 2] = [Family::Angle, Family::Bracket];

    fn names() -> Names {
        Names::new(&["retrieved_content", "system"], true, true).unwrap()
    }

    /// Every opener read afresh: the reference of the reuse.
    fn direct<'n>(s: &str, names: &'n Names) -> Vec<OpenerReading<'n>> {
        openers_using(s, names, &BOTH, Reuse::NONE)
    }

    /// A small deterministic generator (xorshift64*), so a failure names its seed.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// The pieces repeated texts are made of: openers of both families and their look-alikes and
    /// references, bars, names, closers, skipped characters, quotes, `#` and digits.
    const ATOMS: &[&str] = &[
        "<",
        "<|",
        "[",
        "[INST]",
        "INST]",
        "]",
        "&lt;",
        "&amp;lt;",
        "&#60;",
        "&#x3c;",
        "&#0000060;",
        "&",
        "#",
        "0",
        ";",
        "«",
        "« ",
        "‹",
        "\u{ff1c}",
        "\u{ff5c}",
        "\u{3008}",
        " ",
        "  ",
        "\t",
        "\n",
        "/",
        "\\",
        "|",
        "|>",
        ">",
        "\u{203a}",
        "im_end",
        "im_start",
        "system",
        "s",
        "retrieved_content",
        "x",
        ":",
        "a\u{200b}",
        "\u{ad}",
        "\"",
        "'",
        "\u{201c}",
        "\u{e9}",
        "&nbsp;",
        "&sol;",
        "&verbar;",
        "<!--",
        "?",
        "!",
    ];

    fn repeated(g: &mut Gen) -> String {
        let mut unit = String::new();
        for _ in 0..1 + g.below(5) {
            unit.push_str(ATOMS[g.below(ATOMS.len())]);
        }
        // Longer units now and then: a skipped run that takes a name far from its opener.
        if g.below(4) == 0 {
            unit.push_str(&" ".repeat(g.below(300)));
            unit.push_str(ATOMS[g.below(ATOMS.len())]);
        }
        let size = WINDOW + 2_000 + g.below(8_000);
        let mut s = unit.repeat(size / unit.len() + 1);
        // Up to three changes at character boundaries: the text stops repeating there.
        for _ in 0..g.below(4) {
            let mut at = g.below(s.len());
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            s.insert_str(at, ATOMS[g.below(ATOMS.len())]);
        }
        s
    }

    /// The first of `count` generated texts on which `repeats` gives other openers than reading each.
    fn first_difference(seed: u64, count: usize, reuse: Reuse) -> Option<String> {
        let names = names();
        let mut g = Gen(seed);
        for _ in 0..count {
            let s = repeated(&mut g);
            if openers_using(&s, &names, &BOTH, reuse) != direct(&s, &names) {
                return Some(s);
            }
        }
        None
    }

    #[test]
    fn reused_readings_are_the_readings() {
        let found = first_difference(0x9E37_79B9_7F4A_7C15, 2_000, Reuse::DEFAULT);
        assert!(
            found.is_none(),
            "{:?}",
            found.map(|s| s.chars().take(200).collect::<String>())
        );
        // From any distance back: the guard alone then keeps a long reference's window unreused.
        let far = Reuse {
            max_distance: usize::MAX,
            ..Reuse::DEFAULT
        };
        let found = first_difference(0x2545_F491_4F6C_DD1D, 1_000, far);
        assert!(
            found.is_none(),
            "{:?}",
            found.map(|s| s.chars().take(200).collect::<String>())
        );
    }

    /// A name far past a short window, and a numeric reference longer than the window.
    fn far_name() -> String {
        // (Both read past their first letter by the general reader: `x` alone would be decided
        // quickly, and never reused.)
        let unit = format!("<{}retrieved_contenx> ", " ".repeat(30));
        let other = format!("<{}retrieved_content> ", " ".repeat(30));
        format!("{}{other}{}", unit.repeat(300), unit.repeat(300))
    }

    fn long_reference() -> String {
        let unit = |c: &str| format!("<&#{}{c};retrieved_content> ", "0".repeat(5_000));
        format!("{}{}{}", unit("120").repeat(3), unit("32"), unit("120"))
    }

    #[test]
    fn the_crafted_texts_reuse_and_agree() {
        let names = names();
        for s in [
            far_name(),
            long_reference(),
            "<|".repeat(20_000),
            "&lt;&#x3c;".repeat(4_000),
        ] {
            assert_eq!(crate::openers_of(&s, &names, &BOTH), direct(&s, &names));
        }
        // The reuse is taken: `<|` repeated compares each byte about once. All openers but the
        // first four and the last `WINDOW / 2` (the window would pass the end) reuse a reading: the
        // first three have no earlier window starting in the text (`BEHIND` before the opener), so
        // the third's try finds nothing and the fourth waits (the back-off).
        let s = "<|".repeat(20_000);
        let (hits, compared) = reused(&s, Family::Angle);
        assert_eq!(hits, 20_000 - 4 - WINDOW / 2, "{hits}");
        assert!(compared <= s.len(), "{compared}");
        // Short numeric references do not stop it; a long digit run does.
        let s = "&lt;&#x3c;".repeat(4_000);
        assert!(reused(&s, Family::Angle).0 > 7_000);
        assert_eq!(reused(&long_reference(), Family::Angle).0, 0);
    }

    /// How many openers of `fam` reuse a reading, and the bytes compared.
    fn reused(s: &str, fam: Family) -> (usize, usize) {
        let names = names();
        let mut rep = Repeats::new(s);
        let mut scratch = crate::Scratch::default();
        let mut hits = 0;
        for (a, e) in crate::opener::Openers::new(s, fam) {
            let r = match rep.get(a, e) {
                Some((r, _)) => {
                    hits += 1;
                    r
                }
                None => crate::read_after(s, e, &names, &mut scratch),
            };
            rep.record(a, e, r);
        }
        (hits, rep.compared())
    }

    /// The openers and the windows compared (tries) over tag-dense text that never repeats for a
    /// window (every tag's name different), with the back-off capped at `max_backoff`.
    fn tries_on_tags(max_backoff: usize) -> (usize, usize) {
        let names = names();
        let mut g = Gen(11);
        let mut s = String::new();
        while s.len() < 200_000 {
            s.push_str(&format!(
                "<t{}>text</t{}> ",
                g.next() % 1000,
                g.next() % 1000
            ));
        }
        let mut rep = Repeats::new(&s);
        rep.max_backoff = max_backoff;
        let mut scratch = crate::Scratch::default();
        let mut openers = 0;
        for (a, e) in crate::opener::Openers::new(&s, Family::Angle) {
            crate::read_repeated(&s, a, e, Family::Angle, &names, &mut scratch, &mut rep);
            openers += 1;
        }
        (openers, rep.tries)
    }

    #[test]
    fn dense_text_that_does_not_repeat_backs_off() {
        let (openers, tries) = tries_on_tags(MAX_BACKOFF);
        assert!(tries * 16 <= openers, "{tries} tries for {openers} openers");
        // Control: with no back-off every opener tries its recent ones.
        let (_, eager) = tries_on_tags(0);
        assert!(eager >= openers, "{eager} tries for {openers} openers");
    }

    #[test]
    fn control_a_short_window_is_caught() {
        let names = names();
        let short = Reuse {
            window: 8,
            ..Reuse::DEFAULT
        };
        let s = far_name();
        assert_ne!(openers_using(&s, &names, &BOTH, short), direct(&s, &names));
        assert!(first_difference(0x9E37_79B9_7F4A_7C15, 400, short).is_some());
    }

    #[test]
    fn control_a_window_with_a_long_numeric_reference_is_caught() {
        let names = names();
        // (Its copies are 5,000 bytes apart: tried only from that far back, where the guard alone
        // keeps the window from being reused.)
        let unguarded = Reuse {
            window: WINDOW,
            guard: Guard::Off,
            max_distance: usize::MAX,
        };
        let s = long_reference();
        assert_ne!(
            openers_using(&s, &names, &BOTH, unguarded),
            direct(&s, &names)
        );
        let guarded = Reuse {
            max_distance: usize::MAX,
            ..Reuse::DEFAULT
        };
        assert_eq!(
            openers_using(&s, &names, &BOTH, guarded),
            direct(&s, &names)
        );
    }

    #[test]
    fn the_comparisons_are_bounded() {
        let names = names();
        let mut g = Gen(7);
        for _ in 0..50 {
            let s = repeated(&mut g);
            let mut rep = Repeats::new(&s);
            let mut scratch = crate::Scratch::default();
            for fam in BOTH {
                for (a, e) in crate::opener::Openers::new(&s, fam) {
                    crate::read_repeated(&s, a, e, fam, &names, &mut scratch, &mut rep);
                }
            }
            assert!(rep.compared() <= 2 * s.len() + 4 * WINDOW);
        }
        // Control: with no budget nothing is compared, and nothing reused.
        let s = "<|".repeat(20_000);
        let mut rep: Repeats<'_, Reading<'_>> = Repeats::new(&s);
        rep.periodic.budget = 0;
        assert!((4..s.len() - WINDOW)
            .step_by(2)
            .all(|a| rep.get(a, a + 1).is_none() && {
                rep.record(a, a + 1, Reading::NONE);
                true
            }));
        assert_eq!(rep.compared(), 0);
    }

    /// The defang's escape points with `reuse`, at both markup settings, against none reused.
    fn defang_differs(s: &str, names: &Names, reuse: Reuse) -> bool {
        [false, true].into_iter().any(|markup| {
            crate::defang::escape_points_using(s, names, markup, reuse)
                != crate::defang::escape_points_using(s, names, markup, Reuse::NONE)
        })
    }

    #[test]
    fn reused_escape_decisions_are_the_decisions() {
        let names = names();
        let reuse = crate::defang::defang_reuse(&names);
        assert_eq!(reuse.guard, Guard::Plain);
        let mut g = Gen(0xD1B5_4A32_D192_ED03);
        for _ in 0..1_000 {
            let s = repeated(&mut g);
            assert!(
                !defang_differs(&s, &names, reuse),
                "{:?}",
                &s[..200.min(s.len())]
            );
        }
        for s in [
            far_name(),
            "\u{ff1c}\u{e9}".repeat(5_000),
            "<:".repeat(5_000),
        ] {
            assert!(!defang_differs(&s, &names, reuse));
        }
    }

    #[test]
    fn control_the_defang_s_reuse_without_its_guard_or_window_is_caught() {
        let names = names();
        // A reference with a long zero run past the window: `s` (the reserved `<system>`) or `x`.
        let unit = |c: &str| format!("<&#{}{c};ystem> ", "0".repeat(5_000));
        let s = format!("{}{}{}", unit("120").repeat(3), unit("115"), unit("120"));
        // (Its copies are 5,000 bytes apart: tried only from that far back, where the guard alone
        // keeps the window from being reused.)
        let unguarded = Reuse {
            window: WINDOW,
            guard: Guard::Off,
            max_distance: usize::MAX,
        };
        assert!(!defang_differs(
            &s,
            &names,
            crate::defang::defang_reuse(&names)
        ));
        assert!(defang_differs(&s, &names, unguarded));
        let guarded = Reuse {
            max_distance: usize::MAX,
            ..crate::defang::defang_reuse(&names)
        };
        assert!(!defang_differs(&s, &names, guarded));
        let short = Reuse {
            window: 8,
            ..crate::defang::defang_reuse(&names)
        };
        assert!(defang_differs(&far_name(), &names, short));
    }
}
