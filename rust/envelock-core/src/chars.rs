//! Character classes of the model's eye, all from the generated tables (`tables.rs`).
//!
//! ASCII is answered from a flag table built once; everything else by binary search in the
//! generated range and code-point tables (never Rust's own `char` methods, whose Unicode
//! version is the compiler's).

use std::sync::LazyLock;

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

fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    // The last range whose low end is <= cp.
    let k = ranges.partition_point(|&(lo, _)| lo <= cp);
    k > 0 && cp <= ranges[k - 1].1
}

fn in_set(set: &[u32], cp: u32) -> bool {
    set.binary_search(&cp).is_ok()
}

/// The flags of one code point, computed from the tables (slow path).
fn flags_slow(cp: u32) -> u16 {
    let mut f = 0;
    let tests: [(u16, bool); 13] = [
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
    ];
    for (bit, yes) in tests {
        if yes {
            f |= bit;
        }
    }
    f
}

struct Ascii {
    flags: [u16; 128],
    /// Lead bytes of the UTF-8 encodings of the '<' and '[' openers (and '&').
    lt_lead: [bool; 256],
    lbracket_lead: [bool; 256],
}

static ASCII: LazyLock<Ascii> = LazyLock::new(|| {
    let mut flags = [0u16; 128];
    for (cp, f) in flags.iter_mut().enumerate() {
        *f = flags_slow(cp as u32);
    }
    let lead = |set: &[u32]| {
        let mut out = [false; 256];
        out[usize::from(b'&')] = true;
        for &cp in set {
            if let Some(c) = char::from_u32(cp) {
                let mut buf = [0u8; 4];
                out[usize::from(c.encode_utf8(&mut buf).as_bytes()[0])] = true;
            }
        }
        out
    };
    Ascii {
        flags,
        lt_lead: lead(t::LT),
        lbracket_lead: lead(t::LBRACKET),
    }
});

/// Every class bit of `c`.
#[inline]
pub fn flags(c: char) -> u16 {
    let cp = c as u32;
    if cp < 128 {
        ASCII.flags[cp as usize]
    } else {
        flags_slow(cp)
    }
}

#[inline]
pub fn has(c: char, bit: u16) -> bool {
    let cp = c as u32;
    if cp < 128 {
        ASCII.flags[cp as usize] & bit != 0
    } else {
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
            _ => flags_slow(cp) & bit != 0,
        }
    }
}

/// `modeleye.is_skip`.
pub fn is_skip(c: char) -> bool {
    has(c, SKIP)
}
/// `modeleye.is_alnum`.
pub fn is_alnum(c: char) -> bool {
    has(c, ALNUM)
}
/// `modeleye.is_alpha`.
pub fn is_alpha(c: char) -> bool {
    has(c, ALPHA)
}
/// `modeleye.is_space`.
pub fn is_space(c: char) -> bool {
    has(c, SPACE)
}
/// `modeleye.is_ignorable`.
pub fn is_ignorable(c: char) -> bool {
    has(c, IGNORABLE)
}

/// Can a byte start an opener of this family ('<'-like or '['-like, or '&')?
#[inline]
pub fn may_start(b: u8, bracket: bool) -> bool {
    if bracket {
        ASCII.lbracket_lead[usize::from(b)]
    } else {
        ASCII.lt_lead[usize::from(b)]
    }
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

/// `modeleye.readings` for one character, as a small enum (no allocation).
#[derive(Clone, Copy, Debug)]
pub enum CharReadings {
    /// Skipped: the one reading "".
    Skip,
    /// The generated readings (primary first).
    Table(&'static [&'static str]),
    /// The character reads as itself.
    Itself(char),
}

pub fn readings(c: char) -> CharReadings {
    if is_skip(c) {
        CharReadings::Skip
    } else if let Some(r) = table_readings(c) {
        CharReadings::Table(r)
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

    /// The primary reading (`modeleye.char_skeleton`).
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

/// `modeleye.skeleton`: the primary reading of each character.
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
