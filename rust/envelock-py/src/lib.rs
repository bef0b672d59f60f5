//! `envelock._native`: the PyO3 bindings of `envelock-core`.
//!
//! Offsets are code-point offsets (Python `str` indices). Text holding a lone surrogate
//! cannot be read as UTF-8: every function raises `SurrogateError` (a `ValueError`) for it,
//! and the Python side falls back to the reference implementation for that call.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use envelock_core as core;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyTuple, PyType};
use rayon::prelude::*;

pyo3::create_exception!(
    _native,
    SurrogateError,
    PyValueError,
    "The text holds a lone surrogate, which the native core cannot read; use the Python reference."
);

/// Inputs at least this long are read with the GIL released.
const DETACH_BYTES: usize = 64 * 1024;
/// How many name sets are kept (like `names_for`'s lru_cache).
const NAMES_CACHE: usize = 64;

type NamesKey = (Vec<String>, bool, bool);
static NAMES: Mutex<Option<HashMap<NamesKey, Arc<core::Names>>>> = Mutex::new(None);

fn names_for(reserved: Vec<String>, tokens: bool, pipes: bool) -> PyResult<Arc<core::Names>> {
    let key = (reserved, tokens, pipes);
    let mut guard = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(n) = map.get(&key) {
        return Ok(Arc::clone(n));
    }
    let names =
        core::Names::new(&key.0, key.1, key.2).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if map.len() >= NAMES_CACHE {
        map.clear();
    }
    let names = Arc::new(names);
    map.insert(key, Arc::clone(&names));
    Ok(names)
}

/// The UTF-8 of a Python string for the length of one call. An ASCII string is read in place (its
/// storage is its UTF-8). Any other is encoded into a temporary `bytes` kept in `keep`: `to_str`
/// goes through `PyUnicode_AsUTF8AndSize`, which caches a UTF-8 copy the size of the text inside
/// the caller's string for as long as that string lives (100 MB more for a 100 MB body, after
/// the call has returned).
fn text<'a, 'py>(
    s: &'a Bound<'py, PyString>,
    keep: &'a mut Option<Bound<'py, PyBytes>>,
) -> PyResult<&'a str> {
    let surrogate = |_| SurrogateError::new_err("text holds a lone surrogate");
    if s.call_method0(intern!(s.py(), "isascii"))?.is_truthy()? {
        return s.to_str().map_err(surrogate);
    }
    let bytes = keep.insert(s.encode_utf8().map_err(surrogate)?);
    Ok(encoded_str(bytes))
}

/// The `str` of bytes made by CPython's strict UTF-8 encoder (`PyUnicode_AsUTF8String`, as
/// `encode_utf8` calls it), without validating them again: a tenth of defang's time on
/// multilingual text was that second look (`benchmarks/run.py`, `multilingual`).
fn encoded_str<'a>(bytes: &'a Bound<'_, PyBytes>) -> &'a str {
    let b = bytes.as_bytes();
    debug_assert!(std::str::from_utf8(b).is_ok());
    // SAFETY: the strict encoder raises on the one thing a `str` can hold that has no UTF-8 (a lone
    // surrogate) and writes every other code point as its UTF-8 sequence, so the bytes are valid
    // UTF-8; a `bytes` object never changes, and the borrow keeps it alive.
    unsafe { std::str::from_utf8_unchecked(b) }
}

/// Utf8(text): one UTF-8 copy of `text`, for a caller that hands the same non-ASCII text to several
/// native calls (the scanner's passes, compose's sanitize and defang): each call reads this copy
/// instead of encoding the text again. Raises `SurrogateError` for a lone surrogate. (An ASCII text
/// needs none, its storage being its UTF-8: the backend makes none for it. The text's own storage is
/// not used otherwise: see `text`.)
#[pyclass(frozen, module = "envelock._native")]
struct Utf8 {
    /// The text it is a copy of: a call handed both checks they are one (`copy_of`).
    source: Py<PyString>,
    /// Its UTF-8, made by CPython's strict encoder (valid UTF-8: see [`encoded_str`]); `None` once
    /// a call has given it up ([`Utf8::give_up`]), after which each call encodes what it reads.
    bytes: Mutex<Option<Py<PyBytes>>>,
    /// The last code point offset [`Utf8::byte_at`] found, and its byte offset: verify asks for the
    /// bodies of a preface left to right, so each search walks on from the last (linear in all).
    cursor: Mutex<(usize, usize)>,
    /// The bytes those searches have walked (a test holds them linear in the text).
    walked: AtomicUsize,
}

/// The bytes one step of [`Utf8::byte_at`]'s forward walk reads at once.
const WALK_STEP: usize = 64;

impl Utf8 {
    /// The copy's bytes (a new reference: they stay alive while the caller holds them), or `None`
    /// once given up.
    fn bytes<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        let guard = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map(|b| b.bind(py).clone())
    }

    /// Drop the copy's own reference to its bytes: they are freed when the calling function drops
    /// its own. A call about to make a new `str` from most of the copy gives it up first
    /// ([`let_go`]): the copy, the core's output and the new `str` would otherwise be alive at
    /// once, three times the text (`benchmarks/memory.py`).
    fn give_up(&self) {
        let taken = self.bytes.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(taken);
    }

    /// The byte offset of code point `cp` in `b` (this copy's bytes; the end of the text past its
    /// last), walked from the cursor forwards or backwards, whichever way `cp` lies.
    fn byte_at(&self, b: &[u8], cp: usize) -> usize {
        let mut cur = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        let (mut at_cp, mut at) = *cur;
        let from = at;
        // Sixty-four bytes a step while the code point is past them: the leads among them are the
        // code points they begin (a loop the compiler vectorises), and the step ends on the next lead.
        while at + WALK_STEP <= b.len() {
            let leads = b[at..at + WALK_STEP]
                .iter()
                .filter(|&&x| (x as i8) >= -0x40)
                .count();
            if at_cp + leads > cp {
                break;
            }
            at += WALK_STEP;
            while at < b.len() && b[at] & 0xC0 == 0x80 {
                at += 1;
            }
            at_cp += leads;
        }
        while at_cp < cp && at < b.len() {
            at += 1;
            while at < b.len() && b[at] & 0xC0 == 0x80 {
                at += 1;
            }
            at_cp += 1;
        }
        while at_cp > cp {
            at -= 1;
            while b[at] & 0xC0 == 0x80 {
                at -= 1;
            }
            at_cp -= 1;
        }
        *cur = (at_cp, at);
        self.walked.fetch_add(from.abs_diff(at), Ordering::Relaxed);
        at
    }
}

#[pymethods]
impl Utf8 {
    #[new]
    fn new(text: &Bound<'_, PyString>) -> PyResult<Self> {
        let mut keep = None;
        self::text(text, &mut keep)?; // a non-ASCII text is encoded here, once
        let bytes = match keep {
            Some(b) => b,
            None => text.encode_utf8()?, // ASCII: valid UTF-8 as it is
        };
        Ok(Utf8 {
            source: text.clone().unbind(),
            bytes: Mutex::new(Some(bytes.unbind())),
            cursor: Mutex::new((0, 0)),
            walked: AtomicUsize::new(0),
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let mut keep = None;
        Ok(text_of(self, py, &mut keep)?.len())
    }

    /// Whether a call has given the copy up ([`Utf8::give_up`]).
    #[getter]
    fn given_up(&self) -> bool {
        self.bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// The bytes the code point searches of `canonical_body` have walked so far.
    #[getter]
    fn walked(&self) -> usize {
        self.walked.load(Ordering::Relaxed)
    }
}

/// The copy's text, when `u` is a copy of this very `text` (a copy of another text is refused: its
/// offsets and its answer would be another text's).
/// `None` when the copy was given up: the caller then reads `text` as it would without one.
fn copy_of<'a, 'py>(
    u: &Bound<'py, Utf8>,
    text: &Bound<'py, PyString>,
    keep: &'a mut Option<Bound<'py, PyBytes>>,
) -> PyResult<Option<&'a str>> {
    if !u.get().source.bind(text.py()).is(text) {
        return Err(PyValueError::new_err("utf8 is not a copy of this text"));
    }
    Ok(match u.get().bytes(text.py()) {
        Some(b) => Some(encoded_str(keep.insert(b))),
        None => None,
    })
}

/// The text of a copy: its bytes, or its text encoded again once it was given up.
fn text_of<'a, 'py>(
    u: &Utf8,
    py: Python<'py>,
    keep: &'a mut Option<Bound<'py, PyBytes>>,
) -> PyResult<&'a str> {
    match u.bytes(py) {
        Some(b) => Ok(encoded_str(keep.insert(b))),
        // The copy's text had a UTF-8 (`new`), so the strict encoder takes it again.
        None => Ok(encoded_str(keep.insert(u.source.bind(py).encode_utf8()?))),
    }
}

/// The text of a `str` (as `text`) or of a `Utf8` copy of one.
fn text_any<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    keep: &'a mut Option<Bound<'py, PyBytes>>,
) -> PyResult<&'a str> {
    if let Ok(u) = obj.cast::<Utf8>() {
        return text_of(u.get(), obj.py(), keep);
    }
    text(obj.cast::<PyString>()?, keep)
}

/// Let go of the UTF-8 a call has read (`keep`: a temporary encoding, or a reference to `copy`'s
/// bytes) once the core holds its own copy of what it read (`read` bytes), before the output is
/// made: the UTF-8, the core's text and its output are then never alive at once (a peak of three
/// times a non-ASCII body, two for ASCII, read in place: `benchmarks/memory.py`). `copy` is given up
/// too ([`Utf8::give_up`]) when the call read at least half of it; the calls after this one then
/// encode what they read again, which costs less than the text (compose's defang of a body is its
/// last reading of the copy; verify checks the bodies of a preface in order).
fn let_go(copy: Option<&Utf8>, read: usize, keep: Option<Bound<'_, PyBytes>>) {
    if let (Some(u), Some(bytes)) = (copy, keep.as_ref()) {
        if read.saturating_mul(2) >= bytes.as_bytes().len() {
            u.give_up();
        }
    }
    drop(keep);
}

/// The core's output when it is a new text (`None`: the input unchanged), free of the input's borrow.
fn changed(out: Cow<'_, str>) -> Option<String> {
    match out {
        Cow::Borrowed(_) => None,
        Cow::Owned(o) => Some(o),
    }
}

/// `f()`, without the GIL for a text (of `len` bytes) long enough to be worth the switch.
fn detached<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_BYTES {
        py.detach(f)
    } else {
        f()
    }
}

/// Increasing byte spans of `s` as code-point spans.
fn spans_in_code_points(s: &str, spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut cc = core::CpCounter::new(s);
    spans
        .into_iter()
        .map(|(a, e)| (cc.at(a), cc.at(e)))
        .collect()
}

fn level(s: &str) -> PyResult<core::Level> {
    core::Level::parse(s).ok_or_else(|| {
        PyValueError::new_err(format!(
            "level must be one of reserved, markup, xml; got '{s}'"
        ))
    })
}

fn run<'py, F>(
    py: Python<'py>,
    input: &Bound<'py, PyString>,
    f: F,
) -> PyResult<Bound<'py, PyString>>
where
    F: for<'s> Fn(&'s str) -> Cow<'s, str> + Send + Sync,
{
    let mut keep = None;
    let s = text(input, &mut keep)?;
    let out = changed(detached(py, s.len(), || f(s)));
    let_go(None, 0, keep);
    Ok(match out {
        Some(o) => PyString::new(py, &o),
        None => input.clone(),
    })
}

/// defang(text, level, reserved) -> str: `reference.defang(text, level, reserved)`.
#[pyfunction]
fn defang<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    level: &str,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyString>> {
    let lvl = self::level(level)?;
    let names = names_for(reserved, true, true)?;
    run(py, text, |s| core::defang(s, lvl, &names))
}

/// defang_body(text, level, reserved, utf8=None) -> str: `defang_body` (judged followed by "\n<");
/// `utf8`: a `Utf8` copy of `text` the caller already made (compose's sanitize pass read it too).
/// The UTF-8 read is let go ([`let_go`]) once the core has its own copy of the text.
#[pyfunction]
#[pyo3(signature = (text, level, reserved, utf8 = None))]
fn defang_body<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    level: &str,
    reserved: Vec<String>,
    utf8: Option<&Bound<'py, Utf8>>,
) -> PyResult<Bound<'py, PyString>> {
    let lvl = self::level(level)?;
    let names = names_for(reserved, true, true)?;
    let mut keep = None;
    let s = match utf8.map(|u| copy_of(u, text, &mut keep)).transpose()? {
        Some(Some(s)) => s,
        _ => self::text(text, &mut keep)?,
    };
    let read = s.len();
    let Err(rest) = detached(py, read, || core::defang_body_start(s, lvl, &names)) else {
        return Ok(text.clone());
    };
    let_go(utf8.map(|u| u.get()), read, keep);
    Ok(match detached(py, read, || rest.finish(&names)) {
        Some(o) => PyString::new(py, &o),
        None => text.clone(),
    })
}

fn to_isize(i: usize) -> PyResult<isize> {
    isize::try_from(i).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// canonical_body(text, level, reserved, start=0, end=None, utf8=None) -> (str, bool):
/// `undefang_body` of `text[start:end]` and whether `defang_body` of it is that slice again
/// (verify's canonical-form check, one crossing each way). An ASCII text is read in place, so a
/// body is checked where it lies in its preface without a copy of its own (the copy a slice would
/// be is the one made only when the result is the slice itself). Another text is read in `utf8`,
/// the caller's one copy of the whole text (verify's), when given; else it is sliced first and the
/// slice encoded. The UTF-8 read is let go ([`let_go`]) once the core has its own copy of the body.
#[pyfunction]
#[pyo3(signature = (text, level, reserved, start = 0, end = None, utf8 = None))]
fn canonical_body<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    level: &str,
    reserved: Vec<String>,
    start: usize,
    end: Option<usize>,
    utf8: Option<&Bound<'py, Utf8>>,
) -> PyResult<(Bound<'py, PyString>, bool)> {
    let n = text.len()?;
    let end = end.unwrap_or(n).min(n);
    let start = start.min(end);
    let whole = start == 0 && end == n;
    let lvl = self::level(level)?;
    let names = names_for(reserved.clone(), true, true)?;
    // The body as a `str` of its own: the text itself, or its slice.
    let part = |py: Python<'py>| -> PyResult<Bound<'py, PyString>> {
        if whole {
            return Ok(text.clone());
        }
        let range = pyo3::types::PySlice::new(py, to_isize(start)?, to_isize(end)?, 1);
        Ok(text.get_item(range)?.cast_into::<PyString>()?)
    };
    let mut keep = None;
    let copy = utf8.map(|u| u.get());
    let s = match utf8.map(|u| copy_of(u, text, &mut keep)).transpose()? {
        // The caller's one UTF-8 copy of the whole text: the body is found in it, not encoded again.
        Some(Some(all)) => match copy {
            Some(c) if !whole => {
                &all[c.byte_at(all.as_bytes(), start)..c.byte_at(all.as_bytes(), end)]
            }
            _ => all,
        },
        // `str.isascii` reads a flag of the string: no pass over it.
        _ if !whole && !text.call_method0(intern!(py, "isascii"))?.is_truthy()? => {
            return canonical_body(py, &part(py)?, level, reserved, 0, None, None);
        }
        // The whole text, or an ASCII one (its code points are its bytes).
        _ => {
            let all = self::text(text, &mut keep)?;
            if whole {
                all
            } else {
                &all[start..end]
            }
        }
    };
    let read = s.len();
    let rest = match detached(py, read, || core::canonical_body_start(s, lvl, &names)) {
        Ok(()) => return Ok((part(py)?, true)),
        Err(rest) => rest,
    };
    let_go(copy, read, keep);
    if let Some(plain) = rest.and_then(|r| detached(py, read, || r.finish(&names))) {
        return Ok((PyString::new(py, &plain), true));
    }
    // Not decided by the checked undo passes (a body that is not canonical): the whole round
    // trip, on the body read again.
    let body = part(py)?;
    let mut again = None;
    let s = self::text(&body, &mut again)?;
    let (plain, same) = detached(py, s.len(), || core::canonical_round_trip(s, lvl, &names));
    let plain = match changed(plain) {
        None => body.clone(),
        Some(o) => PyString::new(py, &o),
    };
    Ok((plain, same))
}

/// undefang(text, level, reserved) -> str: the exact inverse of defang with the same reserved
/// names (`reference.undefang`: the reserved names decide where the escapes are).
#[pyfunction]
fn undefang<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    level: &str,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyString>> {
    let lvl = self::level(level)?;
    let names = names_for(reserved, true, true)?;
    run(py, text, |s| core::undefang(s, lvl, &names))
}

/// undefang_body(text, level, reserved) -> str: the exact inverse of defang_body (`escape.undefang_body`).
#[pyfunction]
fn undefang_body<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    level: &str,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyString>> {
    let lvl = self::level(level)?;
    let names = names_for(reserved, true, true)?;
    run(py, text, |s| core::undefang_body(s, lvl, &names))
}

fn reading_tuple<'py>(
    py: Python<'py>,
    r: &core::Reading<'_>,
    pos_cp: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let end = if r.is_none() { 0 } else { pos_cp + r.end_rel };
    (r.kind.as_str(), r.name, r.slash, end).into_pyobject(py)
}

/// read_after(text, pos, reserved, tokens=True, pipes=True) -> (kind, name, slash, end).
#[pyfunction]
#[pyo3(signature = (text, pos, reserved, tokens = true, pipes = true))]
fn read_after<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    pos: usize,
    reserved: Vec<String>,
    tokens: bool,
    pipes: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut keep = None;
    let s = self::text(text, &mut keep)?;
    let names = names_for(reserved, tokens, pipes)?;
    let mut scratch = core::Scratch::default();
    let r = match core::byte_offset(s, pos) {
        Some(b) => core::read_after(s, b, &names, &mut scratch),
        None => return ("none", "", false, 0usize).into_pyobject(py),
    };
    reading_tuple(py, &r, pos)
}

/// read_bracket(text, pos) -> (kind, name, slash, end).
#[pyfunction]
fn read_bracket<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    pos: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut keep = None;
    let s = self::text(text, &mut keep)?;
    let names = names_for(
        core::tables::RESERVED_NAMES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        true,
        true,
    )?;
    let mut scratch = core::Scratch::default();
    let r = match core::byte_offset(s, pos) {
        Some(b) => core::read_bracket(s, b, &names, &mut scratch),
        None => return ("none", "", false, 0usize).into_pyobject(py),
    };
    reading_tuple(py, &r, pos)
}

/// openers(text, reserved) -> [(start, opener_end, kind, name, slash, reading_end, family)].
#[pyfunction]
fn openers<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let mut keep = None;
    let s = self::text(text, &mut keep)?;
    let names = names_for(reserved, true, true)?;
    let found = detached(py, s.len(), || core::openers(s, &names));
    opener_tuples(py, &found)
}

fn opener_tuples<'py>(
    py: Python<'py>,
    found: &[core::OpenerReading<'_>],
) -> PyResult<Bound<'py, PyList>> {
    // One string object per distinct kind, name and family: hostile text repeats one opener
    // hundreds of thousands of times.
    let angle = PyString::new(py, "angle");
    let bracket = PyString::new(py, "bracket");
    let mut strs: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    let mut kinds: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    let items = found
        .iter()
        .map(|o| {
            let fam = if o.family.is_bracket() {
                bracket.clone()
            } else {
                angle.clone()
            };
            let kind = kinds
                .entry(o.kind.as_str())
                .or_insert_with_key(|k| PyString::new(py, k))
                .clone();
            let name = strs
                .entry(o.name)
                .or_insert_with_key(|k| PyString::new(py, k))
                .clone();
            (
                o.start_cp,
                o.opener_end_cp,
                kind,
                name,
                o.slash,
                o.reading_end_cp,
                fam,
            )
                .into_pyobject(py)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A code-point offset to a byte offset in `b` (UTF-8), moving from the last one asked for.
struct Cursor<'a> {
    b: &'a [u8],
    cp: usize,
    byte: usize,
}

impl Cursor<'_> {
    /// The byte offset of code point `cp` (clamped to the end).
    fn to(&mut self, cp: usize) -> usize {
        let b = self.b;
        if self.cp < cp {
            (self.byte, self.cp) = core::cp_advance(b, self.byte, self.cp, cp);
        }
        while self.cp > cp {
            self.byte -= 1;
            while b[self.byte] & 0xC0 == 0x80 {
                self.byte -= 1;
            }
            self.cp -= 1;
        }
        self.byte
    }
}

/// findings(cls, fields, text, raw, snippet, snippet_max, utf8=None) -> [cls]: `scan._findings`' last step in
/// one call. `raw` holds `(rule, severity, message, start, end)` reports in order; each becomes an
/// instance of `cls` (`object.__new__(cls)`, then each of the ten `fields` in order set through its
/// slot descriptor, as `object.__setattr__` in a frozen dataclass's `__init__` sets them; `cls`
/// must have `__slots__`, else a `ValueError`: rule, severity, message, start, its line and
/// column, end, its line and column, the snippet).
/// Lines and columns as `types.LineIndex.locate`; the snippet is `snippet(text, start, end)`,
/// called once per distinct (shown part, cut) it depends on. An instance whose fields are all
/// exact `str` and `int` is untracked by the garbage collector, as CPython untracks a tuple or
/// a dict of such values: it cannot be part of a reference cycle, and hundreds of thousands of
/// tracked findings make every collection walk them all.
#[pyfunction]
#[pyo3(signature = (cls, fields, text, raw, snippet, snippet_max, utf8 = None))]
#[allow(clippy::too_many_arguments)]
fn findings<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    fields: Vec<Bound<'py, PyString>>,
    text: &Bound<'py, PyString>,
    raw: &Bound<'py, PyList>,
    snippet: &Bound<'py, PyAny>,
    snippet_max: usize,
    utf8: Option<&Bound<'py, Utf8>>,
) -> PyResult<Bound<'py, PyList>> {
    let mut keep = None;
    // `utf8`: a `Utf8` copy of `text` the caller already made.
    let s = match utf8.map(|u| copy_of(u, text, &mut keep)).transpose()? {
        Some(Some(s)) => s,
        _ => self::text(text, &mut keep)?,
    };
    let fields: [Bound<'py, PyString>; 10] = fields
        .try_into()
        .map_err(|_| PyValueError::new_err("findings needs ten field names"))?;
    let b = s.as_bytes();
    // The starts come in order: one walker finds each start's line, column and byte. An end or a
    // snippet's stop is found by a peek from its start, which reads the span again: with many
    // reports, or long spans, the ends come from a table of every line instead (each byte is then
    // read a bounded number of times either way). A clean text, the usual case, needs neither.
    let mut spans = 0usize;
    let few = raw.len().saturating_mul(16) <= b.len()
        && raw.iter().all(|item| {
            let span = item
                .cast::<PyTuple>()
                .ok()
                .and_then(|r| {
                    Some((
                        r.get_item(3).ok()?.extract::<usize>().ok()?,
                        r.get_item(4).ok()?.extract::<usize>().ok()?,
                    ))
                })
                .map_or(usize::MAX, |(a, z)| z.checked_sub(a).unwrap_or(usize::MAX));
            spans = spans.saturating_add(span);
            spans <= b.len()
        });
    let table = if raw.is_empty() || few {
        None
    } else {
        Some(core::line_starts(b))
    };
    let n = match &table {
        Some((_, n)) => *n,
        None if raw.is_empty() => 0,
        None => core::code_points(b),
    };
    let line_of = |walk: &core::LineWalker<'_>, off: usize| -> (usize, usize) {
        match &table {
            None => {
                let spot = walk.peek(off);
                (spot.line, spot.column)
            }
            Some((starts, _)) => {
                let line = starts.partition_point(|&x| x <= off);
                (line, off - starts[line - 1] + 1)
            }
        }
    };
    // Each field's slot descriptor (a `member_descriptor`: the class has `__slots__`) and its
    // setter, looked up once: `object.__setattr__` would look each name up in the class again for
    // every finding. A field that is not a slot (a class without `__slots__`) is refused.
    let setters = fields
        .iter()
        .map(|name| {
            let d = cls.getattr(name)?;
            if d.get_type().name()? != "member_descriptor" {
                return Err(PyValueError::new_err(
                    "findings needs a class with __slots__",
                ));
            }
            // SAFETY: `d` is live; PyType_GetSlot on its type (a static type, allowed since 3.10)
            // returns the type's `tp_descr_set` or NULL.
            let set = unsafe {
                pyo3::ffi::PyType_GetSlot(d.get_type().as_type_ptr(), pyo3::ffi::Py_tp_descr_set)
            };
            if set.is_null() {
                return Err(PyValueError::new_err("a slot descriptor without a setter"));
            }
            // SAFETY: the slot `Py_tp_descr_set` holds a `descrsetfunc`.
            let set: pyo3::ffi::descrsetfunc = unsafe { std::mem::transmute(set) };
            Ok((d, set))
        })
        .collect::<PyResult<Vec<_>>>()?;
    // `object.__new__(cls)`: a class that keeps `object`'s `__new__` gets its instances from
    // `object`'s `tp_new` slot, called directly (what `object.__new__` ends in after checking `cls`;
    // the call through Python was a quarter of the time per finding); any other through the call.
    let object = py.get_type::<pyo3::types::PyAny>();
    let new = object.getattr("__new__")?;
    let args = PyTuple::new(py, [cls])?;
    let no_args = PyTuple::empty(py);
    let direct = if cls.getattr("__new__")?.is(&new) {
        // SAFETY: `object` is a live type; its `Py_tp_new` slot holds a `newfunc` (never NULL).
        let slot = unsafe { pyo3::ffi::PyType_GetSlot(object.as_type_ptr(), pyo3::ffi::Py_tp_new) };
        // SAFETY: the slot `Py_tp_new` holds a `newfunc`.
        (!slot.is_null()).then(|| unsafe { std::mem::transmute::<_, pyo3::ffi::newfunc>(slot) })
    } else {
        None
    };
    let mut shown: HashMap<(&str, bool), Bound<'py, PyAny>> = HashMap::new();
    let mut last_shown: Option<((&str, bool), Bound<'py, PyAny>)> = None;
    // With the table, the walker finds byte offsets alone (the table has the lines).
    let mut walk = match &table {
        None => core::LineWalker::new(b),
        Some(_) => core::LineWalker::positions(b),
    };
    let mut last_start = 0usize;
    let mut out: Vec<Bound<'py, PyAny>> = Vec::with_capacity(raw.len());
    for item in raw.iter() {
        let r = item.cast_into::<PyTuple>()?;
        if r.len() != 5 {
            return Err(PyValueError::new_err("a report is a 5-tuple"));
        }
        let (rule, severity, message) = (r.get_item(0)?, r.get_item(1)?, r.get_item(2)?);
        let (start_obj, end_obj) = (r.get_item(3)?, r.get_item(4)?);
        let start: usize = start_obj.extract()?;
        let end: usize = end_obj.extract()?;
        if start < last_start {
            return Err(PyValueError::new_err(
                "the reports' starts must not decrease",
            ));
        }
        last_start = start;
        let at = walk.to(start);
        let (line, column) = match &table {
            None => (at.line, at.column),
            Some(_) => line_of(&walk, start),
        };
        let (end_line, end_column) = line_of(&walk, end);
        // text[start : min(end, start + snippet_max)] and whether the span is longer.
        let stop = end.min(start.saturating_add(snippet_max)).max(start);
        let part = &s[at.byte..walk.peek(stop).byte];
        let shown_len = stop.min(n).saturating_sub(start);
        let key = (part, end - start.min(end) > shown_len);
        // Hostile text repeats one construct: the previous finding's snippet, if its key is this one,
        // spares hashing the part (the maps keep SipHash: their keys are the text's, an attacker's).
        let snip = match &last_shown {
            Some((k, v)) if *k == key => v.clone(),
            _ => {
                let v = match shown.get(&key) {
                    Some(v) => v.clone(),
                    None => {
                        let v = snippet.call1((text, start, end))?;
                        shown.insert(key, v.clone());
                        v
                    }
                };
                last_shown = Some((key, v.clone()));
                v
            }
        };
        let plain = [&rule, &severity, &message, &snip]
            .iter()
            .all(|v| v.is_exact_instance_of::<PyString>());
        // The report's own int objects where they are exact ints (no new object per finding).
        let start_v = if start_obj.is_exact_instance_of::<PyInt>() {
            start_obj
        } else {
            start.into_pyobject(py)?.into_any()
        };
        let end_v = if end_obj.is_exact_instance_of::<PyInt>() {
            end_obj
        } else {
            end.into_pyobject(py)?.into_any()
        };
        let values: [Bound<'py, PyAny>; 10] = [
            rule,
            severity,
            message,
            start_v,
            line.into_pyobject(py)?.into_any(),
            column.into_pyobject(py)?.into_any(),
            end_v,
            end_line.into_pyobject(py)?.into_any(),
            end_column.into_pyobject(py)?.into_any(),
            snip,
        ];
        let found = match direct {
            // SAFETY: `cls` and `no_args` are live; `tp_new` returns a new reference or NULL with
            // an exception set.
            Some(tp_new) => unsafe {
                Bound::from_owned_ptr_or_err(
                    py,
                    tp_new(cls.as_type_ptr(), no_args.as_ptr(), std::ptr::null_mut()),
                )?
            },
            None => new.call1(&args)?,
        };
        let ptr = found.as_ptr();
        // SAFETY: every pointer is a live object we hold a reference to. A slot descriptor's setter
        // is what object.__setattr__ (what a frozen dataclass's own __init__ calls, bypassing its
        // __setattr__) ends in for a slot; it checks the instance's type and takes its own
        // reference to the value. Untracking an object only takes it off the
        // collector's lists: its fields are exact str and int (checked), which hold no references, so
        // it cannot be part of a cycle.
        unsafe {
            for ((descr, set), value) in setters.iter().zip(&values) {
                if set(descr.as_ptr(), ptr, value.as_ptr()) != 0 {
                    return Err(PyErr::fetch(py));
                }
            }
            if plain && pyo3::ffi::PyObject_GC_IsTracked(ptr) == 1 {
                pyo3::ffi::PyObject_GC_UnTrack(ptr.cast());
            }
        }
        out.push(found);
    }
    PyList::new(py, out)
}

/// Whether the reports' starts (item 3 of each) strictly increase: in order, no two at one start. The
/// scanner then needs neither its sort nor its dedupe (hostile text gives hundreds of thousands).
#[pyfunction]
fn starts_increase(raw: &Bound<'_, PyList>) -> PyResult<bool> {
    let mut last: Option<usize> = None;
    for item in raw.iter() {
        let start: usize = item.cast_into::<PyTuple>()?.get_item(3)?.extract()?;
        if last.is_some_and(|l| start <= l) {
            return Ok(false);
        }
        last = Some(start);
    }
    Ok(true)
}

/// A cached answer of `describe`: the reports (rule, severity, message, start and end relative to
/// the opener's start) of every record with the same reading whose text from its start is `span`.
type Answer<'py> = Vec<(
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    usize,
    usize,
)>;

/// The answers of one reading: per span length, by the span's text.
type Spans<'a, 'py> = Vec<(usize, HashMap<&'a str, Answer<'py>>)>;

/// How many span lengths are cached per reading (the constant work of a lookup).
const SPANS_PER_READING: usize = 4;
/// The longest span an answer may depend on to be cached (code points).
const SPAN_MAX: usize = 512;

/// opener_reports(text, reserved, family, describe) -> [(rule, severity, message, start, end)]: the
/// reports of every `family` record of `openers(text, reserved)`, in order. Each record is handed
/// to `describe(start, opener_end, kind, name, slash, reading_end)`, which returns
/// `(depends_until, reports)`: its reports, and `None` or the end of the text they depend on
/// besides the reading (kind, name, slash, opener and reading lengths). A record with the same
/// reading and the same text from its start to that end gets the same reports, moved, without
/// the call: hostile text repeats one construct hundreds of thousands of times.
#[pyfunction]
fn opener_reports<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    reserved: Vec<String>,
    family: &str,
    describe: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let (bracket, fam) = match family {
        "angle" => (false, core::Family::Angle),
        "bracket" => (true, core::Family::Bracket),
        _ => return Err(PyValueError::new_err("family must be angle or bracket")),
    };
    let names = names_for(reserved, true, true)?;
    let found = detached(py, s.len(), || core::openers_of(s, &names, &[fam]));
    let b = s.as_bytes();
    let n = s.chars().count();
    type Reading<'a> = (core::Kind, &'a str, bool, usize, usize);
    // The previous record's reading is this one's, most often as the same name of the table (one
    // address): the bytes are compared only when the addresses differ (a byte comparison per
    // record was 15% of the time of `<|a>` repeated).
    let same = |a: &Reading<'_>, b: &Reading<'_>| {
        a.0 == b.0
            && a.2 == b.2
            && a.3 == b.3
            && a.4 == b.4
            && (std::ptr::eq(a.1, b.1) || a.1 == b.1)
    };
    let mut cache: HashMap<Reading<'_>, Spans<'_, 'py>> = HashMap::new();
    let mut kinds: HashMap<core::Kind, Bound<'py, PyString>> = HashMap::new();
    let mut at = Cursor { b, cp: 0, byte: 0 };
    let mut out: Vec<Bound<'py, PyAny>> = Vec::new();
    // The last record answered without the call: its reading, the byte span its answer depends on,
    // and the answer. The next record with that reading is compared with it through the text's
    // periodicity (each byte about once), not a comparison of the whole span per record.
    let mut last: Option<(Reading<'_>, usize, usize, Answer<'py>)> = None;
    let mut periodic = core::repeats::Periodic::new(b, 4 * SPAN_MAX);
    for o in found.iter().filter(|o| o.family.is_bracket() == bracket) {
        let start = o.start_cp;
        let reading: Reading<'_> = (
            o.kind,
            o.name,
            o.slash,
            o.opener_end_cp - start,
            o.reading_end_cp.saturating_sub(start),
        );
        let from = at.to(start);
        // The previous record's answer, when this one has its reading and its text: hostile text
        // repeats one construct, and this spares hashing the reading and the span. (Any cached answer
        // whose reading and span match is the record's answer: the describers' claim, which
        // tests/scan/test_scan_native_records.py holds against the reference.)
        if let Some((r, at, len, answer)) = &mut last {
            if same(r, &reading) && periodic.holds(from - *at, from, from + *len) {
                push_moved(py, &mut out, answer, start)?;
                *at = from;
                continue;
            }
        }
        let mut hit = None;
        if let Some(spans) = cache.get(&reading) {
            for (len, answers) in spans {
                if start + len > n {
                    continue;
                }
                let to = at.to(start + len);
                at.to(start);
                if let Some((span, a)) = answers.get_key_value(&s[from..to]) {
                    hit = Some((*span, a));
                    break;
                }
            }
        }
        if let Some((span, answer)) = hit {
            push_moved(py, &mut out, answer, start)?;
            last = Some((reading, from, span.len(), answer.clone()));
            continue;
        }
        let kind = kinds
            .entry(o.kind)
            .or_insert_with_key(|k| PyString::new(py, k.as_str()))
            .clone();
        let got = describe.call1((
            start,
            o.opener_end_cp,
            kind,
            o.name,
            o.slash,
            o.reading_end_cp,
        ))?;
        let (until, reports): (Option<usize>, Bound<'py, PyList>) = got.extract()?;
        let mut answer: Answer<'py> = Vec::new();
        let mut cacheable = until.is_some_and(|u| u >= start && u - start <= SPAN_MAX && u <= n);
        for r in reports.iter() {
            let t = r.cast::<PyTuple>()?;
            let (a, e): (usize, usize) = (t.get_item(3)?.extract()?, t.get_item(4)?.extract()?);
            cacheable &= a >= start && e >= a;
            if cacheable {
                answer.push((
                    t.get_item(0)?,
                    t.get_item(1)?,
                    t.get_item(2)?,
                    a - start,
                    e - start,
                ));
            }
            out.push(r);
        }
        if let (true, Some(u)) = (cacheable, until) {
            let spans = cache.entry(reading).or_default();
            let len = u - start;
            let to = at.to(u);
            at.to(start);
            let span = &s[from..to];
            if let Some((_, answers)) = spans.iter_mut().find(|(l, _)| *l == len) {
                answers.insert(span, answer);
            } else if spans.len() < SPANS_PER_READING {
                spans.push((len, HashMap::from([(span, answer)])));
            }
        }
    }
    PyList::new(py, out)
}

/// A cached answer's reports, moved to the record that starts at `start`.
fn push_moved<'py>(
    py: Python<'py>,
    out: &mut Vec<Bound<'py, PyAny>>,
    answer: &Answer<'py>,
    start: usize,
) -> PyResult<()> {
    for (rule, severity, message, a, e) in answer {
        let report = (rule, severity, message, start + a, start + e)
            .into_pyobject(py)?
            .into_any();
        // A report of exact strs (and its two ints) holds no reference a cycle could run through:
        // it is taken off the collector's lists, as CPython's collector itself untracks such a
        // tuple at its first pass (hundreds of thousands of them in hostile text were walked by
        // every collection until then).
        if [rule, severity, message]
            .iter()
            .all(|v| v.is_exact_instance_of::<PyString>())
        {
            // SAFETY: `report` is a live tuple we hold; untracking only takes it off the lists.
            unsafe {
                if pyo3::ffi::PyObject_GC_IsTracked(report.as_ptr()) == 1 {
                    pyo3::ffi::PyObject_GC_UnTrack(report.as_ptr().cast());
                }
            }
        }
        out.push(report);
    }
    Ok(())
}

/// `text` for many strings: the temporary encodings of the non-ASCII ones, then the `str`s.
fn keeps_of<'py>(texts: &[Bound<'py, PyString>]) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
    texts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            if t.call_method0(intern!(t.py(), "isascii"))?.is_truthy()? {
                return Ok(None);
            }
            t.encode_utf8()
                .map(Some)
                .map_err(|_| SurrogateError::new_err(("text holds a lone surrogate", k)))
        })
        .collect()
}

fn strs_of<'a>(
    texts: &'a [Bound<'_, PyString>],
    keeps: &'a [Option<Bound<'_, PyBytes>>],
) -> PyResult<Vec<&'a str>> {
    texts
        .iter()
        .zip(keeps)
        .enumerate()
        .map(|(k, (t, keep))| match keep {
            Some(b) => Ok(encoded_str(b)), // made by `text`'s encoder
            None => t
                .to_str()
                .map_err(|_| SurrogateError::new_err(("text holds a lone surrogate", k))),
        })
        .collect()
}

/// openers_many(texts, reserved) -> [openers(text, reserved) for text in texts], on every core.
#[pyfunction]
fn openers_many<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let names = names_for(reserved, true, true)?;
    let keeps = keeps_of(&texts)?;
    let strs = strs_of(&texts, &keeps)?;
    let total: usize = strs.iter().map(|s| s.len()).sum();
    let found: Vec<Vec<core::OpenerReading<'_>>> = if total >= DETACH_BYTES && strs.len() > 1 {
        py.detach(|| strs.par_iter().map(|s| core::openers(s, &names)).collect())
    } else {
        strs.iter().map(|s| core::openers(s, &names)).collect()
    };
    let lists = found
        .iter()
        .map(|f| opener_tuples(py, f))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, lists)
}

/// defang_many(texts, level, reserved) -> [str]: `defang` of each text, on every core.
#[pyfunction]
fn defang_many<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
    level: &str,
    reserved: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let lvl = self::level(level)?;
    let names = names_for(reserved, true, true)?;
    let keeps = keeps_of(&texts)?;
    let strs = strs_of(&texts, &keeps)?;
    let total: usize = strs.iter().map(|s| s.len()).sum();
    let work = |s: &&str| -> Option<String> {
        match core::defang(s, lvl, &names) {
            Cow::Borrowed(_) => None,
            Cow::Owned(o) => Some(o),
        }
    };
    let outs: Vec<Option<String>> = if total >= DETACH_BYTES && strs.len() > 1 {
        py.detach(|| strs.par_iter().map(work).collect())
    } else {
        strs.iter().map(work).collect()
    };
    let items: Vec<Bound<'py, PyString>> = texts
        .iter()
        .zip(outs)
        .map(|(t, o)| match o {
            None => t.clone(),
            Some(s) => PyString::new(py, &s),
        })
        .collect();
    PyList::new(py, items)
}

/// A run `(start, end)` in code points.
type Span = (usize, usize);

/// sanitize_events(text, first=False) -> (impossible runs, invisible runs): the runs of characters
/// XML cannot carry and of invisible text to strip (`envelope.invisible`), in code points.
#[pyfunction]
#[pyo3(signature = (text, first = false))]
fn sanitize_events(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    first: bool,
) -> PyResult<(Vec<Span>, Vec<Span>)> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let ev = detached(py, s.len(), || core::sanitize_events(s, first));
    Ok((ev.impossible, ev.invisible))
}

/// xml_unescape_text(text) -> str: `levels.xml_unescape_text` (the four references the XML
/// text escape writes); returns ``text`` itself when nothing changes.
#[pyfunction]
fn xml_unescape_text<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyString>> {
    run(py, text, core::xml_unescape)
}

/// decode_escapes(text, rounds) -> str | None: `scan._base._decode_escapes(text)` (HTML references,
/// backslash, percent, quoted-printable and UTF-7 escapes, in up to `rounds` rounds), or `None` where
/// that answer holds a lone surrogate (a UTF-7 segment decoding to one); `text` itself when nothing
/// changes.
#[pyfunction]
fn decode_escapes<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    rounds: usize,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let mut keep = None;
    let s = self::text(text, &mut keep)?;
    let out = detached(py, s.len(), || {
        core::unescape::decode_escapes(s, rounds).map(|o| (o != s).then_some(o))
    });
    let_go(None, 0, keep);
    Ok(out.map(|o| match o {
        Some(o) => PyString::new(py, &o),
        None => text.clone(),
    }))
}

/// xml_body_is(got, text, start, end, utf8=None) -> bool: is `got` exactly
/// `"\n" + xml_unescape_text(text[start:end]) + "\n"` (the strict XML reader's text of the raw body
/// `text[start:end]`, as verify compares them)? Compared as it goes: no unescaped text, no
/// concatenation. The body is found in the caller's UTF-8 copy of `text` when it is handed one, read
/// in place for an ASCII `text`, else sliced and encoded.
#[pyfunction]
#[pyo3(signature = (got, text, start, end, utf8=None))]
fn xml_body_is<'py>(
    py: Python<'py>,
    got: &Bound<'py, PyString>,
    text: &Bound<'py, PyString>,
    start: usize,
    end: usize,
    utf8: Option<&Bound<'py, Utf8>>,
) -> PyResult<bool> {
    let n = text.len()?;
    let end = end.min(n);
    let start = start.min(end);
    let mut keep = None;
    let copy = utf8.map(|u| u.get());
    let part;
    let raw = match utf8.map(|u| copy_of(u, text, &mut keep)).transpose()? {
        Some(Some(all)) => match copy {
            Some(c) => &all[c.byte_at(all.as_bytes(), start)..c.byte_at(all.as_bytes(), end)],
            None => all,
        },
        // `str.isascii` reads a flag of the string: no pass over it.
        _ if text.call_method0(intern!(py, "isascii"))?.is_truthy()? => {
            &self::text(text, &mut keep)?[start..end]
        }
        _ => {
            let range = pyo3::types::PySlice::new(py, to_isize(start)?, to_isize(end)?, 1);
            part = text.get_item(range)?.cast_into::<PyString>()?;
            self::text(&part, &mut keep)?
        }
    };
    let mut keep_got = None;
    let g = self::text(got, &mut keep_got)?;
    Ok(detached(py, raw.len(), || {
        g.len() >= 2
            && g.starts_with('\n')
            && g.ends_with('\n')
            && core::xml_unescaped_equals(raw, &g[1..g.len() - 1])
    }))
}

/// find_ascii(text, needle, start) -> int | None: `text.find(needle, start)` (-1 when absent) for an
/// ASCII `text`, read in place (its code points are its bytes), or `None` for any other text (the
/// caller searches with `str.find`).
#[pyfunction]
fn find_ascii(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    needle: &str,
    start: usize,
) -> PyResult<Option<isize>> {
    if !text.call_method0(intern!(py, "isascii"))?.is_truthy()? {
        return Ok(None);
    }
    let mut keep = None;
    let s = self::text(text, &mut keep)?;
    let found = detached(py, s.len(), || core::find_from(s, needle, start));
    found.map_or(Ok(Some(-1)), |k| to_isize(k).map(Some))
}

/// classes_present(text, classes) -> [bool]: for each class (inclusive code point ranges),
/// whether one of its characters occurs in `text` (the scanner skips a pass whose class is absent).
#[pyfunction]
fn classes_present(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    classes: Vec<Vec<(u32, u32)>>,
) -> PyResult<Vec<bool>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    Ok(detached(py, s.len(), || core::classes_present(s, &classes)))
}

/// class_runs(text, ranges, limit=None, shortest=1) -> [(start, end)] | None: the maximal runs of
/// at least `shortest` characters in the inclusive code point `ranges` (code points;
/// `core::classes::class_runs`), `None` for a range no table should hold or past `limit` runs.
#[pyfunction]
#[pyo3(signature = (text, ranges, limit = None, shortest = 1))]
fn class_runs(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    ranges: Vec<(u32, u32)>,
    limit: Option<usize>,
    shortest: usize,
) -> PyResult<Option<Vec<(usize, usize)>>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let limit = limit.unwrap_or(usize::MAX);
    let runs = detached(py, s.len(), || {
        core::class_runs(s, &ranges, limit, shortest)
    });
    Ok(runs.map(|r| spans_in_code_points(s, r)))
}

/// words_with_runs(text, hidden, word) -> [(start, end)] | None: `scan.hidden._words_with_invisibles`
/// over every maximal run of the `hidden` ranges, the words of `word` characters holding runs of one to
/// three (code points; `core::classes::words_with_runs`), `None` for a range no table should hold.
#[pyfunction]
fn words_with_runs(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    hidden: Vec<(u32, u32)>,
    word: Vec<(u32, u32)>,
) -> PyResult<Option<Vec<(usize, usize)>>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let found = detached(py, s.len(), || core::words_with_runs(s, &hidden, &word));
    Ok(found.map(|w| spans_in_code_points(s, w)))
}

/// The trigger set last built from an exact tuple, with that tuple (held, so that its address stays
/// its own) and the bounds: the scanner hands the same cached tuple of 114 sequences to every call,
/// and building the set cost more than the sift of a small file.
struct BuiltTriggers {
    from: Py<PyTuple>,
    b64_min: usize,
    hex_min: usize,
    built: Arc<core::Triggers>,
}

static TRIGGERS: Mutex<Option<BuiltTriggers>> = Mutex::new(None);

/// The trigger set of `seqs` (a sequence of bytes): the one last built when `seqs` is that very
/// exact tuple (immutable, its items too) with the same bounds, else built (and kept, for a tuple).
fn triggers_of(
    seqs: &Bound<'_, PyAny>,
    b64_min: usize,
    hex_min: usize,
) -> PyResult<Arc<core::Triggers>> {
    let tuple = seqs
        .is_exact_instance_of::<PyTuple>()
        .then(|| seqs.cast::<PyTuple>().ok())
        .flatten();
    if let Some(t) = tuple {
        let guard = TRIGGERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = guard.as_ref() {
            if last.from.is(t) && last.b64_min == b64_min && last.hex_min == hex_min {
                return Ok(Arc::clone(&last.built));
            }
        }
    }
    // Not under the lock: extracting runs Python code (a collection), which could scan again.
    let items: Vec<Vec<u8>> = seqs.extract()?;
    let built = Arc::new(core::Triggers::new(items, b64_min, hex_min));
    if let Some(t) = tuple {
        // Every item an exact bytes: nothing in the tuple can change while it is held.
        if t.iter().all(|x| x.is_exact_instance_of::<PyBytes>()) {
            let kept = BuiltTriggers {
                from: t.clone().unbind(),
                b64_min,
                hex_min,
                built: Arc::clone(&built),
            };
            let old = TRIGGERS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .replace(kept);
            drop(old); // the tuple it held is released with the lock free
        }
    }
    Ok(built)
}

/// blob_runs(text, triggers, all=False) -> [(start, end)]: the scanner's base64 runs (code points),
/// every one with `all`, else only those its blobs pass could report from, a decoding holding one
/// of the byte sequences `triggers` (`core::blobs`).
#[pyfunction]
#[pyo3(signature = (text, triggers, b64_min, hex_min, all = false))]
fn blob_runs(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    triggers: &Bound<'_, PyAny>,
    b64_min: usize,
    hex_min: usize,
    all: bool,
) -> PyResult<Vec<(usize, usize)>> {
    let triggers = triggers_of(triggers, b64_min, hex_min)?;
    let triggers = &*triggers;
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let runs = detached(py, s.len(), || core::blob_runs(s, all, triggers));
    Ok(spans_in_code_points(s, runs))
}

/// blob_holds(data, triggers, b64_min, hex_min) -> bool: whether `data` holds one of the byte
/// sequences `triggers` (`encoded._trigger_re(triggers).search(data)`; the set is kept as for
/// `blob_runs`).
#[pyfunction]
fn blob_holds(
    py: Python<'_>,
    data: &[u8],
    triggers: &Bound<'_, PyAny>,
    b64_min: usize,
    hex_min: usize,
) -> PyResult<bool> {
    let triggers = triggers_of(triggers, b64_min, hex_min)?;
    Ok(detached(py, data.len(), || triggers.found_in(data)))
}

/// line_markers(text, markers) -> [(start, end)]: the scanner's prose turn markers at line starts
/// (code points; `core::prose::line_markers`, ASCII case folding only).
#[pyfunction]
fn line_markers(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    markers: Vec<String>,
) -> PyResult<Vec<(usize, usize)>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let m: Vec<&str> = markers.iter().map(String::as_str).collect();
    let spans = detached(py, s.len(), || core::line_markers(s, &m));
    Ok(spans_in_code_points(s, spans))
}

/// attribute_injections(text, names) -> [(start, end, name_start, name_end)]: the scanner's quote +
/// envelope attribute name + `=` (code points; `core::prose::attribute_injections`).
#[pyfunction]
fn attribute_injections(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    names: Vec<String>,
) -> PyResult<Vec<(usize, usize, usize, usize)>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let n: Vec<&str> = names.iter().map(String::as_str).collect();
    let found = detached(py, s.len(), || core::attribute_injections(s, &n));
    let mut cc = core::CpCounter::new(s);
    Ok(found
        .into_iter()
        .map(|(a, e, na, ne)| {
            let a = cc.at(a);
            let na = cc.at(na);
            let ne = cc.at(ne);
            (a, cc.at(e), na, ne)
        })
        .collect())
}

/// ascii_word_starts(text, words) -> [int] | None: the code-point offsets of every occurrence of
/// any of `words`, ASCII case-insensitively, sorted, each once (`core::prose::ascii_word_starts`);
/// `None` for an empty or non-ASCII word.
#[pyfunction]
fn ascii_word_starts(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    words: Vec<String>,
) -> PyResult<Option<Vec<usize>>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let found = detached(py, s.len(), || core::ascii_word_starts(s, &w));
    Ok(found.map(|starts| {
        let mut cc = core::CpCounter::new(s);
        starts.into_iter().map(|a| cc.at(a)).collect()
    }))
}

/// The last `Loud` set built, and the characters it was built from (one scan after another asks
/// for the same one).
static LOUD: Mutex<Option<(String, Arc<core::Loud>)>> = Mutex::new(None);

fn loud_of(chars: &str) -> Arc<core::Loud> {
    let mut guard = LOUD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((from, built)) = guard.as_ref() {
        if from == chars {
            return Arc::clone(built);
        }
    }
    let built = Arc::new(core::Loud::new(chars));
    *guard = Some((chars.to_owned(), Arc::clone(&built)));
    built
}

/// scheme_starts(text, schemes, limit, loud=None) -> [[int] | None] | None: for each `(introducer,
/// second, third)`, the code-point offsets where it starts, or `None` past `limit` of them
/// (`core::escapes::scheme_starts`); `None` in all when a scheme is not ASCII bytes (the caller then
/// runs its regexes over the whole text). `loud`: the characters an escape must decode to to
/// matter; a start of a quiet escape (`core::escapes::quiet_at`) is then left out. `copies`: the
/// copies of an escape after it for which the pass's regex rejects it; such a start
/// (`core::escapes::repeated_at`) is left out too.
#[pyfunction]
#[pyo3(signature = (text, schemes, limit, loud = None, copies = None))]
fn scheme_starts(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    schemes: Vec<(String, String, String)>,
    limit: usize,
    loud: Option<&str>,
    copies: Option<usize>,
) -> PyResult<Option<Vec<Option<Vec<usize>>>>> {
    let Some(schemes) = schemes
        .iter()
        .map(|(i, s2, s3)| core::SchemeStart::new(i, s2, s3))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let loud = loud.map(loud_of);
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let mut found = detached(py, s.len(), || {
        core::scheme_starts(s, &schemes, limit, loud.as_deref(), copies)
    });
    if !s.is_ascii() {
        // One count of the text for every list: the starts of all schemes, in order.
        let mut all: Vec<(usize, usize, usize)> = found
            .iter()
            .enumerate()
            .flat_map(|(k, starts)| {
                starts
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(move |(j, &a)| (a, k, j))
            })
            .collect();
        all.sort_unstable();
        let mut cc = core::CpCounter::new(s);
        for (a, k, j) in all {
            if let Some(starts) = found[k].as_mut() {
                starts[j] = cc.at(a);
            }
        }
    }
    Ok(Some(found))
}

/// One distinct window after raw openers: its span (its first opener's) and every opener with it.
type RawWindow = (usize, usize, Vec<usize>);

/// openers_with_escapes(text, schemes, window) -> [(start, end, [starts])] | None: the windows of
/// the openers of either family whose reading may pass over an escape of one of `schemes`
/// (`(introducer, second, third)`, as for `scheme_starts`; `core::escapes::openers_with_escapes`),
/// one per distinct window text (`core::escapes::windows_by_text`), in the order of its first
/// opener: that window's span and the starts of every opener with that window, in code points;
/// `None` when a scheme is not ASCII bytes (the caller then runs the reference).
#[pyfunction]
fn openers_with_escapes(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    schemes: Vec<(String, String, String)>,
    window: usize,
) -> PyResult<Option<Vec<RawWindow>>> {
    let Some(schemes) = schemes
        .iter()
        .map(|(i, s2, s3)| core::SchemeStart::new(i, s2, s3))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let (heads, groups) = detached(py, s.len(), || {
        let heads = core::openers_with_escapes(s, &schemes, window);
        let groups = core::windows_by_text(s, &heads);
        (heads, groups)
    });
    // The heads' offsets increase (a window ends at or before the next opener): one count.
    let mut cc = core::CpCounter::new(s);
    let spans: Vec<(usize, usize)> = heads
        .iter()
        .map(|&(a, _, w)| (cc.at(a), cc.at(w)))
        .collect();
    Ok(Some(
        groups
            .into_iter()
            .map(|g| {
                let (a, w) = spans[g[0]];
                (a, w, g.into_iter().map(|k| spans[k].0).collect())
            })
            .collect(),
    ))
}

/// An exact token whose first character is encoded: the escape's start, the token's end, the token.
type PlanExact = (usize, usize, String);
/// One distinct window after an encoded opener: what the opener decodes to, the raw text's span, the
/// cut's sign, and every occurrence's start and finding end, flattened (native 64-bit words).
type PlanWindow<'py> = (Bound<'py, PyTuple>, (usize, usize), i8, Bound<'py, PyBytes>);

/// escape_plan(text, starts, openers, cut_at, introducers, ref_names, copies, window, exact)
/// -> (exact, windows, layered): the encoded pass's escapes, read and grouped
/// (`core::escape_plan`; `envelock.scan.encoded._escape_plan` is the reference), in code points;
/// A reading with a lone surrogate (a UTF-7 segment's) is made a `str` by Python's own decoder.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn escape_plan<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    starts: &str,
    openers: &str,
    cut_at: &str,
    introducers: &str,
    ref_names: Vec<(String, char)>,
    copies: usize,
    window: usize,
    exact: Vec<String>,
) -> PyResult<(Vec<PlanExact>, Vec<PlanWindow<'py>>, Vec<usize>)> {
    let sets = core::PlanSets {
        starts: core::CharSet::new(starts),
        openers: core::CharSet::new(openers),
        cut_at: core::CharSet::new(cut_at),
        introducers: core::CharSet::new(introducers),
        introducer_values: core::escape_plan::introducer_values(introducers),
        ref_names,
        copies,
        window,
        exact: core::ExactSet::new(&exact),
        memo_reads: core::escape_plan::READS,
    };
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let plan = detached(py, s.len(), || core::escape_plan(s, &sets));
    let text_of = |t: &Vec<u32>| -> PyResult<Bound<'py, PyAny>> {
        match t
            .iter()
            .map(|&v| char::from_u32(v))
            .collect::<Option<String>>()
        {
            Some(t) => Ok(PyString::new(py, &t).into_any()),
            None => {
                let raw: Vec<u8> = t.iter().flat_map(|v| v.to_le_bytes()).collect();
                PyBytes::new(py, &raw).call_method1("decode", ("utf-32-le", "surrogatepass"))
            }
        }
    };
    let opens = plan
        .opens
        .iter()
        .map(|d| PyTuple::new(py, d.iter().map(text_of).collect::<PyResult<Vec<_>>>()?))
        .collect::<PyResult<Vec<_>>>()?;
    // The raw text's span in code points, for the caller to slice its own text (the core may have
    // read a surrogate view of it); the groups come in the order of their first opener, so one count.
    let mut cc = core::CpCounter::new(s);
    let windows = plan
        .windows
        .into_iter()
        .map(|(id, (a, e), sign, occ)| {
            // The offsets as native 64-bit words (`memoryview(...).cast("Q")`): no `int` is made for
            // the occurrences of a window that reads as nothing, the hostile case.
            let raw: Vec<u8> = occ.iter().flat_map(|&v| (v as u64).to_ne_bytes()).collect();
            let span = (cc.at(a), cc.at(e));
            (opens[id].clone(), span, sign, PyBytes::new(py, &raw))
        })
        .collect();
    Ok((plan.exact, windows, plan.layered))
}

/// exact_tokens(text, reserved) -> [(start, end)]: every exact token of `text` (code points;
/// `core::exact::exact_tokens`, the reader's `exact_after` at each possible start).
#[pyfunction]
fn exact_tokens(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    reserved: Vec<String>,
) -> PyResult<Vec<(usize, usize)>> {
    let names = names_for(reserved, true, true)?;
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let found = detached(py, s.len(), || core::exact_tokens(s, &names));
    Ok(spans_in_code_points(s, found))
}

/// binary_group_starts(text) -> [int]: where the scanner's binary-groups regex may start (code
/// points, in order; `core::blobs::binary_group_starts`).
#[pyfunction]
fn binary_group_starts(text: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let mut keep = None;
    let s = text_any(text, &mut keep)?;
    let mut cc = core::CpCounter::new(s);
    Ok(core::binary_group_starts(s)
        .into_iter()
        .map(|a| cc.at(a))
        .collect())
}

/// skeleton(text) -> str: `reader.skeleton`.
#[pyfunction]
fn skeleton(text: &Bound<'_, PyString>) -> PyResult<String> {
    let mut keep = None;
    Ok(core::chars::skeleton(self::text(text, &mut keep)?))
}

/// The one code point of a marker (checked by `spotlight.marker_problem` on the Python side).
fn marker_char(marker: &str) -> PyResult<char> {
    let mut it = marker.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(PyValueError::new_err("a marker is exactly one code point")),
    }
}

fn owned<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyString>,
    f: impl Fn(&str) -> String + Send + Sync,
) -> PyResult<Bound<'py, PyString>> {
    run(py, input, |s| Cow::Owned(f(s)))
}

/// datamark(text, marker) -> str: `spotlight.datamark`.
#[pyfunction]
fn datamark<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    marker: &str,
) -> PyResult<Bound<'py, PyString>> {
    let m = marker_char(marker)?;
    owned(py, text, |s| core::spotlight::datamark(s, m))
}

/// undatamark(text, marker) -> str: `spotlight.undatamark`.
#[pyfunction]
fn undatamark<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    marker: &str,
) -> PyResult<Bound<'py, PyString>> {
    let m = marker_char(marker)?;
    owned(py, text, |s| core::spotlight::undatamark(s, m))
}

/// interleave(text, marker, seed) -> str: `spotlight.interleave` (seed: the int of the hex seed).
#[pyfunction]
fn interleave<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    marker: &str,
    seed: u64,
) -> PyResult<Bound<'py, PyString>> {
    let m = marker_char(marker)?;
    owned(py, text, |s| core::spotlight::interleave(s, m, seed))
}

/// uninterleave(text, marker) -> str: `spotlight.uninterleave`.
#[pyfunction]
fn uninterleave<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    marker: &str,
) -> PyResult<Bound<'py, PyString>> {
    let m = marker_char(marker)?;
    owned(py, text, |s| core::spotlight::uninterleave(s, m))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SurrogateError", m.py().get_type::<SurrogateError>())?;
    m.add("UNICODE_VERSION", core::tables::UNICODE_VERSION)?;
    m.add_function(wrap_pyfunction!(defang, m)?)?;
    m.add_function(wrap_pyfunction!(defang_body, m)?)?;
    m.add_function(wrap_pyfunction!(undefang, m)?)?;
    m.add_function(wrap_pyfunction!(undefang_body, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_body, m)?)?;
    m.add_function(wrap_pyfunction!(read_after, m)?)?;
    m.add_function(wrap_pyfunction!(read_bracket, m)?)?;
    m.add_function(wrap_pyfunction!(openers, m)?)?;
    m.add_function(wrap_pyfunction!(defang_many, m)?)?;
    m.add_function(wrap_pyfunction!(openers_many, m)?)?;
    m.add_function(wrap_pyfunction!(findings, m)?)?;
    m.add_function(wrap_pyfunction!(opener_reports, m)?)?;
    m.add_function(wrap_pyfunction!(starts_increase, m)?)?;
    m.add_function(wrap_pyfunction!(sanitize_events, m)?)?;
    m.add_function(wrap_pyfunction!(xml_unescape_text, m)?)?;
    m.add_function(wrap_pyfunction!(decode_escapes, m)?)?;
    m.add_function(wrap_pyfunction!(xml_body_is, m)?)?;
    m.add_function(wrap_pyfunction!(classes_present, m)?)?;
    m.add_function(wrap_pyfunction!(find_ascii, m)?)?;
    m.add_function(wrap_pyfunction!(blob_runs, m)?)?;
    m.add_function(wrap_pyfunction!(blob_holds, m)?)?;
    m.add_function(wrap_pyfunction!(binary_group_starts, m)?)?;
    m.add_function(wrap_pyfunction!(line_markers, m)?)?;
    m.add_function(wrap_pyfunction!(attribute_injections, m)?)?;
    m.add_function(wrap_pyfunction!(ascii_word_starts, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_starts, m)?)?;
    m.add_function(wrap_pyfunction!(openers_with_escapes, m)?)?;
    m.add_function(wrap_pyfunction!(escape_plan, m)?)?;
    m.add_function(wrap_pyfunction!(class_runs, m)?)?;
    m.add_function(wrap_pyfunction!(words_with_runs, m)?)?;
    m.add_function(wrap_pyfunction!(exact_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(skeleton, m)?)?;
    m.add_class::<Utf8>()?;
    m.add_function(wrap_pyfunction!(datamark, m)?)?;
    m.add_function(wrap_pyfunction!(undatamark, m)?)?;
    m.add_function(wrap_pyfunction!(interleave, m)?)?;
    m.add_function(wrap_pyfunction!(uninterleave, m)?)?;
    Ok(())
}
