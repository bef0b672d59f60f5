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
fn lead(s: &str, pos: usize, bang: bool) -> (Cur, usize, bool) {
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
            break;
        }
        slash = slash || piece.as_slice().iter().any(|&ch| chars::has(ch, SLASH));
        c = nxt;
        run += 1;
        if run >= MAX_RUN {
            break;
        }
    }
    (c, run, slash)
}

/// `closer_after(text, i, end, closers)` with `end` the reader's bound; `closer` a class bit.
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

/// `_after_namespace`: after a name prefix that ends in a colon-like character, else `None`.
fn after_namespace(s: &str, start: Cur) -> Option<Cur> {
    let mut k = start;
    while before_end(s, k) && k.rel - start.rel < MAX_RUN {
        let ch = char_at(s, k.i);
        if chars::flags(ch) & (chars::ALNUM | chars::SEPARATOR) == 0 {
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

/// `modeleye.read_after(text, pos, names)`, `pos` a byte offset just after an opener.
pub fn read_after<'n>(s: &str, pos: usize, names: &'n Names, scratch: &mut Scratch) -> Reading<'n> {
    let n = s.len();
    let (mut c, run, slash) = lead(s, pos, true);
    if run >= MAX_RUN {
        return Reading::at(Kind::Padding, "", slash, c);
    }
    if c.i >= n {
        return Reading::NONE;
    }
    if !before_end(s, c) {
        return Reading::at(Kind::Padding, "", slash, c);
    }
    let (first, nxt) = step(s, c);
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
    while before_end(s, c) {
        let (piece, nc) = step(s, c);
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
            Some(ch) if chars::is_alnum(ch) => {}
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
    let n = s.len();
    let (mut c, run, slash) = lead(s, pos, false);
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
    while before_end(s, c) {
        let (piece, nc) = step(s, c);
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
