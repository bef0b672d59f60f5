//! The scanner's base64 runs (`envelock.scan.encoded._scan_blobs`), found and sifted in one pass.
//!
//! A run is what `_B64_RE` (`[A-Za-z0-9+/\-_]{B64_MIN,}={0,2}`) matches: a whole run of that many or more
//! base64 characters and up to two `=`. The Python pass does two things with a run: it decodes the
//! hex runs inside it, and it decodes it at four shifts (`_b64_candidates`), reporting only where a
//! decoding holds one of the caller's trigger sequences (`encoded.blob_triggers`: the UTF-8 of every
//! character an opener or an exact token can start with, derived from the reader's tables; handed
//! in, so they have one home) and reads as text (`context.is_text`, the same count here). [`blob_runs`] keeps every run that could give
//! either: a necessary condition, so a run it drops gives the Python pass nothing.
//!
//! The decoding here is lenient (six bits a character, whole bytes kept, no validation). Where
//! Python's strict `b64decode` of the same chunk succeeds it gives the same bytes, and where it
//! fails it gives none, so a chunk whose lenient decoding holds no trigger has no strict one that
//! does.

/// `_base.BLOB_MAX`: the longest run body decoded.
pub const BLOB_MAX: usize = 1 << 20;

/// The byte sequences a decoding must hold for the Python pass to read it further. An empty
/// sequence occurs in everything (every run is kept).
pub struct Triggers {
    /// The sequences by first byte, each bucket sorted, with the lengths it holds: a position is
    /// looked up only in the bucket of its byte (a random decoding meets a first byte often, and
    /// a search of every sequence there made the sift cost more than finding the runs).
    by_lead: Vec<Bucket>,
    /// Is a byte the first of some sequence (the cheap test made at every byte)?
    lead: [bool; 256],
    always: bool,
    /// The shortest base64 run and hex run decoded (`encoded.B64_MIN`, `encoded.HEX_MIN`).
    b64_min: usize,
    hex_min: usize,
}

#[derive(Default, Clone)]
struct Bucket {
    seqs: Vec<Vec<u8>>,
    lens: Vec<usize>,
}

impl Triggers {
    pub fn new(seqs: Vec<Vec<u8>>, b64_min: usize, hex_min: usize) -> Triggers {
        let mut by_lead = vec![Bucket::default(); 256];
        // No sequence at all reads everything, as the Python search does (an empty alternation
        // matches everywhere): a set that lost its sequences must not sift every run away.
        let mut always = seqs.is_empty();
        for q in seqs {
            match q.first() {
                Some(&c) => {
                    let bucket = &mut by_lead[usize::from(c)];
                    if !bucket.lens.contains(&q.len()) {
                        bucket.lens.push(q.len());
                    }
                    bucket.seqs.push(q);
                }
                None => always = true,
            }
        }
        let mut lead = [false; 256];
        for (c, bucket) in by_lead.iter_mut().enumerate() {
            lead[c] = !bucket.seqs.is_empty();
            bucket.seqs.sort();
            bucket.seqs.dedup();
            bucket.lens.sort_unstable();
        }
        Triggers {
            by_lead,
            lead,
            always,
            b64_min,
            hex_min,
        }
    }

    /// Does `data` hold one of the sequences?
    pub fn found_in(&self, data: &[u8]) -> bool {
        self.always
            || data.iter().enumerate().any(|(i, &c)| {
                if !self.lead[usize::from(c)] {
                    return false;
                }
                let bucket = &self.by_lead[usize::from(c)];
                bucket.lens.iter().any(|&n| {
                    data.get(i..i + n).is_some_and(|w| {
                        bucket
                            .seqs
                            .binary_search_by(|q| q.as_slice().cmp(w))
                            .is_ok()
                    })
                })
            })
    }
}

/// The bytes of a base64 run (`[A-Za-z0-9+/\-_]`), and their six-bit values (`-` and `_` as `+`
/// and `/`: the URL-safe alphabet, which `_b64_candidates` takes when the run holds one of them and
/// neither `+` nor `/`); `NOT_B64` elsewhere.
const NOT_B64: u8 = 0xFF;
const SEXTET: [u8; 256] = {
    let mut t = [NOT_B64; 256];
    let mut c = 0;
    while c < 26 {
        t[b'A' as usize + c] = c as u8;
        t[b'a' as usize + c] = 26 + c as u8;
        c += 1;
    }
    let mut d = 0;
    while d < 10 {
        t[b'0' as usize + d] = 52 + d as u8;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'-' as usize] = 62;
    t[b'/' as usize] = 63;
    t[b'_' as usize] = 63;
    t
};

/// 1 for a base64 character, 0 elsewhere.
const IN_RUN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (SEXTET[c] != NOT_B64) as u8;
        c += 1;
    }
    t
};

fn in_run(c: u8) -> bool {
    SEXTET[usize::from(c)] != NOT_B64
}

/// The six-bit value of a base64 character.
fn sextet(c: u8) -> u32 {
    u32::from(SEXTET[usize::from(c)])
}

/// `context.is_text`: at most one in ten characters of the UTF-8 reading (each maximal ill-formed
/// subsequence replaced by U+FFFD, as Python's `errors="replace"` does) is U+FFFD or a control
/// other than TAB, LF and CR. `_blob_danger` reads no further when it fails.
fn is_text(data: &[u8]) -> bool {
    let (mut n, mut bad) = (0usize, 0usize);
    // `Utf8Chunks` is what `from_utf8_lossy` replaces by: each invalid part one U+FFFD.
    for chunk in data.utf8_chunks() {
        for c in chunk.valid().chars() {
            n += 1;
            if c == '\u{FFFD}' || (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) {
                bad += 1;
            }
        }
        if !chunk.invalid().is_empty() {
            n += 1;
            bad += 1;
        }
        if bad * 10 > data.len() {
            return false; // more than one in ten of any number of characters the rest can make
        }
    }
    bad * 10 <= n
}

/// The byte classes [`may_be_text`] reads: a character that is never bad, a control it counts,
/// a byte no sequence holds (`C0`, `C1`, `F5`..`FF`), a continuation, a lead (`C2`..`F4`).
const OK: u8 = 0;
const CONTROL: u8 = 1;
const NEVER: u8 = 2;
const CONT: u8 = 3;
const LEAD: u8 = 4;
const CLASS: [u8; 256] = {
    let mut t = [OK; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c {
            0x09 | 0x0A | 0x0D => OK,
            0x00..=0x1F => CONTROL,
            0x80..=0xBF => CONT,
            0xC2..=0xF4 => LEAD,
            0xC0 | 0xC1 | 0xF5..=0xFF => NEVER,
            _ => OK,
        };
        c += 1;
    }
    t
};

/// A necessary condition for [`is_text`], read with one table look-up a byte and given up at the
/// first byte that settles it: `false` when `data` has certainly more than one bad character in
/// ten. It counts only bytes that are each a bad character on their own in the lossy reading: a
/// control; a byte no sequence holds; a continuation after a byte that no sequence continues
/// (ASCII, or one of those), or at the start; a lead not followed by a continuation (or at the
/// end), which is an incomplete sequence of one byte. Those sets are disjoint, so no character is
/// counted twice and the count is at most `is_text`'s; the characters are at most the bytes, so
/// more than `len / 10` of them fails `is_text` too. Most decodings of words fail here within a
/// few bytes, where `is_text` and the trigger search would read them whole.
fn may_be_text(data: &[u8]) -> bool {
    let mut check = TextCheck::new(data.len());
    data.iter().all(|&c| check.push(c)) && check.finish()
}

/// [`may_be_text`]'s count, a byte at a time, for a reading of `len` bytes made as it is read.
struct TextCheck {
    limit: usize, // `bad * 10 > len` is `bad > len / 10`
    bad: usize,
    prev: u8,
    after_unsequenced: bool, // at the start, a continuation continues nothing
}

impl TextCheck {
    fn new(len: usize) -> TextCheck {
        TextCheck {
            limit: len / 10,
            bad: 0,
            prev: OK,
            after_unsequenced: true,
        }
    }

    /// The next byte; `false` once the count is over the limit.
    fn push(&mut self, c: u8) -> bool {
        let k = CLASS[usize::from(c)];
        self.bad += usize::from(k == CONTROL || k == NEVER)
            + usize::from(k == CONT && self.after_unsequenced)
            + usize::from(self.prev == LEAD && k != CONT);
        self.after_unsequenced = k != CONT && k != LEAD;
        self.prev = k;
        self.bad <= self.limit
    }

    /// After the last byte: a lead there is an incomplete sequence too.
    fn finish(&self) -> bool {
        self.bad + usize::from(self.prev == LEAD) <= self.limit
    }
}

/// Would `_blob_danger` read `data` further: it holds a trigger and reads as text? (First the
/// cheap necessary condition for text, which fails on nearly every decoding of a word, then the
/// trigger search, then the exact count.)
fn worth_reading(data: &[u8], triggers: &Triggers) -> bool {
    may_be_text(data) && triggers.found_in(data) && is_text(data)
}

/// Whether the lenient decoding of `chunk` (base64 characters only) is worth reading
/// ([`worth_reading`]). `buf` is reused between calls. The decoding is checked by [`TextCheck`]
/// as it is made, and given up where that fails (most decodings of words fail in their first
/// group); a decoding that passes it is read whole by the trigger search and `is_text`.
fn decodes_to_trigger(chunk: &[u8], triggers: &Triggers, buf: &mut Vec<u8>) -> bool {
    let mut check = TextCheck::new(decoded_len(chunk.len()));
    buf.clear();
    let groups = chunk.chunks_exact(4);
    let tail = groups.remainder();
    for g in groups {
        let three = decode_group(g);
        if !three.iter().all(|&c| check.push(c)) {
            return false;
        }
        buf.extend_from_slice(&three);
    }
    let whole = buf.len();
    decode_tail(tail, buf);
    buf[whole..].iter().all(|&c| check.push(c))
        && check.finish()
        && triggers.found_in(buf)
        && is_text(buf)
}

/// The bytes [`lenient_decode`] makes of `n` characters.
fn decoded_len(n: usize) -> usize {
    n / 4 * 3 + (n % 4).saturating_sub(1)
}

/// Six bits a character, whole bytes kept, into `buf` (the plain decoding, the reference the tests
/// hold [`decodes_to_trigger`]'s checked one to): four characters at a time (three bytes), then
/// the two or three left (one or two bytes; one left alone makes no byte).
#[cfg(test)]
fn lenient_decode(chunk: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    buf.reserve(chunk.len() / 4 * 3 + 2);
    let groups = chunk.chunks_exact(4);
    let tail = groups.remainder();
    for g in groups {
        buf.extend_from_slice(&decode_group(g));
    }
    decode_tail(tail, buf);
}

/// The three bytes of a whole group of four base64 characters.
fn decode_group(g: &[u8]) -> [u8; 3] {
    let v = sextet(g[0]) << 18 | sextet(g[1]) << 12 | sextet(g[2]) << 6 | sextet(g[3]);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// The two or three characters after the last whole group: one or two bytes (one alone makes none).
fn decode_tail(tail: &[u8], buf: &mut Vec<u8>) {
    match *tail {
        [a, b] => buf.push((sextet(a) << 2 | sextet(b) >> 4) as u8),
        [a, b, c] => {
            let v = sextet(a) << 12 | sextet(b) << 6 | sextet(c);
            buf.extend_from_slice(&[(v >> 10) as u8, (v >> 2) as u8]);
        }
        _ => {}
    }
}

/// Could `_b64_candidates(run)` give a decoding `_blob_danger` reads further? Its chunks, leniently.
/// `body` is the run without its `=` and cut at `BLOB_MAX`; `facts` are its [`RunFacts`].
fn may_decode_to_trigger(
    body: &[u8],
    facts: &RunFacts,
    triggers: &Triggers,
    buf: &mut Vec<u8>,
) -> bool {
    if facts.mixed {
        return false; // `_b64_candidates` gives nothing for a run mixing both alphabets
    }
    (0..4).any(|shift| {
        let chunk = &body[shift.min(body.len())..];
        // The last group too (padded as it would be), or without its one stray character.
        let chunk = if chunk.len() % 4 == 1 {
            &chunk[..chunk.len() - 1]
        } else {
            chunk
        };
        // `len(chunk) < 8` counts the padding `_b64_candidates` adds.
        chunk.len().div_ceil(4) * 4 >= 8 && decodes_to_trigger(chunk, triggers, buf)
    })
}

/// What one look at a run's body tells the verdict before any decoding: whether it is all digits,
/// whether it mixes the two alphabets (`-`/`_` and `+`/`/`), and its longest run of hex digits.
struct RunFacts {
    all_digits: bool,
    mixed: bool,
    longest_hex: usize,
}

const DIGIT: u8 = 1;
const HEX: u8 = 2;
const URL_SAFE: u8 = 4;
const STANDARD: u8 = 8;
/// The [`RunFacts`] bits of a byte.
const FACT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if b.is_ascii_digit() { DIGIT | HEX } else { 0 }
            | if matches!(b, b'a'..=b'f' | b'A'..=b'F') {
                HEX
            } else {
                0
            }
            | if matches!(b, b'-' | b'_') {
                URL_SAFE
            } else {
                0
            }
            | if matches!(b, b'+' | b'/') {
                STANDARD
            } else {
                0
            };
        c += 1;
    }
    t
};

impl RunFacts {
    fn of(body: &[u8]) -> RunFacts {
        let (mut all, mut any, mut hex, mut longest) = (DIGIT, 0u8, 0usize, 0usize);
        for &c in body {
            let f = FACT[usize::from(c)];
            all &= f;
            any |= f;
            hex = if f & HEX != 0 { hex + 1 } else { 0 };
            longest = longest.max(hex);
        }
        RunFacts {
            all_digits: all & DIGIT != 0,
            mixed: any & URL_SAFE != 0 && any & STANDARD != 0,
            longest_hex: longest,
        }
    }
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Does a hex run inside the run's body (`_HEX_RE`: `HEX_MIN` or more hex digits, its even-length prefix
/// up to `BLOB_MAX` digits, as the Python pass decodes it) decode to bytes worth reading?
fn may_hold_hex_trigger(body: &[u8], triggers: &Triggers, buf: &mut Vec<u8>) -> bool {
    body.split(|c| !c.is_ascii_hexdigit()).any(|hex| {
        if hex.len() < triggers.hex_min {
            return false;
        }
        let hex = &hex[..(hex.len() & !1).min(BLOB_MAX)];
        buf.clear();
        buf.extend(
            hex.chunks_exact(2)
                .map(|p| hex_value(p[0]) << 4 | hex_value(p[1])),
        );
        worth_reading(buf, triggers)
    })
}

/// Every base64 run of `s` (byte offsets, as `_B64_RE.finditer` finds them), or with `all` false
/// only those the Python pass could report from: a hex run inside decoding to a trigger, or a
/// decoding (at any shift) holding a trigger and the run not all digits. Linear: each character
/// is read once to find the runs, and a run's body at most five more times (its hex runs and its
/// shifts), each decoding searched from each byte for the triggers (a bounded number of short
/// sequences).
pub fn blob_runs(s: &str, all: bool, triggers: &Triggers) -> Vec<(usize, usize)> {
    let mut buf = Vec::new();
    let b = s.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    let mut memo = Memo::new(n);
    for (start, i) in long_runs(b, triggers.b64_min) {
        let mut end = i;
        while end < n && end - i < 2 && b[end] == b'=' {
            end += 1;
        }
        let run = &b[start..end];
        if all || memo.keep(run, |run| may_hold_trigger(run, triggers, &mut buf)) {
            out.push((start, end));
        }
    }
    out
}

/// Could the Python pass report from `run` (a hex run inside, or a decoding at some shift)? One
/// look at the body first ([`RunFacts`]): most runs are words, too short for a hex run, and their
/// decodings fail [`TextCheck`] within a group.
fn may_hold_trigger(run: &[u8], triggers: &Triggers, buf: &mut Vec<u8>) -> bool {
    let end = run.iter().rposition(|&c| c != b'=').map_or(0, |i| i + 1);
    let body = &run[..end];
    let head = &body[..end.min(BLOB_MAX)];
    let facts = RunFacts::of(head);
    // Past `BLOB_MAX` the facts do not cover the body: its hex runs are searched, and it is not
    // taken for all digits (each only keeps more runs).
    let whole = head.len() == body.len();
    let hex = !whole || facts.longest_hex >= triggers.hex_min;
    let digits = whole && end == run.len() && facts.all_digits; // `run.isdigit()`, `=` included
    (hex && may_hold_hex_trigger(body, triggers, buf))
        || (!digits && may_decode_to_trigger(head, &facts, triggers, buf))
}

/// The verdicts already given in one call, by run text: a verdict depends on the run's bytes and
/// the call's triggers only, and the words of source code and prose repeat (2 MB of the stdlib's
/// source has 47,517 runs of 8,917 texts). Short runs only, in a direct-mapped table: one slot per
/// hash, a run found there only if the slot holds its very bytes, else judged and put in the slot.
/// A lookup is one cheap hash and one comparison, never a search, so no text can make it cost more
/// (runs built to share slots are only judged again, as without the table). SipHash'd map lookups
/// were a third of this pass on Markdown.
struct Memo<'a> {
    slots: Vec<(&'a [u8], bool)>,
    /// `64 - log2(slots.len())`: the hash's top bits pick the slot.
    shift: u32,
}

impl<'a> Memo<'a> {
    /// The longest run remembered.
    const RUN_MAX: usize = 32;
    /// The most slots (96 KB: 16384 was slower on 4 MB of the stdlib), and the fewest; about one per
    /// 32 bytes of text between.
    const SLOTS_MAX: usize = 1 << 12;
    const SLOTS_MIN: usize = 1 << 6;

    fn new(text_len: usize) -> Memo<'a> {
        let slots = (text_len / 32)
            .next_power_of_two()
            .clamp(Self::SLOTS_MIN, Self::SLOTS_MAX);
        Memo {
            // An empty run is never looked up (runs are at least one byte): an empty slot.
            slots: vec![(&[][..], false); slots],
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// The slot of `run` (at most `RUN_MAX` bytes): its first and last eight bytes (fewer when
    /// shorter) and its length, multiplied and mixed.
    fn slot(&self, run: &[u8]) -> usize {
        let n = run.len();
        let (head, tail) = match (run.first_chunk::<8>(), run.last_chunk::<8>()) {
            (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
            _ => {
                let word = run.iter().fold(0u64, |h, &c| h << 8 | u64::from(c));
                (word, word)
            }
        };
        let h = (head ^ (n as u64).rotate_left(56)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ tail.rotate_left(31).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (h >> self.shift) as usize
    }

    fn keep(&mut self, run: &'a [u8], verdict: impl FnOnce(&[u8]) -> bool) -> bool {
        if run.len() > Self::RUN_MAX {
            return verdict(run);
        }
        let k = self.slot(run);
        let (held, v) = self.slots[k];
        if held == run {
            return v;
        }
        let v = verdict(run);
        self.slots[k] = (run, v);
        v
    }
}

/// The maximal runs of base64 characters (`in_run`) of `min` or more bytes, in order, as
/// `(start, end)`. A byte loop pays a mispredicted branch at both ends of every word; here each
/// 64 bytes become a mask, the masks are and-ed with themselves shifted (bit `j` stays set only
/// where bits `j..j + min` all are, across words), and only the set bits, one group per long run,
/// are visited. `min` above 64 (or 0) takes the byte loop.
fn long_runs(b: &[u8], min: usize) -> Vec<(usize, usize)> {
    if min == 0 || min > 64 {
        return long_runs_by_bytes(b, min);
    }
    let mask: Vec<u64> = b.chunks(64).map(run_mask).collect();
    let word = |k: usize| mask.get(k).copied().unwrap_or(0);
    // `long[k]` bit `j`: the `min` bytes from `64 k + j` are all in a run.
    let long: Vec<u64> = (0..mask.len())
        .map(|k| {
            let mut x = u128::from(word(k)) | u128::from(word(k + 1)) << 64;
            let mut have = 1;
            while have < min {
                let step = have.min(min - have);
                x &= x >> step;
                have += step;
            }
            x as u64 // the low word; its bits need at most 63 + 64 bits of the stream
        })
        .collect();
    // The first byte at or after `at` that is in no run (`b.len()` past the end).
    let run_end = |at: usize| {
        let mut k = at / 64;
        let mut w = !word(k) >> (at % 64) << (at % 64);
        while w == 0 && k < mask.len() {
            k += 1;
            w = !word(k);
        }
        (k * 64 + w.trailing_zeros() as usize).min(b.len())
    };
    let mut out = Vec::new();
    let mut at = 0; // never inside a run: the next set bit of `long` at or after it starts one
    while at < b.len() {
        let mut k = at / 64;
        let mut w = long[k] >> (at % 64) << (at % 64);
        while w == 0 {
            k += 1;
            if k == long.len() {
                return out;
            }
            w = long[k];
        }
        let start = k * 64 + w.trailing_zeros() as usize;
        let end = run_end(start);
        out.push((start, end));
        at = end;
    }
    out
}

/// Bit `j` set where `chunk[j]` is a base64 character.
fn run_mask(chunk: &[u8]) -> u64 {
    if let Ok(full) = <&[u8; 64]>::try_from(chunk) {
        // A whole block: eight bytes a lane, a fixed count the compiler unrolls.
        let mut w = 0u64;
        for (k, lane) in full.chunks_exact(8).enumerate() {
            let mut byte = 0u64;
            for (j, &c) in lane.iter().enumerate() {
                byte |= u64::from(IN_RUN[usize::from(c)]) << j;
            }
            w |= byte << (8 * k);
        }
        return w;
    }
    chunk
        .iter()
        .enumerate()
        .fold(0u64, |w, (j, &c)| w | u64::from(in_run(c)) << j)
}

/// [`long_runs`] byte by byte: the reference its tests hold it equal to, and its way for a `min`
/// no mask holds.
fn long_runs_by_bytes(b: &[u8], min: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !in_run(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && in_run(b[i]) {
            i += 1;
        }
        if i - start >= min {
            out.push((start, i));
        }
    }
    out
}

/// Where a match of `_BIN_RE` (`[01]{8}(?:[ \t]{1,2}[01]{8}){3,}`) may start (byte offsets, in
/// order): every match starts with eight binary digits followed by a blank, so only the last eight
/// digits of a run of eight or more that a space or a tab ends. One pass: `memchr2` finds each run's
/// first digit (binary digits are rare in prose and code), the run is read to its end, and the
/// search goes on after it; at most one start a run.
pub fn binary_group_starts(s: &str) -> Vec<usize> {
    let b = s.as_bytes();
    let binary = |c: u8| c == b'0' || c == b'1';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = memchr::memchr2(b'0', b'1', &b[i..]) {
        let start = i + p;
        let end = b[start..]
            .iter()
            .position(|&c| !binary(c))
            .map_or(b.len(), |q| start + q);
        if end - start >= 8 && matches!(b.get(end), Some(b' ' | b'\t')) {
            out.push(end - 8);
        }
        i = end;
        if i >= b.len() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triggers_min(min: usize) -> Triggers {
        Triggers::new(
            ["<", "[", "&", "\u{ff1c}"]
                .iter()
                .map(|t| t.as_bytes().to_vec())
                .collect(),
            min,
            16,
        )
    }

    fn triggers() -> Triggers {
        Triggers::new(
            ["<", "[", "&", "\u{ff1c}"]
                .iter()
                .map(|t| t.as_bytes().to_vec())
                .collect(),
            16,
            16,
        )
    }

    #[test]
    fn runs_as_the_regex_finds_them() {
        let s = "x PHJldHJpZXZlZF9jb250ZW50Pg== y short abcdefghijklmnopq===";
        assert_eq!(blob_runs(s, true, &triggers()), vec![(2, 30), (39, 58)]);
    }

    #[test]
    fn a_tag_in_base64_is_kept_and_plain_words_are_not() {
        // base64 of "</retrieved_content>"
        assert_eq!(
            blob_runs("PC9yZXRyaWV2ZWRfY29udGVudD4=", false, &triggers()).len(),
            1
        );
        assert!(blob_runs("assertRaisesRegexpWithLongName", false, &triggers()).is_empty());
        assert!(blob_runs("12345678901234567890", false, &triggers()).is_empty());
        // hex of "say </x> now": kept; with `<` made `=`, or as random bytes, dropped
        assert_eq!(
            blob_runs("736179203c2f783e206e6f77", false, &triggers()).len(),
            1
        );
        let mut buf = Vec::new();
        let hex =
            |run: &str, buf: &mut Vec<u8>| may_hold_hex_trigger(run.as_bytes(), &triggers(), buf);
        assert!(hex("736179203c2f783e206e6f77", &mut buf));
        assert!(!hex("736179203d2f783e206e6f77", &mut buf));
        assert!(!hex("deadbeef3cdeadbeef", &mut buf)); // a `<` among bytes that are not text
                                                       // the fullwidth `＜` (ef bc 9c) is kept, a lone `ef` is not, nor one at an odd offset
        assert!(hex("73617920efbc9c78206e6f77", &mut buf));
        assert!(!hex("73617920efbc9d78206e6f77", &mut buf));
        assert!(!hex("736179200efbc9c78206e6f7", &mut buf));
    }

    /// Byte strings for the text check: every string of up to four of these bytes (each class and
    /// its edges), then strings of 5 to 40 drawn from them, mostly ASCII so that some are text.
    fn text_samples() -> Vec<Vec<u8>> {
        let bytes: &[u8] = &[
            0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
            0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ];
        let mut out = vec![Vec::new()];
        let mut layer = vec![Vec::new()];
        for _ in 0..4 {
            layer = layer
                .iter()
                .flat_map(|p: &Vec<u8>| bytes.iter().map(move |&c| [p.as_slice(), &[c]].concat()))
                .collect();
            out.extend(layer.iter().cloned());
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let len = 5 + (next() % 36) as usize;
            let s = (0..len)
                .map(|_| match next() % 8 {
                    0..=5 => b'a' + (next() % 26) as u8,
                    _ => bytes[(next() % bytes.len() as u64) as usize],
                })
                .collect();
            out.push(s);
        }
        out
    }

    /// The first sample that `is_text` reads as text and `check` refuses.
    fn refused_text(check: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
        text_samples().into_iter().find(|d| is_text(d) && !check(d))
    }

    #[test]
    fn the_text_check_never_refuses_text() {
        assert_eq!(refused_text(may_be_text), None);
        // It refuses most of what is not text, or it would save nothing.
        let samples = text_samples();
        let not_text = samples.iter().filter(|d| !is_text(d)).count();
        let refused = samples.iter().filter(|d| !may_be_text(d)).count();
        assert!(refused * 10 >= not_text * 9, "{refused} of {not_text}");
    }

    #[test]
    fn control_a_text_check_that_counts_too_much_is_caught() {
        // Counting a continuation after a lead too (`E0 80`, `F0 80` are bad, but `C3 A9` is not).
        let counts_every_continuation = |d: &[u8]| {
            let bad = d.iter().filter(|&&c| CLASS[usize::from(c)] != OK).count();
            bad * 10 <= d.len()
        };
        assert!(refused_text(counts_every_continuation).is_some());
        // The limit off by one (`bad * 10 >= len` refused).
        let strict = |d: &[u8]| {
            let mut check = TextCheck::new(d.len());
            check.limit = check.limit.saturating_sub(1);
            d.iter().all(|&c| check.push(c)) && check.finish()
        };
        assert!(refused_text(strict).is_some());
    }

    /// `decodes_to_trigger` as it was: the plain decoding, then the trigger search and the count.
    fn decodes_to_trigger_plainly(chunk: &[u8], t: &Triggers, buf: &mut Vec<u8>) -> bool {
        lenient_decode(chunk, buf);
        t.found_in(buf) && is_text(buf)
    }

    /// Base64 (standard alphabet, no padding) of `data`.
    fn b64(data: &[u8]) -> Vec<u8> {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = Vec::new();
        for g in data.chunks(3) {
            let v = g
                .iter()
                .enumerate()
                .fold(0u32, |v, (i, &c)| v | u32::from(c) << (16 - 8 * i));
            for k in 0..=g.len() {
                out.push(A[(v >> (18 - 6 * k) & 63) as usize]);
            }
        }
        out
    }

    /// Chunks whose decodings hold a trigger and read as text, at every shift and cut, and the
    /// text-check samples encoded (most of which hold none or are no text).
    fn decoding_samples() -> Vec<Vec<u8>> {
        let texts: &[&[u8]] = &[
            b"say <x> now",
            b"[INST] hello",
            b"a & b and c",
            "x\u{ff1c}y z".as_bytes(),
            b"123456789<\x01",
            b"12345678<\x01\x02",
            b"<\xe2\x80 123456789",
            b"plain words only",
        ];
        let mut out = Vec::new();
        for t in texts {
            let e = b64(t);
            for a in 0..4.min(e.len()) {
                for b in (a..=e.len()).rev().take(5) {
                    out.push(e[a..b].to_vec());
                }
            }
        }
        out.extend(text_samples().iter().step_by(7).map(|d| b64(d)));
        out
    }

    #[test]
    fn the_checked_decoding_decides_as_the_plain_one() {
        let t = triggers();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let samples = decoding_samples();
        let mut kept = 0;
        for chunk in &samples {
            let want = decodes_to_trigger_plainly(chunk, &t, &mut a);
            assert_eq!(decodes_to_trigger(chunk, &t, &mut b), want, "{chunk:?}");
            kept += usize::from(want);
        }
        assert!(
            kept >= 20 && kept * 2 < samples.len(),
            "{kept} of {}",
            samples.len()
        );
    }

    #[test]
    fn control_a_decoding_checked_without_its_tail_is_caught() {
        // Giving the verdict from the whole groups only: a `<` in the last one or two bytes is lost.
        let t = triggers();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let groups_only = |chunk: &[u8], buf: &mut Vec<u8>| {
            decodes_to_trigger_plainly(&chunk[..chunk.len() / 4 * 4], &t, buf)
        };
        assert!(decoding_samples()
            .iter()
            .any(|c| groups_only(c, &mut b) != decodes_to_trigger_plainly(c, &t, &mut a)));
    }

    #[test]
    fn text_is_counted_as_python_counts_it() {
        assert!(is_text(b"plain words"));
        assert!(is_text(b"123456789\x01")); // one bad in ten
        assert!(!is_text(b"12345678\x01\x02"));
        assert!(!is_text(b"\xe2\x80")); // one U+FFFD for the truncated sequence, of one character
        assert!(is_text(b"123456789\xe2\x80")); // ... which is one in ten
        assert!(!is_text(b"12345678\xf0\x80\x80")); // three: F0 80 is no prefix of a sequence
    }

    /// The byte loop `binary_group_starts` replaced: a digit run's length, reset by any other byte.
    fn binary_group_starts_by_bytes(s: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut run = 0usize;
        for (i, &c) in s.as_bytes().iter().enumerate() {
            match c {
                b'0' | b'1' => run += 1,
                b' ' | b'\t' if run >= 8 => {
                    out.push(i - 8);
                    run = 0;
                }
                _ => run = 0,
            }
        }
        out
    }

    #[test]
    fn the_group_decoder_is_the_bit_loop() {
        let alphabet = b"AZaz09+/-_Qw";
        let mut buf = Vec::new();
        for len in 0..=9u32 {
            for mut k in 0..12usize.pow(len.min(6)) {
                let mut chunk = Vec::new();
                for p in 0..len {
                    chunk.push(alphabet[(k + p as usize) % 12]);
                    k /= 12;
                }
                let mut want = Vec::new();
                let (mut acc, mut bits) = (0u32, 0u32);
                for &c in &chunk {
                    acc = (acc << 6) | sextet(c);
                    bits += 6;
                    if bits >= 8 {
                        bits -= 8;
                        want.push(((acc >> bits) & 0xFF) as u8);
                        acc &= (1 << bits) - 1;
                    }
                }
                lenient_decode(&chunk, &mut buf);
                assert_eq!(buf, want, "{chunk:?}");
            }
        }
    }

    #[test]
    fn long_runs_as_the_byte_loop_finds_them() {
        // Every string of up to 10 bytes over a run byte, a padding byte and a breaking byte, at
        // every `min` from 1 to 10; then long strings crossing many 64-byte words.
        let alphabet = [b'A', b'=', b' '];
        for len in 0..=10u32 {
            for mut k in 0..3usize.pow(len) {
                let mut s = Vec::new();
                for _ in 0..len {
                    s.push(alphabet[k % 3]);
                    k /= 3;
                }
                for min in 1..=10 {
                    assert_eq!(
                        long_runs(&s, min),
                        long_runs_by_bytes(&s, min),
                        "{s:?} {min}"
                    );
                }
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..400 {
            let len = 1 + round * 7;
            let mut s = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly run bytes, so runs of every length up to a few hundred occur.
                s.push(if x % 23 == 0 {
                    b' '
                } else {
                    b'a' + (x % 3) as u8
                });
            }
            for min in [1, 2, 7, 8, 9, 16, 31, 63, 64, 65, 200] {
                assert_eq!(
                    long_runs(&s, min),
                    long_runs_by_bytes(&s, min),
                    "len {len} min {min}"
                );
            }
        }
    }

    #[test]
    fn a_whole_block_masks_as_each_byte_reads() {
        // Every byte value at every position of a full block (the unrolled way) and of a short one.
        for len in [64, 63] {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut block = vec![b'A'; len];
                    block[at] = c;
                    let want = block.iter().enumerate().fold(0u64, |w, (j, &c)| {
                        w | u64::from(SEXTET[usize::from(c)] != NOT_B64) << j
                    });
                    assert_eq!(run_mask(&block), want, "{len} {at} {c}");
                }
            }
        }
    }

    #[test]
    fn a_remembered_verdict_is_the_verdict_of_that_run() {
        // Two runs of one length (both short enough to be remembered), one decoding to a tag and
        // one to letters, each repeated: the kept runs are exactly the tag's, wherever they repeat.
        let (tag, word) = ("PHg+PC94Pg==", "aGVsbG8gdw=="); // "<x></x>", "hello w"
        let text = [tag, word, word, tag, word, tag].join(" ");
        let t = triggers_min(8);
        let mut buf = Vec::new();
        let runs = long_runs_by_bytes(text.as_bytes(), 8);
        let verdict = |run: (usize, usize), buf: &mut Vec<u8>| {
            may_hold_trigger(&text.as_bytes()[run.0..run.1], &t, buf)
        };
        let want: Vec<(usize, usize)> = runs
            .iter()
            .map(|&(start, end)| (start, end + 2)) // each ends in `==`
            .filter(|&run| verdict(run, &mut buf))
            .collect();
        assert_eq!(want.len(), 3);
        assert_eq!(blob_runs(&text, false, &t), want);
        // Control: a memo keyed by less than the run's text (here its length) gives the word the
        // tag's verdict, and this text tells the two apart.
        let mut by_len = std::collections::HashMap::new();
        let wrong = runs
            .iter()
            .map(|&(start, end)| (start, end + 2))
            .filter(|&run| {
                *by_len
                    .entry(run.1 - run.0)
                    .or_insert_with(|| verdict(run, &mut buf))
            })
            .count();
        assert_ne!(wrong, want.len());
    }

    #[test]
    fn runs_that_share_a_slot_are_judged_each_by_its_own_bytes() {
        // 600 distinct words and 86 copies of a tag in a text small enough for a few hundred slots:
        // most runs share a slot with another. The kept runs are those judged one by one.
        let t = triggers_min(8);
        let tag = "PHg+PC94Pg=="; // "<x></x>"
        let mut parts = Vec::new();
        for k in 0..600 {
            parts.push(format!("word{k:04}xy"));
            if k % 7 == 0 {
                parts.push(tag.to_string());
            }
        }
        let text = parts.join(" ");
        let b = text.as_bytes();
        let runs: Vec<(usize, usize)> = long_runs_by_bytes(b, 8)
            .into_iter()
            .map(|(start, i)| {
                let mut end = i;
                while end < b.len() && end - i < 2 && b[end] == b'=' {
                    end += 1;
                }
                (start, end)
            })
            .collect();
        let mut buf = Vec::new();
        let want: Vec<(usize, usize)> = runs
            .iter()
            .copied()
            .filter(|&(s, e)| may_hold_trigger(&b[s..e], &t, &mut buf))
            .collect();
        assert_eq!(want.len(), 86);
        assert_eq!(blob_runs(&text, false, &t), want);
        // Control: a table that trusts its slot (the first verdict given there, whatever run it
        // was) gives some tag a word's verdict, and this text tells.
        let memo = Memo::new(text.len());
        let mut by_slot = std::collections::HashMap::new();
        let wrong: Vec<(usize, usize)> = runs
            .iter()
            .copied()
            .filter(|&(s, e)| {
                *by_slot
                    .entry(memo.slot(&b[s..e]))
                    .or_insert_with(|| may_hold_trigger(&b[s..e], &t, &mut buf))
            })
            .collect();
        assert_ne!(wrong, want);
    }

    #[test]
    fn binary_groups_as_the_byte_loop_finds_them() {
        // Every string of up to 9 bytes (eight digits and a blank) over an alphabet that makes runs, blanks and breaks.
        let alphabet = [b'0', b'1', b' ', b'\t', b'x'];
        let mut checked = 0;
        for len in 0..=9u32 {
            for mut k in 0..5usize.pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push(char::from(alphabet[k % 5]));
                    k /= 5;
                }
                assert_eq!(
                    binary_group_starts(&s),
                    binary_group_starts_by_bytes(&s),
                    "{s:?}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, (0..=9).map(|n| 5usize.pow(n)).sum::<usize>());
    }

    #[test]
    fn binary_groups_need_eight_digits_then_a_blank() {
        assert_eq!(binary_group_starts("x 01100001 01100010"), vec![2]);
        assert_eq!(binary_group_starts("101100001\t"), vec![1]);
        assert!(binary_group_starts("0110000 1 0 1 0").is_empty());
        assert!(binary_group_starts("01100001x 0110000a ").is_empty());
    }
}
