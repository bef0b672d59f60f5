//! Character classes of the model's eye, all from the generated tables (`tables.rs`).
//!
//! The Basic Multilingual Plane is answered from flag and reading-index tables built once from
//! the generated ranges; astral code points by binary search in the generated tables (never
//! Rust's own `char` methods, whose Unicode version is the compiler's).

use std::sync::LazyLock;

use crate::decode::Piece;
use crate::tables as t;

pub const SKIP: u16 = 1;
pub const SLASH: u16 = 1 << 1;
pub const BANG: u16 = 1 << 2;
pub const ALNUM: u16 = 1 << 3;
pub const ALPHA: u16 = 1 << 4;
pub const SPACE: u16 = 1 << 5;
pub const IGNORABLE: u16 = 1 << 6;
pub const PIPE: u16 = 1 << 7;
pub const GT: u16 = 1 << 8;
pub const RBRACKET: u16 = 1 << 9;
pub const LT: u16 = 1 << 10;
pub const LBRACKET: u16 = 1 << 11;
pub const SEPARATOR: u16 = 1 << 12;
/// A character with a letter reading that may also be read past (`""` among its readings: a mark
/// or symbol such as U+0C02 TELUGU SIGN ANUSVARA, read as `o` or as nothing).
pub const EITHER: u16 = 1 << 13;
/// May the character stand for one letter of a reserved envelope name (`reader.is_stand_in`,
/// `tables::STAND_IN_RANGES`)?
pub const STAND_IN: u16 = 1 << 14;
/// A non-ASCII structural look-alike other than a `<` look-alike, quotes included, or an ASCII quote
/// (`reader._PASS`): an angle reading also reads past it (both readings; not a bar in the lead).
pub const PASS: u16 = 1 << 15;
/// The structural bits a [`PASS`] character has one of (or it is a quote look-alike, which has no
/// bit of its own: `tables::QUOTE`).
const PASS_ROLES: u16 = GT | SLASH | PIPE | LBRACKET | RBRACKET | BANG;

/// [`PASS`] from the other bits of a code point (the ASCII quotes since stop 48: `<"/retrieved_content">`).
fn with_pass(cp: u32, f: u16) -> u16 {
    let look_alike = cp >= 0x80 && (f & PASS_ROLES != 0 || in_set(t::QUOTE, cp));
    if (look_alike || in_set(t::ASCII_QUOTE, cp)) && f & LT == 0 {
        f | PASS
    } else {
        f
    }
}
/// Is the byte one of the ASCII quotes (`reader._ASCII_QUOTE_CHARS`)?
pub fn is_ascii_quote(b: u8) -> bool {
    in_set(t::ASCII_QUOTE, u32::from(b))
}

/// `c in reader._QUOTE_PASS`: a quote an angle reading reads past (ASCII or a look-alike).
pub fn is_quote(c: char) -> bool {
    in_set(t::ASCII_QUOTE, c as u32) || in_set(t::QUOTE, c as u32)
}

/// May the eye read past the character (`reader.can_skip`): [`SKIP`] or [`EITHER`].
pub const CAN_SKIP: u16 = SKIP | EITHER;

/// Is `cp` in the sorted, disjoint inclusive `ranges`?
pub(crate) fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    // The last range whose low end is <= cp.
    let k = ranges.partition_point(|&(lo, _)| lo <= cp);
    k > 0 && cp <= ranges[k - 1].1
}

fn in_set(set: &[u32], cp: u32) -> bool {
    set.binary_search(&cp).is_ok()
}

/// Does the code point have `""` among its generated readings?
fn either_slow(cp: u32) -> bool {
    t::READING_KEYS
        .binary_search(&cp)
        .is_ok_and(|k| t::READING_VALUES[k].contains(&""))
}

/// The flags of one code point, computed from the tables (slow path).
fn flags_slow(cp: u32) -> u16 {
    let mut f = 0;
    let tests: [(u16, bool); 15] = [
        (SKIP, in_ranges(t::SKIP_RANGES, cp)),
        (SLASH, in_set(t::SLASH, cp)),
        (BANG, in_set(t::BANG, cp)),
        (ALNUM, in_ranges(t::ALNUM_RANGES, cp)),
        (ALPHA, in_ranges(t::ALPHA_RANGES, cp)),
        (SPACE, in_ranges(t::SPACE_RANGES, cp)),
        (IGNORABLE, in_ranges(t::DEFAULT_IGNORABLE_RANGES, cp)),
        (PIPE, in_set(t::PIPE, cp)),
        (GT, in_set(t::GT, cp)),
        (RBRACKET, in_set(t::RBRACKET, cp)),
        (LT, in_set(t::LT, cp)),
        (LBRACKET, in_set(t::LBRACKET, cp)),
        (SEPARATOR, in_set(t::SEPARATORS, cp)),
        (EITHER, either_slow(cp)),
        (STAND_IN, cp >= 0x80 && in_ranges(t::STAND_IN_RANGES, cp)),
    ];
    for (bit, yes) in tests {
        if yes {
            f |= bit;
        }
    }
    with_pass(cp, f)
}

struct Ascii {
    flags: [u16; 128],
    single: [u8; 128],
    readings: [CharReadings; 128],
    /// The class bits of every BMP code point.
    bmp_flags: Vec<u16>,
    /// 1 + the index in READING_VALUES of every BMP code point with readings (0: none).
    bmp_reading: Vec<u16>,
    /// For each lead byte, the second bytes (low six bits, as a bit set) with which a UTF-8
    /// sequence may encode a '<'-like (index 0) or '['-like (index 1) opener; '&' too.
    lead2: [[u64; 256]; 2],
}

static ASCII: LazyLock<Ascii> = LazyLock::new(|| {
    let mut bmp_flags = vec![0u16; 0x10000];
    let ranges: [(u16, &[(u32, u32)]); 6] = [
        (SKIP, t::SKIP_RANGES),
        (STAND_IN, t::STAND_IN_RANGES),
        (ALNUM, t::ALNUM_RANGES),
        (ALPHA, t::ALPHA_RANGES),
        (SPACE, t::SPACE_RANGES),
        (IGNORABLE, t::DEFAULT_IGNORABLE_RANGES),
    ];
    for (bit, rs) in ranges {
        for &(lo, hi) in rs {
            for cp in lo..=hi.min(0xFFFF) {
                bmp_flags[cp as usize] |= bit;
            }
        }
    }
    let sets: [(u16, &[u32]); 8] = [
        (SLASH, t::SLASH),
        (BANG, t::BANG),
        (PIPE, t::PIPE),
        (GT, t::GT),
        (RBRACKET, t::RBRACKET),
        (LT, t::LT),
        (LBRACKET, t::LBRACKET),
        (SEPARATOR, t::SEPARATORS),
    ];
    for (bit, set) in sets {
        for &cp in set {
            if cp < 0x10000 {
                bmp_flags[cp as usize] |= bit;
            }
        }
    }
    for (cp, f) in bmp_flags.iter_mut().enumerate() {
        *f = with_pass(cp as u32, *f);
    }
    let mut bmp_reading = vec![0u16; 0x10000];
    for (k, &cp) in t::READING_KEYS.iter().enumerate() {
        if cp < 0x10000 {
            bmp_reading[cp as usize] = u16::try_from(k + 1).expect("fewer than 65535 readings");
            if t::READING_VALUES[k].contains(&"") {
                bmp_flags[cp as usize] |= EITHER;
            }
        }
    }
    let mut flags = [0u16; 128];
    flags.copy_from_slice(&bmp_flags[..128]);
    let mut readings = [CharReadings::Skip; 128];
    for (cp, r) in readings.iter_mut().enumerate() {
        *r = readings_slow(cp as u8 as char);
    }
    let lead = |set: &[u32]| {
        let mut out = [0u64; 256];
        out[usize::from(b'&')] = u64::MAX;
        for &cp in set {
            if let Some(c) = char::from_u32(cp) {
                let mut buf = [0u8; 4];
                let e = c.encode_utf8(&mut buf).as_bytes();
                out[usize::from(e[0])] |= if e.len() == 1 {
                    u64::MAX
                } else {
                    1u64 << (e[1] & 0x3F)
                };
            }
        }
        out
    };
    let mut single = [0u8; 128];
    for (k, r) in readings.iter().enumerate() {
        // A PASS character (an ASCII quote) has a second reading in an angle reading: never one.
        single[k] = match *r {
            _ if flags[k] & PASS != 0 => 0,
            CharReadings::Itself(c) if c.is_ascii() => c as u8,
            CharReadings::Table([one]) if one.len() == 1 && one.is_ascii() => one.as_bytes()[0],
            _ => 0,
        };
    }
    Ascii {
        flags,
        single,
        readings,
        bmp_flags,
        bmp_reading,
        lead2: [lead(t::LT), lead(t::LBRACKET)],
    }
});

/// The class and reading tables of ASCII and the opener lead-byte filter (built once).
#[derive(Clone, Copy)]
pub struct Fast {
    a: &'static Ascii,
}

impl Fast {
    #[inline]
    pub fn get() -> Fast {
        Fast { a: &ASCII }
    }

    /// The class bits of an ASCII byte.
    #[inline]
    pub fn ascii_flags(self, b: u8) -> u16 {
        self.a.flags[usize::from(b & 0x7F)]
    }

    /// The one reading of an ASCII byte when it is one ASCII character (0: several, or longer).
    #[inline]
    pub fn ascii_single(self, b: u8) -> u8 {
        self.a.single[usize::from(b & 0x7F)]
    }

    /// The readings of an ASCII byte.
    #[inline]
    pub fn ascii_readings(self, b: u8) -> CharReadings {
        self.a.readings[usize::from(b & 0x7F)]
    }

    /// Does none of the first sixteen bytes of `chunk` (seventeen long: the byte after the last
    /// too) start an opener of the family (`bracket`)? [`Fast::may_start`] at each, without a
    /// branch per byte; `false` sends the caller byte by byte.
    #[inline]
    pub fn none_may_start16(self, chunk: &[u8], bracket: bool) -> bool {
        let table = &self.a.lead2[usize::from(bracket)];
        let mut hits = 0u64;
        for w in chunk[..17].windows(2) {
            hits |= lead_then(table[usize::from(w[0])], w[1]);
        }
        hits == 0
    }

    /// May the bytes at `i` start an opener of the family (`bracket`)? A lead byte and the byte
    /// after it are checked (`&` and the ASCII openers always may).
    #[inline]
    pub fn may_start(self, b: &[u8], i: usize, bracket: bool) -> bool {
        let m = self.a.lead2[usize::from(bracket)][usize::from(b[i])];
        if m == 0 {
            return false;
        }
        if m == u64::MAX {
            return true;
        }
        i + 1 < b.len() && lead_then(m, b[i + 1]) != 0
    }
}

/// A lead byte's second-byte set `m` (from `lead2`) tested against the byte after it: non-zero
/// when the two may begin an opener (`m` all ones: the byte is one by itself).
#[inline]
fn lead_then(m: u64, next: u8) -> u64 {
    m & (1u64 << (next & 0x3F))
}

/// Every class bit of `c`.
#[inline]
pub fn flags(c: char) -> u16 {
    let cp = c as u32;
    if cp < 0x10000 {
        ASCII.bmp_flags[cp as usize]
    } else {
        flags_slow(cp)
    }
}

#[inline]
pub fn has(c: char, bit: u16) -> bool {
    let cp = c as u32;
    if cp < 0x10000 {
        return ASCII.bmp_flags[cp as usize] & bit != 0;
    }
    // Astral: only the table asked about.
    match bit {
        SKIP => in_ranges(t::SKIP_RANGES, cp),
        SLASH => in_set(t::SLASH, cp),
        BANG => in_set(t::BANG, cp),
        ALNUM => in_ranges(t::ALNUM_RANGES, cp),
        ALPHA => in_ranges(t::ALPHA_RANGES, cp),
        SPACE => in_ranges(t::SPACE_RANGES, cp),
        IGNORABLE => in_ranges(t::DEFAULT_IGNORABLE_RANGES, cp),
        PIPE => in_set(t::PIPE, cp),
        GT => in_set(t::GT, cp),
        RBRACKET => in_set(t::RBRACKET, cp),
        LT => in_set(t::LT, cp),
        LBRACKET => in_set(t::LBRACKET, cp),
        SEPARATOR => in_set(t::SEPARATORS, cp),
        EITHER => either_slow(cp),
        _ => flags_slow(cp) & bit != 0,
    }
}

/// `reader.attaches`: only what attaches to the letter before it (`ATTACH_RANGES`: marks, format
/// characters, default-ignorables, emoji modifiers).
pub fn attaches(piece: &Piece) -> bool {
    attach_only(piece.as_slice())
}

/// [`attaches`] of the characters `cs`.
pub fn attach_only(cs: &[char]) -> bool {
    !cs.is_empty()
        && cs.iter().all(|&c| {
            let cp = c as u32;
            cp >= 0x80 && in_ranges(t::ATTACH_RANGES, cp)
        })
}

/// `reader.is_skip`: in `SKIP_RANGES` (no letter reading at all).
pub fn is_skip(c: char) -> bool {
    has(c, SKIP)
}
/// `reader.can_skip`: read past always ([`is_skip`]) or as one of its readings ([`EITHER`]).
#[inline]
pub fn can_skip(c: char) -> bool {
    flags(c) & CAN_SKIP != 0
}
/// `reader.is_alnum`.
pub fn is_alnum(c: char) -> bool {
    has(c, ALNUM)
}
/// `reader.is_alpha`.
pub fn is_alpha(c: char) -> bool {
    has(c, ALPHA)
}
/// `reader.is_space`.
pub fn is_space(c: char) -> bool {
    has(c, SPACE)
}
/// `reader.is_ignorable`.
pub fn is_ignorable(c: char) -> bool {
    has(c, IGNORABLE)
}

/// The generated readings of `c` (without the skip rule), if it has any.
#[inline]
pub fn table_readings(c: char) -> Option<&'static [&'static str]> {
    let cp = c as u32;
    t::READING_KEYS
        .binary_search(&cp)
        .ok()
        .map(|k| t::READING_VALUES[k])
}

/// `reader.readings` for one character, as a small enum (no allocation).
#[derive(Clone, Copy, Debug)]
pub enum CharReadings {
    /// Skipped: the one reading "".
    Skip,
    /// The generated readings (primary first; `""` last for a character that may also be read past).
    Table(&'static [&'static str]),
    /// The character reads as itself.
    Itself(char),
}

#[inline]
pub fn readings(c: char) -> CharReadings {
    if (c as u32) < 128 {
        ASCII.readings[c as usize]
    } else {
        readings_slow(c)
    }
}

#[inline]
fn readings_slow(c: char) -> CharReadings {
    // As `reader.readings`: the generated readings first, then the skip table, else itself.
    let cp = c as u32;
    if (128..0x10000).contains(&cp) {
        let a: &Ascii = &ASCII;
        return match a.bmp_reading[cp as usize] {
            0 if a.bmp_flags[cp as usize] & SKIP != 0 => CharReadings::Skip,
            0 => CharReadings::Itself(c),
            k => CharReadings::Table(t::READING_VALUES[usize::from(k) - 1]),
        };
    }
    if let Some(r) = table_readings(c) {
        CharReadings::Table(r)
    } else if in_ranges(t::SKIP_RANGES, cp) {
        CharReadings::Skip
    } else {
        CharReadings::Itself(c)
    }
}

impl CharReadings {
    /// The readings as owned strings (for the rare multi-character pieces and for skeletons).
    pub fn to_vec(self) -> Vec<String> {
        match self {
            CharReadings::Skip => vec![String::new()],
            CharReadings::Table(r) => r.iter().map(|s| (*s).to_string()).collect(),
            CharReadings::Itself(c) => vec![c.to_string()],
        }
    }

    /// The primary reading (`reader.char_skeleton`).
    pub fn primary(self, buf: &mut String) {
        match self {
            CharReadings::Skip => {}
            CharReadings::Table(r) => buf.push_str(r[0]),
            CharReadings::Itself(c) => buf.push(c),
        }
    }

    /// Does any reading equal ":"?
    pub fn has_colon(self) -> bool {
        match self {
            CharReadings::Skip => false,
            CharReadings::Table(r) => r.contains(&":"),
            CharReadings::Itself(c) => c == ':',
        }
    }
}

/// `reader.skeleton`: the primary reading of each character.
pub fn skeleton(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        readings(c).primary(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert!(is_skip(' ') && is_skip('\u{200b}') && is_skip('_') && is_skip('\u{2014}'));
        assert!(!is_skip('a') && !is_skip('<'));
        assert!(has('<', LT) && has('\u{ff1c}', LT) && has('\u{2039}', LT));
        assert!(has('>', GT) && has('/', SLASH) && has('|', PIPE) && has('[', LBRACKET));
        assert!(is_alpha('é') && is_alnum('٣') && !is_alpha('3'));
        assert!(is_space('\u{3000}') && is_space('\u{1c}') && !is_space('\u{200b}'));
        assert!(is_ignorable('\u{200b}') && !is_ignorable(' '));
        assert_eq!(skeleton("retrieved_content"), "retrievedcontent");
        assert_eq!(skeleton("RETRI\u{395}VED-CONTENT"), "retrievedcontent");
        assert!(matches!(readings('a'), CharReadings::Itself('a')));
        assert!(readings('\u{ff1a}').has_colon());
    }
}
