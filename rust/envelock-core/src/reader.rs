//! The model's-eye reader: `reader.read_after`, `read_bracket`, `_bracket_bar`, `_lead`, `_step`,
//! `closer_after`, `_after_namespace` and `exact_after`, step for step, on UTF-8 with byte offsets
//! (and the number of code points read, for the bounds, which are in code points).
//!
//! The fast paths (`fast_read`, the one-state step of the loops) decide only what the general
//! path would decide: they hand over to it whenever a character may be read past *and* as a
//! letter, a digit may extend a placeholder family, or a reading has more than one character.

use crate::chars::{self, CharReadings, BANG, CAN_SKIP, PASS, PIPE, SKIP, SLASH, STAND_IN};
use crate::decode::{char_at, decode_at, Piece};
use crate::names::{self, is_digit_reading, Names, Trie};
use crate::tables::{self, MAX_LOOKAHEAD, MAX_RUN};

/// The kinds of `reader.Reading`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
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

/// `reader.Reading`: `end` is a byte offset, `end_rel` the code points from the start.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Reading<'n> {
    pub kind: Kind,
    pub name: &'n str,
    pub slash: bool,
    pub end: usize,
    pub end_rel: usize,
}

impl Reading<'_> {
    pub(crate) const NONE: Reading<'static> = Reading {
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

    fn padding(slash: bool, c: Cur) -> Reading<'static> {
        Reading::at(Kind::Padding, "", slash, c)
    }
}

/// `_piece_readings(piece) if piece else ("",)`.
enum Parts {
    /// Every reading is "" (an empty piece, or a skipped character): `not any(parts)`.
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
            CharReadings::Table(rs) if rs.iter().all(|r| r.is_empty()) => Parts::Empty,
            r => Parts::One(r),
        },
        many => combos_of(many, false),
    }
}

/// Every combination of the readings of the first four characters of `many`, sorted, the first
/// 16; with `pass`, a [`PASS`] character also reads as nothing (`_angle_parts`).
fn combos_of(many: &[char], pass: bool) -> Parts {
    let mut combos: Vec<String> = vec![String::new()];
    for c in many.iter().take(4) {
        let mut rs = chars::readings(*c).to_vec();
        if pass && chars::has(*c, PASS) && !rs.iter().any(|r| r.is_empty()) {
            rs.push(String::new());
        }
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

/// `_angle_parts(piece)`: in an angle reading a [`PASS`] character also reads as nothing (`""`
/// after its own readings).
#[inline]
fn angle_parts_of(piece: &Piece) -> Parts {
    match piece.as_slice() {
        [c] if chars::has(*c, PASS) => {
            let mut v = chars::readings(*c).to_vec();
            if !v.iter().any(|r| r.is_empty()) {
                v.push(String::new());
            }
            Parts::Many(v)
        }
        // A reference for several code points (`&nGt;` is U+226B U+20D2) reads as they read.
        many if many.len() > 1 && many.iter().take(4).any(|c| chars::has(*c, PASS)) => {
            combos_of(many, true)
        }
        _ => parts_of(piece),
    }
}

impl Parts {
    /// Calls `f` with every reading, in order, until it returns `Some`.
    fn find_map<T>(&self, mut f: impl FnMut(&str) -> Option<T>) -> Option<T> {
        match self {
            Parts::Empty | Parts::One(CharReadings::Skip) => f(""),
            Parts::One(CharReadings::Table(rs)) => rs.iter().find_map(|r| f(r)),
            Parts::One(CharReadings::Itself(c)) => {
                let mut buf = [0u8; 4];
                f(c.encode_utf8(&mut buf))
            }
            Parts::Many(v) => v.iter().find_map(|r| f(r)),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Parts::Empty)
    }

    /// `"" in parts`: some reading of the piece reads it past.
    fn may_skip(&self) -> bool {
        self.find_map(|p| p.is_empty().then_some(())).is_some()
    }

    /// `reader._run_after`: the run of characters read past in a row after this piece. It starts
    /// again only where a name advanced and no reading reads the piece past (the longest run of any
    /// reading, never less than a live reading's).
    fn run_after(&self, run: usize, advanced: bool) -> usize {
        if advanced && !self.may_skip() {
            0
        } else {
            run + 1
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
    pending: Vec<u32>,
}

#[inline]
fn before_end(s: &str, c: Cur) -> bool {
    c.i < s.len() && c.rel < MAX_LOOKAHEAD
}

#[inline]
fn step(s: &str, c: Cur) -> (Piece, Cur) {
    // Plain ASCII (not `&`) is itself, one byte: what `decode_at` gives it, without the call (the
    // bar shapes step over a character three or four times per opener: `<|` repeated).
    let byte = s.as_bytes()[c.i];
    if byte < 0x80 && byte != b'&' {
        let nc = Cur {
            i: c.i + 1,
            rel: c.rel + 1,
        };
        return (Piece::one(char::from(byte)), nc);
    }
    let (p, nxt, cps) = decode_at(s, c.i);
    (
        p,
        Cur {
            i: nxt,
            rel: c.rel + cps,
        },
    )
}

/// `closer_after(text, i, end, closers)` with `end` the reader's bound; `closer` a class bit.
#[inline]
pub fn closer_after(s: &str, start: Cur, closer: u16) -> Option<Cur> {
    closer_first(s, start, closer).unwrap_or_else(|| closer_steps(s, start, closer))
}

/// The first step of [`closer_steps`] when it decides on a plain ASCII character that is
/// neither skippable nor a slash (after a token's name, mostly a letter); `None`: not decided
/// here. Sound because that step reads such a character as itself (no reference, one piece)
/// and returns on it, inside the bound.
#[inline]
fn closer_first(s: &str, start: Cur, closer: u16) -> Option<Option<Cur>> {
    let x = *s.as_bytes().get(start.i)?;
    let f = chars::Fast::get().ascii_flags(x);
    if x >= 0x80 || x == b'&' || start.rel >= MAX_LOOKAHEAD || f & (CAN_SKIP | SLASH) != 0 {
        return None;
    }
    Some((f & closer != 0).then_some(Cur {
        i: start.i + 1,
        rel: start.rel + 1,
    }))
}

fn closer_steps(s: &str, start: Cur, closer: u16) -> Option<Cur> {
    let mut c = start;
    let mut run = 0;
    while before_end(s, c) && run < MAX_RUN {
        let (piece, nxt) = step(s, c);
        if piece
            .as_slice()
            .iter()
            .all(|&ch| chars::flags(ch) & (CAN_SKIP | SLASH) != 0)
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
/// opener character (U+1438 CANADIAN SYLLABICS PA is both), a separator, or a skipped character.
#[inline]
fn namespace_char(f: u16) -> bool {
    (f & chars::ALNUM != 0 && f & (chars::LT | chars::LBRACKET) == 0)
        || f & (chars::SEPARATOR | SKIP) != 0
}

/// `reader.is_letter_stand_in`: a letter or number beyond ASCII that is not an opener.
#[inline]
fn is_letter_stand_in(ch: char) -> bool {
    !ch.is_ascii() && keeps_reading(ch)
}

/// `reader.word_ends`: the end of the text, or no letter or digit at `at`.
#[inline]
fn word_ends(s: &str, at: Cur) -> bool {
    s[at.i..]
        .chars()
        .next()
        .map_or(true, |ch| !chars::has(ch, chars::ALNUM))
}

/// `reader.mixes_ascii`: does the name from `from` up to `at` hold a printable ASCII character?
#[inline]
fn mixes_ascii(s: &str, from: usize, at: Cur) -> bool {
    s.get(from..at.i)
        .is_some_and(|name| name.bytes().any(|b| b.is_ascii_graphic()))
}

/// `not _stops_reading(piece)` for the piece's first character: a letter or digit that is not
/// an opener character.
#[inline]
fn letter_symbol(ch: char) -> bool {
    let f = chars::flags(ch);
    f & chars::EITHER != 0 && f & (chars::LT | chars::LBRACKET) == 0
}

fn keeps_reading(ch: char) -> bool {
    let f = chars::flags(ch);
    f & chars::ALNUM != 0 && f & (chars::LT | chars::LBRACKET) == 0
}

/// `_after_namespace`: after a name prefix that ends in a colon-like character, else `None`.
#[inline]
fn after_namespace(s: &str, start: Cur) -> Option<Cur> {
    let b = s.as_bytes();
    let n = b.len();
    let fast = chars::Fast::get();
    // At most MAX_RUN characters, and none past the lookahead bound.
    let budget = MAX_RUN.min(MAX_LOOKAHEAD.saturating_sub(start.rel));
    let mut i = start.i;
    let mut cps = 0;
    while cps < budget && i < n {
        let x = b[i];
        if x < 0x80 {
            if !namespace_char(fast.ascii_flags(x)) {
                break;
            }
            i += 1;
        } else {
            let ch = char_at(s, i);
            if !namespace_char(chars::flags(ch)) {
                break;
            }
            i += ch.len_utf8();
        }
        cps += 1;
    }
    let k = Cur {
        i,
        rel: start.rel + cps,
    };
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
    /// `t` is live: a prefix of a name (its node).
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
    if trie.is_live(node) {
        Walk::Viable(node)
    } else {
        Walk::Dead
    }
}

#[inline]
fn push_unique(v: &mut Vec<u32>, x: u32) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// Which reader: the angle reader's `accept` (reserved, namespace, `<NAME>` then `>`) or the
/// bracket reader's (`[NAME]` then `]`).
#[derive(Clone, Copy)]
struct Eye<'s, 'n> {
    s: &'s str,
    trie: &'n Trie,
    closer: u16,
    /// The reading's start when its opener is a raw guillemet (`quote` in `read_after`), else `None`.
    quote: Option<usize>,
    /// Where the name starts (after the lead): a name that letters stood in for must hold a printable
    /// ASCII character from there (`name_from` in `read_after`).
    name_from: usize,
}

/// The characters that are never part of a quoted plain word (`reader._STRUCTURAL`).
const STRUCTURAL: u16 =
    chars::LT | chars::GT | chars::SLASH | chars::PIPE | chars::LBRACKET | chars::RBRACKET;

/// `reader.QUOTE_OPENERS` / `QUOTE_CLOSERS`.
#[inline]
fn is_quote(set: &[u32], ch: char) -> bool {
    set.binary_search(&(ch as u32)).is_ok()
}

/// `Some(pos)` when the opener that ends at `pos` (a byte offset) is a raw guillemet (`«`, `‹`).
#[inline]
fn quote_opener(s: &str, pos: usize) -> Option<usize> {
    s[..pos]
        .chars()
        .next_back()
        .filter(|&ch| is_quote(tables::QUOTE_OPENERS, ch))
        .map(|_| pos)
}

/// `reader.quoted_word(text, pos, close)`: a raw guillemet opener ending at `pos`, a raw guillemet
/// closer ending at `close`, and between them only letters and digits that are not structural,
/// whitespace and backslashes.
pub fn quoted_word(s: &str, pos: usize, close: usize) -> bool {
    let (Some(open), Some(last)) = (s[..pos].chars().next_back(), s[..close].chars().next_back())
    else {
        return false;
    };
    let inner = close - last.len_utf8();
    if inner <= pos
        || !is_quote(tables::QUOTE_OPENERS, open)
        || !is_quote(tables::QUOTE_CLOSERS, last)
    {
        return false;
    }
    s[pos..inner].chars().all(|ch| {
        let f = chars::flags(ch);
        (f & chars::ALNUM != 0 && f & STRUCTURAL == 0) || ch == '\\' || f & chars::SPACE != 0
    })
}

/// `reader.quoted_opener`: the opener ending at `pos` between two of the same ASCII quote (`'<'`,
/// `"<"`) is a quoted character, no tag (`c == '<' || c == '>'` in C). The opener is one character,
/// or `&lt;` behind any number of `amp;` layers (what the XML text escape makes of `<`).
fn quoted_opener(s: &str, pos: usize) -> bool {
    let b = s.as_bytes();
    let Some(&q) = b.get(pos) else {
        return false;
    };
    if !chars::is_ascii_quote(q) {
        return false;
    }
    // `lt;` and `amp;`: what follows the `&` of the references the XML text escape writes.
    let tail = |c| {
        let r = crate::defang::xml_reference(c)
            .expect("the XML text escape writes < and & as references");
        &r.as_bytes()[1..]
    };
    let (lt, amp) = (tail(b'<'), tail(b'&'));
    let start = if b[..pos].ends_with(lt) {
        let mut start = pos - lt.len();
        while b[..start].ends_with(amp) {
            start -= amp.len();
        }
        if !b[..start].ends_with(b"&") {
            return false;
        }
        start - 1
    } else {
        match s[..pos].chars().next_back() {
            Some(opener) if chars::has(opener, chars::LT) => pos - opener.len_utf8(),
            _ => return false,
        }
    };
    start >= 1 && b[start - 1] == q
}

/// `reader.empty_bar`: past fewer than `MAX_RUN` skippable characters, slashes and quotes after a
/// bar, a closer (`<|>`, `<'|'>`: the bar shape with an empty name, no token).
fn empty_bar(s: &str, start: Cur) -> bool {
    let mut c = start;
    let mut run = 0;
    while before_end(s, c) && run < MAX_RUN {
        let (piece, nxt) = step(s, c);
        // A quote reads as nothing here too (`_QUOTE_PASS`: `'<'|'>'` in a grammar is the empty bar);
        // a symbol with a letter reading (`EITHER`: `ⓣ`) may be a letter of the name (`<|ⓣⓤⓡⓝ>`).
        if piece
            .as_slice()
            .iter()
            .all(|&ch| chars::flags(ch) & (SKIP | SLASH) != 0 || chars::is_quote(ch))
        {
            run += 1;
            c = nxt;
            continue;
        }
        return piece.first().is_some_and(|ch| chars::has(ch, chars::GT));
    }
    false
}

/// `reader._LINE_BREAKS` (LF and CR): a bar token's name never holds one.
fn is_line_break(ch: char) -> bool {
    matches!(ch, '\n' | '\r')
}

/// `reader.bar_closes`: after the bar that follows an opener, the bar shape's name reaches a closer
/// (`>`, a look-alike or a reference to one) before a line break, the next opener or the end of the
/// text; a bound reached first (`MAX_RUN` skipped characters, the lookahead) counts as closing.
fn bar_closes(s: &str, start: Cur) -> bool {
    let mut c = start;
    let mut run = 0;
    while before_end(s, c) {
        let (piece, nxt) = step(s, c);
        match piece.first() {
            None => run += 1,
            Some(first) => {
                let skipped = piece
                    .as_slice()
                    .iter()
                    .all(|&ch| chars::flags(ch) & (CAN_SKIP | SLASH) != 0);
                if skipped || is_line_break(first) {
                    if is_line_break(first) {
                        return false;
                    }
                    run += 1;
                } else if chars::has(first, chars::GT) {
                    return true;
                } else if chars::flags(first) & (chars::LT | chars::LBRACKET) != 0 {
                    return false;
                } else {
                    run = 0;
                }
            }
        }
        if run >= MAX_RUN {
            return true;
        }
        c = nxt;
    }
    c.i < s.len()
}

impl<'n> Eye<'_, 'n> {
    /// `accept(t, i)` for the live node `k` spelling `t` (a reserved prefix met on the way is
    /// found by [`walk`]; every state is free of one, so only `k` itself can be reserved).
    #[inline]
    fn accept(&self, k: u32, at: Cur, slash: bool) -> Option<Reading<'n>> {
        let trie = self.trie;
        if trie.is_lettered(k) {
            // Letters stood in: the whole name, ending there (no letter or digit follows); never a token.
            return trie
                .whole_name(k)
                .filter(|_| word_ends(self.s, at) && mixes_ascii(self.s, self.name_from, at))
                .map(|name| Reading::at(Kind::Reserved, name, slash, at));
        }
        if trie.is_reserved(k) {
            return Some(Reading::at(Kind::Reserved, trie.prefix(k), slash, at));
        }
        if trie.is_namespace(k) {
            return Some(Reading::at(Kind::Token, trie.prefix(k), slash, at));
        }
        if trie.is_token(k) {
            if let Some(close) = closer_after(self.s, at, self.closer) {
                let quoted = trie.is_quotable(k)
                    && self
                        .quote
                        .is_some_and(|pos| quoted_word(self.s, pos, close.i));
                if !quoted {
                    return Some(Reading::at(Kind::Token, trie.prefix(k), slash, close));
                }
            }
        }
        if let Some(tk) = trie.bar_token(k) {
            if let Some(close) = bars_then_closer(self.s, at) {
                return Some(Reading::at(Kind::Token, trie.prefix(tk), slash, close));
            }
        }
        None
    }

    /// `_step(states, parts, i, accept, live)`: the reading if one is accepted, else whether a
    /// new state came from a non-empty reading (`advanced`); the new states are in `new`.
    /// `attach`: the piece only attaches to the letter before it (`chars::attaches`).
    fn step_states(
        &self,
        states: &[u32],
        parts: &Parts,
        at: Cur,
        slash: bool,
        attach: bool,
        new: &mut Vec<u32>,
    ) -> Result<bool, Reading<'n>> {
        let trie = self.trie;
        new.clear();
        let mut advanced = false;
        for &st in states {
            // A lettered state takes an empty reading only at a separator position of its name,
            // or for what attaches to its letter.
            let empty_ok = attach || !trie.is_lettered(st) || trie.holds(st);
            let hit = parts.find_map(|p| {
                if p.is_empty() && !empty_ok {
                    return None;
                }
                match walk(trie, st, p) {
                    Walk::Reserved(k) => {
                        return Some(Reading::at(Kind::Reserved, trie.prefix(k), slash, at))
                    }
                    Walk::Viable(k) => {
                        if let Some(r) = self.accept(k, at, slash) {
                            return Some(r);
                        }
                        push_unique(new, k);
                        advanced |= !p.is_empty();
                    }
                    Walk::Dead => {}
                }
                if is_digit_reading(p) {
                    if let Some(d) = trie.digit_node(st) {
                        if let Some(r) = self.accept(d, at, slash) {
                            return Some(r);
                        }
                        push_unique(new, d);
                        advanced = true;
                    }
                }
                None
            });
            if let Some(r) = hit {
                return Err(r);
            }
        }
        Ok(advanced)
    }

    /// `_letter_in(states, piece, i, accept, letter)`: when the piece is one letter stand-in
    /// character, every state not stood (in order) goes to each of its letter stand-in states
    /// (`Trie::letter`); the first accepted is the reading, else the new states are pushed onto
    /// `out`. `Ok(true)` when a state was made.
    fn letter_in(
        &self,
        states: &[u32],
        piece: &Piece,
        at: Cur,
        slash: bool,
        out: &mut Vec<u32>,
    ) -> Result<bool, Reading<'n>> {
        match piece.as_slice() {
            [ch] if is_letter_stand_in(*ch) => {}
            _ => return Ok(false),
        }
        let trie = self.trie;
        let mut made = false;
        for &st in states {
            if trie.is_stood(st) {
                continue;
            }
            for &w in trie.letter(st) {
                if let Some(r) = self.accept(w, at, slash) {
                    return Err(r);
                }
                push_unique(out, w);
                made = true;
            }
        }
        Ok(made)
    }

    /// `_stand_in(states, piece, i, accept, stand)`: when the piece is one stand-in character, every
    /// state without a stand-in yet (in order) goes to each of its stand-in states (`Trie::stand`);
    /// the first accepted is the reading, else the new states are pushed onto `out`.
    fn stand_in(
        &self,
        states: &[u32],
        piece: &Piece,
        at: Cur,
        slash: bool,
        out: &mut Vec<u32>,
    ) -> Option<Reading<'n>> {
        // One stand-in, or (a reference for two code points: `&caps;`) one followed by what
        // attaches to it, as the two written out read.
        match piece.as_slice() {
            [ch] if chars::has(*ch, STAND_IN) => {}
            [ch, rest @ ..] if chars::has(*ch, STAND_IN) && chars::attach_only(rest) => {}
            _ => return None,
        }
        let trie = self.trie;
        for &st in states {
            if trie.is_stood(st) {
                continue;
            }
            for &w in trie.stand(st) {
                if let Some(r) = self.accept(w, at, slash) {
                    return Some(r);
                }
                push_unique(out, w);
            }
        }
        None
    }
}

/// How a lead ended: a reading decided in it, or the first piece it does not read past (with
/// the position of that piece and the one after it); the pending states are in `scratch.pending`.
enum LeadEnd<'n> {
    Done(Reading<'n>),
    Piece(Piece, Cur, Cur),
}

/// `_lead`: past skippable characters, slashes (and `!`/`?`); a character that may also be read
/// as a letter starts name states that are kept pending.
/// `_lead_piece` for one character: skippable or a slash; after an angle opener (`bang`) also `!`
/// or `?`, or a PASS character that is not a bar.
#[inline]
fn is_lead_char(ch: char, bang: bool) -> bool {
    let f = chars::flags(ch);
    f & (CAN_SKIP | SLASH | if bang { BANG } else { 0 }) != 0
        || (bang && f & PASS != 0 && f & PIPE == 0)
}

fn lead<'n>(
    eye: &Eye<'_, 'n>,
    pos: usize,
    bang: bool,
    slash: &mut bool,
    scratch: &mut Scratch,
) -> LeadEnd<'n> {
    let s = eye.s;
    let mut c = Cur { i: pos, rel: 0 };
    let mut run = 0;
    scratch.pending.clear();
    loop {
        if !before_end(s, c) {
            return LeadEnd::Done(if c.i >= s.len() {
                Reading::NONE
            } else {
                Reading::padding(*slash, c)
            });
        }
        let (piece, nxt) = step(s, c);
        if !piece.as_slice().iter().all(|&ch| is_lead_char(ch, bang)) {
            return LeadEnd::Piece(piece, c, nxt);
        }
        *slash = *slash || piece.as_slice().iter().any(|&ch| chars::has(ch, SLASH));
        let parts = if bang {
            angle_parts_of(&piece)
        } else {
            parts_of(&piece)
        };
        let mut advanced = false;
        scratch.states.clear();
        scratch.states.push(0);
        scratch.states.extend_from_slice(&scratch.pending);
        if !scratch.pending.is_empty() || !parts.is_empty() {
            match eye.step_states(
                &scratch.states,
                &parts,
                nxt,
                *slash,
                chars::attaches(&piece),
                &mut scratch.new,
            ) {
                Err(hit) => return LeadEnd::Done(hit),
                Ok(adv) => advanced = adv,
            }
            scratch.new.retain(|&k| k != 0);
            std::mem::swap(&mut scratch.pending, &mut scratch.new);
        }
        scratch.new.clear();
        if let Some(hit) = eye.stand_in(&scratch.states, &piece, nxt, *slash, &mut scratch.new) {
            return LeadEnd::Done(hit);
        }
        if bang {
            // A letter read past in the lead may also stand in (the angle reader's names only).
            if let Err(hit) = eye.letter_in(&scratch.states, &piece, nxt, *slash, &mut scratch.new)
            {
                return LeadEnd::Done(hit);
            }
        }
        for &w in &scratch.new {
            push_unique(&mut scratch.pending, w);
        }
        c = nxt;
        run = parts.run_after(run, advanced);
        if run >= MAX_RUN {
            return LeadEnd::Done(Reading::padding(*slash, c));
        }
    }
}

/// A lead already read by the fast path: where it stopped, its run and whether it held a slash
/// (it left no pending state).
#[derive(Clone, Copy)]
struct Lead {
    at: Cur,
    slash: bool,
}

/// The reading decided from plain ASCII alone (no `&`, nothing beyond ASCII), else the lead
/// when it is complete (for the general reader to go on from): the lead over ASCII characters
/// that start no name state, then a first character that no name starts with.
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
    let inert = if bracket {
        &names.bracket_lead_inert
    } else {
        &names.angle_lead_inert
    };
    let mut i = pos;
    let mut run = 0;
    let mut slash = false;
    let mut blank = true;
    while i < n && run < MAX_RUN {
        let c = b[i];
        if c == b'&' {
            return Err(None);
        }
        if !bracket && c < 0x80 && fast.ascii_flags(c) & PASS != 0 {
            return Err(None); // an ASCII quote, read past after an angle opener: the general reader
        }
        if c >= 0x80 {
            // A character that is no lead character ends the lead here (`lead`'s test, on the one
            // character a non-`&` position decodes to): the reader goes on from it with the lead
            // read. (`« « «`: every guillemet is an opener followed by a space and another.)
            return Err((!is_lead_char(char_at(s, i), !bracket)).then_some(Lead {
                at: Cur { i, rel: run },
                slash,
            }));
        }
        let f = fast.ascii_flags(c);
        if f & lead_mask == 0 {
            break;
        }
        if !inert[usize::from(c)] {
            return Err(None);
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
        return Ok(Reading::padding(slash, at));
    }
    if i >= n {
        return Ok(Reading::NONE);
    }
    let c = b[i];
    if c >= 0x80 || c == b'&' {
        return Err(None);
    }
    // The lead is complete: it stopped at a plain ASCII character.
    let lead = Some(Lead { at, slash });
    let class = if bracket {
        names.bracket_first[usize::from(c)]
    } else {
        names.angle_first[usize::from(c)]
    };
    match class {
        // After `[`, ASCII quotes and then a look-alike quote or a reference (`["“|endofturn|]`): the
        // general reader decides (its quote rule); `["a", "b"]` stays decided here.
        names::FIRST_NONE
            if bracket && chars::is_quote(c as char) && quote_run_goes_on(b, i + 1) =>
        {
            Err(lead)
        }
        names::FIRST_NONE => Ok(Reading::NONE),
        names::FIRST_NAMESPACE => {
            // `_after_namespace` from the character after the first: letters, digits,
            // separators and skipped characters (at most MAX_RUN), then a colon-like character.
            let start = i + 1;
            let mut k = start;
            while k < n && k - start < MAX_RUN {
                let x = b[k];
                if x >= 0x80 {
                    return Err(lead);
                }
                if fast.ascii_flags(x) & (chars::ALNUM | chars::SEPARATOR | SKIP) == 0 {
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

/// Do ASCII quotes, skipped characters and slashes from byte `k` (at most `MAX_RUN`) end in a byte
/// beyond ASCII or an `&` (a look-alike quote, or a reference that may be one)?
fn quote_run_goes_on(b: &[u8], mut k: usize) -> bool {
    let fast = chars::Fast::get();
    let stop = (k + MAX_RUN).min(b.len());
    while k < stop {
        let x = b[k];
        if x >= 0x80 || x == b'&' {
            return true;
        }
        if !chars::is_quote(x as char) && fast.ascii_flags(x) & (SKIP | SLASH) == 0 {
            return false;
        }
        k += 1;
    }
    k < b.len() && (b[k] >= 0x80 || b[k] == b'&')
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
        [ch] if chars::flags(*ch) & (STAND_IN | PASS) != 0 || is_letter_stand_in(*ch) => {
            // The stand-in rules and the second reading of a PASS character need the general step.
            *pending = Some((piece, nc));
            One::General
        }
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

/// A one-character reading `r` of the state `st` that the one-state step cannot take: a digit
/// reading where a placeholder family may go on (`_step` adds a second state).
#[inline]
fn needs_general(trie: &Trie, st: u32, r: char) -> bool {
    r.is_ascii() && names::is_digit_byte(r as u8) && trie.digit_node(st).is_some()
}

/// `reader.read_after(text, pos, names)`, `pos` a byte offset just after an opener.
pub fn read_after<'n>(s: &str, pos: usize, names: &'n Names, scratch: &mut Scratch) -> Reading<'n> {
    match fast_read(s, pos, names, false) {
        Ok(r) => r,
        Err(Some(lead)) => match fast_name(s, pos, lead, names, scratch) {
            Some(r) => r,
            None => read_after_slow(s, pos, names, scratch, Some(lead)),
        },
        Err(None) => read_after_slow(s, pos, names, scratch, None),
    }
}

/// The name phase of [`read_after_slow`] over plain ASCII, after a lead `fast_read` completed,
/// with one state: `None` hands over to it (it starts again from `pos`; nothing is kept) at a
/// bar first, at `&` or beyond ASCII, at a character read past by every reading but not skipped
/// (`Parts::Empty`), or where a step leaves more than one state. Sound because every step it
/// takes is that loop's own on the same state: `one_step`'s plain-ASCII branch, else its general
/// step on one state (a letter stand-in is never ASCII, so `letter_in` makes nothing); the lead
/// left no pending state, and a plain first piece is read again by that loop.
fn fast_name<'n>(
    s: &str,
    pos: usize,
    lead: Lead,
    names: &'n Names,
    scratch: &mut Scratch,
) -> Option<Reading<'n>> {
    let b = s.as_bytes();
    let fast = chars::Fast::get();
    let mut c = lead.at;
    if b.get(c.i)
        .map_or(true, |&x| x >= 0x80 || fast.ascii_flags(x) & PIPE != 0)
    {
        return None;
    }
    let trie = &names.trie;
    let eye = Eye {
        s,
        trie,
        closer: chars::GT,
        quote: quote_opener(s, pos),
        name_from: c.i,
    };
    let slash = lead.slash;
    let mut st = 0;
    let mut run = 0;
    while before_end(s, c) {
        let x = b[c.i];
        if x >= 0x80 || x == b'&' {
            return None;
        }
        c = Cur {
            i: c.i + 1,
            rel: c.rel + 1,
        };
        if fast.ascii_flags(x) & SKIP != 0 {
            if trie.is_lettered(st) && !trie.holds(st) {
                return Some(Reading::NONE);
            }
            run += 1;
            if run >= MAX_RUN {
                return Some(Reading::padding(slash, c));
            }
            continue;
        }
        let r = fast.ascii_single(x);
        let colon = if r != 0 && !needs_general(trie, st, r as char) {
            let k = if st == 0 {
                Some(names.angle_root[usize::from(r)]).filter(|&k| k != 0)
            } else {
                trie.child(st, r as char)
            };
            if let Some(k) = k {
                if let Some(hit) = eye.accept(k, c, slash) {
                    return Some(hit);
                }
                run = 0;
                st = k;
                continue;
            }
            r == b':'
        } else {
            // Several readings (`l` is also `i`), or a digit that may extend a placeholder.
            let parts = angle_parts_of(&Piece::one(x as char));
            if parts.is_empty() {
                return None;
            }
            let advanced = match eye.step_states(&[st], &parts, c, slash, false, &mut scratch.new) {
                Err(hit) => return Some(hit),
                Ok(adv) => adv,
            };
            match scratch.new[..] {
                [] => {}
                [k] => {
                    st = k;
                    run = parts.run_after(run, advanced);
                    if run >= MAX_RUN {
                        return Some(Reading::padding(slash, c));
                    }
                    continue;
                }
                _ => return None,
            }
            parts.any_colon_end()
        };
        // The name died. A namespace colon: read on from the root.
        st = 0;
        run = 0;
        if colon {
            continue;
        }
        if !keeps_reading(x as char) {
            return Some(Reading::NONE);
        }
        match after_namespace(s, c) {
            Some(a) => c = a,
            None => return Some(Reading::NONE),
        }
    }
    Some(if c.i < b.len() {
        Reading::padding(slash, c)
    } else {
        Reading::NONE
    })
}

/// The start of the name phase: the piece that ended the lead (decoded, or plain ASCII to be
/// read again by the one-state step), the position of that piece, the slash, the pending states
/// (in `scratch.pending`).
struct Start {
    at: Cur,
    slash: bool,
    first: Option<(Piece, Cur)>,
}

#[inline]
fn start_name<'n>(
    eye: &Eye<'_, 'n>,
    pos: usize,
    bang: bool,
    done: Option<Lead>,
    scratch: &mut Scratch,
) -> Result<Start, Reading<'n>> {
    match done {
        Some(l) => {
            scratch.pending.clear();
            Ok(Start {
                at: l.at,
                slash: l.slash,
                first: None,
            })
        }
        None => {
            let mut slash = false;
            match lead(eye, pos, bang, &mut slash, scratch) {
                LeadEnd::Done(r) => Err(r),
                LeadEnd::Piece(piece, at, nxt) => Ok(Start {
                    at,
                    slash,
                    first: Some((piece, nxt)),
                }),
            }
        }
    }
}

fn read_after_slow<'n>(
    s: &str,
    pos: usize,
    names: &'n Names,
    scratch: &mut Scratch,
    done: Option<Lead>,
) -> Reading<'n> {
    if quoted_opener(s, pos) {
        return Reading::NONE;
    }
    let n = s.len();
    let trie = &names.trie;
    let eye = Eye {
        s,
        trie,
        closer: chars::GT,
        quote: quote_opener(s, pos),
        name_from: s.len(),
    };
    let st = match start_name(&eye, pos, true, done, scratch) {
        Ok(st) => st,
        Err(r) => return r,
    };
    let eye = Eye {
        name_from: st.at.i,
        ..eye
    };
    let slash = st.slash;
    let mut c = st.at;
    let (first, nxt) = st.first.unwrap_or_else(|| step(s, c));
    if names.pipes {
        if let Some(ch) = first.first() {
            // An empty bar (`<|>`, `«|»`) is no token: the bar is read on like any other character.
            // Nor a bar whose name does not close on its line (`< |f|/10`).
            if chars::has(ch, chars::PIPE) && !empty_bar(s, nxt) && bar_closes(s, nxt) {
                return Reading::at(Kind::Bar, "", slash, nxt);
            }
        }
    }
    // Keep the decoded piece for the loop, unless it is plain ASCII (the loop's fast step).
    let plain = nxt.i == c.i + 1 && s.as_bytes()[c.i] != b'&';
    let mut pending = if plain { None } else { Some((first, nxt)) };
    let Scratch {
        states,
        new,
        pending: lead_states,
    } = scratch;
    states.clear();
    states.push(0);
    states.extend(lead_states.iter().copied());
    let mut run = 0;
    let fast = chars::Fast::get();
    while before_end(s, c) {
        if states.len() == 1 {
            match one_step(s, fast, c, &mut pending) {
                One::Skip(nc) => {
                    if trie.is_lettered(states[0])
                        && !trie.holds(states[0])
                        && !chars::attaches(&step(s, c).0)
                    {
                        return Reading::NONE;
                    }
                    c = nc;
                    run += 1;
                    if run >= MAX_RUN {
                        return Reading::padding(slash, c);
                    }
                    continue;
                }
                One::Char(orig, r, nc) if !needs_general(trie, states[0], r) => {
                    c = nc;
                    if let Some(k) = trie.child(states[0], r) {
                        if let Some(hit) = eye.accept(k, c, slash) {
                            return hit;
                        }
                        run = 0;
                        states[0] = k;
                        continue;
                    }
                    // The name died. A namespace colon: read on from the root.
                    if r == ':' {
                        states[0] = 0;
                        run = 0;
                        continue;
                    }
                    if !keeps_reading(orig) {
                        return Reading::NONE;
                    }
                    match after_namespace(s, c) {
                        Some(a) => {
                            states[0] = 0;
                            run = 0;
                            c = a;
                            continue;
                        }
                        None => return Reading::NONE,
                    }
                }
                One::Char(orig, _, nc) => pending = Some((Piece::one(orig), nc)),
                One::General => {}
            }
        }
        let (piece, nc) = pending.take().unwrap_or_else(|| step(s, c));
        c = nc;
        let parts = angle_parts_of(&piece);
        if parts.is_empty() {
            // A letter stand-in state reads past nothing but at a separator position of its name,
            // or what attaches to its letter.
            if !chars::attaches(&piece) {
                states.retain(|&k| !trie.is_lettered(k) || trie.holds(k));
            }
            if states.is_empty() {
                return Reading::NONE;
            }
            new.clear();
            if let Some(hit) = eye.stand_in(states, &piece, c, slash, new) {
                return hit;
            }
            for &w in new.iter() {
                push_unique(states, w);
            }
            run += 1;
            if run >= MAX_RUN {
                return Reading::padding(slash, c);
            }
            continue;
        }
        let mut advanced =
            match eye.step_states(states, &parts, c, slash, chars::attaches(&piece), new) {
                Err(hit) => return hit,
                Ok(adv) => adv,
            };
        match eye.letter_in(states, &piece, c, slash, new) {
            Err(hit) => return hit,
            Ok(made) => advanced |= made,
        }
        // A stand-in with readings of its own (a PASS look-alike: `</retrieved_c\u{2019}ntent>`)
        // may stand for a letter too, as one that reads as nothing (`_stand_in` after `_letter_in`).
        let before = new.len();
        if let Some(hit) = eye.stand_in(states, &piece, c, slash, new) {
            return hit;
        }
        advanced |= new.len() > before;
        if !new.is_empty() {
            std::mem::swap(states, new);
            run = parts.run_after(run, advanced);
            if run >= MAX_RUN {
                return Reading::padding(slash, c);
            }
            continue;
        }
        // The name died: a namespace prefix is read past, once per colon.
        states.clear();
        states.push(0);
        run = 0;
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
        Reading::padding(slash, c)
    } else {
        Reading::NONE
    }
}

/// The reading after an opener when plain ASCII decides it (`fast_read`: a few byte reads), else
/// `None` ([`read_after`] / [`read_bracket`] go on to the general reader). Reusing an earlier
/// opener's reading costs more than this.
#[inline]
pub fn quick_reading(
    s: &str,
    pos: usize,
    names: &Names,
    bracket: bool,
) -> Option<Reading<'static>> {
    fast_read(s, pos, names, bracket).ok()
}

/// `reader.read_bracket(text, pos, names)`.
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

/// `_bracket_bar`: after `[` and a bar, `NAME|]` (letters and digits, skippable characters
/// allowed), a bar, then `]`. Bars before the name are read past (`[||endofturn|]`), a bar that is a
/// letter and does not close is a letter of the name (`[|tooⅼ|]`), and more bars and quotes may
/// stand before the `]` ([`bracket_bar_close`]).
fn bracket_bar(s: &str, start: Cur, slash: bool) -> Reading<'static> {
    let mut c = start;
    let mut named = false;
    // Quotes read past in the name: ASCII ones count only beside a look-alike (`[|“endofturn”"|]`,
    // `[|"“endofturn”|]`); with ASCII quotes alone it is code (`[| "a" |]`, an OCaml array).
    let mut curly = false;
    let mut plain_quote = false;
    while before_end(s, c) {
        let (piece, nxt) = step(s, c);
        match piece.first() {
            Some(ch) if chars::has(ch, chars::PIPE) => {
                if named && (curly || !plain_quote) {
                    if let Some(close) = bracket_bar_close(s, nxt) {
                        return Reading::at(Kind::Bar, "", slash, close);
                    }
                }
                if keeps_reading(ch) {
                    named = true; // a bar-shaped letter that does not close
                } else if named {
                    return Reading::NONE;
                }
            }
            // A symbol with a letter reading names it too (`[|ⓔⓝⓓⓞⓕⓣⓤⓡⓝ|]`).
            Some(ch) if keeps_reading(ch) || letter_symbol(ch) => named = true,
            _ => {
                // A quote (`[|“endofturn|]`) or a slash (`[|/endofturn|]`) reads past too.
                if !piece
                    .as_slice()
                    .iter()
                    .all(|&ch| chars::can_skip(ch) || chars::is_quote(ch) || chars::has(ch, SLASH))
                {
                    return Reading::NONE;
                }
                curly |= piece.as_slice().iter().any(|&ch| quote_lookalike(ch));
                plain_quote |= piece
                    .as_slice()
                    .iter()
                    .any(|&ch| ch.is_ascii() && chars::is_quote(ch));
            }
        }
        c = nxt;
    }
    Reading::NONE
}

/// `reader._lead_piece(piece, False)`: every character one the bracket lead reads past (a piece
/// decoding to nothing too).
fn lead_skip(piece: &Piece) -> bool {
    piece.as_slice().iter().all(|&ch| is_lead_char(ch, false))
}

fn quote_lookalike(ch: char) -> bool {
    !ch.is_ascii() && chars::is_quote(ch)
}

/// `reader._bars_then_closer`: after a `<NAME|>` token's name, a bar (a look-alike or a reference),
/// then `>` past more bars, quotes, slashes and skippable characters; skippable characters and
/// slashes may stand before the bar too. The position itself when the run is too long to follow
/// after a bar (fail closed).
fn bars_then_closer(s: &str, start: Cur) -> Option<Cur> {
    let mut c = start;
    let mut run = 0;
    let mut bar = false;
    while before_end(s, c) && run < MAX_RUN {
        let (piece, nxt) = step(s, c);
        if piece.first().is_some_and(|ch| chars::has(ch, chars::PIPE)) {
            bar = true;
        } else if !piece
            .as_slice()
            .iter()
            .all(|&ch| chars::flags(ch) & (CAN_SKIP | SLASH) != 0 || (bar && chars::is_quote(ch)))
        {
            return (bar && piece.first().is_some_and(|ch| chars::has(ch, chars::GT)))
                .then_some(nxt);
        }
        run += 1;
        c = nxt;
    }
    (bar && c.i < s.len() && run >= MAX_RUN).then_some(c)
}

/// `_bracket_bar_close`: [`closer_after`] for the `]` after a bracket bar's closing bar, past more
/// bars (no letter drawn as one) and quotes too.
fn bracket_bar_close(s: &str, start: Cur) -> Option<Cur> {
    let mut c = start;
    let mut run = 0;
    while before_end(s, c) && run < MAX_RUN {
        let (piece, nxt) = step(s, c);
        let passes = piece.as_slice().iter().all(|&ch| {
            let f = chars::flags(ch);
            f & (CAN_SKIP | SLASH | chars::PIPE) != 0 || chars::is_quote(ch)
        });
        if passes {
            run += 1;
            c = nxt;
            continue;
        }
        return match piece.first() {
            Some(ch) if chars::has(ch, chars::RBRACKET) => Some(nxt),
            _ => None,
        };
    }
    (c.i < s.len() && run >= MAX_RUN).then_some(c)
}

fn read_bracket_slow<'n>(
    s: &str,
    pos: usize,
    names: &'n Names,
    scratch: &mut Scratch,
    done: Option<Lead>,
) -> Reading<'n> {
    let n = s.len();
    let trie = &names.brackets;
    let eye = Eye {
        s,
        trie,
        closer: chars::RBRACKET,
        quote: None,
        name_from: s.len(),
    };
    let st = match start_name(&eye, pos, false, done, scratch) {
        Ok(st) => st,
        Err(r) if r.kind == Kind::Padding => {
            // Layout, not padding: a run of plain ASCII whitespace (an indented JSON array).
            let blank = s.as_bytes()[pos..r.end]
                .iter()
                .all(|&b| b < 0x80 && chars::is_space(b as char));
            return if blank { Reading::NONE } else { r };
        }
        Err(r) => return r,
    };
    let slash = st.slash;
    let mut c = st.at;
    let (first, nxt) = st.first.unwrap_or_else(|| step(s, c));
    if let Some(ch) = first.first() {
        if chars::has(ch, chars::PIPE) {
            let bar = bracket_bar(s, nxt, slash);
            if !bar.is_none() {
                return bar;
            }
            // Not `[|NAME|]`: the bar-shaped character may still be a letter of a name.
        } else if chars::is_quote(ch) && before_end(s, nxt) {
            // Quote look-alikes before the bar (`[“|endofturn|”]`) are read past, as in an angle
            // reading; only there, and only with something beyond ASCII among them (`d["INST"]`,
            // `["|a|"]` are code, `["“|endofturn|]`, `["˝|endofturn|]` are not). What the lead reads
            // past is read past too; MAX_RUN such pieces are padding unless all plain ASCII (stop 50).
            let mut seen = first.as_slice().iter().any(|c| !c.is_ascii());
            let (mut after, mut after_end) = step(s, nxt);
            let mut quoted_slash = slash;
            let mut passed = 0;
            let mut gave_up = false;
            while (after.first().is_some_and(chars::is_quote) || lead_skip(&after))
                && before_end(s, after_end)
            {
                passed += 1;
                if passed >= MAX_RUN {
                    if seen {
                        return Reading::padding(quoted_slash, after_end);
                    }
                    gave_up = true;
                    break;
                }
                seen |= after.as_slice().iter().any(|c| !c.is_ascii());
                quoted_slash |= after.as_slice().iter().any(|&ch| chars::has(ch, SLASH));
                (after, after_end) = step(s, after_end);
            }
            if seen && !gave_up && after.first().is_some_and(|a| chars::has(a, chars::PIPE)) {
                let bar = bracket_bar(s, after_end, quoted_slash);
                if !bar.is_none() {
                    return bar;
                }
            }
        }
    }
    let plain = nxt.i == c.i + 1 && s.as_bytes()[c.i] != b'&';
    let mut pending = if plain { None } else { Some((first, nxt)) };
    let Scratch {
        states,
        new,
        pending: lead_states,
    } = scratch;
    states.clear();
    states.push(0);
    states.extend(lead_states.iter().copied());
    let mut run = 0;
    let fast = chars::Fast::get();
    while before_end(s, c) {
        if states.len() == 1 {
            match one_step(s, fast, c, &mut pending) {
                One::Skip(nc) => {
                    c = nc;
                    run += 1;
                    if run >= MAX_RUN {
                        return Reading::padding(slash, c);
                    }
                    continue;
                }
                One::Char(_, r, nc) if !needs_general(trie, states[0], r) => {
                    c = nc;
                    let Some(k) = trie.child(states[0], r) else {
                        return Reading::NONE;
                    };
                    if let Some(hit) = eye.accept(k, c, slash) {
                        return hit;
                    }
                    run = 0;
                    states[0] = k;
                    continue;
                }
                One::Char(orig, _, nc) => pending = Some((Piece::one(orig), nc)),
                One::General => {}
            }
        }
        let (piece, nc) = pending.take().unwrap_or_else(|| step(s, c));
        c = nc;
        let parts = parts_of(&piece);
        if parts.is_empty() {
            run += 1;
            if run >= MAX_RUN {
                return Reading::padding(slash, c);
            }
            continue;
        }
        let advanced = match eye.step_states(states, &parts, c, slash, chars::attaches(&piece), new)
        {
            Err(hit) => return hit,
            Ok(adv) => adv,
        };
        if new.is_empty() {
            return Reading::NONE;
        }
        std::mem::swap(states, new);
        run = parts.run_after(run, advanced);
        if run >= MAX_RUN {
            return Reading::padding(slash, c);
        }
    }
    if c.i < n {
        Reading::padding(slash, c)
    } else {
        Reading::NONE
    }
}

/// `reader.exact_after(text, i, names)`: the end (byte offset) of the exact token whose first
/// piece is at byte `i` (a character, or a reference for exactly that character: `decode_at`),
/// past any backslashes after that piece, if one starts there; the rest written out or read
/// through references (`&gt;&gt;TITLE&lt;&lt;`).
#[inline]
pub fn exact_after(s: &str, i: usize, names: &Names) -> Option<usize> {
    let b = s.as_bytes();
    let c0 = *b.get(i)?;
    if c0 == b'&' {
        if !names.exact.may_be_reference(b.get(i + 1).copied()) {
            return None;
        }
        let (piece, nxt, _) = decode_at(s, i);
        return match piece.as_slice() {
            [first] => exact_rest(s, *first, nxt, names),
            _ => None,
        };
    }
    if c0 < 0x80 && !names.exact.may_start(c0, b.get(i + 1).copied()) {
        return None;
    }
    let first = char_at(s, i);
    exact_rest(s, first, i + first.len_utf8(), names)
}

/// The end of a rest of an exact token starting with `first`, read from byte `j` past backslashes.
fn exact_rest(s: &str, first: char, mut j: usize, names: &Names) -> Option<usize> {
    let b = s.as_bytes();
    while j < b.len() && b[j] == b'\\' {
        j += 1;
    }
    let tail = &b[j..];
    let rests = names.exact.rests(first, tail.first().copied());
    // The first `&` within the longest rest's length in bytes, and the piece it begins, decoded
    // once: a rest is read through references only from there, after the bytes before it written
    // out (a text that repeats `&lt;` asks every rest of `<` at every one).
    let longest = rests.iter().map(String::len).max().unwrap_or(0);
    let amp = memchr::memchr(b'&', &tail[..longest.min(tail.len())])
        .filter(|&a| a > 0 || names.exact.may_begin_rest(first, tail.get(1).copied()))
        .map(|a| {
            let (piece, nxt, _) = decode_at(s, j + a);
            (a, Utf8Piece::of(&piece), nxt)
        });
    rests.iter().find_map(|r| {
        let r = r.as_bytes();
        // (An empty rest, a token of one character, matches wherever its first piece is.)
        if (r.is_empty() || r.first() == tail.first()) && tail.starts_with(r) {
            return Some(j + r.len());
        }
        let (a, piece, nxt) = amp.as_ref()?;
        let after = a + piece.len;
        if piece.len == 0
            || after > r.len()
            || tail[..*a] != r[..*a]
            || r[*a..after] != *piece.bytes()
        {
            return None;
        }
        reads_as(s, *nxt, &r[after..])
    })
}

/// A piece as UTF-8 (at most two characters of four bytes each), encoded once.
struct Utf8Piece {
    buf: [u8; 8],
    len: usize,
}

impl Utf8Piece {
    fn of(piece: &Piece) -> Utf8Piece {
        let mut buf = [0u8; 8];
        let mut len = 0;
        for &ch in piece.as_slice() {
            len += ch.encode_utf8(&mut buf[len..]).len();
        }
        Utf8Piece { buf, len }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// `reader._reads_as`: where the text from byte `j` ends that reads (`decode_at`, piece by piece)
/// as `rest` exactly (a piece that runs past the rest does not).
fn reads_as(s: &str, mut j: usize, rest: &[u8]) -> Option<usize> {
    let mut k = 0;
    while k < rest.len() {
        if j >= s.len() {
            return None;
        }
        let (piece, nxt, _) = decode_at(s, j);
        let p = Utf8Piece::of(&piece);
        if p.len == 0 || !rest[k..].starts_with(p.bytes()) {
            return None;
        }
        k += p.len;
        j = nxt;
    }
    Some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every concatenation of up to `most` of `pieces` (the empty text first).
    fn concatenations(pieces: &[&str], most: usize) -> Vec<String> {
        let mut texts = vec![String::new()];
        for _ in 0..most {
            let more: Vec<String> = texts
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(more);
        }
        texts
    }

    /// A name phase after a lead `fast_read` completed: `None` hands over to the general reader.
    type NamePhase = for<'n> fn(&str, usize, Lead, &'n Names, &mut Scratch) -> Option<Reading<'n>>;

    /// The angle reading at `pos` with `fast` as the name phase (as `read_after` composes it).
    fn read_with<'n>(
        fast: NamePhase,
        s: &str,
        pos: usize,
        names: &'n Names,
        sc: &mut Scratch,
    ) -> (Reading<'n>, bool) {
        match fast_read(s, pos, names, false) {
            Ok(r) => (r, false),
            Err(Some(lead)) => match fast(s, pos, lead, names, sc) {
                Some(r) => (r, true),
                None => (read_after_slow(s, pos, names, sc, Some(lead)), false),
            },
            Err(None) => (read_after_slow(s, pos, names, sc, None), false),
        }
    }

    /// Pieces that steer the name phase into each of its branches: names and their prefixes (`s`
    /// and `co` are tokens), several readings (`l`, `i`, `1`, `m`), digits of a placeholder
    /// (`special_1`), namespaces (`dsml:`, `a:`), skipped characters, bars, closers, references,
    /// look-alikes, letter stand-ins, guillemets, another opener.
    const FRAGMENTS: [&str; 32] = [
        "s",
        "sys",
        "system",
        "co",
        "code",
        "im_end",
        "retrieved_content",
        "retr1eved",
        "l",
        "i",
        "1",
        "m",
        "special_1",
        "0",
        ":",
        "dsml:",
        "a:",
        "x",
        " ",
        "\u{200b}",
        "/",
        "!",
        ">",
        "|",
        "&lt;",
        "&amp;",
        "\u{435}",
        "\u{416}",
        "\u{ab}",
        "\u{bb}",
        "<",
        "-",
    ];

    /// Every text of up to three fragments read at every position, and long texts drawn from
    /// them (past the run and lookahead bounds): the first text whose reading by `fast` is not
    /// the general reader's (from the opener, without `fast_read`), with the number of readings
    /// `fast` decided of each kind.
    fn first_disagreement(fast: NamePhase) -> (Option<String>, [usize; 5]) {
        let mut texts = concatenations(&FRAGMENTS, 3);
        // Long texts from every fragment, from the plain ASCII ones, and from those with many
        // skipped characters and namespaces (readings that go on to the bounds).
        let ascii: Vec<&str> = FRAGMENTS
            .into_iter()
            .filter(|f| f.bytes().all(|c| c < 0x80 && c != b'&'))
            .collect();
        let long_runs = ["a:", " ", "  ", "-", "\\", "_", "x:", "l", "1", "sy"];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..6000 {
            let palette = [&FRAGMENTS[..], &ascii, &long_runs][k % 3];
            let mut t = String::new();
            while t.len() < 400 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t.push_str(palette[(x >> 32) as usize % palette.len()]);
            }
            texts.push(t);
        }
        // At the bounds exactly: a run of skipped characters after a name that is no token, and
        // namespaces up to the lookahead after leads of every length.
        for k in 28..36 {
            texts.push(format!("sy{}", " ".repeat(k)));
            texts.push(format!("{}{}", " ".repeat(k - 28), "a:".repeat(k * 4)));
        }
        let all = [
            Names::default_names(),
            Names::new(&["memory", "retrieved_content"], true, false).unwrap(),
            Names::new(&["system"], false, true).unwrap(),
        ];
        let mut sc = Scratch::default();
        let mut decided = [0usize; 5];
        for names in &all {
            for t in &texts {
                let s = format!("<{t}");
                for pos in (1..=s.len()).filter(|&p| s.is_char_boundary(p)) {
                    let (got, by_fast) = read_with(fast, &s, pos, names, &mut sc);
                    if got != read_after_slow(&s, pos, names, &mut sc, None) {
                        return (Some(format!("{s:?} at {pos}")), decided);
                    }
                    if by_fast {
                        decided[got.kind as usize] += 1;
                    }
                }
            }
        }
        (None, decided)
    }

    #[test]
    fn the_ascii_name_phase_reads_as_the_general_reader() {
        let (bad, decided) = first_disagreement(fast_name);
        assert_eq!(bad, None);
        // It decides readings of every kind but a bar (it hands a bar over), or it tests nothing.
        let [none, reserved, token, bar, padding] = decided;
        assert!(
            none > 1_000_000 && reserved > 10_000 && token > 10_000 && padding > 10_000,
            "{decided:?}"
        );
        assert_eq!(bar, 0);
    }

    /// Control: deciding "none" where it should hand over.
    fn decides_for_the_general_reader<'n>(
        s: &str,
        pos: usize,
        lead: Lead,
        names: &'n Names,
        sc: &mut Scratch,
    ) -> Option<Reading<'n>> {
        fast_name(s, pos, lead, names, sc).or(Some(Reading::NONE))
    }

    /// Control: the lookahead counted from the name rather than from the opener.
    fn bound_from_the_name<'n>(
        s: &str,
        pos: usize,
        lead: Lead,
        names: &'n Names,
        sc: &mut Scratch,
    ) -> Option<Reading<'n>> {
        let at = Cur { rel: 0, ..lead.at };
        let r = fast_name(s, pos, Lead { at, ..lead }, names, sc)?;
        Some(Reading {
            end_rel: r.end_rel + lead.at.rel,
            ..r
        })
    }

    /// The first `(text, start, rel)` where `first` decides otherwise than [`closer_steps`]: every
    /// text of up to four pieces, from every position, near and at the lookahead bound; with the
    /// number of answers `first` gave.
    fn closer_disagreement(
        first: fn(&str, Cur, u16) -> Option<Option<Cur>>,
    ) -> (Option<String>, usize) {
        let pieces = [
            "x", ">", "]", "/", " ", "&gt;", "\u{200b}", "\u{ff1e}", "&", "\u{e9}",
        ];
        let texts = concatenations(&pieces, 4);
        let mut answered = 0;
        for t in &texts {
            for i in (0..=t.len()).filter(|&i| t.is_char_boundary(i)) {
                for rel in [0, MAX_LOOKAHEAD - 1, MAX_LOOKAHEAD] {
                    for closer in [chars::GT, chars::RBRACKET] {
                        let c = Cur { i, rel };
                        let want = closer_steps(t, c, closer);
                        let got = first(t, c, closer);
                        if got.is_some_and(|g| g != want) {
                            return (Some(format!("{t:?} at {i}, {rel}")), answered);
                        }
                        answered += usize::from(got.is_some());
                    }
                }
            }
        }
        (None, answered)
    }

    #[test]
    fn the_closer_s_first_step_decides_as_its_loop() {
        let (bad, answered) = closer_disagreement(closer_first);
        assert_eq!(bad, None);
        assert!(answered > 10_000, "{answered}");
    }

    #[test]
    fn control_a_first_step_past_the_bound_or_at_a_slash_is_caught() {
        let past_the_bound: fn(&str, Cur, u16) -> Option<Option<Cur>> = |s, c, closer| {
            closer_first(s, Cur { rel: 0, ..c }, closer).map(|r| {
                r.map(|e| Cur {
                    rel: e.rel + c.rel,
                    ..e
                })
            })
        };
        assert!(closer_disagreement(past_the_bound).0.is_some());
        let at_a_slash: fn(&str, Cur, u16) -> Option<Option<Cur>> = |s, c, closer| {
            closer_first(s, c, closer)
                .or_else(|| (s.as_bytes().get(c.i) == Some(&b'/')).then_some(None))
        };
        assert!(closer_disagreement(at_a_slash).0.is_some());
    }

    #[test]
    fn control_broken_name_phases_are_caught() {
        assert!(first_disagreement(decides_for_the_general_reader)
            .0
            .is_some());
        assert!(first_disagreement(bound_from_the_name).0.is_some());
    }
}
