//! The openers, matched exactly as Python's `re` matches `reader.OPENER_PATTERN` and
//! `BRACKET_OPENER_PATTERN` (`re.finditer`: leftmost, and at one position the first match in the
//! regex's backtracking order), by hand: no regex engine, constant work per opener.
//!
//! The pattern (`reader._ref_pattern`): one character of the family, or `&`, up to
//! `MAX_AMP_LAYERS` `&`-layers, then one final reference. A layer is a named reference of
//! `AMP_REFERENCES` (`amp`, `AMP`: case-sensitive) or a numeric one of `AMP_NUMERIC`; the final
//! reference is a named reference of the family's table (`LT_REFERENCES`, `LBRACKET_REFERENCES`,
//! in table order, longest first), then `#0*CODE(?![0-9]);?`, then
//! `#[xX]0*HEX(?![0-9a-fA-F]);?` for a code of the family's numeric table (which holds the
//! Windows-1252 numbers `html.unescape` maps into the family). A named reference is `name;`, or
//! for a legacy name also `name` without `;` unless the text goes on into one of its exclusions
//! (`&ltcc;` is `⪦`, an opener; `&ltimes;` is `⋉`, and its `&lt` is not one).
//!
//! Backtracking: a layer matches in one way at a given position (its `;?` could give up the
//! `;`, but nothing after a layer starts with `;`), so the only choice the engine revisits is
//! the number of layers: greedy first, then one fewer, down to none.

use crate::chars;
use crate::tables as t;

/// One named-reference table: (name, legacy, exclusions).
type RefTable = &'static [(&'static str, bool, &'static [&'static str])];

/// The two opener families.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// `<` and its look-alikes (`OPENER_PATTERN`).
    Angle,
    /// `[` and its look-alikes (`BRACKET_OPENER_PATTERN`).
    Bracket,
}

impl Family {
    fn named(self) -> &'static Named {
        match self {
            Family::Angle => &LT_NAMED,
            Family::Bracket => &LBRACKET_NAMED,
        }
    }
    fn numeric(self) -> &'static [u32] {
        match self {
            Family::Angle => t::LT_NUMERIC,
            Family::Bracket => t::LBRACKET_NUMERIC,
        }
    }
    fn bit(self) -> u16 {
        match self {
            Family::Angle => chars::LT,
            Family::Bracket => chars::LBRACKET,
        }
    }
    pub fn is_bracket(self) -> bool {
        self == Family::Bracket
    }
}

#[inline]
fn digit_run(b: &[u8], k: usize, hex: bool) -> usize {
    let mut e = k;
    while e < b.len()
        && (if hex {
            b[e].is_ascii_hexdigit()
        } else {
            b[e].is_ascii_digit()
        })
    {
        e += 1;
    }
    e
}

/// `0*(?:CODES)(?![0-9])` (or its hex form) at `start`: the maximal digit run is any number of
/// zeros followed by a code of `set` written without leading zeros (no code
/// is 0); its end.
fn code_run(b: &[u8], start: usize, hex: bool, set: &[u32]) -> Option<usize> {
    let end = digit_run(b, start, hex);
    let zeros = b[start..end].iter().take_while(|&&c| c == b'0').count();
    if zeros == end - start {
        return None;
    }
    let digits = &b[start + zeros..end];
    if digits.len() > 8 {
        return None; // longer than any code point
    }
    let radix = if hex { 16 } else { 10 };
    let mut v: u32 = 0;
    for &c in digits {
        v = v * radix + (c as char).to_digit(radix).unwrap_or(0);
    }
    set.binary_search(&v).is_ok().then_some(end)
}

#[inline]
fn semi(b: &[u8], e: usize) -> usize {
    if e < b.len() && b[e] == b';' {
        e + 1
    } else {
        e
    }
}

/// A named-reference table with its entries by the first byte of their name, each list in table
/// order (the first alternative that matches wins, as in `reader._named`): dense references (`&lt;`
/// repeated) try only the names that start with their first letter.
struct Named {
    refs: RefTable,
    by_first: [Vec<u16>; 128],
}

impl Named {
    fn new(refs: RefTable) -> Self {
        let mut by_first: [Vec<u16>; 128] = std::array::from_fn(|_| Vec::new());
        for (k, (name, _, _)) in refs.iter().enumerate() {
            let k = u16::try_from(k).expect("a reference table of at most 65,535 names");
            by_first[usize::from(name.as_bytes()[0] & 0x7f)].push(k);
        }
        Named { refs, by_first }
    }
}

static AMP_NAMED: std::sync::LazyLock<Named> =
    std::sync::LazyLock::new(|| Named::new(t::AMP_REFERENCES));
static LT_NAMED: std::sync::LazyLock<Named> =
    std::sync::LazyLock::new(|| Named::new(t::LT_REFERENCES));
static LBRACKET_NAMED: std::sync::LazyLock<Named> =
    std::sync::LazyLock::new(|| Named::new(t::LBRACKET_REFERENCES));

/// Whether `refs[k]` matches at `j`, and where it ends.
#[inline]
fn named_at(
    b: &[u8],
    j: usize,
    entry: &(&'static str, bool, &'static [&'static str]),
) -> Option<usize> {
    let (name, legacy, exclusions) = *entry;
    let nb = name.as_bytes();
    // Byte by byte, not `starts_with`: most names of the first letter differ at the second byte,
    // and a library `memcmp` call per name cost more than the whole comparison.
    let rest = &b[j..];
    if rest.len() < nb.len() || nb.iter().zip(rest).any(|(x, y)| x != y) {
        return None;
    }
    let e = j + nb.len();
    if e < b.len() && b[e] == b';' {
        return Some(e + 1);
    }
    if legacy && !exclusions.iter().any(|x| b[e..].starts_with(x.as_bytes())) {
        return Some(e);
    }
    None
}

/// `reader._named(refs)` at `j`: the end of the first alternative (in table order) that matches.
fn named_end(b: &[u8], j: usize, named: &Named) -> Option<usize> {
    let c0 = *b.get(j)?;
    let candidates = named.by_first.get(usize::from(c0))?; // names are ASCII
    candidates
        .iter()
        .find_map(|&k| named_at(b, j, &named.refs[usize::from(k)]))
}

/// A reference of a family at `j` (after the `&` and the layers): named, then decimal, then hex.
fn reference_end(b: &[u8], j: usize, named: &Named, numeric: &[u32]) -> Option<usize> {
    let c0 = *b.get(j)?;
    if c0 != b'#' {
        return if c0.is_ascii_alphabetic() {
            named_end(b, j, named)
        } else {
            None
        };
    }
    if let Some(e) = code_run(b, j + 1, false, numeric) {
        return Some(semi(b, e));
    }
    if j + 1 < b.len() && (b[j + 1] == b'x' || b[j + 1] == b'X') {
        if let Some(e) = code_run(b, j + 2, true, numeric) {
            return Some(semi(b, e));
        }
    }
    None
}

/// The opener `re.match` finds at byte `p` (its end), if any.
pub fn opener_at(s: &str, p: usize, fam: Family) -> Option<usize> {
    let b = s.as_bytes();
    let c = b[p];
    if c != b'&' {
        if c < 0x80 {
            return chars::has(c as char, fam.bit()).then_some(p + 1);
        }
        let ch = crate::decode::char_at(s, p);
        return chars::has(ch, fam.bit()).then_some(p + ch.len_utf8());
    }
    // Greedy layers, then the final reference; on failure, one layer fewer (backtracking).
    let mut starts = [0usize; t::MAX_AMP_LAYERS + 1];
    let mut count = 0;
    starts[0] = p + 1;
    while count < t::MAX_AMP_LAYERS {
        match reference_end(b, starts[count], &AMP_NAMED, t::AMP_NUMERIC) {
            Some(e) => {
                count += 1;
                starts[count] = e;
            }
            None => break,
        }
    }
    loop {
        if let Some(e) = reference_end(b, starts[count], fam.named(), fam.numeric()) {
            return Some(e);
        }
        if count == 0 {
            return None;
        }
        count -= 1;
    }
}

/// The first byte at or after `from` that is not ASCII (`b.len()` if none), eight at a time.
#[inline]
pub fn find_non_ascii(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i + 8 <= b.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        let x = u64::from_le_bytes(w) & 0x8080_8080_8080_8080;
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] < 0x80 {
        i += 1;
    }
    i
}

/// Finds the bytes that may start an opener: memchr over plain ASCII runs, a lead-byte
/// table over non-ASCII runs. Positions must be asked for in increasing order.
pub struct Candidates<'a> {
    b: &'a [u8],
    fam: Family,
    fast: chars::Fast,
    /// The next non-ASCII byte at or after the last position asked for.
    na: usize,
}

impl<'a> Candidates<'a> {
    pub fn new(b: &'a [u8], fam: Family) -> Self {
        Candidates {
            b,
            fam,
            fast: chars::Fast::get(),
            na: find_non_ascii(b, 0),
        }
    }

    /// The next byte at or after `from` that may start an opener of the family.
    #[inline]
    pub fn next_from(&mut self, from: usize) -> Option<usize> {
        let b = self.b;
        let n = b.len();
        let (a1, a2) = if self.fam.is_bracket() {
            (b'[', b'&')
        } else {
            (b'<', b'&')
        };
        let mut i = from;
        // Dense openers (`<<<<`, `&lt;&lt;`): the next byte is often one.
        if i < n && (b[i] == a1 || b[i] == a2) {
            return Some(i);
        }
        while i < n {
            if self.na < i {
                self.na = find_non_ascii(b, i);
            }
            // Short ASCII runs (between words of non-Latin text) byte by byte, long ones by memchr.
            if self.na - i < 16 {
                while i < self.na {
                    if b[i] == a1 || b[i] == a2 {
                        return Some(i);
                    }
                    i += 1;
                }
            } else if let Some(k) = memchr::memchr2(a1, a2, &b[i..self.na]) {
                return Some(i + k);
            }
            if self.na >= n {
                return None;
            }
            i = self.na;
            let bracket = self.fam.is_bracket();
            // Sixteen bytes at a time while none is one the lead-byte table lets through (words of
            // non-Latin text and the spaces between them: no branch per byte), then byte by byte
            // (continuation bytes never pass the lead-byte table; a loop without a data-dependent
            // step is faster than one that jumps a character at a time).
            while i + 17 <= n && self.fast.none_may_start16(&b[i..i + 17], bracket) {
                i += 16;
            }
            while i < n && b[i] >= 0x80 {
                if self.fast.may_start(b, i, bracket) {
                    return Some(i);
                }
                i += 1;
            }
        }
        None
    }
}

/// Iterates the openers of one family as `re.finditer` does: (start, end) byte offsets.
pub struct Openers<'a> {
    s: &'a str,
    pos: usize,
    fam: Family,
    cand: Candidates<'a>,
}

impl<'a> Openers<'a> {
    pub fn new(s: &'a str, fam: Family) -> Self {
        Openers {
            s,
            pos: 0,
            fam,
            cand: Candidates::new(s.as_bytes(), fam),
        }
    }

    /// Goes on from byte `to` (when it is ahead): the openers found then are those of the whole
    /// text that start at or after `to`. An opener is one character, or an `&` and ASCII letters,
    /// digits, `#` and `;`: none holds a byte after its first where another opener could start, so
    /// starting inside one finds nothing until its end, as the whole search does.
    pub fn skip_to(&mut self, to: usize) {
        self.pos = self.pos.max(to);
    }
}

impl Iterator for Openers<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let b = self.s.as_bytes();
        loop {
            let p = self.cand.next_from(self.pos)?;
            if let Some(e) = opener_at(self.s, p, self.fam) {
                self.pos = e;
                return Some((p, e));
            }
            // No match here: the next character.
            self.pos = p + crate::decode::utf8_width(b[p]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `named_end` as it was before the first-byte index: every name of the table, in table order.
    fn named_end_linear(b: &[u8], j: usize, refs: RefTable, order: &[usize]) -> Option<usize> {
        order.iter().find_map(|&k| named_at(b, j, &refs[k]))
    }

    /// Every text a name of each table can be followed by: `;`, nothing, a letter, each exclusion.
    fn named_cases(refs: RefTable) -> Vec<String> {
        let mut out = Vec::new();
        for (name, _, exclusions) in refs {
            for tail in [";", "", "x", "=", "1"].iter().chain(exclusions.iter()) {
                out.push(format!("{name}{tail}"));
                out.push(format!("{}{tail}", &name[..name.len() - 1])); // one letter short
            }
        }
        out
    }

    #[test]
    fn the_first_byte_index_finds_what_the_table_order_finds() {
        for named in [&*AMP_NAMED, &*LT_NAMED, &*LBRACKET_NAMED] {
            let refs = named.refs;
            let order: Vec<usize> = (0..refs.len()).collect();
            let cases = named_cases(refs);
            for case in &cases {
                let b = case.as_bytes();
                assert_eq!(
                    named_end(b, 0, named),
                    named_end_linear(b, 0, refs, &order),
                    "{case:?}"
                );
            }
            // Control: an index that lost any one name answers some case otherwise. (The order
            // within a first byte cannot show: the exclusions and `;` make every table's answer
            // the same in any order; the index keeps it all the same.)
            for lost in 0..refs.len() {
                let without: Vec<usize> = (0..refs.len()).filter(|&k| k != lost).collect();
                assert!(cases
                    .iter()
                    .any(|c| named_end_linear(c.as_bytes(), 0, refs, &without)
                        != named_end_linear(c.as_bytes(), 0, refs, &order)));
            }
        }
    }

    fn all(s: &str, fam: Family) -> Vec<&str> {
        Openers::new(s, fam).map(|(a, e)| &s[a..e]).collect()
    }

    /// `Openers` without the candidate filter: `opener_at` at every character.
    fn every_char(s: &str, fam: Family) -> Vec<(usize, usize)> {
        let (mut out, mut p) = (Vec::new(), 0);
        while p < s.len() {
            match opener_at(s, p, fam) {
                Some(e) => {
                    out.push((p, e));
                    p = e;
                }
                None => p += crate::decode::utf8_width(s.as_bytes()[p]),
            }
        }
        out
    }

    #[test]
    fn the_sixteen_byte_skip_misses_no_opener() {
        // Runs of non-Latin text (kana share U+3008's lead byte; Cyrillic and spaces do not), an
        // opener at every offset from a chunk's start, and at the text's end.
        let fillers = ["ждёт ", "ひらがな", "日本語テキスト", "αβγ δ", "😀 e"];
        let openers = [
            "<", "&lt;", "\u{2039}", "\u{3008}", "\u{ff1c}", "[", "\u{ff3b}", "&lsqb;",
        ];
        for filler in fillers {
            for op in openers {
                for k in 0..40 {
                    let mut s = filler.repeat(8);
                    let at = s
                        .char_indices()
                        .map(|(i, _)| i)
                        .nth(k % s.chars().count())
                        .unwrap();
                    s.insert_str(at, op);
                    s.push_str(op);
                    for fam in [Family::Angle, Family::Bracket] {
                        let got: Vec<_> = Openers::new(&s, fam).collect();
                        assert_eq!(got, every_char(&s, fam), "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn openers() {
        assert_eq!(all("a<b", Family::Angle), vec!["<"]);
        assert_eq!(
            all("&lt;&LT&ltcc;&Lt;", Family::Angle),
            vec!["&lt;", "&LT", "&ltcc;", "&Lt;"]
        );
        // `&ltimes;` is U+22C9 and `&lthree;` U+22CB: not openers, and their `&lt` is not one.
        assert_eq!(all("&ltimes;&lthree;&ltcc", Family::Angle), vec!["&lt"]);
        // Case-sensitive names: `&lT;` and `&Amp;lt;` are not references.
        assert!(all("&lT;&Amp;lt;", Family::Angle).is_empty());
        assert_eq!(
            all("&amp;lt;&amplt;&#38;lt;&#x26;#x3C;&AMP;lt", Family::Angle),
            vec!["&amp;lt;", "&amplt;", "&#38;lt;", "&#x26;#x3C;", "&AMP;lt"]
        );
        assert_eq!(
            all("&#0060;&#600;&#60x&lang;&lang", Family::Angle),
            vec!["&#0060;", "&#60", "&lang;"]
        );
        // Windows-1252: `&#139;` is U+2039 SINGLE LEFT-POINTING ANGLE QUOTATION MARK.
        assert_eq!(all("&#139;&#x8b", Family::Angle), vec!["&#139;", "&#x8b"]);
        assert_eq!(
            all("&laquo&laquo;", Family::Angle),
            vec!["&laquo", "&laquo;"]
        );
        assert_eq!(
            all("\u{ff1c}x\u{2039}", Family::Angle),
            vec!["\u{ff1c}", "\u{2039}"]
        );
        assert_eq!(
            all("[a&lsqb;&#91;\u{ff3b}&lsqb", Family::Bracket),
            vec!["[", "&lsqb;", "&#91;", "\u{ff3b}"]
        );
        let z = format!(
            "&#{}60;&#{}60;&#x{}3c",
            "0".repeat(256),
            "0".repeat(257),
            "0".repeat(5000)
        );
        assert_eq!(all(&z, Family::Angle).len(), 3);
        let deep = format!("&{}lt;", "amp;".repeat(16));
        assert_eq!(all(&deep, Family::Angle), vec![deep.as_str()]);
        let deeper = format!("&{}lt;", "amp;".repeat(17));
        assert!(all(&deeper, Family::Angle).is_empty());
    }
}
