//! `modeleye.Names`: the skeletons the reader looks for, as a trie whose nodes are the
//! prefixes (`Names.viable`), marked where a reserved name or a token ends.

use crate::chars::{self, skeleton, CharReadings};
use crate::tables as t;

#[derive(Clone, Debug, Default)]
struct Node {
    children: Vec<(char, u32)>,
    /// The prefix this node spells (a reading's name).
    prefix: String,
    reserved: bool,
    token: bool,
}

/// A trie of skeletons.
#[derive(Clone, Debug)]
pub struct Trie {
    nodes: Vec<Node>,
}

impl Trie {
    fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    fn insert(&mut self, s: &str) -> u32 {
        let mut cur = 0u32;
        for c in s.chars() {
            cur = match self.child(cur, c) {
                Some(k) => k,
                None => {
                    let id = self.nodes.len() as u32;
                    let mut prefix = self.nodes[cur as usize].prefix.clone();
                    prefix.push(c);
                    self.nodes.push(Node {
                        prefix,
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

    #[inline]
    pub fn is_reserved(&self, node: u32) -> bool {
        self.nodes[node as usize].reserved
    }

    #[inline]
    pub fn is_token(&self, node: u32) -> bool {
        self.nodes[node as usize].token
    }

    pub fn prefix(&self, node: u32) -> &str {
        &self.nodes[node as usize].prefix
    }
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

/// The names the angle reader looks for (`names_for(reserved)`, or a `Names(...)` built with
/// fewer tokens or without pipes) and the bracket tokens (`Names.brackets`).
#[derive(Clone, Debug)]
pub struct Names {
    pub trie: Trie,
    pub pipes: bool,
    pub brackets: Trie,
    /// The reserved skeletons, sorted (as `Names.reserved`).
    pub reserved: Vec<String>,
    /// What the reader does with an ASCII character that is the first after the lead
    /// (`FIRST_*`), for the angle reading and the bracket reading.
    pub angle_first: [u8; 128],
    pub bracket_first: [u8; 128],
}

/// Undecided by the first character: read on.
pub const FIRST_SLOW: u8 = 0;
/// Every reading of the first character dies at once and it ends the reading: none.
pub const FIRST_NONE: u8 = 1;
/// Every reading dies at once; a letter or digit: only a namespace prefix can go on.
pub const FIRST_NAMESPACE: u8 = 2;

/// How a first ASCII character is read against a trie (see `FIRST_*`).
fn first_class(trie: &Trie, c: u8, pipes: bool, bracket: bool) -> u8 {
    let ch = c as char;
    let f = chars::flags(ch);
    let lead = chars::SKIP | chars::SLASH | if bracket { 0 } else { chars::BANG };
    if c == b'&' || f & lead != 0 || (!bracket && pipes && f & chars::PIPE != 0) {
        return FIRST_SLOW;
    }
    let parts = match chars::readings(ch) {
        CharReadings::Skip => return FIRST_SLOW,
        r => r.to_vec(),
    };
    for p in &parts {
        let Some(first) = p.chars().next() else {
            return FIRST_SLOW;
        };
        if trie.child(0, first).is_some() || p.ends_with(':') {
            return FIRST_SLOW;
        }
    }
    if bracket || f & chars::ALNUM == 0 {
        FIRST_NONE
    } else {
        FIRST_NAMESPACE
    }
}

impl Names {
    /// `names_for(reserved)` (with `tokens=false`: no angle tokens; `pipes=false`: no bars).
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
        if tokens {
            for tk in t::ANGLE_TOKEN_NAMES {
                let k = trie.insert(&skeleton(tk));
                trie.nodes[k as usize].token = true;
            }
        }
        let mut brackets = Trie::new();
        for tk in t::BRACKET_TOKEN_NAMES {
            let k = brackets.insert(&skeleton(tk));
            brackets.nodes[k as usize].token = true;
        }
        let mut angle_first = [FIRST_SLOW; 128];
        let mut bracket_first = [FIRST_SLOW; 128];
        for c in 0..128u8 {
            angle_first[usize::from(c)] = first_class(&trie, c, pipes, false);
            bracket_first[usize::from(c)] = first_class(&brackets, c, pipes, true);
        }
        Ok(Names {
            trie,
            pipes,
            brackets,
            reserved: res,
            angle_first,
            bracket_first,
        })
    }

    /// `names_for()`: the default reserved names, every token, pipes.
    pub fn default_names() -> Names {
        Names::new(t::RESERVED_NAMES, true, true).expect("default names have skeletons")
    }
}
