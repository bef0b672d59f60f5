//! The model's-eye reader: `modeleye.read_after`, `read_bracket`, `closer_after`,
//! `_after_namespace`, `_lead`, step for step, on UTF-8 with byte offsets (and the number of
//! code points read, for the bounds, which are in code points).

use crate::chars::{self, CharReadings, BANG, SKIP, SLASH};
use crate::decode::{char_at, decode_at, Piece};
use crate::names::{Names, Trie};
use crate::tables::{MAX_LOOKAHEAD, MAX_RUN};

/// The kinds of `modeleye.Reading`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    None,
    Reserved,
    Token,
    Bar,
    Padding,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::None => "none",
            Kind::Reserved => "reserved",
            Kind::Token => "token",
            Kind::Bar => "bar",
            Kind::Padding => "padding",
        }
    }
}

/// A position: byte offset, and code points from the position the reading started at.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Cur {
    pub i: usize,
    pub rel: usize,
}

/// `modeleye.Reading`: `end` is a byte offset, `end_rel` the code points from the start.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Reading<'n> {
    pub kind: Kind,
    pub name: &'n str,
    pub slash: bool,
    pub end: usize,
    pub end_rel: usize,
}

impl Reading<'_> {
    const NONE: Reading<'static> = Reading {
        kind: Kind::None,
        name: "",
        slash: false,
        end: 0,
        end_rel: 0,
    };

    pub fn is_none(&self) -> bool {
        self.kind == Kind::None
    }

    fn at<'a>(kind: Kind, name: &'a str, slash: bool, c: Cur) -> Reading<'a> {
        Reading {
            kind,
            name,
            slash,
            end: c.i,
            end_rel: c.rel,
        }
    }
}

/// `_piece_readings(piece) if piece else ("",)`.
enum Parts {
    /// The one reading "" (an empty piece, or a skipped character).
    Empty,
    One(CharReadings),
    Many(Vec<String>),
}

#[inline]
fn parts_of(piece: &Piece) -> Parts {
    match piece.as_slice() {
        [] => Parts::Empty,
        [c] => match chars::readings(*c) {
            CharReadings::Skip => Parts::Empty,
            r => Parts::One(r),
        },
        many => {
            // Every combination of the readings of the first four characters, sorted, the first 16.
            let mut combos: Vec<String> = vec![String::new()];
            for c in many.iter().take(4) {
                let rs = chars::readings(*c).to_vec();
                let mut next = Vec::with_capacity(combos.len() * rs.len());
                for a in &combos {
                    for r in &rs {
                        next.push(format!("{a}{r}"));
                    }
                }
                combos = next;
            }
            combos.sort();
            combos.dedup();
            combos.truncate(16);
            if combos.iter().all(String::is_empty) {
                Parts::Empty
            } else {
                Parts::Many(combos)
            }
        }
    }
}

impl Parts {
    /// Calls `f` with every reading, in order, until it returns `Some`.
    fn find_map<T>(&self, mut f: impl FnMut(&str) -> Option<T>) -> Option<T> {
        match self {
            Parts::Empty => f(""),
            Parts::One(CharReadings::Table(rs)) => rs.iter().find_map(|r| f(r)),
            Parts::One(CharReadings::Itself(c)) => {
                let mut buf = [0u8; 4];
                f(c.encode_utf8(&mut buf))
            }
            Parts::One(CharReadings::Skip) => f(""),
            Parts::Many(v) => v.iter().find_map(|r| f(r)),
        }
    }

    fn any_colon_end(&self) -> bool {
        self.find_map(|p| p.ends_with(':').then_some(())).is_some()
    }
}

/// Reusable buffers of one reader (so that a scan allocates nothing per opener).
#[derive(Default)]
pub struct Scratch {
    states: Vec<u32>,
    new: Vec<u32>,
}

#[inline]
fn before_end(s: &str, c: Cur) -> bool {
    c.i < s.len() && c.rel < MAX_LOOKAHEAD
}

#[inline]
fn step(s: &str, c: Cur) -> (Piece, Cur) {
    let (p, nxt, cps) = decode_at(s, c.i);
    (
        p,
        Cur {
            i: nxt,
            rel: c.rel + cps,
        },
    )
}

/// `_lead`: past skipped characters, slashes (and `!`/`?`): (position, run, slash seen).
#[inline]
fn lead(s: &str, pos: usize, bang: bool) -> (Cur, usize, bool, Option<(Piece, Cur)>) {
    let mut c = Cur { i: pos, rel: 0 };
    let mut run = 0;
    let mut slash = false;
    let mask = SKIP | SLASH | if bang { BANG } else { 0 };
    while before_end(s, c) {
        let (piece, nxt) = step(s, c);
        if !piece
            .as_slice()
            .iter()
            .all(|&ch| chars::flags(ch) & mask != 0)
        {
            // The piece that ends the lead, decoded once (the reader goes on from it).
            return (c, run, slash, Some((piece, nxt)));
        }
        slash = slash || piece.as_slice().iter().any(|&ch| chars::has(ch, SLASH));
        c = nxt;
        run += 1;
        if run >= MAX_RUN {
            break;
        }
    }
    (c, run, slash, None)
}

/// `closer_after(text, i, end, closers)` with `end` the reader's bound; `closer` a class bit.
#[inline]
pub fn closer_after(s: &str, start: Cur, closer: u16) -> Option<Cur> {
    let mut c = start;
    let mut run = 0;
    while before_end(s, c) && run < MAX_RUN {
        let (piece, nxt) = step(s, c);
        if piece
            .as_slice()
            .iter()
            .all(|&ch| chars::flags(ch) & (SKIP | SLASH) != 0)
        {
            run += 1;
            c = nxt;
            continue;
        }
        return match piece.first() {
            Some(ch) if chars::has(ch, closer) => Some(nxt),
            _ => None,
        };
    }
    (c.i < s.len() && run >= MAX_RUN).then_some(c)
}

/// A character of a namespace prefix (`_after_namespace`): a letter or digit that is not an
/// opener character (U+1438 CANADIAN SYLLABICS PA is both), or a separator.
#[inline]
fn namespace_char(f: u16) -> bool {
    (f & chars::ALNUM != 0 && f & (chars::LT | chars::LBRACKET) == 0) || f & chars::SEPARATOR != 0
}

/// `not _stops_reading(piece)` for the piece's first character: a letter or digit that is not
/// an opener character.
#[inline]
fn keeps_reading(ch: char) -> bool {
    let f = chars::flags(ch);
    f & chars::ALNUM != 0 && f & (chars::LT | chars::LBRACKET) == 0
}

/// `_after_namespace`: after a name prefix that ends in a colon-like character, else `None`.
#[inline]
fn after_namespace(s: &str, start: Cur) -> Option<Cur> {
    let mut k = start;
    while before_end(s, k) && k.rel - start.rel < MAX_RUN {
        let ch = char_at(s, k.i);
        if !namespace_char(chars::flags(ch)) {
            break;
        }
        k = Cur {
            i: k.i + ch.len_utf8(),
            rel: k.rel + 1,
        };
    }
    if before_end(s, k) {
        let ch = char_at(s, k.i);
        if chars::readings(ch).has_colon() {
            return Some(Cur {
                i: k.i + ch.len_utf8(),
                rel: k.rel + 1,
            });
        }
    }
    None
}

enum Walk {
    /// `t` starts with a reserved name (the node where it ends).
    Reserved(u32),
    /// `t` is a prefix of a name (its node); `t` may also be a token.
    Viable(u32),
    Dead,
}

#[inline]
fn walk(trie: &Trie, from: u32, p: &str) -> Walk {
    let mut node = from;
    for ch in p.chars() {
        match trie.child(node, ch) {
            Some(k) => {
                node = k;
                if trie.is_reserved(k) {
                    return Walk::Reserved(k);
                }
            }
            None => return Walk::Dead,
        }
    }
    Walk::Viable(node)
}

#[inline]
fn push_unique(v: &mut Vec<u32>, x: u32) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// A lead already read: where it stopped, its run and whether it held a slash.
#[derive(Clone, Copy)]
struct Lead {
    at: Cur,
    run: usize,
    slash: bool,
}

/// The reading decided from plain ASCII alone (no `&`, nothing beyond ASCII), else the lead
/// when it is complete (for the general reader to go on from): the lead over ASCII skips,
/// then a first character that no name starts with.
#[inline]
fn fast_read(
    s: &str,
    pos: usize,
    names: &Names,
    bracket: bool,
) -> Result<Reading<'static>, Option<Lead>> {
    let b = s.as_bytes();
    let n = b.len();
    let fast = chars::Fast::get();
    let lead_mask = SKIP | SLASH | if bracket { 0 } else { BANG };
    let mut i = pos;
    let mut run = 0;
    let mut slash = false;
    let mut blank = true;
    while i < n && run < MAX_RUN {
        let c = b[i];
        if c >= 0x80 || c == b'&' {
            return Err(None);
        }
        let f = fast.ascii_flags(c);
        if f & lead_mask == 0 {
            break;
        }
        slash |= f & SLASH != 0;
        blank &= f & chars::SPACE != 0;
        i += 1;
        run += 1;
    }
    let at = Cur { i, rel: i - pos };
    if run >= MAX_RUN {
        if bracket && blank {
            return Ok(Reading::NONE);
        }
        return Ok(Reading::at(Kind::Padding, "", slash, at));
    }
    if i >= n {
        return Ok(Reading::NONE);
    }
    let c = b[i];
    if c >= 0x80 || c == b'&' {
        return Err(None);
    }
    // The lead is complete: it stopped at a plain ASCII character.
    let lead = Some(Lead { at, run, slash });
    let class = if bracket {
        names.bracket_first[usize::from(c)]
    } else {
        names.angle_first[usize::from(c)]
    };
    match class {
        crate::names::FIRST_NONE => Ok(Reading::NONE),
        crate::names::FIRST_NAMESPACE => {
            // `_after_namespace` from the character after the first: letters, digits and
            // separators (at most MAX_RUN), then a colon-like character or nothing.
            let start = i + 1;
            let mut k = start;
            while k < n && k - start < MAX_RUN {
                let x = b[k];
                if x >= 0x80 {
                    return Err(lead);
                }
                if fast.ascii_flags(x) & (chars::ALNUM | chars::SEPARATOR) == 0 {
                    break;
                }
                k += 1;
            }
            if k >= n {
                return Ok(Reading::NONE);
            }
            let x = b[k];
            if x >= 0x80 || fast.ascii_readings(x).has_colon() {
                return Err(lead);
            }
            Ok(Reading::NONE)
        }
        _ => Err(lead),
    }
}

/// One step of a reading with one live state, when the piece is one character with one
/// one-character reading (or is skipped): no readings are built. Plain ASCII is read from the
/// byte; anything else is decoded, and handed on in `pending` when it does not fit.
enum One {
    Skip(Cur),
    /// (the character, its one reading, the position after it)
    Char(char, char, Cur),
    General,
}

#[inline]
fn one_step(s: &str, fast: chars::Fast, c: Cur, pending: &mut Option<(Piece, Cur)>) -> One {
    let byte = s.as_bytes()[c.i];
    if pending.is_none() && byte < 0x80 && byte != b'&' {
        let nc = Cur {
            i: c.i + 1,
            rel: c.rel + 1,
        };
        if fast.ascii_flags(byte) & SKIP != 0 {
            return One::Skip(nc);
        }
        return match fast.ascii_single(byte) {
            0 => One::General,
            r => One::Char(byte as char, r as char, nc),
        };
    }
    let (piece, nc) = pending.take().unwrap_or_else(|| step(s, c));
    match piece.as_slice() {
        [] => One::Skip(nc),
        [ch] => match chars::readings(*ch) {
            CharReadings::Skip => One::Skip(nc),
            CharReadings::Itself(x) => One::Char(*ch, x, nc),
            CharReadings::Table([one]) if one.len() == 1 => {
                One::Char(*ch, one.as_bytes()[0] as char, nc)
            }
            _ => {
                *pending = Some((piece, nc));
                One::General
            }
        },
        _ => {
            *pending = Some((piece, nc));
            One::General
        }
    }
}

/// `modeleye.read_after(text, pos, names)`, `pos` a byte offset just after an opener.
pub fn read_after<'n>(s: &str, pos: usize, names: &'n Names, scratch: &mut Scratch) -> Reading<'n> {
    match fast_read(s, pos, names, false) {
        Ok(r) => r,
        Err(done) => read_after_slow(s, pos, names, scratch, done),
    }
}

fn read_after_slow<'n>(
    s: &str,
    pos: usize,
    names: &'n Names,
    scratch: &mut Scratch,
    done: Option<Lead>,
) -> Reading<'n> {
    let n = s.len();
    let (mut c, run, slash, mut pending) = match done {
        Some(l) => (l.at, l.run, l.slash, None),
        None => lead(s, pos, true),
    };
    if run >= MAX_RUN {
        return Reading::at(Kind::Padding, "", slash, c);
    }
    if c.i >= n {
        return Reading::NONE;
    }
    if !before_end(s, c) {
        return Reading::at(Kind::Padding, "", slash, c);
    }
    let (first, nxt) = pending.unwrap_or_else(|| step(s, c));
    // Keep the decoded piece for the loop, unless it is plain ASCII (the loop's fast step).
    let plain = nxt.i == c.i + 1 && s.as_bytes()[c.i] != b'&';
    pending = if plain { None } else { Some((first, nxt)) };
    if names.pipes {
        if let Some(ch) = first.first() {
            if chars::has(ch, chars::PIPE) {
                return Reading::at(Kind::Bar, "", slash, nxt);
            }
        }
    }
    let trie = &names.trie;
    let states = &mut scratch.states;
    let new = &mut scratch.new;
    states.clear();
    states.push(0);
    let mut run = 0;
    let fast = chars::Fast::get();
    while before_end(s, c) {
        if states.len() == 1 {
            match one_step(s, fast, c, &mut pending) {
                One::Skip(nc) => {
                    c = nc;
                    run += 1;
                    if run >= MAX_RUN {
                        return Reading::at(Kind::Padding, "", slash, c);
                    }
                    continue;
                }
                One::Char(orig, r, nc) => {
                    run = 0;
                    c = nc;
                    if let Some(k) = trie.child(states[0], r) {
                        if trie.is_reserved(k) {
                            return Reading::at(Kind::Reserved, trie.prefix(k), slash, c);
                        }
                        if trie.is_token(k) {
                            if let Some(gt) = closer_after(s, c, chars::GT) {
                                return Reading::at(Kind::Token, trie.prefix(k), slash, gt);
                            }
                        }
                        states[0] = k;
                        continue;
                    }
                    // The name died. A namespace colon: read on from the root.
                    if r == ':' {
                        states[0] = 0;
                        continue;
                    }
                    if !keeps_reading(orig) {
                        return Reading::NONE;
                    }
                    match after_namespace(s, c) {
                        Some(a) => {
                            states[0] = 0;
                            c = a;
                            continue;
                        }
                        None => return Reading::NONE,
                    }
                }
                One::General => {}
            }
        }
        let (piece, nc) = pending.take().unwrap_or_else(|| step(s, c));
        c = nc;
        let parts = parts_of(&piece);
        if matches!(parts, Parts::Empty) {
            run += 1;
            if run >= MAX_RUN {
                return Reading::at(Kind::Padding, "", slash, c);
            }
            continue;
        }
        run = 0;
        new.clear();
        for &st in states.iter() {
            let hit = parts.find_map(|p| match walk(trie, st, p) {
                Walk::Reserved(k) => Some(Reading::at(Kind::Reserved, trie.prefix(k), slash, c)),
                Walk::Viable(k) => {
                    if trie.is_token(k) {
                        if let Some(gt) = closer_after(s, c, chars::GT) {
                            return Some(Reading::at(Kind::Token, trie.prefix(k), slash, gt));
                        }
                    }
                    push_unique(new, k);
                    None
                }
                Walk::Dead => None,
            });
            if let Some(r) = hit {
                return r;
            }
        }
        if !new.is_empty() {
            std::mem::swap(states, new);
            continue;
        }
        // The name died: a namespace prefix is read past, once per colon.
        states.clear();
        states.push(0);
        if parts.any_colon_end() {
            continue;
        }
        match piece.first() {
            Some(ch) if keeps_reading(ch) => {}
            _ => return Reading::NONE,
        }
        match after_namespace(s, c) {
            Some(a) => c = a,
            None => return Reading::NONE,
        }
    }
    if c.i < n {
        Reading::at(Kind::Padding, "", slash, c)
    } else {
        Reading::NONE
    }
}

/// `modeleye.read_bracket(text, pos, names)`.
pub fn read_bracket<'n>(
    s: &str,
    pos: usize,
    names: &'n Names,
    scratch: &mut Scratch,
) -> Reading<'n> {
    match fast_read(s, pos, names, true) {
        Ok(r) => r,
        Err(done) => read_bracket_slow(s, pos, names, scratch, done),
    }
}

fn read_bracket_slow<'n>(
    s: &str,
    pos: usize,
    names: &'n Names,
    scratch: &mut Scratch,
    done: Option<Lead>,
) -> Reading<'n> {
    let n = s.len();
    let (mut c, run, slash, mut pending) = match done {
        Some(l) => (l.at, l.run, l.slash, None),
        None => lead(s, pos, false),
    };
    if run >= MAX_RUN || (!before_end(s, c) && c.i < n) {
        let blank = s.as_bytes()[pos..c.i]
            .iter()
            .all(|&b| b < 0x80 && chars::is_space(b as char));
        return if blank {
            Reading::NONE
        } else {
            Reading::at(Kind::Padding, "", slash, c)
        };
    }
    let trie = &names.brackets;
    let states = &mut scratch.states;
    let new = &mut scratch.new;
    states.clear();
    states.push(0);
    let mut run = 0;
    let fast = chars::Fast::get();
    while before_end(s, c) {
        if states.len() == 1 {
            match one_step(s, fast, c, &mut pending) {
                One::Skip(nc) => {
                    c = nc;
                    run += 1;
                    if run >= MAX_RUN {
                        return Reading::at(Kind::Padding, "", slash, c);
                    }
                    continue;
                }
                One::Char(_, r, nc) => {
                    run = 0;
                    c = nc;
                    let Some(k) = trie.child(states[0], r) else {
                        return Reading::NONE;
                    };
                    if trie.is_token(k) {
                        if let Some(close) = closer_after(s, c, chars::RBRACKET) {
                            return Reading::at(Kind::Token, trie.prefix(k), slash, close);
                        }
                    }
                    states[0] = k;
                    continue;
                }
                One::General => {}
            }
        }
        let (piece, nc) = pending.take().unwrap_or_else(|| step(s, c));
        c = nc;
        let parts = parts_of(&piece);
        if matches!(parts, Parts::Empty) {
            run += 1;
            if run >= MAX_RUN {
                return Reading::at(Kind::Padding, "", slash, c);
            }
            continue;
        }
        run = 0;
        new.clear();
        for &st in states.iter() {
            let hit = parts.find_map(|p| match walk(trie, st, p) {
                Walk::Viable(k) => {
                    if trie.is_token(k) {
                        if let Some(close) = closer_after(s, c, chars::RBRACKET) {
                            return Some(Reading::at(Kind::Token, trie.prefix(k), slash, close));
                        }
                    }
                    push_unique(new, k);
                    None
                }
                _ => None,
            });
            if let Some(r) = hit {
                return r;
            }
        }
        if new.is_empty() {
            return Reading::NONE;
        }
        std::mem::swap(states, new);
    }
    if c.i < n {
        Reading::at(Kind::Padding, "", slash, c)
    } else {
        Reading::NONE
    }
}
