//! Where the encoded pass's escapes can start (`envelock.scan.encoded._SCHEME_STARTS`): each scheme
//! is an introducer byte and the byte classes the next one or two bytes must be in, a necessary
//! condition the Python side derives from its regex and argues there. Here the text is only
//! searched for them; the regexes still decide every match (`tests/scan/test_scan_encoded_starts.py`
//! holds these starts equal to a Python loop and the windowed regex passes equal to whole ones).

/// One scheme's start: `introducer`, then a byte of `second`, then (when `third` is not empty) a byte
/// of `third`. All ASCII.
pub struct SchemeStart {
    introducer: u8,
    second: [bool; 256],
    third: Option<[bool; 256]>,
}

impl SchemeStart {
    /// `None` for a start that is not ASCII (the caller then runs its regex over the whole text).
    pub fn new(introducer: &str, second: &str, third: &str) -> Option<SchemeStart> {
        let set = |s: &str| {
            let mut t = [false; 256];
            s.bytes().for_each(|c| t[usize::from(c)] = true);
            t
        };
        let ascii = introducer.is_ascii() && second.is_ascii() && third.is_ascii();
        let introducer = match introducer.as_bytes() {
            [c] => *c,
            _ => return None,
        };
        (ascii && !second.is_empty()).then(|| SchemeStart {
            introducer,
            second: set(second),
            third: (!third.is_empty()).then(|| set(third)),
        })
    }

    fn starts_at(&self, b: &[u8], i: usize) -> bool {
        let second = b.get(i + 1).is_some_and(|&c| self.second[usize::from(c)]);
        second
            && self
                .third
                .as_ref()
                .map_or(true, |t| b.get(i + 2).is_some_and(|&c| t[usize::from(c)]))
    }
}

/// The byte offsets where each scheme can start, a sorted list per scheme, or `None` for a scheme
/// with more than `limit` starts (the caller then searches the whole text: where escapes are dense
/// its regex's own pass costs less than windows, and the search stops there, so a hostile run of
/// one escape is not collected). `memchr` finds each introducer (the bytes are sparse in most
/// text) and the next two bytes are looked up. Linear: one search of the text per scheme, a
/// bounded check per hit.
pub fn scheme_starts(s: &str, schemes: &[SchemeStart], limit: usize) -> Vec<Option<Vec<usize>>> {
    let b = s.as_bytes();
    schemes
        .iter()
        .map(|k| {
            let mut out = Vec::new();
            for i in memchr::memchr_iter(k.introducer, b) {
                if k.starts_at(b, i) {
                    if out.len() == limit {
                        return None;
                    }
                    out.push(i);
                }
            }
            Some(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_as_a_byte_loop_finds_them() {
        // Every string of up to 6 bytes over introducers, class bytes and others, against the
        // definition read position by position.
        let schemes = [
            SchemeStart::new("%", "uU3", "C").unwrap(),
            SchemeStart::new("\\", "\\u", "").unwrap(),
        ];
        let alphabet = [b'%', b'\\', b'u', b'3', b'C', b'x'];
        for len in 0..=6u32 {
            for mut k in 0..6usize.pow(len) {
                let mut v = Vec::new();
                for _ in 0..len {
                    v.push(alphabet[k % 6]);
                    k /= 6;
                }
                let s = String::from_utf8(v).unwrap();
                let b = s.as_bytes();
                let want: Vec<Vec<usize>> = vec![
                    (0..b.len())
                        .filter(|&i| {
                            b[i] == b'%'
                                && b.get(i + 1).is_some_and(|c| b"uU3".contains(c))
                                && b.get(i + 2) == Some(&b'C')
                        })
                        .collect(),
                    (0..b.len())
                        .filter(|&i| {
                            b[i] == b'\\' && b.get(i + 1).is_some_and(|c| b"\\u".contains(c))
                        })
                        .collect(),
                ];
                // Every limit: the list while it holds at most that many, else none.
                for limit in 0..=3 {
                    let capped: Vec<Option<Vec<usize>>> = want
                        .iter()
                        .map(|w| (w.len() <= limit).then(|| w.clone()))
                        .collect();
                    assert_eq!(scheme_starts(&s, &schemes, limit), capped, "{s:?} {limit}");
                }
            }
        }
    }

    #[test]
    fn a_start_that_is_not_one_ascii_byte_is_refused() {
        assert!(SchemeStart::new("%%", "u", "").is_none());
        assert!(SchemeStart::new("\u{ff05}", "u", "").is_none());
        assert!(SchemeStart::new("%", "\u{ff55}", "").is_none());
        assert!(SchemeStart::new("%", "", "").is_none());
    }
}
