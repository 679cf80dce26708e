//! Multi-pattern matching of log lines in streaming mode, as Hyperscan's streaming mode does for Ensō's
//! log monitor (Ensō §7.3.4). The patterns of each target (the name before the first `.`, e.g. `sshd`) are
//! compiled together into one DFA (regex-automata's dense DFA, unanchored, reporting all patterns), copied
//! into a flat transition table whose entries are premultiplied row offsets. One DFA per target rather
//! than one for all: patterns with `.*` multiply each other's states when combined (the whole shipped set
//! exceeds 200 MB as one DFA, one target at a time is under 200 KB), which is also why Ensō runs one
//! target at a time.
//!
//! A [`Stream`] carries one flow's states across packet boundaries, so a line split between packets is
//! matched as if it had arrived whole. Lines end at `\n`; each line is matched on its own (`^` and `$` are
//! the line's start and end).

use ifaces::Probe;
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::{start, syntax};
use regex_automata::{Anchored, MatchKind};
use std::collections::HashMap;

/// Flag on a transition entry: the target state is a match state.
const MATCH: u32 = 1 << 31;
/// Most patterns one matcher holds (one bit each in a line's match set).
pub const MAX_PATTERNS: usize = 64;
/// Most targets (DFAs) one matcher holds.
pub const MAX_TARGETS: usize = 16;
/// Cycles per byte besides the transition load: the byte-class lookup, the add and the flag test.
const BYTE_WORK: u32 = 2;
/// Limit on one compiled DFA: a target whose patterns explode is rejected rather than run slowly.
const DFA_LIMIT: usize = 32 << 20;

/// One target's patterns as a flat DFA.
#[derive(Debug, Clone)]
struct Dfa {
    classes: [u8; 256],
    stride: usize,
    /// `trans[state + class]`: the next state's offset, with [`MATCH`] if it is a match state.
    trans: Vec<u32>,
    /// Patterns matched on entering each state (indexed by `offset / stride`), as global pattern bits.
    matches: Vec<u64>,
    /// Patterns matched when the line ends in each state.
    eoi: Vec<u64>,
}

impl Dfa {
    /// Compile `regexes`, whose match bits start at bit `first`.
    fn new(regexes: &[&str], first: usize) -> Result<Dfa, String> {
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Unanchored)
                    .dfa_size_limit(Some(DFA_LIMIT))
                    .determinize_size_limit(Some(DFA_LIMIT)),
            )
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .build_many(regexes)
            .map_err(|e| format!("cannot compile {regexes:?}: {e}"))?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::No))
            .map_err(|e| format!("cannot start the DFA: {e}"))?;
        // Byte classes: bytes the DFA never distinguishes share a column.
        let mut classes = [0u8; 256];
        let mut reps: Vec<u8> = Vec::new();
        let mut seen = HashMap::new();
        for b in 0..=255u8 {
            let c = dfa.byte_classes().get(b);
            classes[usize::from(b)] = *seen.entry(c).or_insert_with(|| {
                reps.push(b);
                (reps.len() - 1) as u8
            });
        }
        let stride = reps.len();
        // Breadth-first copy of the reachable states; the start state becomes offset 0.
        let mut index = HashMap::from([(start, 0usize)]);
        let mut order = vec![start];
        let mut trans = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            for &b in &reps {
                let t = dfa.next_state(s, b);
                let n = index.len();
                let ti = *index.entry(t).or_insert(n);
                if ti == n {
                    order.push(t);
                }
                let flag = if dfa.is_match_state(t) { MATCH } else { 0 };
                trans.push((ti * stride) as u32 | flag);
            }
            i += 1;
        }
        if trans.len() >= MATCH as usize {
            return Err("the patterns compile to too many DFA states".into());
        }
        let mask = |s| {
            if !dfa.is_match_state(s) {
                return 0u64;
            }
            (0..dfa.match_len(s)).fold(0, |m, k| m | 1u64 << (first + dfa.match_pattern(s, k).as_usize()))
        };
        let matches = order.iter().map(|&s| mask(s)).collect();
        let eoi = order.iter().map(|&s| mask(dfa.next_eoi_state(s))).collect();
        Ok(Dfa { classes, stride, trans, matches, eoi })
    }

    /// Run from state `s` over `bytes` (no newline among them), ORing matches into `line`; the end state.
    #[inline]
    fn run<P: Probe>(&self, p: &mut P, mut s: u32, bytes: &[u8], line: &mut u64) -> u32 {
        for &b in bytes {
            let t = &self.trans[s as usize + usize::from(self.classes[usize::from(b)])];
            p.read(t);
            let next = *t;
            s = next & !MATCH;
            if next & MATCH != 0 {
                *line |= self.matches[s as usize / self.stride];
            }
        }
        p.work(BYTE_WORK * bytes.len() as u32);
        s
    }

    /// Matches of a line that ends in state `s`.
    fn end(&self, s: u32) -> u64 {
        self.eoi[s as usize / self.stride]
    }
}

/// Compiled patterns: one DFA per target.
#[derive(Debug, Clone)]
pub struct Matcher {
    names: Vec<String>,
    dfas: Vec<Dfa>,
}

impl Matcher {
    /// The memory of every DFA's transition and match tables ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        use crate::span;
        let dfa = |d: &Dfa| {
            [
                span(d.trans.as_ptr(), d.trans.len()),
                span(d.matches.as_ptr(), d.matches.len()),
                span(d.eoi.as_ptr(), d.eoi.len()),
            ]
        };
        self.dfas.iter().flat_map(dfa).collect()
    }

    /// Compile `(name, regex)` pairs; names `target.rule` group patterns into one DFA per target.
    pub fn new(patterns: &[(String, String)]) -> Result<Matcher, String> {
        if patterns.is_empty() || patterns.len() > MAX_PATTERNS {
            return Err(format!("need 1 to {MAX_PATTERNS} patterns, got {}", patterns.len()));
        }
        let target = |n: &str| n.split('.').next().unwrap_or_default().to_string();
        // Keep the given order, grouping by target (each group's bits are contiguous).
        let mut sorted: Vec<&(String, String)> = patterns.iter().collect();
        sorted.sort_by_key(|(n, _)| patterns.iter().position(|(m, _)| target(m) == target(n)));
        let mut dfas = Vec::new();
        let mut first = 0;
        for group in sorted.chunk_by(|a, b| target(&a.0) == target(&b.0)) {
            let regexes: Vec<&str> = group.iter().map(|(_, r)| r.as_str()).collect();
            dfas.push(Dfa::new(&regexes, first)?);
            first += group.len();
        }
        if dfas.len() > MAX_TARGETS {
            return Err(format!("at most {MAX_TARGETS} targets, got {}", dfas.len()));
        }
        Ok(Matcher { names: sorted.iter().map(|(n, _)| n.clone()).collect(), dfas })
    }

    /// Parse a pattern list: one `name regex` per line (separated by whitespace); `#` comment lines.
    pub fn parse_list(text: &str) -> Result<Vec<(String, String)>, String> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|(n, l)| {
                let l = l.trim();
                let at = l.find(char::is_whitespace).ok_or(format!("line {}: expected 'name regex'", n + 1))?;
                Ok((l[..at].to_string(), l[at..].trim_start().to_string()))
            })
            .collect()
    }

    /// Pattern names, in bit order of the match sets (grouped by target).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A stream at the start of a line.
    pub fn stream(&self) -> Stream {
        Stream::default()
    }
}

/// One flow's matching state between packets: each DFA's state within the current line and the patterns
/// the line has matched so far. Start states are offset 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stream {
    states: [u32; MAX_TARGETS],
    line: u64,
}

impl Stream {
    /// Feed `bytes`; calls `on_line` with the match set of every line that ends within them. Each DFA
    /// scans a line segment in turn (the segment stays in L1); each transition read is reported.
    pub fn feed<P: Probe>(&mut self, p: &mut P, m: &Matcher, bytes: &[u8], mut on_line: impl FnMut(u64)) {
        for segment in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match segment.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (segment, false),
            };
            for (dfa, s) in m.dfas.iter().zip(self.states.iter_mut()) {
                *s = dfa.run(p, *s, body, &mut self.line);
            }
            if ends {
                let set = m.dfas.iter().zip(self.states.iter()).fold(self.line, |acc, (d, &s)| acc | d.end(s));
                on_line(set);
                *self = Stream::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::NoProbe;

    fn pats(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(n, r)| (n.to_string(), r.to_string())).collect()
    }

    fn lines(m: &Matcher, chunks: &[&[u8]]) -> Vec<u64> {
        let (mut s, mut out) = (m.stream(), Vec::new());
        for c in chunks {
            s.feed(&mut NoProbe::new(), m, c, |l| out.push(l));
        }
        out
    }

    #[test]
    fn overlapping_patterns_anchors_and_splits() {
        let m = Matcher::new(&pats(&[("a", "foo"), ("b", "fo+bar"), ("c", "^x"), ("d", "z$")])).unwrap();
        assert_eq!(lines(&m, &[b"foobar\nxz\nzx\n"]), vec![0b0011, 0b1100, 0b0000]);
        assert_eq!(lines(&m, &[b"fo", b"ob", b"ar\n", b"x", b"z", b"\n"]), vec![0b0011, 0b1100]);
        assert_eq!(m.names(), ["a", "b", "c", "d"]);
        assert!(Matcher::new(&pats(&[("bad", "(")])).is_err());
        assert!(Matcher::parse_list("# c\nname a+b\n").unwrap() == pats(&[("name", "a+b")]));
        assert!(Matcher::parse_list("lonely").is_err());
    }
}
