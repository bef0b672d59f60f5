//! `defang.defang_reference`, `undefang`, `defang_body` and the XML text escape, at every level.

use std::borrow::Cow;

use crate::chars;
use crate::decode::char_at;
use crate::names::Names;
use crate::opener::{Family, Openers};
use crate::reader::{read_after, read_bracket, Scratch};
use crate::tables::{MAX_LOOKAHEAD, MAX_OPENER_LEN, MAX_RUN};

/// The defang levels (`defang.LEVELS`).
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

/// What follows every body in a composed preface (`defang.BODY_CONTEXT`).
pub const BODY_CONTEXT: &str = "\n<";

/// `defang.markup_after`: does the `<` ending at `pos` start markup?
pub fn markup_after(s: &str, pos: usize) -> bool {
    let n = s.len();
    let mut i = pos;
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

/// The angle pass of `defang_reference`: a backslash after every opener that needs one.
pub fn defang_angles<'a>(
    s: &'a str,
    names: &Names,
    markup: bool,
    scratch: &mut Scratch,
) -> Cow<'a, str> {
    let b = s.as_bytes();
    let n = b.len();
    insert_after(
        s,
        Openers::new(s, Family::Angle).filter_map(|(a, e)| {
            let needs = (e < n && b[e] == b'\\')
                || !read_after(s, e, names, scratch).is_none()
                || (markup && e == a + 1 && b[a] == b'<' && markup_after(s, e));
            needs.then_some(e)
        }),
    )
}

/// `defang_brackets`: a backslash after every bracket opener whose reading is not none.
pub fn defang_brackets<'a>(s: &'a str, names: &Names, scratch: &mut Scratch) -> Cow<'a, str> {
    insert_after(
        s,
        Openers::new(s, Family::Bracket)
            .filter_map(|(_, e)| (!read_bracket(s, e, names, scratch).is_none()).then_some(e)),
    )
}

/// `xml_escape_text`: `&`, `<`, `>` and CR.
pub fn xml_escape(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let Some(first) = b
        .iter()
        .position(|&c| matches!(c, b'&' | b'<' | b'>' | b'\r'))
    else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + s.len() / 8 + 16);
    out.push_str(&s[..first]);
    let mut last = first;
    for (i, &c) in b.iter().enumerate().skip(first) {
        let rep = match c {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'\r' => "&#13;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `xml_unescape_text`: only the four references `xml_escape` writes.
pub fn xml_unescape(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    if memchr::memchr(b'&', b).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'&', &b[i..]) {
        let p = i + k;
        let rest = &b[p + 1..];
        let hit = [("amp;", '&'), ("lt;", '<'), ("gt;", '>'), ("#13;", '\r')]
            .iter()
            .find(|(r, _)| rest.starts_with(r.as_bytes()));
        match hit {
            Some((r, c)) => {
                out.push_str(&s[last..p]);
                out.push(*c);
                i = p + 1 + r.len();
                last = i;
            }
            None => i = p + 1,
        }
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `defang_reference(text, level=..., reserved=...)` (`names` from the reserved names).
pub fn defang<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let mut scratch = Scratch::default();
    let a = defang_angles(s, names, level != Level::Reserved, &mut scratch);
    let b = then(a, |x| defang_brackets(x, names, &mut scratch));
    if level == Level::Xml {
        then(b, xml_escape)
    } else {
        b
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

/// Could `s` hold an opener, angle or bracket (whose reading could reach the body's context)?
fn may_hold_opener(s: &str) -> bool {
    s.chars()
        .any(|c| c == '&' || chars::has(c, chars::LT) || chars::has(c, chars::LBRACKET))
}

/// `defang_body`: `defang` judged in the context a body is rendered in (followed by `\n<`).
pub fn defang_body<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let inner = if level == Level::Xml {
        Level::Markup
    } else {
        level
    };
    let tail = &s[tail_start(s, MAX_LOOKAHEAD + MAX_OPENER_LEN + 2)..];
    let out: Cow<'a, str> = if !may_hold_opener(tail) {
        defang(s, inner, names)
    } else {
        // `defang(text + BODY_CONTEXT)[:-2]`, holding at most two copies of the text at once:
        // each pass's input is dropped as soon as its output exists, and the context is cut
        // off in place.
        let mut with = String::with_capacity(s.len() + BODY_CONTEXT.len());
        with.push_str(s);
        with.push_str(BODY_CONTEXT);
        let mut scratch = Scratch::default();
        let mut changed = false;
        let angled = match defang_angles(&with, names, inner != Level::Reserved, &mut scratch) {
            Cow::Borrowed(_) => None,
            Cow::Owned(o) => Some(o),
        };
        if let Some(o) = angled {
            with = o;
            changed = true;
        }
        let bracketed = match defang_brackets(&with, names, &mut scratch) {
            Cow::Borrowed(_) => None,
            Cow::Owned(o) => Some(o),
        };
        if let Some(o) = bracketed {
            with = o;
            changed = true;
        }
        debug_assert!(with.ends_with(BODY_CONTEXT));
        if changed {
            with.truncate(with.len() - BODY_CONTEXT.len());
            Cow::Owned(with)
        } else {
            Cow::Borrowed(s)
        }
    };
    if level == Level::Xml {
        then(out, xml_escape)
    } else {
        out
    }
}

/// `undefang`'s angle part: drop the backslash right after every opener (as `OPENER_RE.finditer`
/// finds them, the tokenization the defang used) that is followed by one.
fn undo_angles(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    if memchr::memchr(b'\\', b).is_none() {
        return Cow::Borrowed(s);
    }
    let n = b.len();
    let mut out = String::new();
    let mut last = 0;
    for (_, e) in Openers::new(s, Family::Angle) {
        if e < n && b[e] == b'\\' {
            if out.capacity() == 0 {
                out.reserve(s.len());
            }
            out.push_str(&s[last..e]);
            last = e + 1;
        }
    }
    if last == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `undefang_brackets`: drop the backslash after a bracket opener whose reading is not none.
fn undo_brackets<'a>(s: &'a str, names: &Names, scratch: &mut Scratch) -> Cow<'a, str> {
    if cfg!(feature = "planted-mutant") {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    if memchr::memchr(b'\\', b).is_none() {
        return Cow::Borrowed(s);
    }
    let n = b.len();
    let mut out = String::new();
    let mut last = 0;
    for (_, e) in Openers::new(s, Family::Bracket) {
        if e < n && b[e] == b'\\' && !read_bracket(s, e, names, scratch).is_none() {
            if out.capacity() == 0 {
                out.reserve(s.len());
            }
            out.push_str(&s[last..e]);
            last = e + 1;
        }
    }
    if last == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// `undefang(text, level=...)`.
pub fn undefang<'a>(s: &'a str, level: Level, names: &Names) -> Cow<'a, str> {
    let mut scratch = Scratch::default();
    let a = if level == Level::Xml {
        xml_unescape(s)
    } else {
        Cow::Borrowed(s)
    };
    let b = then(a, undo_angles);
    then(b, |x| undo_brackets(x, names, &mut scratch))
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
