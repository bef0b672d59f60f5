//! `reference.defang`, `undefang`, `defang_body` and the XML text escape, at every level.
//!
//! An escape point gets a `\` exactly when its reading (past the backslashes right after it) is
//! dangerous: an angle opener (`opener_needs_escape`), a bracket opener (`bracket_needs_escape`),
//! the first character of an exact token that has no opener (`defang_exact`); `undefang` drops
//! the `\` after exactly those points.

use std::borrow::Cow;

use crate::chars;
use crate::decode::{char_at, decode_at, utf8_width};
use crate::names::Names;
use crate::opener::{Family, Openers};
use crate::reader::{exact_after, quick_reading, read_after, read_bracket, Reading, Scratch};
use crate::repeats::{Guard, Repeats, Reuse, MAX_DISTANCE, WINDOW};
use crate::tables::{MAX_LOOKAHEAD, MAX_OPENER_LEN, MAX_RUN};

/// The defang levels (`levels.LEVELS`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Level {
    Reserved,
    Markup,
    Xml,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "reserved" => Some(Level::Reserved),
            "markup" => Some(Level::Markup),
            "xml" => Some(Level::Xml),
            _ => None,
        }
    }
}

/// What follows every body in a composed preface (`levels.BODY_CONTEXT`).
pub const BODY_CONTEXT: &str = "\n<";

/// `reference.markup_after`: does the `<` ending at `pos` start markup (a letter, `/`, `!`, `?`),
/// past the backslashes right after it and whitespace or ignorables?
pub fn markup_after(s: &str, pos: usize) -> bool {
    let b = s.as_bytes();
    let n = b.len();
    let mut i = pos;
    while i < n && b[i] == b'\\' {
        i += 1;
    }
    let mut k = 0;
    while i < n && k < MAX_RUN {
        let ch = char_at(s, i);
        if chars::flags(ch) & (chars::SPACE | chars::IGNORABLE) != 0 {
            i += ch.len_utf8();
            k += 1;
            continue;
        }
        return chars::is_alpha(ch) || matches!(ch, '/' | '!' | '?');
    }
    i < n
}

/// Appends `s[last..e]` and a backslash for every `e` that `f` yields.
fn insert_after(s: &str, ends: impl Iterator<Item = usize>) -> Cow<'_, str> {
    let mut out = String::new();
    let mut last = 0;
    for e in ends {
        if out.capacity() == 0 {
            out.reserve(s.len() + s.len() / 32 + 16);
        }
        out.push_str(&s[last..e]);
        out.push('\\');
        last = e;
    }
    if last == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `s` without the byte (a backslash) at every offset `ends` yields (`drop_after`).
fn drop_after(s: &str, ends: impl Iterator<Item = usize>) -> Cow<'_, str> {
    let mut out = String::new();
    let mut last = 0;
    for e in ends {
        if out.capacity() == 0 {
            out.reserve(s.len());
        }
        out.push_str(&s[last..e]);
        last = e + 1;
    }
    if last == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `reference.starts_exact`: is the opener `s[a..e]` one piece (a character, or a reference for
/// one) that starts an exact token (`<NAME>`, `&lt;NAME&gt;`)?
#[inline]
fn starts_exact(s: &str, a: usize, e: usize, names: &Names) -> bool {
    let b = s.as_bytes();
    let one = if b[a] == b'&' {
        decode_at(s, a).1 == e
    } else {
        e == a + utf8_width(b[a])
    };
    one && exact_after(s, a, names).is_some()
}

/// `reference.opener_needs_escape`: the reading after the angle opener `s[a..e]` (past the
/// backslashes after it) is dangerous, or at markup a `<` starts markup, or a raw one-character
/// opener (one piece) starts an exact token.
fn opener_needs_escape(
    s: &str,
    a: usize,
    e: usize,
    names: &Names,
    markup: bool,
    scratch: &mut Scratch,
) -> bool {
    // The markup test first: it is a few byte reads, and on HTML it answers for most `<`.
    starts_markup(s, a, e, markup)
        || reading_needs_escape(s, a, e, names, read_after(s, e, names, scratch))
}

/// At markup, does the `<` at `a..e` start markup (`markup_after`)?
fn starts_markup(s: &str, a: usize, e: usize, markup: bool) -> bool {
    markup && e == a + 1 && s.as_bytes()[a] == b'<' && markup_after(s, e)
}

/// The escape the reading `r` after the opener `a..e` asks for: a reading that is not none, or an
/// exact token from the opener.
fn reading_needs_escape(s: &str, a: usize, e: usize, names: &Names, r: Reading<'_>) -> bool {
    !r.is_none() || starts_exact(s, a, e, names)
}

/// `reference.bracket_needs_escape`: a `[NAME]`/`[|NAME|]` reading, or an exact token after a `[`
/// (or a reference for one).
fn bracket_needs_escape(s: &str, a: usize, e: usize, names: &Names, scratch: &mut Scratch) -> bool {
    reading_needs_escape(s, a, e, names, read_bracket(s, e, names, scratch))
}

/// How the defang passes reuse a decision where the text repeats ([`crate::repeats`]): with no `&`
/// and no `\` in the window a decision reads a reading (1 KB at most past the opener), markup past
/// the opener (32 characters) and an exact token from the opener's start (its longest rest). Names
/// with a rest longer than [`MAX_REUSED_REST`] bytes are never reused.
pub fn defang_reuse(names: &Names) -> Reuse {
    if names.exact.longest_rest() <= MAX_REUSED_REST {
        Reuse {
            window: WINDOW,
            guard: Guard::Plain,
            max_distance: MAX_DISTANCE,
        }
    } else {
        Reuse::NONE
    }
}

/// The longest exact-token rest (bytes) whose tokens let the defang reuse a decision.
const MAX_REUSED_REST: usize = 1024;
const _: () = assert!(4 * MAX_LOOKAHEAD + 8 < WINDOW && MAX_REUSED_REST + 8 < WINDOW);

/// The escape points of the angle pass (the ends of the openers that need a backslash), in order.
fn angle_points<'s>(
    s: &'s str,
    names: &'s Names,
    markup: bool,
    scratch: &'s mut Scratch,
) -> impl Iterator<Item = usize> + 's {
    points_using(
        s,
        Family::Angle,
        names,
        markup,
        scratch,
        defang_reuse(names),
    )
}

/// The escape points of the bracket pass, in order.
fn bracket_points<'s>(
    s: &'s str,
    names: &'s Names,
    scratch: &'s mut Scratch,
) -> impl Iterator<Item = usize> + 's {
    points_using(
        s,
        Family::Bracket,
        names,
        false,
        scratch,
        defang_reuse(names),
    )
}

/// The escape points of the `fam` pass. The markup test, then a reading plain ASCII decides
/// (`quick_reading`): each a few byte reads (a tag at markup, `<` repeated), cheaper than a reuse;
/// else the decision of an earlier opener whose window repeats, else the whole decision.
fn points_using<'s>(
    s: &'s str,
    fam: Family,
    names: &'s Names,
    markup: bool,
    scratch: &'s mut Scratch,
    reuse: Reuse,
) -> impl Iterator<Item = usize> + 's {
    let mut repeats = Repeats::with(s, reuse);
    let bracket = fam.is_bracket();
    Openers::new(s, fam).filter_map(move |(a, e)| {
        let needs = starts_markup(s, a, e, markup)
            || match quick_reading(s, e, names, bracket) {
                Some(r) => reading_needs_escape(s, a, e, names, r),
                None => {
                    let needs = match repeats.get(a, e) {
                        Some((needs, _)) => needs,
                        None if bracket => bracket_needs_escape(s, a, e, names, scratch),
                        None => opener_needs_escape(s, a, e, names, markup, scratch),
                    };
                    repeats.record(a, e, needs);
                    needs
                }
            };
        needs.then_some(e)
    })
}

/// The angle pass of the reference defang: a backslash after every opener that needs one.
pub fn defang_angles<'a>(
    s: &'a str,
    names: &Names,
    markup: bool,
    scratch: &mut Scratch,
) -> Cow<'a, str> {
    insert_after(s, angle_points(s, names, markup, scratch))
}

/// `defang_brackets`: a backslash after every bracket opener that needs one.
pub fn defang_brackets<'a>(s: &'a str, names: &Names, scratch: &mut Scratch) -> Cow<'a, str> {
    insert_after(s, bracket_points(s, names, scratch))
}

/// The escape points of `defang_exact`: every first piece of an exact token that is not an
/// opener (`>`, `]`, `｜`, or a reference for one: `reference._exact_points`), as (start, end) byte
/// offsets, in text order.
fn exact_points<'a>(s: &'a str, names: &'a Names) -> impl Iterator<Item = (usize, usize)> + 'a {
    let b = s.as_bytes();
    let bytes = &names.exact.start_bytes;
    let starts = &names.exact.starts;
    let mut i = 0;
    // The next `&` at or after `i` (`b.len()`: none), searched for again once `i` has passed it.
    let mut amp: Option<usize> = None;
    std::iter::from_fn(move || {
        while i < b.len() {
            if amp.map_or(true, |a| a < i) {
                amp = Some(memchr::memchr(b'&', &b[i..]).map_or(b.len(), |k| i + k));
            }
            let amp = amp.unwrap_or(b.len());
            let k = match bytes.as_slice() {
                [] => None,
                [x] => memchr::memchr(*x, &b[i..amp]),
                [x, y] => memchr::memchr2(*x, *y, &b[i..amp]),
                [x, y, z] => memchr::memchr3(*x, *y, *z, &b[i..amp]),
                many => b[i..amp].iter().position(|c| many.contains(c)),
            };
            let p = k.map_or(amp, |k| i + k);
            if p >= b.len() {
                i = b.len();
                return None;
            }
            // Most candidates are ASCII (`>` of a closing tag) that no token goes on from: the
            // quick test of `exact_after` (exact when it says no) spares the rest of the look.
            if b[p] < 0x80 && b[p] != b'&' && !names.exact.may_start(b[p], b.get(p + 1).copied()) {
                i = p + 1;
                continue;
            }
            let (first, end) = if b[p] == b'&' {
                if !names.exact.may_be_reference(b.get(p + 1).copied()) {
                    i = p + 1;
                    continue;
                }
                let (piece, nxt, _) = decode_at(s, p);
                // A reference for one character only (`&nvgt;` is `>` and a mark: no first piece).
                let one = match piece.as_slice() {
                    [c] => Some(*c),
                    _ => None,
                };
                (one, nxt)
            } else {
                let ch = char_at(s, p);
                (Some(ch), p + ch.len_utf8())
            };
            i = end;
            if first.is_some_and(|ch| starts.contains(&ch)) {
                return Some((p, end));
            }
        }
        None
    })
}

/// The escape points of the exact pass: after the first piece of every exact token that has no
/// opener, in order.
fn exact_escape_points<'s>(s: &'s str, names: &'s Names) -> impl Iterator<Item = usize> + 's {
    exact_points(s, names).filter_map(move |(p, e)| exact_after(s, p, names).is_some().then_some(e))
}

/// `defang_exact`: a backslash after the first piece of every exact token that has no opener.
pub fn defang_exact<'a>(s: &'a str, names: &Names) -> Cow<'a, str> {
    if names.exact.starts.is_empty() {
        return Cow::Borrowed(s);
    }
    insert_after(s, exact_escape_points(s, names))
}

/// The three escape passes of the reference defang, in order (angles, brackets, exact tokens),
/// each on the output of the one before; at most two copies of the text are alive at once.
fn passes<'a>(s: &'a str, names: &Names, markup: bool, scratch: &mut Scratch) -> Cow<'a, str> {
    let a = defang_angles(s, names, markup, scratch);
    let b = then(a, |x| defang_brackets(x, names, scratch));
    then(b, |x| defang_exact(x, names))
}

/// The reference `xml_escape_text` writes for the byte `c`, if it writes one.
#[inline]
pub(crate) fn xml_reference(c: u8) -> Option<&'static str> {
    match c {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'\r' => Some("&#13;"),
        _ => None,
    }
}

/// The offsets of the bytes `xml_escape_text` writes as references, in order: `memchr3` over
/// `&<>` merged with `memchr` over CR (rare), not a test per byte.
fn xml_escape_points(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut angles = memchr::memchr3_iter(b'&', b'<', b'>', b).peekable();
    let mut crs = memchr::memchr_iter(b'\r', b).peekable();
    std::iter::from_fn(move || match (angles.peek(), crs.peek()) {
        (Some(&x), Some(&y)) if y < x => crs.next(),
        (Some(_), _) => angles.next(),
        (None, _) => crs.next(),
    })
}

/// `xml_escape_text`: `&`, `<`, `>` and CR.
pub fn xml_escape(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let mut points = xml_escape_points(b).peekable();
    if points.peek().is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + s.len() / 8 + 16);
    let mut last = 0;
    for p in points {
        out.push_str(&s[last..p]);
        out.push_str(xml_reference(b[p]).unwrap_or_default());
        last = p + 1;
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// The references [`xml_escape`] writes, after their `&`, and the byte each stands for.
const XML_REFERENCES: [(&[u8], u8); 4] = [
    (b"amp;", b'&'),
    (b"lt;", b'<'),
    (b"gt;", b'>'),
    (b"#13;", b'\r'),
];

/// The references `xml_unescape_text` reads back, in order: (the `&`, the end, the byte it stands
/// for). An `&` that starts none of the four is text.
fn xml_references(b: &[u8]) -> impl Iterator<Item = (usize, usize, u8)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(k) = memchr::memchr(b'&', &b[i..]) {
            let p = i + k;
            let rest = &b[p + 1..];
            i = p + 1;
            if let Some((r, c)) = XML_REFERENCES.iter().find(|(r, _)| rest.starts_with(r)) {
                i += r.len();
                return Some((p, i, *c));
            }
        }
        None
    })
}

/// `xml_unescape_text`: only the four references `xml_escape` writes.
pub fn xml_unescape(s: &str) -> Cow<'_, str> {
    let mut refs = xml_references(s.as_bytes()).peekable();
    if refs.peek().is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (p, e, c) in refs {
        out.push_str(&s[last..p]);
        out.push(char::from(c));
        last = e;
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// Is `xml_unescape(escaped)` exactly `plain`? Compared as it goes, a run between two references
/// at a time, without building it (verify's comparison of the strict XML reader's text of a body
/// with the body it read).
pub fn xml_unescaped_equals(escaped: &str, plain: &str) -> bool {
    let (e, p) = (escaped.as_bytes(), plain.as_bytes());
    let (mut last, mut j) = (0, 0);
    for (amp, end, c) in xml_references(e) {
        let run = &e[last..amp];
        if p.get(j..j + run.len()) != Some(run) || p.get(j + run.len()) != Some(&c) {
            return false;
        }
        j += run.len() + 1;
        last = end;
    }
    p.get(j..) == Some(&e[last..])
}

/// `reference.defang(text, level, reserved)` (`names` from the reserved names).
pub fn defang<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let mut scratch = Scratch::default();
    let out = passes(s, names, level != Level::Reserved, &mut scratch);
    if level == Level::Xml {
        then(out, xml_escape)
    } else {
        out
    }
}

/// `f` applied to `a`, keeping `a` itself when `f` changed nothing.
fn then<'a>(a: Cow<'a, str>, f: impl for<'b> FnOnce(&'b str) -> Cow<'b, str>) -> Cow<'a, str> {
    let owned = match f(&a) {
        Cow::Borrowed(_) => None,
        Cow::Owned(o) => Some(o),
    };
    match owned {
        Some(o) => Cow::Owned(o),
        None => a,
    }
}

/// The byte offset where the last `k` code points of `s` start.
fn tail_start(s: &str, k: usize) -> usize {
    let b = s.as_bytes();
    let mut i = b.len();
    let mut count = 0;
    while i > 0 && count < k {
        i -= 1;
        if b[i] & 0xC0 != 0x80 {
            count += 1;
        }
    }
    i
}

/// `reader.reference_run_start`: `start` moved back over the characters a reference holds after
/// its `&` (ASCII letters, digits, `#`, `;`), and onto that `&`.
fn reference_run_start(s: &str, start: usize) -> usize {
    let b = s.as_bytes();
    let mut i = start;
    while i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'#' || b[i - 1] == b';') {
        i -= 1;
    }
    if i > 0 && b[i - 1] == b'&' {
        i - 1
    } else {
        i
    }
}

/// Could `s` hold an opener, angle or bracket (whose reading could reach the body's context)?
fn may_hold_opener(s: &str) -> bool {
    s.chars()
        .any(|c| c == '&' || chars::has(c, chars::LT) || chars::has(c, chars::LBRACKET))
}

/// Can a reading near the end of `s` reach the context that follows a body? An opener in the
/// window the readings near the end can come from, widened onto the `&` of a character reference
/// that reaches into it (`reader.reference_run_start`: its digit runs have no bound).
fn reads_into_context(s: &str) -> bool {
    may_hold_opener(&s[reference_run_start(s, tail_start(s, MAX_LOOKAHEAD + MAX_OPENER_LEN + 2))..])
}

/// `defang_body`: `defang` judged in the context a body is rendered in (followed by `\n<`).
pub fn defang_body<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    match defang_body_start(s, level, names) {
        Ok(same) => Cow::Borrowed(same),
        Err(rest) => rest.finish(names).map_or(Cow::Borrowed(s), Cow::Owned),
    }
}

/// [`defang_body`] after its first copy of the text: the caller may free the text before
/// [`BodyRest::finish`] (the glue gives up its UTF-8 copy there, so that the copy, a pass's input
/// and its output are never alive at once: `benchmarks/memory.py`).
pub struct BodyRest {
    /// The text so far: the body with its context, or the output of the pass before `next`.
    text: String,
    /// The next defang pass (0 angles, 1 brackets, 2 exact tokens; then the XML text escape).
    next: u8,
    /// `text` ends with [`BODY_CONTEXT`] (cut off after the defang passes).
    context: bool,
    /// A pass has changed the text.
    changed: bool,
    level: Level,
}

/// One defang pass of [`defang_body`] (`k` as [`BodyRest::next`]).
fn body_pass<'t>(
    k: u8,
    t: &'t str,
    names: &Names,
    level: Level,
    scratch: &mut Scratch,
) -> Cow<'t, str> {
    match k {
        0 => defang_angles(t, names, level != Level::Reserved, scratch),
        1 => defang_brackets(t, names, scratch),
        _ => defang_exact(t, names),
    }
}

/// [`defang_body`] up to its first copy of `s`: `Ok(s)` when no pass changes it, else the rest.
pub fn defang_body_start<'a>(s: &'a str, level: Level, names: &Names) -> Result<&'a str, BodyRest> {
    if reads_into_context(s) {
        // `defang(text + BODY_CONTEXT)[:-2]`: a reading near the end may reach the context.
        let mut with = String::with_capacity(s.len() + BODY_CONTEXT.len());
        with.push_str(s);
        with.push_str(BODY_CONTEXT);
        return Err(BodyRest {
            text: with,
            next: 0,
            context: true,
            changed: false,
            level,
        });
    }
    let mut scratch = Scratch::default();
    for k in 0..3 {
        if let Some(o) = changed(body_pass(k, s, names, level, &mut scratch)) {
            return Err(BodyRest {
                text: o,
                next: k + 1,
                context: false,
                changed: true,
                level,
            });
        }
    }
    if level == Level::Xml {
        if let Some(o) = changed(xml_escape(s)) {
            return Err(BodyRest {
                text: o,
                next: 4,
                context: false,
                changed: true,
                level,
            });
        }
    }
    Ok(s)
}

impl BodyRest {
    /// The passes left: `Some(body)` when one changed the text, `None` when it is the text as it
    /// was. Each pass's input is dropped as soon as its output exists (two copies at most), and the
    /// context is cut off in place.
    pub fn finish(self, names: &Names) -> Option<String> {
        let BodyRest {
            mut text,
            next,
            context,
            mut changed,
            level,
        } = self;
        let mut scratch = Scratch::default();
        for k in next..3 {
            if let Some(o) = self::changed(body_pass(k, &text, names, level, &mut scratch)) {
                text = o;
                changed = true;
            }
        }
        if context {
            debug_assert!(text.ends_with(BODY_CONTEXT));
            text.truncate(text.len() - BODY_CONTEXT.len());
        }
        if level == Level::Xml && next <= 3 {
            if let Some(o) = self::changed(xml_escape(&text)) {
                text = o;
                changed = true;
            }
        }
        changed.then_some(text)
    }
}

/// Would [`defang_body`] change `s`? Its passes on the same text (the body, or the body and its
/// context when a reading near the end could reach it), each stopping at its first escape point;
/// at `xml`, also any character the text escape writes as a reference.
pub fn defang_body_changes(s: &str, level: Level, names: &Names) -> bool {
    if level == Level::Xml && xml_escape_points(s.as_bytes()).next().is_some() {
        return true;
    }
    let with: Cow<'_, str> = if reads_into_context(s) {
        Cow::Owned([s, BODY_CONTEXT].concat())
    } else {
        Cow::Borrowed(s)
    };
    let mut scratch = Scratch::default();
    angle_points(&with, names, level != Level::Reserved, &mut scratch)
        .next()
        .is_some()
        || bracket_points(&with, names, &mut scratch).next().is_some()
        || exact_escape_points(&with, names).next().is_some()
}

/// `undefang_exact`: drop the backslash after every escape point of `defang_exact` that starts
/// an exact token (read past the backslashes).
fn undo_exact<'a>(s: &'a str, names: &Names) -> Cow<'a, str> {
    let b = s.as_bytes();
    if names.exact.starts.is_empty() {
        return Cow::Borrowed(s);
    }
    drop_after(
        s,
        exact_points(s, names).filter_map(|(p, e)| {
            (e < b.len() && b[e] == b'\\' && exact_after(s, p, names).is_some()).then_some(e)
        }),
    )
}

/// `undefang_brackets`: drop the backslash after a bracket opener whose escape is still needed.
fn undo_brackets<'a>(s: &'a str, names: &Names, scratch: &mut Scratch) -> Cow<'a, str> {
    if cfg!(feature = "planted-mutant") {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    drop_after(
        s,
        Openers::new(s, Family::Bracket).filter_map(|(a, e)| {
            (e < b.len() && b[e] == b'\\' && bracket_needs_escape(s, a, e, names, scratch))
                .then_some(e)
        }),
    )
}

/// `undefang`'s angle part: drop the backslash after every opener (as `OPENER_RE.finditer` finds
/// them) that is followed by one and whose escape is needed (read past that backslash).
fn undo_angles<'a>(s: &'a str, names: &Names, markup: bool, scratch: &mut Scratch) -> Cow<'a, str> {
    let b = s.as_bytes();
    drop_after(
        s,
        Openers::new(s, Family::Angle).filter_map(|(a, e)| {
            (e < b.len() && b[e] == b'\\' && opener_needs_escape(s, a, e, names, markup, scratch))
                .then_some(e)
        }),
    )
}

/// `reference.undefang(text, level, reserved)`: drop the `\` after every escape point whose
/// reading is dangerous (exact tokens, brackets, then angles).
pub fn undefang<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let a = if level == Level::Xml {
        xml_unescape(s)
    } else {
        Cow::Borrowed(s)
    };
    if memchr::memchr(b'\\', a.as_bytes()).is_none() {
        return a;
    }
    let mut scratch = Scratch::default();
    let markup = level != Level::Reserved;
    let b = then(a, |x| undo_exact(x, names));
    let c = then(b, |x| undo_brackets(x, names, &mut scratch));
    then(c, |x| undo_angles(x, names, markup, &mut scratch))
}

/// `escape.undefang_body`: the exact inverse of [`defang_body`]; the bracket readings are judged
/// in the same context (the body followed by `\n<`).
pub fn undefang_body<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let (plain, inner) = match level {
        Level::Xml => (xml_unescape(s), Level::Markup),
        other => (Cow::Borrowed(s), other),
    };
    let mut with = String::with_capacity(plain.len() + BODY_CONTEXT.len());
    with.push_str(&plain);
    with.push_str(BODY_CONTEXT);
    let undone = match undefang(&with, inner, names) {
        Cow::Borrowed(_) => None,
        Cow::Owned(o) => Some(o),
    };
    match undone {
        None => plain,
        Some(mut o) => {
            debug_assert!(o.ends_with(BODY_CONTEXT));
            o.truncate(o.len() - BODY_CONTEXT.len());
            Cow::Owned(o)
        }
    }
}

/// `undefang_body(s)` and whether `defang_body` of it gives `s` back: the canonical-form check of a
/// body in one call (verify). The defanged text is compared where it is made and never leaves the
/// core; when the undo changed nothing and the defang changes nothing, no copy is made at all.
///
/// A body the defang leaves as it is is its own undo, and so canonical: each undo pass drops a
/// backslash only after an escape point that the matching defang pass, reading the same text with
/// the same predicate, would escape again. So that case costs one defang's reading and no copy
/// ([`defang_body_changes`], stopping at the first escape point); any other takes both steps.
///
/// Any other body is undone one pass at a time, each undo checked against its own defang pass as
/// it is made ([`canonical_by_passes`]): at most two copies of the text are alive at once, and no
/// defanged text is built. Where a pass's check fails (a body that is not canonical, or one whose
/// passes do not invert one by one) the undo and the defang of the whole body decide, as before.
pub fn canonical_body<'a>(s: &'a str, level: Level, names: &Names) -> (Cow<'a, str>, bool) {
    match canonical_body_start(s, level, names) {
        Ok(()) => (Cow::Borrowed(s), true),
        Err(rest) => match rest.and_then(|r| r.finish(names)) {
            Some(plain) => (Cow::Owned(plain), true),
            None => canonical_round_trip(s, level, names),
        },
    }
}

/// [`canonical_body`] up to its first copy of `s`: `Ok(())` when `s` is its own plain text (no
/// defang pass changes it), else the undo passes left to run on the copy, or `None` when they cannot
/// decide (the caller then checks [`canonical_round_trip`] of `s`). The caller may free `s` before
/// [`UndoRest::finish`], as for [`defang_body_start`].
pub fn canonical_body_start(s: &str, level: Level, names: &Names) -> Result<(), Option<UndoRest>> {
    if defang_body_changes(s, level, names) {
        Err(undo_start(s, level))
    } else {
        Ok(())
    }
}

/// `(undefang_body(s), defang_body of that == s)`: the whole round trip, for a body the checked
/// undo passes cannot decide.
pub fn canonical_round_trip<'a>(s: &'a str, level: Level, names: &Names) -> (Cow<'a, str>, bool) {
    let plain = undefang_body(s, level, names);
    let same = defang_body(&plain, level, names) == s;
    (plain, same)
}

/// `Some(text)` when the pass changed its input, `None` when it left it as it was.
fn changed(c: Cow<'_, str>) -> Option<String> {
    match c {
        Cow::Borrowed(_) => None,
        Cow::Owned(o) => Some(o),
    }
}

/// Is `insert_after(s, ends)` (a backslash after every offset `ends` yields) exactly `target`?
/// Compared as it goes, without building it.
fn inserted_equals(s: &str, ends: impl Iterator<Item = usize>, target: &str) -> bool {
    let (a, t) = (s.as_bytes(), target.as_bytes());
    let (mut last, mut j) = (0, 0);
    for e in ends {
        let part = &a[last..e];
        if t.get(j..j + part.len()) != Some(part) || t.get(j + part.len()) != Some(&b'\\') {
            return false;
        }
        j += part.len() + 1;
        last = e;
    }
    t.get(j..) == Some(&a[last..])
}

/// Is `xml_escape(s)` exactly `target`? Compared as it goes, a run between two escaped bytes at a
/// time, without building it.
pub(crate) fn xml_escaped_equals(s: &str, target: &str) -> bool {
    let (a, t) = (s.as_bytes(), target.as_bytes());
    let (mut last, mut j) = (0, 0);
    for p in xml_escape_points(a) {
        let run = &a[last..p];
        let rep = xml_reference(a[p]).unwrap_or_default().as_bytes();
        if t.get(j..j + run.len()) != Some(run)
            || t.get(j + run.len()..j + run.len() + rep.len()) != Some(rep)
        {
            return false;
        }
        j += run.len() + rep.len();
        last = p + 1;
    }
    t.get(j..) == Some(&a[last..])
}

/// One undo pass of `t`, checked against the defang pass it inverts: `Some(u)`, `u = undo(t)`,
/// when `redo_equals(u, t)` (that defang pass of `u` is `t`), else `None`. `t` is dropped as soon
/// as `u` is checked, so two copies at most are alive.
fn undo_checked(
    t: String,
    scratch: &mut Scratch,
    undo: impl FnOnce(&str, &mut Scratch) -> Option<String>,
    redo_equals: impl FnOnce(&str, &str, &mut Scratch) -> bool,
) -> Option<String> {
    match undo(&t, scratch) {
        None => redo_equals(&t, &t, scratch).then_some(t),
        Some(u) => redo_equals(&u, &t, scratch).then_some(u),
    }
}

/// The escape points of the angle pass and of the bracket pass with answers reused as `reuse` says
/// (tests: against none reused).
#[cfg(test)]
pub(crate) fn escape_points_using(
    s: &str,
    names: &Names,
    markup: bool,
    reuse: Reuse,
) -> (Vec<usize>, Vec<usize>) {
    let mut scratch = Scratch::default();
    let angles = points_using(s, Family::Angle, names, markup, &mut scratch, reuse).collect();
    let brackets = points_using(s, Family::Bracket, names, false, &mut scratch, reuse).collect();
    (angles, brackets)
}

/// `undefang_body(s)` when each of its passes is inverted by the matching defang pass, which makes
/// `s` canonical; `None` when one is not (the caller then checks the whole round trip).
///
/// Why `Some` means canonical: with `t3` the body (XML-unescaped at `xml`) and its context,
/// `t2 = U3(t3)`, `t1 = U2(t2)`, `p = U1(t1)` (the undo passes: exact tokens, brackets, angles), the
/// checks are `D3(t2) == t3`, `D2(t1) == t2`, `D1(p) == t1`, so `D3(D2(D1(p))) == t3`: the defang of
/// `p` with its context (`defang_body`'s reference form) is the body; at `xml` the text escape of
/// `t3` is checked to be `s` as well. `p` is what `undefang_body` returns, the same passes in the
/// same order. The converse is not needed: a failed check only sends the body to the slow form.
#[cfg(test)]
pub(crate) fn canonical_by_passes(s: &str, level: Level, names: &Names) -> Option<String> {
    undo_start(s, level).and_then(|r| r.finish(names))
}

/// The undo passes of [`canonical_by_passes`] still to run, on the body (XML-unescaped at `xml`)
/// and its context.
pub struct UndoRest {
    text: String,
    level: Level,
}

/// [`canonical_by_passes`] up to its copy of `s`; `None` when `s` is not the text escape of its
/// unescaping (at `xml`).
fn undo_start(s: &str, level: Level) -> Option<UndoRest> {
    let unescaped = if level == Level::Xml {
        let u = xml_unescape(s);
        if !xml_escaped_equals(&u, s) {
            return None;
        }
        u
    } else {
        Cow::Borrowed(s)
    };
    let text = match unescaped {
        // Extended in place: no second copy.
        Cow::Owned(mut o) => {
            o.push_str(BODY_CONTEXT);
            o
        }
        Cow::Borrowed(b) => {
            let mut t = String::with_capacity(b.len() + BODY_CONTEXT.len());
            t.push_str(b);
            t.push_str(BODY_CONTEXT);
            t
        }
    };
    Some(UndoRest { text, level })
}

impl UndoRest {
    /// The checked undo passes: `Some(plain)` when each is inverted by its defang pass, else `None`.
    pub fn finish(self, names: &Names) -> Option<String> {
        let UndoRest { text: t, level } = self;
        let markup = level != Level::Reserved;
        let mut scratch = Scratch::default();
        let t = undo_checked(
            t,
            &mut scratch,
            |x, _| changed(undo_exact(x, names)),
            |u, t, _| inserted_equals(u, exact_escape_points(u, names), t),
        )?;
        let t = undo_checked(
            t,
            &mut scratch,
            |x, sc| changed(undo_brackets(x, names, sc)),
            |u, t, sc| inserted_equals(u, bracket_points(u, names, sc), t),
        )?;
        let mut plain = undo_checked(
            t,
            &mut scratch,
            |x, sc| changed(undo_angles(x, names, markup, sc)),
            |u, t, sc| inserted_equals(u, angle_points(u, names, markup, sc), t),
        )?;
        if !plain.ends_with(BODY_CONTEXT) {
            return None;
        }
        plain.truncate(plain.len() - BODY_CONTEXT.len());
        Some(plain)
    }
}
