use std::collections::HashMap;

pub struct Cache<S, K> { map: HashMap<K, S> }

impl<S: Clone, K: std::hash::Hash + Eq> Cache<S, K> {
    pub fn get(&self, k: &K) -> Option<S> { self.map.get(k).cloned() }
}

fn cmp<'a>(a: &'a str, b: &'a str) -> bool { a.len() < b.len() }

const ESC: &str = "\u{1F600} \x41 \\u003e";
