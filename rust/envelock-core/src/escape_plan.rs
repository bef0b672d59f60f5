//! The encoded pass's escapes in one native pass (`envelock.scan.encoded._escape_plan`, which
//! stays the reference): the candidates of its five schemes (`encoded._SCHEMES`, each with its
//! repeat lookahead: `_Candidates`), what each decodes to (`_decodings`), its verdict (`_verdict`),
//! the windows of the encoded openers (`_window_ends`) and their texts, one group per distinct
//! window. Python then reads each distinct window once and reports its occurrences.
//!
//! Every item of the schemes' regexes is ASCII, so they are matched on bytes by hand. At each
//! place a scheme's repeats and alternatives are tried in the order Python's backtracking engine
//! tries them (a greedy repeat longest first, then the alternatives left to right, the last choice
//! point first), and the first candidate that the repeat lookahead lets through is the match, as
//! `finditer` finds it. `tests/scan/test_scan_encoded_plan.py` holds the plan equal to the
//! reference's on hypothesis texts, the hostile corpus and real text, with planted mutants.

use std::collections::{HashMap, HashSet};

use crate::unescape::utf7_units;

/// A set of characters (the reader's tables, handed over by the caller): the loud set's type.
pub type CharSet = crate::escapes::Loud;

/// What the plan is computed with (`encoded._plan_inputs`).
pub struct PlanSets {
    /// What a tag or token starts with (`encoded._opener_starts`).
    pub starts: CharSet,
    /// The openers and look-alikes and `&` (`reader.escape_starts`).
    pub openers: CharSet,
    /// The openers and look-alikes (`encoded._window_cut_at`).
    pub cut_at: CharSet,
    /// The escapes' introducers (`encoded._INTRODUCERS`).
    pub introducers: CharSet,
    /// Each introducer's code point in hex and in decimal digits ([`introducer_values`]).
    pub introducer_values: Vec<(String, String, char)>,
    /// The HTML names of the introducers, in the regex's order (`encoded._INTRODUCER_NAMES`),
    /// each with its character (from the HTML5 table).
    pub ref_names: Vec<(String, char)>,
    /// The repeat lookahead's copies (`encoded._exact_copies`).
    pub copies: usize,
    /// The window after an encoded opener, in code points (`encoded._WINDOW`).
    pub window: usize,
    /// The exact tokens (`Names.exact`).
    pub exact: ExactSet,
    /// How far past the furthest place an exact walk read its memory's key runs: [`READS`] (a
    /// test's control shortens it).
    pub memo_reads: usize,
}

/// The digits of a numeric reference for each introducer, in hex and in decimal, written from the
/// characters themselves (`encoded._numeric_introducers`), not typed.
pub fn introducer_values(introducers: &str) -> Vec<(String, String, char)> {
    introducers
        .chars()
        .map(|c| (format!("{:x}", u32::from(c)), u32::from(c).to_string(), c))
        .collect()
}

/// The exact tokens, every prefix of one (`encoded._exact_prefixes`), and for each proper prefix
/// the characters that go on with it in a token (`encoded._exact_next`, without the introducers).
pub struct ExactSet {
    whole: HashSet<String>,
    prefixes: HashSet<String>,
    nexts: HashMap<String, Vec<char>>,
}

impl ExactSet {
    pub fn new(tokens: &[String]) -> ExactSet {
        let mut prefixes = HashSet::new();
        let mut nexts: HashMap<String, Vec<char>> = HashMap::new();
        for t in tokens {
            let mut cs = t.char_indices().peekable();
            while let Some((k, c)) = cs.next() {
                let p = &t[..k + c.len_utf8()];
                prefixes.insert(p.to_owned());
                if let Some(&(_, next)) = cs.peek() {
                    nexts.entry(p.to_owned()).or_default().push(next);
                }
            }
        }
        ExactSet {
            whole: tokens.iter().cloned().collect(),
            prefixes,
            nexts,
        }
    }

    /// `encoded._may_go_on`: can a token be read from an escape that reads as one of `firsts`,
    /// followed by `next`? Only where a reading is a token, or a prefix of one that `next` goes on
    /// (or `next` is an introducer: an escape may stand for the next character).
    fn may_go_on(&self, firsts: &[Text], next: Option<char>, introducers: &CharSet) -> bool {
        firsts.iter().any(|o| {
            let Some(o) = o
                .iter()
                .map(|&v| char::from_u32(v))
                .collect::<Option<String>>()
            else {
                return false;
            };
            self.whole.contains(&o)
                || next.is_some_and(|c| {
                    introducers.has(u32::from(c)) && self.nexts.contains_key(&o)
                        || self.nexts.get(&o).is_some_and(|n| n.contains(&c))
                })
        })
    }
}

/// A reading as Python's `str` has it: code points, a lone surrogate among them (Python's UTF-7
/// decoder gives one for `+2D3YAA-`).
pub type Text = Vec<u32>;

/// What one escape decodes to: up to four characters (every reading of it), or a UTF-7 segment's
/// whole text. An empty reading (`encoded._code_point`'s "", no bytes) is left out: it starts
/// nothing, is no layer and is ignored by `_cuts`.
#[derive(Default)]
struct Readings {
    chars: [char; 4],
    n: usize,
    text: Option<Text>,
    /// A reference: a layer only (its opener is the openers pass's).
    layer_only: bool,
}

impl Readings {
    fn push(&mut self, c: Option<char>) {
        if let Some(c) = c {
            if !self.chars[..self.n].contains(&c) {
                self.chars[self.n] = c;
                self.n += 1;
            }
        }
    }

    /// Each reading as (its first code point, the whole reading).
    fn each(&self) -> Vec<(u32, Text)> {
        let mut out: Vec<(u32, Text)> = self.chars[..self.n]
            .iter()
            .map(|&c| (u32::from(c), vec![u32::from(c)]))
            .collect();
        if let Some(t) = &self.text {
            if let Some(&c) = t.first() {
                out.push((c, t.clone()));
            }
        }
        out
    }
}

/// How an escape is read (`encoded._decodings`' cases).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Escaped bytes (percent, quoted-printable, `\x`): the first character of their UTF-8, and as
    /// Latin-1 when there is one byte. Empty: `%25` read as a layer of `%25` (`re.sub` takes it).
    Bytes([u8; 4], usize),
    /// One code point (`_code_point`: none for 0, a surrogate or past U+10FFFF).
    Code(u32),
    /// A JSON surrogate pair.
    Pair(u32, u32),
    /// CSS hex digits, or one to three octal digits (byte offset and count of the digits).
    Digits(usize, usize),
    /// A UTF-7 segment (the byte span of its base64 digits).
    Utf7(usize, usize),
    /// An HTML reference for an introducer.
    Ref(char),
}

#[inline]
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

#[inline]
fn hx(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex_value(d: &[u8]) -> u64 {
    d.iter().fold(0u64, |v, &c| {
        v << 4 | u64::from(char::from(c).to_digit(16).unwrap_or(0))
    })
}

fn all_hex(b: &[u8], from: usize, count: usize) -> bool {
    (from..from + count).all(|i| hx(at(b, i)))
}

/// `_code_point`: a character for 1..=U+10FFFF but surrogates.
fn code_point(v: u64) -> Option<char> {
    u32::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .and_then(char::from_u32)
}

/// The run of `c` at `i`, at most `max` long.
fn run_of(b: &[u8], i: usize, c: u8, max: usize) -> usize {
    b.get(i..)
        .map_or(0, |r| r.iter().take(max).take_while(|&&x| x == c).count())
}

/// The pairs `25` at `i`, at most `max`.
fn pairs_25(b: &[u8], i: usize, max: usize) -> usize {
    (0..max)
        .take_while(|k| at(b, i + 2 * k) == b'2' && at(b, i + 2 * k + 1) == b'5')
        .count()
}

/// A candidate: its end and how it reads.
type Cand = (usize, Kind);

/// How a continuation byte of a UTF-8 run is escaped (`encoded._utf8_run`'s `prefix`).
#[derive(Clone, Copy)]
enum Prefix {
    /// `%(?:25){0,7}`, the percent scheme's (up to `layers - 1` layers).
    Pct(usize),
    /// `=`.
    Qp,
    /// `\\{1,4}x`.
    BackslashX,
}

impl Prefix {
    /// One continuation `prefix [89abAB] HEX` at `i`: its end and byte. Its repeats are greedy and
    /// what follows them is no repeat's character, so backtracking into them finds nothing more.
    fn cont(self, b: &[u8], i: usize) -> Option<(usize, u8)> {
        let q = match self {
            Prefix::Pct(max) => (at(b, i) == b'%').then(|| i + 1 + 2 * pairs_25(b, i + 1, max))?,
            Prefix::Qp => (at(b, i) == b'=').then_some(i + 1)?,
            Prefix::BackslashX => {
                let k = run_of(b, i, b'\\', 5);
                ((1..=4).contains(&k) && at(b, i + k) == b'x').then_some(i + k + 1)?
            }
        };
        (matches!(at(b, q), b'8' | b'9' | b'a' | b'b' | b'A' | b'B') && hx(at(b, q + 1)))
            .then(|| (q + 2, hex_value(&b[q..q + 2]) as u8))
    }

    /// The text `last` of `_utf8_run` (the prefix without its repeats).
    fn last(self) -> &'static [u8] {
        match self {
            Prefix::Pct(_) => b"%",
            Prefix::Qp => b"=",
            Prefix::BackslashX => b"\\x",
        }
    }
}

/// `_utf8_run(prefix, last)` at `q`: its candidates in the regex's order.
fn utf8_run(b: &[u8], q: usize, prefix: Prefix, out: &mut Vec<Cand>) {
    let (c0, c1) = (at(b, q), at(b, q + 1));
    // Every alternative wants a hex digit second (`[fF][0-7]`'s are).
    if !hx(c1) {
        return;
    }
    let lead = hex_value(&[c0, c1]) as u8;
    let seq = |conts: usize, out: &mut Vec<Cand>| {
        let mut bytes = [lead, 0, 0, 0];
        let mut e = q + 2;
        for slot in bytes.iter_mut().take(conts + 1).skip(1) {
            let Some((end, byte)) = prefix.cont(b, e) else {
                return;
            };
            *slot = byte;
            e = end;
        }
        out.push((e, Kind::Bytes(bytes, conts + 1)));
    };
    match c0 {
        b'c' | b'd' | b'C' | b'D' => seq(1, out),
        b'e' | b'E' => seq(2, out),
        b'f' | b'F' if (b'0'..=b'7').contains(&c1) => seq(3, out),
        _ => {}
    }
    if matches!(c0, b'0'..=b'7' | b'c'..=b'f' | b'C'..=b'F') && hx(c1) {
        out.push((q + 2, Kind::Bytes([lead, 0, 0, 0], 1)));
    }
    if matches!(c0, b'8' | b'9' | b'a' | b'b' | b'A' | b'B') && hx(c1) {
        // The lookbehind: not a continuation byte right after another escaped byte.
        let last = prefix.last();
        let l = last.len();
        let after_byte = q >= l + 2
            && &b[q - l..q] == last
            && matches!(b[q - l - 2], b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F')
            && hx(b[q - l - 1]);
        if !after_byte {
            out.push((q + 2, Kind::Bytes([lead, 0, 0, 0], 1)));
        }
    }
}

/// The percent scheme at `p` (`%`): `%(?:25){0,layers-1}(?:[uU]HEX{4}|utf8_run)`.
fn pct_at(b: &[u8], p: usize, layers: usize, out: &mut Vec<Cand>) {
    let rmax = pairs_25(b, p + 1, layers - 1);
    for r in (0..=rmax).rev() {
        let q = p + 1 + 2 * r;
        if matches!(at(b, q), b'u' | b'U') && all_hex(b, q + 1, 4) {
            out.push((q + 5, Kind::Code(hex_value(&b[q + 1..q + 5]) as u32)));
        }
        let from = out.len();
        utf8_run(b, q, Prefix::Pct(layers - 1), out);
        // `re.sub("%(?:25)*", "")` takes a lead byte `25` with the layers: no bytes are left.
        if b.get(q..q + 2) == Some(b"25") {
            for c in &mut out[from..] {
                c.1 = Kind::Bytes([0; 4], 0);
            }
        }
    }
}

/// The backslash scheme at `p` (`\`).
fn backslash_at(b: &[u8], p: usize, out: &mut Vec<Cand>) {
    // `\\{0,3}`: fewer leaves a backslash where every alternative wants something else.
    let q = p + 1 + run_of(b, p + 1, b'\\', 3);
    let c = at(b, q);
    if c == b'u' {
        // A surrogate pair, `\uD83D\uDE00` (one to four backslashes between).
        if matches!(at(b, q + 1), b'd' | b'D')
            && matches!(at(b, q + 2), b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
            && all_hex(b, q + 3, 2)
        {
            let k = run_of(b, q + 5, b'\\', 5);
            let t = q + 5 + k + 1;
            if (1..=4).contains(&k)
                && at(b, t - 1) == b'u'
                && matches!(at(b, t), b'd' | b'D')
                && matches!(at(b, t + 1), b'c'..=b'f' | b'C'..=b'F')
                && all_hex(b, t + 2, 2)
            {
                let hi = hex_value(&b[q + 1..q + 5]) as u32;
                let lo = hex_value(&b[t..t + 4]) as u32;
                out.push((t + 4, Kind::Pair(hi, lo)));
            }
        }
        if all_hex(b, q + 1, 4) {
            out.push((q + 5, Kind::Code(hex_value(&b[q + 1..q + 5]) as u32)));
        }
    }
    if (c == b'u' || c == b'x') && at(b, q + 1) == b'{' {
        let m = b
            .get(q + 2..)
            .map_or(0, |r| r.iter().take(7).take_while(|&&d| hx(d)).count());
        if (1..=6).contains(&m) && at(b, q + 2 + m) == b'}' {
            let v = hex_value(&b[q + 2..q + 2 + m]);
            out.push((q + 3 + m, Kind::Code(u32::try_from(v).unwrap_or(0))));
        }
    }
    if c == b'U' && all_hex(b, q + 1, 8) {
        let v = hex_value(&b[q + 1..q + 9]);
        // Past U+10FFFF (or u32) reads as nothing, as `_code_point` has it.
        out.push((q + 9, Kind::Code(u32::try_from(v).unwrap_or(0))));
    }
    if c == b'x' {
        utf8_run(b, q + 1, Prefix::BackslashX, out);
    }
    let dmax = b
        .get(q..)
        .map_or(0, |r| r.iter().take(6).take_while(|&&d| hx(d)).count());
    for d in (1..=dmax).rev() {
        if d == dmax && at(b, q + d) == b' ' {
            out.push((q + d + 1, Kind::Digits(q, d)));
        }
        out.push((q + d, Kind::Digits(q, d)));
    }
}

fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'+' || c == b'/'
}

/// The UTF-7 scheme at `p` (`+`): `\+([A-Za-z0-9+/]{2,16})-?`.
/// The longest UTF-7 candidate: `+`, sixteen base64 characters and `-`.
const UTF7_LONGEST: usize = 18;

fn utf7_at(b: &[u8], p: usize, out: &mut Vec<Cand>) {
    let l = b
        .get(p + 1..)
        .map_or(0, |r| r.iter().take(16).take_while(|&&c| is_b64(c)).count());
    for len in (2..=l).rev() {
        if len == l && at(b, p + 1 + len) == b'-' {
            out.push((p + 2 + len, Kind::Utf7(p + 1, p + 1 + len)));
        }
        out.push((p + 1 + len, Kind::Utf7(p + 1, p + 1 + len)));
    }
}

/// A numeric reference's digits at `i` for an introducer (`encoded._numeric_introducers`): zeros
/// (up to `width` less the value's digits: no value starts with one), a value of `values` (each
/// introducer's digits, their letters in either case), then either `width` digits read or no digit
/// after. At most one value matches: a shorter one that another begins with wants no digit after.
fn numeric_introducer<'v>(
    b: &[u8],
    i: usize,
    width: usize,
    values: impl Iterator<Item = (&'v str, char)>,
    digit: fn(u8) -> bool,
) -> Option<(usize, char)> {
    let z = run_of(b, i, b'0', width);
    values
        .filter(|(v, _)| z + v.len() <= width)
        .find_map(|(v, c)| {
            let e = i + z + v.len();
            let here = b.get(i + z..e)?;
            (here.eq_ignore_ascii_case(v.as_bytes()) && (e - i == width || !digit(at(b, e))))
                .then_some((e, c))
        })
}

/// The reference scheme at `p` (`&`): a reference for an introducer (`values`: its digits in hex
/// and decimal; `names`: its HTML names), `;` optional.
fn ref_at(
    b: &[u8],
    p: usize,
    values: &[(String, String, char)],
    names: &[(Vec<u8>, char)],
    out: &mut Vec<Cand>,
) {
    let push = |e: usize, c: char, out: &mut Vec<Cand>| {
        if at(b, e) == b';' {
            out.push((e + 1, Kind::Ref(c)));
        }
        out.push((e, Kind::Ref(c)));
    };
    if at(b, p + 1) == b'#' {
        // The digit limits of the reference pattern (`encoded._SCHEMES`: six hex, seven decimal).
        if matches!(at(b, p + 2), b'x' | b'X') {
            let hex = values.iter().map(|(h, _, c)| (h.as_str(), *c));
            if let Some((e, c)) = numeric_introducer(b, p + 3, 6, hex, hx) {
                push(e, c, out);
            }
        }
        let dec = values.iter().map(|(_, d, c)| (d.as_str(), *c));
        if let Some((e, c)) = numeric_introducer(b, p + 2, 7, dec, |d| d.is_ascii_digit()) {
            push(e, c, out);
        }
    }
    for (name, c) in names {
        if b.get(p + 1..p + 1 + name.len()) == Some(name.as_slice()) {
            push(p + 1 + name.len(), *c, out);
        }
    }
}

/// The candidates of the scheme whose introducer is at `p`, in the regex's order (the first is the
/// match of `encoded._ENC_OPENER_RE`, which has no repeat lookahead).
fn candidates_at(
    b: &[u8],
    p: usize,
    values: &[(String, String, char)],
    names: &[(Vec<u8>, char)],
    out: &mut Vec<Cand>,
) {
    match b[p] {
        b'%' => pct_at(b, p, LAYERS, out),
        b'=' => utf8_run(b, p + 1, Prefix::Qp, out),
        b'\\' => backslash_at(b, p, out),
        b'+' => utf7_at(b, p, out),
        b'&' => ref_at(b, p, values, names, out),
        _ => {}
    }
}

/// `encoded._encoded_exact`: the exact token whose first character is an escape ending at byte `e`
/// that reads as one of `firsts`, its other characters raw or escaped; the token and its end. Every
/// way of reading the text is followed (an introducer as itself or as its escape) while it is a
/// prefix of a token, so the work is bounded by the longest token (and a run of backslashes right
/// after the first character, read past as the eye does). Where several tokens are read at one
/// step, the one that ends first (then the least). Also the furthest place the walk read at (its
/// answer depends on the bytes from [`LOOKS_BACK`] before `e` to [`READS`] past that place alone).
fn encoded_exact(
    s: &str,
    e: usize,
    firsts: &[Text],
    x: &ExactSet,
) -> (Option<(String, usize)>, usize) {
    let b = s.as_bytes();
    let text = |t: &Text| {
        t.iter()
            .map(|&v| char::from_u32(v))
            .collect::<Option<String>>()
    };
    let mut states: Vec<(String, usize)> = firsts
        .iter()
        .filter_map(text)
        .filter(|p| x.prefixes.contains(p))
        .map(|p| (p, e))
        .collect();
    let mut cands = Vec::new();
    let mut furthest = e;
    while !states.is_empty() {
        states.sort_unstable_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        states.dedup();
        if let Some((p, i)) = states.iter().find(|(p, _)| x.whole.contains(p)) {
            return (Some((p.clone(), *i)), furthest);
        }
        let mut grown = Vec::new();
        for (p, i) in &states {
            furthest = furthest.max(*i);
            let Some(c) = s[*i..].chars().next() else {
                continue;
            };
            if c == '\\' && p.chars().nth(1).is_none() {
                grown.push((p.clone(), i + 1));
            }
            let mut steps: Vec<(String, usize)> = vec![(c.to_string(), i + c.len_utf8())];
            if matches!(b[*i], b'%' | b'\\' | b'=' | b'+') {
                cands.clear();
                candidates_at(b, *i, &[], &[], &mut cands);
                if let Some((end, kind)) = cands.first() {
                    let r = readings(b, kind);
                    steps.extend(
                        r.each()
                            .iter()
                            .filter_map(|(_, t)| text(t))
                            .map(|t| (t, *end)),
                    );
                }
            }
            for (c, j) in steps {
                let q = format!("{p}{c}");
                if x.prefixes.contains(&q) {
                    grown.push((q, j));
                }
            }
        }
        states = grown;
    }
    (None, furthest)
}

/// How far before a place an escape's match looks (the lookbehind of a continuation byte: two
/// bytes before `%`, `=` or `\x`), and how far past it it reads (the longest match, seven `%25`
/// layers on each of four bytes, is 68 bytes; a UTF-7 run 19), with room to spare.
const LOOKS_BACK: usize = 4;
pub const READS: usize = 128;

/// The answers of [`encoded_exact`] for the last few distinct readings: each with the decodings it
/// started from and the bytes its walk depended on (from [`LOOKS_BACK`] before the escape's end to
/// [`READS`] past the furthest place it read), its token and end relative to the escape's end.
/// Hostile text repeats one encoded first character (`%3E` of `%3Cs%3E`): the walk, a few heap
/// strings, is made once. An answer whose bytes ran past the text's end is not kept.
struct ExactMemo {
    items: Vec<MemoItem>,
    /// How far past the furthest place read the key runs ([`READS`]; a test's control shortens it).
    reads: usize,
}

/// The decodings' id; the bytes kept before the escape's end, where the key starts, its length;
/// the answer, its end relative to the escape's end.
type MemoItem = (usize, usize, usize, usize, Option<(String, usize)>);

impl ExactMemo {
    fn new(reads: usize) -> ExactMemo {
        ExactMemo {
            items: Vec::new(),
            reads,
        }
    }

    fn get(&mut self, b: &[u8], e: usize, id: usize) -> Option<Option<(String, usize)>> {
        let back = e.min(LOOKS_BACK);
        let k = self.items.iter().position(|&(i, kb, ks, kl, _)| {
            i == id && kb == back && b.get(e - back..e - back + kl) == Some(&b[ks..ks + kl])
        })?;
        let item = self.items.remove(k);
        let answer = item.4.as_ref().map(|(t, rel)| (t.clone(), e + rel));
        self.items.insert(0, item);
        Some(answer)
    }

    fn put(
        &mut self,
        b: &[u8],
        e: usize,
        id: usize,
        furthest: usize,
        answer: &Option<(String, usize)>,
    ) {
        let back = e.min(LOOKS_BACK);
        let end = furthest + self.reads;
        if end > b.len() {
            return;
        }
        self.items.truncate(3);
        let rel = answer.as_ref().map(|(t, end)| (t.clone(), end - e));
        self.items
            .insert(0, (id, back, e - back, end - (e - back), rel));
    }
}

/// Is the match `b[p..e]` followed by `copies` copies of itself (the repeat lookahead rejects it)?
fn repeated(b: &[u8], p: usize, e: usize, copies: usize) -> bool {
    let n = e - p;
    (1..=copies).all(|k| b.get(p + k * n..p + (k + 1) * n) == Some(&b[p..e]))
}

/// What a candidate reads as.
fn readings(b: &[u8], kind: &Kind) -> Readings {
    let mut r = Readings::default();
    match *kind {
        Kind::Bytes(bytes, n) => {
            if n > 0 {
                let data = &bytes[..n];
                r.push(String::from_utf8_lossy(data).chars().next());
                if n == 1 {
                    r.push(Some(char::from(data[0])));
                }
            }
        }
        Kind::Code(v) => r.push(code_point(u64::from(v))),
        Kind::Pair(hi, lo) => r.push(char::from_u32(
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00),
        )),
        Kind::Digits(i, d) => {
            let digits = &b[i..i + d];
            r.push(code_point(hex_value(digits)));
            for k in 1..=d.min(3) {
                if digits[..k].iter().all(|c| (b'0'..=b'7').contains(c)) {
                    let v = digits[..k]
                        .iter()
                        .fold(0u64, |v, &c| v << 3 | u64::from(c - b'0'));
                    r.push(code_point(v));
                }
            }
        }
        Kind::Utf7(a, e) => {
            if let Some(units) = utf7_units(&b[a..e]) {
                // Pairs combined, a lone surrogate kept as itself (Python's decoder).
                let text: Text = char::decode_utf16(units)
                    .map(|c| c.map_or_else(|u| u32::from(u.unpaired_surrogate()), u32::from))
                    .collect();
                if !text.is_empty() {
                    r.text = Some(text);
                }
            }
        }
        Kind::Ref(c) => {
            r.push(Some(c));
            r.layer_only = true;
        }
    }
    r
}

/// Every match of the encoded pass's candidates (`encoded._Candidates.finditer`) in order, one at a
/// time (hostile text holds a match every three bytes: none is collected): each scheme's matches
/// (`finditer` of its pass: the first candidate at a place that the repeat lookahead lets through,
/// the search going on after a match), merged by start. No match of one scheme holds another's
/// introducer (`_Candidates`), so the merge is what one combined search finds.
struct Matches<'b> {
    b: &'b [u8],
    values: &'b [(String, String, char)],
    names: Vec<(Vec<u8>, char)>,
    copies: usize,
    /// Per scheme (`INTRODUCERS`' order): where its search goes on, and its next match.
    from: [usize; 5],
    heads: [Option<(usize, usize, Kind)>; 5],
    cands: Vec<Cand>,
    /// Per scheme, the last run of one byte repeated that a match was tried in (start, end): a
    /// candidate whose copies lie inside it is repeated without comparing them (`+` repeated: every
    /// `+` has fifteen UTF-7 candidates, each refused by its copies).
    runs: [(usize, usize); 5],
    #[cfg(test)]
    run_test: RunTest,
}

/// Tests: the runs used, not used (the reference), or taken one byte too long (a control).
#[cfg(test)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RunTest {
    Used,
    Unused,
    OneTooLong,
}

const INTRODUCERS: [u8; 5] = [b'%', b'=', b'\\', b'+', b'&'];

impl<'b> Matches<'b> {
    fn new(s: &'b str, sets: &'b PlanSets) -> Matches<'b> {
        let names = sets
            .ref_names
            .iter()
            .map(|(n, c)| (n.as_bytes().to_vec(), *c))
            .collect();
        let mut m = Matches {
            b: s.as_bytes(),
            values: &sets.introducer_values,
            names,
            copies: sets.copies,
            from: [0; 5],
            heads: [None; 5],
            cands: Vec::new(),
            runs: [(0, 0); 5],
            #[cfg(test)]
            run_test: RunTest::Used,
        };
        for k in 0..INTRODUCERS.len() {
            m.heads[k] = m.scheme_next(k);
        }
        m
    }

    /// The end of the run of `b[p]` repeated that holds `p` (scheme `k` asks in increasing order, so
    /// each run is read once).
    fn run_end(&mut self, k: usize, p: usize) -> usize {
        let (start, end) = self.runs[k];
        if !(start <= p && p < end) {
            let x = self.b[p];
            let len = self.b[p..].iter().take_while(|&&c| c == x).count();
            self.runs[k] = (p, p + len);
        }
        let end = self.runs[k].1;
        #[cfg(test)]
        let end = match self.run_test {
            RunTest::Used => end,
            RunTest::Unused => p,
            RunTest::OneTooLong => end + 1,
        };
        end
    }

    /// Scheme `k`'s next match.
    fn scheme_next(&mut self, k: usize) -> Option<(usize, usize, Kind)> {
        let b = self.b;
        loop {
            let p = self.from[k] + memchr::memchr(INTRODUCERS[k], b.get(self.from[k]..)?)?;
            self.cands.clear();
            candidates_at(b, p, self.values, &self.names, &mut self.cands);
            let copies = self.copies;
            // (Most introducers are not doubled: their run is themselves, without the cache.)
            let run_end = if b.get(p + 1) == Some(&b[p]) {
                self.run_end(k, p)
            } else {
                p + 1
            };
            // A UTF-7 candidate ends at most `UTF7_LONGEST` bytes past its `+` (`utf7_at`): in a run
            // of `+` none whose copies all lie in the run is a match, so the search goes on from
            // the first `+` whose copies may leave it.
            if INTRODUCERS[k] == b'+' {
                let last = run_end.saturating_sub((copies + 1).saturating_mul(UTF7_LONGEST));
                if p < last {
                    self.from[k] = last;
                    continue;
                }
            }
            // In a run of one byte every copy of a match inside it is the match.
            let inside = |e: usize| (e - p).saturating_mul(copies + 1) <= run_end - p;
            match self
                .cands
                .iter()
                .find(|&&(e, _)| !(inside(e) || repeated(b, p, e, copies)))
            {
                Some(&(e, kind)) => {
                    self.from[k] = e;
                    return Some((p, e, kind));
                }
                None => self.from[k] = p + 1,
            }
        }
    }
}

impl Iterator for Matches<'_> {
    type Item = (usize, usize, Kind);

    fn next(&mut self) -> Option<Self::Item> {
        let k = (0..INTRODUCERS.len())
            .filter(|&k| self.heads[k].is_some())
            .min_by_key(|&k| self.heads[k].map_or(usize::MAX, |h| h.0))?;
        let head = self.heads[k].take();
        self.heads[k] = self.scheme_next(k);
        head
    }
}

#[cfg(test)]
fn matches(s: &str, sets: &PlanSets) -> Vec<(usize, usize, Kind)> {
    Matches::new(s, sets).collect()
}

/// `_base.ESCAPE_LAYERS`: the percent scheme's `%25` layers, in all.
pub const LAYERS: usize = 8;

/// One distinct window after an encoded opener (see [`EscapePlan::windows`]).
pub type Window = (usize, (usize, usize), i8, Vec<usize>);

/// The plan: code-point offsets, as Python's `str` indices.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EscapePlan {
    /// The distinct decodings of the encoded characters below (each sorted, as `_verdict` has it).
    pub opens: Vec<Vec<Text>>,
    /// The exact tokens whose first character is encoded and no opener (`>` of `>>TITLE<<`): the
    /// escape's start, the token's end, the token.
    pub exact: Vec<(usize, usize, String)>,
    /// One per distinct window after an encoded opener: its decodings, the byte span of its raw
    /// text (at its first occurrence), whether its bound cut it (1), the next opener did (-1) or
    /// both at once (0), and every occurrence's start and the end of its finding should the window
    /// read as a tag or token ([`NextBlank`]), flattened.
    pub windows: Vec<Window>,
    /// The starts of escapes of an escape's first character only.
    pub layered: Vec<usize>,
}

/// What an escape is to the pass (`encoded._verdict`).
#[derive(Clone, Copy)]
enum Verdict {
    /// It starts nothing and is no layer.
    Nothing,
    /// It decodes to an escape's first character only.
    Layer,
    /// It decodes to the start of a tag or token (`id`: its decodings in the plan), an opener or
    /// not, ending the window of an encoded opener before it or not.
    Found {
        id: usize,
        is_opener: bool,
        cuts: bool,
    },
}

/// The verdict of an escape that reads as `kind`.
fn verdict(
    b: &[u8],
    kind: &Kind,
    sets: &PlanSets,
    opens_id: &mut HashMap<Vec<Text>, usize>,
) -> Verdict {
    let r = readings(b, kind);
    let each = r.each();
    let layer = each.iter().any(|(c, _)| sets.introducers.has(*c));
    // Sorted by code point, as Python sorts `str`.
    let mut direct: Vec<Text> = if r.layer_only {
        Vec::new()
    } else {
        each.iter()
            .filter(|(c, _)| sets.starts.has(*c))
            .map(|(_, t)| t.clone())
            .collect()
    };
    if direct.is_empty() {
        return if layer {
            Verdict::Layer
        } else {
            Verdict::Nothing
        };
    }
    direct.sort_unstable();
    direct.dedup();
    let is_opener = direct.iter().any(|d| sets.openers.has(d[0]));
    // `_cuts`: every reading but a control (or nothing) is an opener itself.
    let mut readable = each
        .iter()
        .map(|(c, _)| *c)
        .filter(|&c| c >= 0x20)
        .peekable();
    let cuts = readable.peek().is_some() && readable.all(|c| sets.cut_at.has(c));
    let next = opens_id.len();
    let id = *opens_id.entry(direct).or_insert(next);
    Verdict::Found {
        id,
        is_opener,
        cuts,
    }
}

/// The last few keys looked up and their values, most recent first (a cache compared by equality).
struct Recent<K, V> {
    items: [Option<(K, V)>; 4],
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            items: [None, None, None, None],
        }
    }
}

impl<K: PartialEq + Copy, V: Copy> Recent<K, V> {
    fn get(&mut self, key: &K) -> Option<V> {
        let k = self
            .items
            .iter()
            .position(|i| i.as_ref().is_some_and(|(k, _)| k == key))?;
        self.items[..=k].rotate_right(1);
        self.items[0].map(|(_, v)| v)
    }

    fn put(&mut self, key: K, value: V) {
        self.items.rotate_right(1);
        self.items[0] = Some((key, value));
    }
}

/// Where a finding over an encoded opener ends (`encoded._scan_escapes`, `_word_end`): at the first
/// blank (`str.isspace`) after the escape (a CSS escape's one trailing space left out), and at most
/// `window` code points from its start. The blank found last is kept: the escapes come in order, so
/// each search goes over new text and the work stays linear (a regex search per finding read up to
/// the window's end again and again where there is no blank: `%3Cs%3E` repeated).
struct NextBlank<'a> {
    s: &'a str,
    cc: crate::CpCounter<'a>,
    /// The last blank found (byte, code point), and the byte it was searched from (`None`: not yet).
    found: Option<(usize, usize)>,
    from: Option<usize>,
}

impl<'a> NextBlank<'a> {
    fn new(s: &'a str) -> Self {
        NextBlank {
            s,
            cc: crate::CpCounter::new(s),
            found: None,
            from: None,
        }
    }

    /// The end of the finding of the escape at bytes `p..e` (code points `ps..pe`).
    fn finding_end(
        &mut self,
        p: usize,
        ps: usize,
        e: usize,
        pe: usize,
        window: usize,
        n_cp: usize,
    ) -> usize {
        let b = self.s.as_bytes();
        let (e, pe) = if e > p && b[e - 1] == b' ' {
            (e - 1, pe - 1)
        } else {
            (e, pe)
        };
        let lim = n_cp.min(ps + window);
        if pe >= lim {
            return pe;
        }
        let stale = match (self.from, self.found) {
            (None, _) => true,
            (Some(_), Some((byte, _))) => byte < e,
            (Some(from), None) => e < from,
        };
        if stale {
            let at = self.s[e..]
                .char_indices()
                .find(|&(_, c)| crate::chars::is_space(c))
                .map(|(k, _)| e + k);
            self.from = Some(e);
            self.found = at.map(|byte| (byte, self.cc.at(byte)));
        }
        match self.found {
            Some((_, cp)) => cp.min(lim),
            None => lim,
        }
    }
}

/// The plan of `s`.
pub fn escape_plan(s: &str, sets: &PlanSets) -> EscapePlan {
    let b = s.as_bytes();
    let n = b.len();
    let mut plan = EscapePlan::default();
    let mut opens_id: HashMap<Vec<Text>, usize> = HashMap::new();
    // (start, end, decodings, is an opener, cuts), byte offsets; and the same starts and ends in code points.
    let mut found: Vec<(usize, usize, usize, bool, bool)> = Vec::new();
    let mut found_cp: Vec<(usize, usize)> = Vec::new();
    let mut cc = crate::CpCounter::new(s);
    // The verdict of each distinct escape text, made once (hostile text repeats one or two).
    // The verdicts of the last few distinct escape texts (hostile text repeats one or two; compared
    // byte for byte, no hashing: a verdict costs little more than the look-up).
    let mut recent: Recent<&[u8], Verdict> = Recent::default();
    for (p, e, kind) in Matches::new(s, sets) {
        let verdict = match recent.get(&&b[p..e]) {
            Some(v) => v,
            None => {
                let v = verdict(b, &kind, sets, &mut opens_id);
                recent.put(&b[p..e], v);
                v
            }
        };
        match verdict {
            Verdict::Nothing => {}
            Verdict::Layer => plan.layered.push(cc.at(p)),
            Verdict::Found {
                id,
                is_opener,
                cuts,
            } => {
                found.push((p, e, id, is_opener, cuts));
                found_cp.push((cc.at(p), cc.at(e)));
            }
        }
    }
    plan.opens = vec![Vec::new(); opens_id.len()];
    for (d, id) in opens_id {
        plan.opens[id] = d;
    }
    // `_window_ends`: the next opener that cuts, or the next of any kind.
    let mut ends = vec![n; found.len()];
    let (mut following, mut following_any) = (n, n);
    for k in (0..found.len()).rev() {
        let (start, _, _, is_opener, cuts) = found[k];
        ends[k] = if cuts { following } else { following_any };
        if is_opener {
            following_any = start;
        }
        if cuts {
            following = start;
        }
    }
    // Groups by window: the last few compared first (hostile text repeats one window), then a map.
    let mut groups: HashMap<(usize, &[u8], i8), usize> = HashMap::new();
    let mut recent_groups: Recent<(usize, &[u8], i8), usize> = Recent::default();
    let mut cc_exact = crate::CpCounter::new(s);
    let mut memo = ExactMemo::new(sets.memo_reads);
    let mut blank = NextBlank::new(s);
    let n_cp = if s.is_ascii() {
        n
    } else {
        crate::code_points(b)
    };
    for (k, &(p, e, id, is_opener, _)) in found.iter().enumerate() {
        let (ps, pe) = found_cp[k];
        if !is_opener {
            let next = s[e..].chars().next();
            if sets
                .exact
                .may_go_on(&plan.opens[id], next, &sets.introducers)
            {
                let answer = match memo.get(b, e, id) {
                    Some(answer) => answer,
                    None => {
                        let (answer, furthest) = encoded_exact(s, e, &plan.opens[id], &sets.exact);
                        memo.put(b, e, id, furthest, &answer);
                        answer
                    }
                };
                if let Some((token, end)) = answer {
                    plan.exact.push((ps, cc_exact.at(end), token));
                }
            }
            continue;
        }
        let cut = ends[k];
        if cut == e || (e < n && b[e] == b'<') {
            continue;
        }
        // The window's end: `window` code points from the start, or the next opener, whichever is first.
        let (mut end, mut count) = (p, 0);
        while end < cut && count < sets.window {
            end += utf8_len(b[end]);
            count += 1;
        }
        let sign: i8 = if end < cut {
            1
        } else if count == sets.window {
            0
        } else {
            -1
        };
        let end = end.max(e);
        let key = (id, &b[e..end], sign);
        let g = match recent_groups.get(&key) {
            Some(g) => g,
            None => {
                let next = plan.windows.len();
                let g = *groups.entry(key).or_insert(next);
                if g == next {
                    plan.windows.push((id, (e, end), sign, Vec::new()));
                }
                recent_groups.put(key, g);
                g
            }
        };
        plan.windows[g]
            .3
            .extend([ps, blank.finding_end(p, ps, e, pe, sets.window, n_cp)]);
    }
    plan
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(starts: &str) -> PlanSets {
        PlanSets {
            starts: CharSet::new(starts),
            openers: CharSet::new("<[&\u{ff1c}"),
            cut_at: CharSet::new("<[\u{ff1c}"),
            introducers: CharSet::new("%+=\\"),
            introducer_values: introducer_values("%+=\\"),
            ref_names: [
                ("equals", '='),
                ("percnt", '%'),
                ("bsol", '\\'),
                ("plus", '+'),
            ]
            .iter()
            .map(|&(n, c)| (n.to_owned(), c))
            .collect(),
            copies: 2,
            window: 192,
            exact: ExactSet::new(&[">>TITLE<<".to_owned(), "<s>".to_owned()]),
            memo_reads: READS,
        }
    }

    #[test]
    fn the_exact_walk_memory_keys_on_every_byte_the_walk_read() {
        // The same encoded `>` twice, the second token's last escape different (`%3D`, not `%3C`):
        // only the first is a token. Control: a key that stops where the last escape starts takes
        // the second for the first.
        let pad = " ".repeat(200);
        let text = format!("{pad}%3E%3ETITLE%3C%3C{pad}%3E%3ETITLE%3C%3D{pad}");
        let tokens = |plan: &EscapePlan| plan.exact.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(tokens(&escape_plan(&text, &sets("<>"))), vec![200]);
        let mut short = sets("<>");
        short.memo_reads = 0;
        assert_eq!(tokens(&escape_plan(&text, &short)), vec![200, 417]);
    }

    #[test]
    fn the_numeric_references_are_written_from_the_introducers() {
        let v = introducer_values("%\\");
        assert_eq!(
            v,
            vec![
                ("25".to_owned(), "37".to_owned(), '%'),
                ("5c".to_owned(), "92".to_owned(), '\\')
            ]
        );
        let plan = escape_plan("&#x00005c5 &#0000092; &#X2B", &sets("<"));
        assert_eq!(plan.layered, vec![0, 11, 22]);
    }

    /// The matches with the runs of one byte used as `run_test` says.
    fn matches_with(text: &str, sets: &PlanSets, run_test: RunTest) -> Vec<(usize, usize, Kind)> {
        let mut m = Matches::new(text, sets);
        m.run_test = run_test;
        // `new` found each scheme's first match with the runs used: again, as asked.
        m.from = [0; 5];
        m.runs = [(0, 0); 5];
        for k in 0..INTRODUCERS.len() {
            m.heads[k] = m.scheme_next(k);
        }
        m.collect()
    }

    #[test]
    fn a_run_of_one_byte_matches_as_its_copies_compared() {
        // Runs of every introducer (and of letters and digits a run may end in), of every length to
        // past the longest candidate's copies, then every ending.
        let sets = sets("<>");
        let mut texts = Vec::new();
        for unit in ["+", "%", "=", "\\", "&", "A", "3", "%3", "+A", "=3"] {
            for len in 1..70 {
                for end in ["", "-", "<", "3C", "ADw-", "x", "%3C", "\\x3c", " "] {
                    texts.push(format!("{}{end}", unit.repeat(len)));
                    texts.push(format!("a{}{end}{}", unit.repeat(len), unit.repeat(3)));
                }
            }
        }
        for t in &texts {
            assert_eq!(
                matches_with(t, &sets, RunTest::Used),
                matches_with(t, &sets, RunTest::Unused),
                "{t:?}"
            );
        }
        // The bound the `+` runs skip by: no UTF-7 candidate is longer.
        let mut cands = Vec::new();
        for t in &texts {
            for (p, _) in t.match_indices('+') {
                cands.clear();
                utf7_at(t.as_bytes(), p, &mut cands);
                assert!(cands.iter().all(|&(e, _)| e - p <= UTF7_LONGEST), "{t:?}");
            }
        }
        // Control: a run taken one byte too long is caught.
        assert!(texts
            .iter()
            .any(|t| matches_with(t, &sets, RunTest::OneTooLong)
                != matches_with(t, &sets, RunTest::Unused)));
    }

    #[test]
    fn the_matches_are_pythons() {
        // The spans of `encoded._candidates(2).finditer(text)`, from the Python reference.
        for (text, want) in [
            ("%25253C%25253C%25253C", vec![(0, 5), (7, 14), (14, 21)]),
            ("\\3c\\3c\\3c", vec![(0, 2), (3, 6), (6, 9)]),
            ("%3C%3C%3C", vec![(3, 6), (6, 9)]),
            ("+ADwAfA-x+AAA", vec![(0, 8), (9, 13)]),
            (
                "&#x00005c5 &#0000092; &bsol &percnt;",
                vec![(0, 9), (11, 21), (22, 27), (28, 36)],
            ),
            ("\\\\\\\\\\u003c \\uD83D\\\\uDE00", vec![(1, 10), (11, 24)]),
            (
                "%E2%80%B9%B9 =C3=A9 \\xE2\\x80\\xB9",
                vec![(0, 9), (13, 19), (20, 32)],
            ),
        ] {
            let got: Vec<(usize, usize)> = matches(text, &sets("<"))
                .into_iter()
                .map(|(a, e, _)| (a, e))
                .collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn one_window_per_distinct_text() {
        let plan = escape_plan("%3C%7C%3C%7C%3C%7C x", &sets("<"));
        assert_eq!(plan.opens, vec![vec![vec![u32::from('<')]]]);
        // Three encoded openers: the first two read `%7C` up to the next, the last to the end; each
        // finding would end at the blank (the reference's plan).
        assert_eq!(
            plan.windows,
            vec![
                (0, (3, 6), -1, vec![0, 18, 6, 18]),
                (0, (15, 20), -1, vec![12, 18])
            ]
        );
        assert!(plan.exact.is_empty() && plan.layered.is_empty());
    }

    #[test]
    fn readings_of_octal_digits_and_a_lone_surrogate() {
        // `\74 ` is `t` (CSS) or `<` (octal); `+ADzYAA-` is `<` and a lone surrogate.
        let plan = escape_plan("\\74 x +ADzYAA-y %5Cu003c", &sets("<"));
        assert_eq!(plan.opens[0], vec![vec![u32::from('<')]]);
        assert_eq!(plan.opens[1], vec![vec![u32::from('<'), 0xD800]]);
        assert_eq!(plan.layered, vec![16]);
    }
}
