//! `reader.Names`: the skeletons the reader looks for, as a trie whose nodes are the prefixes
//! (`Names.viable`), marked where a reserved name, a `<NAME>`/`[NAME]` token or a namespace token
//! (`dsml:`) ends; a token skeleton ending in `#` is a placeholder family (`special#`: any number).
//! Also the exact tokens (`exact_after`), matched as a tokenizer matches them, not as skeletons.

use crate::chars::{self, skeleton, CharReadings};
use crate::tables as t;

/// What a digit reads as in a skeleton (`reader._DIGIT_READINGS`: `0` is `o`, `1` is `l`).
pub const DIGIT_READINGS: &str = "ol23456789";
/// A placeholder family's number in a stored skeleton (`reader.NUMBER`).
pub const NUMBER: char = '#';

/// Is every character of the non-empty reading `p` a digit reading (it extends a placeholder)?
#[inline]
pub fn is_digit_reading(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(is_digit_byte)
}

const fn digit_bytes() -> [bool; 256] {
    let mut set = [false; 256];
    let b = DIGIT_READINGS.as_bytes();
    let mut k = 0;
    while k < b.len() {
        set[b[k] as usize] = true;
        k += 1;
    }
    set
}

static DIGIT_BYTES: [bool; 256] = digit_bytes();

/// Is `b` one of [`DIGIT_READINGS`] (all ASCII)?
#[inline]
pub fn is_digit_byte(b: u8) -> bool {
    DIGIT_BYTES[usize::from(b)]
}

#[derive(Clone, Debug, Default)]
struct Node {
    children: Vec<(char, u32)>,
    /// The prefix this node spells (a reading's name).
    prefix: String,
    reserved: bool,
    token: bool,
    namespace: bool,
    /// A plain-word `<NAME>` token (`Names.quotable`): not read as one when quoted with guillemets.
    quotable: bool,
    /// The prefix ends in `#` (a placeholder family's number: more digits keep it).
    hash_end: bool,
    /// The prefix is a prefix of a reserved skeleton (the stand-in rule may apply from here).
    on_reserved: bool,
    /// A stand-in took the place of a letter in this prefix (`reader.STOOD_IN`): the node is in
    /// the copy of the reserved names that no path from the root reaches.
    stood: bool,
    /// The states one stand-in takes this node to (`reader._stand_in`): the stood node of each
    /// reserved child, in code point order.
    stand: Vec<u32>,
    /// Letters stood in for characters of a reserved name in this prefix (`reader.LETTERED`): the
    /// node is in the copy of the reserved names' spellings (with or without each separator).
    lettered: bool,
    /// A lettered node that spells a reserved skeleton whole (its separators aside): `whole_name`.
    whole: bool,
    whole_name: String,
    /// A lettered node at a separator position (`Names._hold`): it may read past a character.
    hold: bool,
    /// The states one letter stand-in takes this node to (`reader._letter_in`): the lettered node
    /// of each character a spelling of a reserved name has next, in code point order.
    letter: Vec<u32>,
    /// The stem of a `<NAME|>` token (`Names.bar_closed`): the token's node (0: none).
    bar_token: u32,
}

/// A trie of skeletons.
#[derive(Clone, Debug)]
pub struct Trie {
    nodes: Vec<Node>,
    /// Is the empty skeleton a prefix of a name (is anything inserted)?
    root_live: bool,
}

impl Trie {
    fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
            root_live: false,
        }
    }

    fn insert(&mut self, s: &str) -> u32 {
        self.root_live = true;
        self.insert_from(0, s)
    }

    /// Insert `s` below `from` (the root, or the root of the stood copy).
    fn insert_from(&mut self, from: u32, s: &str) -> u32 {
        let mut cur = from;
        for c in s.chars() {
            cur = match self.child(cur, c) {
                Some(k) => k,
                None => {
                    let id = u32::try_from(self.nodes.len()).expect("fewer than 2**32 nodes");
                    let mut prefix = self.nodes[cur as usize].prefix.clone();
                    prefix.push(c);
                    self.nodes.push(Node {
                        prefix,
                        hash_end: c == NUMBER,
                        ..Node::default()
                    });
                    let ch = &mut self.nodes[cur as usize].children;
                    let at = ch.partition_point(|&(x, _)| x < c);
                    ch.insert(at, (c, id));
                    id
                }
            };
        }
        cur
    }

    #[inline]
    pub fn child(&self, node: u32, c: char) -> Option<u32> {
        let ch = &self.nodes[node as usize].children;
        if ch.len() <= 8 {
            ch.iter().find(|&&(x, _)| x == c).map(|&(_, k)| k)
        } else {
            ch.binary_search_by(|&(x, _)| x.cmp(&c))
                .ok()
                .map(|k| ch[k].1)
        }
    }

    /// Is the prefix of `node` live (`t in live`): every node is, the root when a name exists.
    #[inline]
    pub fn is_live(&self, node: u32) -> bool {
        node != 0 || self.root_live
    }

    #[inline]
    pub fn is_reserved(&self, node: u32) -> bool {
        self.nodes[node as usize].reserved
    }

    #[inline]
    pub fn is_token(&self, node: u32) -> bool {
        self.nodes[node as usize].token
    }

    /// The `<NAME|>` token whose stem `node` spells (`Names._bar_closed`), if any.
    #[inline]
    pub fn bar_token(&self, node: u32) -> Option<u32> {
        match self.nodes[node as usize].bar_token {
            0 => None,
            k => Some(k),
        }
    }

    #[inline]
    pub fn is_namespace(&self, node: u32) -> bool {
        self.nodes[node as usize].namespace
    }

    /// `t in names._quotable`: a plain-word token (`reader.quotable_angle_names`).
    #[inline]
    pub fn is_quotable(&self, node: u32) -> bool {
        self.nodes[node as usize].quotable
    }

    /// The state a digit reading takes `node` to (`_step`): `node` itself when it ends in `#`,
    /// else its `#` child, if live.
    #[inline]
    pub fn digit_node(&self, node: u32) -> Option<u32> {
        if self.nodes[node as usize].hash_end {
            Some(node)
        } else {
            self.child(node, NUMBER)
        }
    }

    pub fn prefix(&self, node: u32) -> &str {
        &self.nodes[node as usize].prefix
    }

    /// Did a stand-in take the place of a letter in this state?
    #[inline]
    pub fn is_stood(&self, node: u32) -> bool {
        self.nodes[node as usize].stood
    }

    /// The states a stand-in takes `node` to (empty when no reserved name goes on from it).
    #[inline]
    pub fn stand(&self, node: u32) -> &[u32] {
        &self.nodes[node as usize].stand
    }

    /// Did letters stand in for characters of a reserved name in this state (`reader.LETTERED`)?
    #[inline]
    pub fn is_lettered(&self, node: u32) -> bool {
        self.nodes[node as usize].lettered
    }

    /// The reserved skeleton a lettered node spells whole, if it does.
    #[inline]
    pub fn whole_name(&self, node: u32) -> Option<&str> {
        let n = &self.nodes[node as usize];
        n.whole.then_some(n.whole_name.as_str())
    }

    /// May a lettered node read past a character (a separator position of its name)?
    #[inline]
    pub fn holds(&self, node: u32) -> bool {
        self.nodes[node as usize].hold
    }

    /// The states a letter stand-in takes `node` to (empty off the reserved names, and for a
    /// stood node).
    #[inline]
    pub fn letter(&self, node: u32) -> &[u32] {
        &self.nodes[node as usize].letter
    }

    /// The letter stand-in rule's states: a copy of every spelling of the reserved names (with or
    /// without [`SEPARATOR`] at each separator position) below a root no path reaches (its nodes
    /// `lettered`), and for every node on a reserved skeleton and every lettered node the
    /// lettered node of each character a spelling has next.
    fn add_letter_stand_ins<S: AsRef<str>>(&mut self, spelled: &[S]) {
        let mut spellings: Vec<String> = Vec::new();
        let mut seps: Vec<String> = Vec::new();
        for name in spelled {
            let (skel, at) = separator_positions(name.as_ref());
            seps.extend(at.iter().cloned());
            spellings.extend(with_separators(&skel, &at));
        }
        if spellings.is_empty() {
            return;
        }
        spellings.sort();
        spellings.dedup();
        let root = u32::try_from(self.nodes.len()).expect("fewer than 2**32 nodes");
        self.nodes.push(Node::default());
        for sp in &spellings {
            let k = self.insert_from(root, sp);
            let whole: String = sp.chars().filter(|&c| c != SEPARATOR).collect();
            let n = &mut self.nodes[k as usize];
            n.whole = true;
            n.whole_name = whole;
        }
        for k in (root as usize + 1)..self.nodes.len() {
            let n = &mut self.nodes[k];
            n.lettered = true;
            n.hold = n.prefix.ends_with(SEPARATOR) || seps.contains(&n.prefix);
            n.letter = n.children.iter().map(|&(_, c)| c).collect();
        }
        for k in 0..root as usize {
            let n = &self.nodes[k];
            if !n.on_reserved || n.stood {
                continue;
            }
            let mut w = Some(root);
            for x in n.prefix.chars() {
                w = w.and_then(|w| self.child(w, x));
            }
            if let Some(w) = w {
                let letter = self.nodes[w as usize]
                    .children
                    .iter()
                    .map(|&(_, c)| c)
                    .collect();
                self.nodes[k].letter = letter;
            }
        }
    }

    /// The stand-in rule's states: a copy of the reserved skeletons below a root no path reaches
    /// (its nodes `stood`), and for every node on a reserved skeleton the copy's node of each
    /// reserved child.
    fn add_stand_ins(&mut self, reserved: &[String]) {
        for r in reserved {
            let mut cur = 0u32;
            self.nodes[0].on_reserved = true;
            for c in r.chars() {
                cur = self
                    .child(cur, c)
                    .expect("a reserved skeleton is in the trie");
                self.nodes[cur as usize].on_reserved = true;
            }
        }
        if reserved.is_empty() {
            return;
        }
        let root = u32::try_from(self.nodes.len()).expect("fewer than 2**32 nodes");
        self.nodes.push(Node::default());
        for r in reserved {
            let k = self.insert_from(root, r);
            self.nodes[k as usize].reserved = true;
        }
        for k in (root as usize + 1)..self.nodes.len() {
            self.nodes[k].stood = true;
        }
        for k in 0..root as usize {
            if !self.nodes[k].on_reserved {
                continue;
            }
            let mut stand = Vec::new();
            for &(_, child) in &self.nodes[k].children {
                if self.nodes[child as usize].on_reserved {
                    let mut w = root;
                    for x in self.nodes[child as usize].prefix.chars() {
                        w = self
                            .child(w, x)
                            .expect("the copy holds every reserved prefix");
                    }
                    stand.push(w);
                }
            }
            self.nodes[k].stand = stand;
        }
    }
}

/// How a separator a letter stood for is spelled in a lettered state (`reader.SEPARATOR`).
pub const SEPARATOR: char = '_';

/// `reader._spellings`: the skeleton of a reserved name and its separator positions (the skeleton
/// prefixes after which the name has a character the eye reads past, letters before and after).
fn separator_positions(name: &str) -> (String, Vec<String>) {
    let mut skel = String::new();
    let mut seps: Vec<String> = Vec::new();
    for c in name.chars() {
        let r = skeleton(c.encode_utf8(&mut [0u8; 4]));
        if r.is_empty() && !skel.is_empty() && !seps.contains(&skel) {
            seps.push(skel.clone());
        }
        skel.push_str(&r);
    }
    seps.retain(|p| *p != skel);
    (skel, seps)
}

/// `reader._with_separators`: every spelling of `skel` with or without [`SEPARATOR`] at each
/// separator position.
fn with_separators(skel: &str, seps: &[String]) -> Vec<String> {
    let mut out = vec![String::new()];
    for (k, c) in skel.char_indices() {
        if seps.iter().any(|p| p.as_str() == &skel[..k]) {
            let more: Vec<String> = out.iter().map(|o| format!("{o}{SEPARATOR}")).collect();
            out.extend(more);
        }
        for o in &mut out {
            o.push(c);
        }
    }
    out
}

/// Why a set of names cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmptySkeleton;

impl std::fmt::Display for EmptySkeleton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a reserved name has an empty skeleton")
    }
}

impl std::error::Error for EmptySkeleton {}

/// The exact tokens (`Names.exact`), by first character: the rests, longest first (then in
/// code-point order), as `reader.exact_after` tries them.
#[derive(Clone, Debug)]
pub struct Exact {
    by_first: Vec<(char, Vec<String>)>,
    /// 1 + the index in `by_first` of an ASCII first character (0: none), without a search.
    ascii: [u8; 128],
    /// For each entry of `by_first`, the first bytes of its rests and `&` as a 256-bit set (all
    /// bits for an empty rest): most escape-point candidates are rejected by one lookup.
    seconds: Vec<[u64; 4]>,
    /// The first characters that are not openers (`reference.exact_start_re`: `>`, `]`, `｜`):
    /// the escape points of `defang_exact`.
    pub starts: Vec<char>,
    /// The distinct first UTF-8 bytes of `starts` (what a scan looks for).
    pub start_bytes: Vec<u8>,
    /// The distinct first UTF-8 bytes of every first character (where `exact_tokens` looks).
    pub first_bytes: Vec<u8>,
    /// The bytes that may follow an `&` whose reference is for a first character: `#` and the
    /// first letter of every HTML5 name for a first character or for `&` (which may stand in front
    /// of another reference). A quick test, exact when it says no (`reader::exact_after`).
    ref_seconds: [bool; 256],
    /// For each entry of `by_first`, the bytes that may follow an `&` whose reference is for the
    /// first character of one of its rests (or for `&`), as `ref_seconds` is for first characters.
    rest_ref_seconds: Vec<[bool; 256]>,
}

/// The distinct first UTF-8 bytes of `chars`, in order.
fn lead_bytes<'a>(chars: impl IntoIterator<Item = &'a char>) -> Vec<u8> {
    let mut out: Vec<u8> = chars
        .into_iter()
        .map(|c| {
            let mut buf = [0u8; 4];
            c.encode_utf8(&mut buf).as_bytes()[0]
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Exact {
    fn new(tokens: &[&str]) -> Exact {
        let mut by_first: Vec<(char, Vec<String>)> = Vec::new();
        for tok in tokens {
            let mut it = tok.chars();
            let Some(first) = it.next() else { continue };
            let rest = it.as_str().to_string();
            match by_first.iter_mut().find(|(c, _)| *c == first) {
                Some((_, v)) => v.push(rest),
                None => by_first.push((first, vec![rest])),
            }
        }
        for (_, v) in &mut by_first {
            v.sort();
            v.dedup();
            // Longest first (in code points), then in code-point order (UTF-8 order is the same).
            v.sort_by(|a, b| {
                b.chars()
                    .count()
                    .cmp(&a.chars().count())
                    .then_with(|| a.cmp(b))
            });
        }
        by_first.sort_by_key(|(c, _)| *c);
        let seconds = by_first
            .iter()
            .map(|(_, rests)| {
                // `&`: a rest may begin with a reference (`reader::exact_after`).
                let mut set = [0u64; 4];
                set[usize::from(b'&' >> 6)] |= 1 << (b'&' & 63);
                for r in rests {
                    match r.as_bytes().first() {
                        Some(&b) => set[usize::from(b >> 6)] |= 1 << (b & 63),
                        None => set = [u64::MAX; 4],
                    }
                }
                set
            })
            .collect();
        let starts: Vec<char> = by_first
            .iter()
            .map(|(c, _)| *c)
            .filter(|&c| !chars::has(c, chars::LT) && !chars::has(c, chars::LBRACKET))
            .collect();
        let start_bytes = lead_bytes(&starts);
        let first_bytes = lead_bytes(by_first.iter().map(|(c, _)| c));
        let mut ascii = [0u8; 128];
        for (k, (c, _)) in by_first.iter().enumerate() {
            if c.is_ascii() {
                ascii[*c as usize] = u8::try_from(k + 1).unwrap_or(0);
            }
        }
        // A token that starts with `&` itself (a team's): every `&` may start one.
        // The bytes after an `&` whose reference may begin with one of `chars` (its value's first
        // character: `&fjlig;` is `fj`), or be `&`, in front of another reference; every byte when
        // one of `chars` is `&` itself.
        let ref_bytes = |chars: &[char]| {
            let mut set = [chars.contains(&'&'); 256];
            set[usize::from(b'#')] = true;
            for (name, value) in t::HTML5 {
                if value
                    .chars()
                    .next()
                    .is_some_and(|c| c == '&' || chars.contains(&c))
                {
                    set[usize::from(name.as_bytes()[0])] = true;
                }
            }
            set
        };
        let firsts: Vec<char> = by_first.iter().map(|(c, _)| *c).collect();
        let ref_seconds = ref_bytes(&firsts);
        let rest_ref_seconds = by_first
            .iter()
            .map(|(_, rests)| {
                let heads: Vec<char> = rests.iter().filter_map(|r| r.chars().next()).collect();
                ref_bytes(&heads)
            })
            .collect();
        Exact {
            by_first,
            ascii,
            seconds,
            starts,
            start_bytes,
            first_bytes,
            ref_seconds,
            rest_ref_seconds,
        }
    }

    /// May a reference for the first character of a rest of `c` start at an `&` followed by the
    /// byte `next` (`&lt;` before `NAME>` is none: no rest of `<` starts with `<`)?
    #[inline]
    pub fn may_begin_rest(&self, c: char, next: Option<u8>) -> bool {
        let k = if c.is_ascii() {
            match self.ascii[c as usize] {
                0 => return false,
                k => usize::from(k) - 1,
            }
        } else {
            match self.by_first.binary_search_by_key(&c, |(x, _)| *x) {
                Ok(k) => k,
                Err(_) => return false,
            }
        };
        self.rest_ref_seconds[k][usize::from(next.unwrap_or(b'&'))]
    }

    /// The longest rest, in bytes (0: none).
    pub fn longest_rest(&self) -> usize {
        self.by_first
            .iter()
            .flat_map(|(_, rests)| rests.iter().map(String::len))
            .max()
            .unwrap_or(0)
    }

    /// May a reference for a first character start at an `&` followed by the byte `next`?
    #[inline]
    pub fn may_be_reference(&self, next: Option<u8>) -> bool {
        // At the end of the text: only a token that starts with `&` (no HTML5 name starts with `&`,
        // so its entry is set exactly then).
        self.ref_seconds[usize::from(next.unwrap_or(b'&'))]
    }

    /// The rests of the exact tokens starting with `c` that may match a text going on with the
    /// byte `next` (`None`: the text ends), longest first; empty if none.
    #[inline]
    pub fn rests(&self, c: char, next: Option<u8>) -> &[String] {
        let k = if c.is_ascii() {
            match self.ascii[c as usize] {
                0 => return &[],
                k => usize::from(k) - 1,
            }
        } else {
            match self.by_first.binary_search_by_key(&c, |(x, _)| *x) {
                Ok(k) => k,
                Err(_) => return &[],
            }
        };
        let set = &self.seconds[k];
        let may = match next {
            Some(b) => set[usize::from(b >> 6)] & (1 << (b & 63)) != 0,
            None => *set == [u64::MAX; 4],
        };
        if may {
            &self.by_first[k].1
        } else {
            &[]
        }
    }

    /// May an exact token start at the ASCII byte `c` followed by the byte `next` (a quick
    /// test, exact when it says no: `next` is a backslash, or may start a rest of `c`)?
    #[inline]
    pub fn may_start(&self, c: u8, next: Option<u8>) -> bool {
        match self.ascii[usize::from(c & 0x7F)] {
            0 => false,
            k => match next {
                Some(b'\\') => true,
                Some(b) => {
                    self.seconds[usize::from(k) - 1][usize::from(b >> 6)] & (1 << (b & 63)) != 0
                }
                None => self.seconds[usize::from(k) - 1] == [u64::MAX; 4],
            },
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_first.is_empty()
    }

    /// The first characters of the exact tokens.
    pub fn firsts(&self) -> impl Iterator<Item = char> + '_ {
        self.by_first.iter().map(|(c, _)| *c)
    }
}

/// The names the angle reader looks for (`names_for(reserved)`, or a `Names(reserved, (), pipes)`
/// built without tokens), the bracket tokens (`Names.brackets`) and the exact tokens.
#[derive(Clone, Debug)]
pub struct Names {
    pub trie: Trie,
    pub pipes: bool,
    pub brackets: Trie,
    /// The reserved skeletons, sorted (as `Names.reserved`).
    pub reserved: Vec<String>,
    pub exact: Exact,
    /// What the reader does with an ASCII character that is the first after the lead
    /// (`FIRST_*`), for the angle reading and the bracket reading.
    pub angle_first: [u8; 128],
    pub bracket_first: [u8; 128],
    /// Is an ASCII character of the lead inert (it starts no name state: `_lead` keeps no
    /// pending state for it), for the angle reading and the bracket reading?
    pub angle_lead_inert: [bool; 128],
    pub bracket_lead_inert: [bool; 128],
    /// The child of the angle trie's root for each ASCII character (0: none; the root is no
    /// one's child): the root has too many children for a short scan.
    pub angle_root: [u32; 128],
}

/// Undecided by the first character: read on.
pub const FIRST_SLOW: u8 = 0;
/// Every reading of the first character dies at once and it ends the reading: none.
pub const FIRST_NONE: u8 = 1;
/// Every reading dies at once; a letter or digit: only a namespace prefix can go on.
pub const FIRST_NAMESPACE: u8 = 2;

/// Does the reading `p`, from the root, start nothing (no live state, no accepted name)?
fn inert_from_root(trie: &Trie, p: &str) -> bool {
    match p.chars().next() {
        None => false,
        Some(first) => {
            trie.child(0, first).is_none() && !(is_digit_reading(p) && trie.digit_node(0).is_some())
        }
    }
}

/// How a first ASCII character is read against a trie (see `FIRST_*`).
fn first_class(trie: &Trie, c: u8, pipes: bool, bracket: bool) -> u8 {
    let ch = c as char;
    let f = chars::flags(ch);
    let lead = chars::CAN_SKIP | chars::SLASH | if bracket { 0 } else { chars::BANG };
    if c == b'&' || f & lead != 0 || ((bracket || pipes) && f & chars::PIPE != 0) {
        return FIRST_SLOW;
    }
    let parts = match chars::readings(ch) {
        CharReadings::Skip => return FIRST_SLOW,
        r => r.to_vec(),
    };
    for p in &parts {
        if !inert_from_root(trie, p) || (!bracket && p.ends_with(':')) {
            return FIRST_SLOW;
        }
    }
    if bracket || f & chars::ALNUM == 0 || f & (chars::LT | chars::LBRACKET) != 0 {
        FIRST_NONE
    } else {
        FIRST_NAMESPACE
    }
}

/// Is the ASCII lead character `c` inert against `trie` (every reading starts nothing)?
fn lead_inert(trie: &Trie, c: u8) -> bool {
    match chars::readings(c as char) {
        CharReadings::Skip => true,
        r => r.to_vec().iter().all(|p| inert_from_root(trie, p)),
    }
}

/// `reader.name_skeleton`: the skeleton of a token name, its first `#` kept (`SPECIAL_#` -> `special#`).
pub fn name_skeleton(name: &str) -> String {
    match name.split_once(NUMBER) {
        None => skeleton(name),
        Some((head, tail)) => {
            let mut out = skeleton(head);
            out.push(NUMBER);
            out.push_str(&skeleton(tail));
            out
        }
    }
}

fn token_skeletons(names: &[&str], patterns: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = names
        .iter()
        .map(|n| name_skeleton(n))
        .chain(
            patterns
                .iter()
                .map(|p| name_skeleton(&format!("{p}{NUMBER}"))),
        )
        .filter(|s| !s.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Names {
    /// `names_for(reserved)` (with `tokens=false`: `Names(reserved, (), pipes)`, no token of any
    /// kind; `pipes=false`: no bars).
    pub fn new<S: AsRef<str>>(
        reserved: &[S],
        tokens: bool,
        pipes: bool,
    ) -> Result<Names, EmptySkeleton> {
        let mut res: Vec<String> = Vec::new();
        for r in reserved {
            let sk = skeleton(r.as_ref());
            if sk.is_empty() {
                return Err(EmptySkeleton);
            }
            res.push(sk);
        }
        res.sort();
        res.dedup();
        let mut trie = Trie::new();
        for r in &res {
            let k = trie.insert(r);
            trie.nodes[k as usize].reserved = true;
        }
        let mut brackets = Trie::new();
        let mut exact = Exact::new(&[]);
        if tokens {
            for tk in token_skeletons(t::ANGLE_TOKEN_NAMES, t::ANGLE_TOKEN_PATTERNS) {
                let k = trie.insert(&tk);
                trie.nodes[k as usize].token = true;
            }
            // `reader.bar_closed`: the stem of every `<NAME|>` token, whose skeleton is a prefix of
            // the token's (a node on its path).
            for name in t::ANGLE_TOKEN_NAMES {
                if name
                    .chars()
                    .last()
                    .is_some_and(|c| chars::has(c, chars::PIPE))
                {
                    let stem = name_skeleton(name.trim_end_matches(|c| chars::has(c, chars::PIPE)));
                    let tok = name_skeleton(name);
                    if !stem.is_empty() && tok.starts_with(&stem) && tok != stem {
                        let k = trie.insert(&tok);
                        let p = trie.insert(&stem);
                        trie.nodes[p as usize].bar_token = k;
                    }
                }
            }
            for name in t::QUOTABLE_ANGLE_TOKEN_NAMES {
                // Every one is an angle token (a skeleton already in the trie).
                let k = trie.insert(&skeleton(name));
                if trie.nodes[k as usize].token {
                    trie.nodes[k as usize].quotable = true;
                }
            }
            for ns in t::NAMESPACE_TOKEN_NAMES {
                let k = trie.insert(&format!("{}:", skeleton(ns)));
                trie.nodes[k as usize].namespace = true;
            }
            for tk in token_skeletons(t::BRACKET_TOKEN_NAMES, t::BRACKET_TOKEN_PATTERNS) {
                let k = brackets.insert(&tk);
                brackets.nodes[k as usize].token = true;
            }
            exact = Exact::new(t::EXACT_TOKENS);
        }
        trie.add_stand_ins(&res);
        trie.add_letter_stand_ins(reserved);
        let mut angle_first = [FIRST_SLOW; 128];
        let mut bracket_first = [FIRST_SLOW; 128];
        let mut angle_lead_inert = [false; 128];
        let mut bracket_lead_inert = [false; 128];
        let mut angle_root = [0u32; 128];
        for c in 0..128u8 {
            let k = usize::from(c);
            angle_first[k] = first_class(&trie, c, pipes, false);
            bracket_first[k] = first_class(&brackets, c, pipes, true);
            angle_lead_inert[k] = lead_inert(&trie, c);
            bracket_lead_inert[k] = lead_inert(&brackets, c);
            angle_root[k] = trie.child(0, c as char).unwrap_or(0);
        }
        Ok(Names {
            trie,
            pipes,
            brackets,
            reserved: res,
            exact,
            angle_first,
            bracket_first,
            angle_lead_inert,
            bracket_lead_inert,
            angle_root,
        })
    }

    /// `names_for()`: the default reserved names, every token, pipes.
    pub fn default_names() -> Names {
        Names::new(t::RESERVED_NAMES, true, true).expect("default names have skeletons")
    }
}
