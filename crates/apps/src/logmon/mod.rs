//! `logmon`: a log monitor in the style of AWS CloudWatch Logs as Ensō §7.3.4 runs it: log lines arrive
//! in UDP payloads as a byte stream per flow, lines may be split across packets, and a set of regular
//! expressions from Fail2ban's filters is matched against every line in streaming mode ([`matcher`]).
//! Matches are counted per pattern; the packets are consumed. A payload that ends in the traffic
//! generator's stamp (`traffic::Payload::Logs`, whole lines a frame) is matched without it.
//!
//! Parameters: `patterns=FILE` (lines `name regex`; default: the shipped `fail2ban.txt`), `target=NAME`
//! only the patterns whose name starts with NAME (e.g. `sshd`, as Ensō's per-application targets;
//! default all), `flows=N` flows tracked per core (default 64K; packets of further flows are matched
//! statelessly and lines split across their packets are missed).
//!
//! What matching costs: for the ten targets of Ensō Figure 19, what Hyperscan costs for them
//! ([`hyperscan`], measured), one call per run of text that lies back to back in memory (an Ensō pipe's
//! packets, only the next frame's headers between them, which the call scans too, as the artifact's
//! `enso_log_monitor` hands Hyperscan each batch the pipe returns) and one per packet otherwise (the
//! artifact's `dpdk_log_monitor` calls it once per mbuf). For any other pattern set, what rxlab's DFA
//! costs: its transition loads and [`matcher`]'s work per byte.

pub mod hyperscan;
pub mod matcher;

use crate::params::Reader;
use crate::{App, AppError, flow};
use hyperscan::ScanCost;
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, NoProbe, Packet, Probe};
use matcher::{Matcher, Stream};
use rustc_hash::FxHashMap;
use wire::stamp::STAMP_LEN;
use wire::{FiveTuple, Stamp};

/// The shipped pattern set.
pub const FAIL2BAN: &str = include_str!("fail2ban.txt");
/// Cycles to hash the 5-tuple for the flow-state lookup (FxHash over about 40 bytes).
const FLOW_HASH_WORK: u32 = 12;
/// Most bytes between one text's end and the next one's start for one Hyperscan call to scan both: a
/// frame's stamp, its padding to Ensō's 64 B quantum, the next message header and frame headers fit.
const RUN_GAP: usize = 192;

/// The log monitor.
#[derive(Debug)]
pub struct LogMon {
    matcher: Matcher,
    /// Hyperscan's measured cost, when the target is one of Figure 19's ten; else the DFA's.
    cost: Option<ScanCost>,
    flows: FxHashMap<FiveTuple, Stream>,
    max_flows: usize,
    counts: Vec<u64>,
    lines: u64,
    matched_lines: u64,
    malformed: u64,
    untracked: u64,
}

impl LogMon {
    /// Build from parameters (see the module documentation).
    pub fn new(mut r: Reader<'_>) -> Result<LogMon, AppError> {
        let list = match r.path("patterns") {
            Some(path) => std::fs::read_to_string(&path)
                .map_err(|e| r.error("patterns", format!("cannot read {}: {e}", path.display())))?,
            None => FAIL2BAN.to_string(),
        };
        let mut patterns = Matcher::parse_list(&list).map_err(|e| r.error("patterns", e))?;
        let target = r.parsed("target", |s| Ok(s.to_string()))?;
        if let Some(target) = &target {
            patterns.retain(|(name, _)| name.starts_with(target.as_str()));
            if patterns.is_empty() {
                return Err(r.error("target", format!("no pattern name starts with '{target}'")));
            }
        }
        let cost = target.as_deref().and_then(hyperscan::cost);
        let max_flows = r.count("flows", 65536, 1..=100_000_000)? as usize;
        let matcher = Matcher::new(&patterns).map_err(|e| r.error("patterns", e))?;
        r.finish()?;
        let counts = vec![0; matcher.names().len()];
        Ok(LogMon {
            matcher,
            cost,
            flows: FxHashMap::default(),
            max_flows,
            counts,
            lines: 0,
            matched_lines: 0,
            malformed: 0,
            untracked: 0,
        })
    }

    /// Lines matched by each pattern so far, by pattern name.
    pub fn matches(&self) -> impl Iterator<Item = (&str, u64)> {
        self.matcher.names().iter().map(String::as_str).zip(self.counts.iter().copied())
    }
}

impl App for LogMon {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, _: &mut Vec<Packet<'c>>) {
        let LogMon { matcher, cost, flows, max_flows, counts, lines, matched_lines, malformed, untracked } = self;
        // Where the text of the current Hyperscan call ends in memory.
        let mut call_end: Option<usize> = None;
        for mut pkt in rx.drain(..) {
            let Ok(v) = flow::parse(p, &mut pkt) else {
                *malformed += 1;
                continue;
            };
            p.work(FLOW_HASH_WORK);
            let mut scratch = matcher.stream();
            let tracked = flows.len() < *max_flows || flows.contains_key(v.five_tuple());
            let stream = if tracked { flows.entry(*v.five_tuple()).or_default() } else { &mut scratch };
            if !tracked {
                *untracked += 1;
            }
            p.write(stream);
            let payload = v.payload_offset()..v.payload_offset() + v.payload().len();
            // The text: the payload in the first segment, then the second segment where a split design
            // left the rest in NIC memory; a generated log frame's stamp at its end is no part of it
            // (`traffic::Payload::Logs`).
            let head = (pkt.addr() + payload.start, &pkt[payload]);
            let mut pieces = [head, (pkt.tail_addr().unwrap_or(0), pkt.tail().unwrap_or(&[]))];
            let last = if pieces[1].1.is_empty() { 0 } else { 1 };
            if let Some(at) = pieces[last].1.len().checked_sub(STAMP_LEN)
                && Stamp::read(&pieces[last].1[at..]).is_some()
            {
                pieces[last].1 = &pieces[last].1[..at];
            }
            for (addr, text) in pieces.into_iter().filter(|(_, t)| !t.is_empty()) {
                p.touch(addr, text.len(), Access::Read);
                let on_line = |set: u64| {
                    *lines += 1;
                    *matched_lines += u64::from(set != 0);
                    let mut s = set;
                    while s != 0 {
                        counts[s.trailing_zeros() as usize] += 1;
                        s &= s - 1;
                    }
                };
                match cost {
                    Some(cost) => {
                        let gap = call_end.and_then(|end| addr.checked_sub(end)).filter(|&g| g <= RUN_GAP);
                        p.work(cost.cycles(gap.unwrap_or(0) + text.len(), gap.is_none()));
                        call_end = Some(addr + text.len());
                        stream.feed(&mut NoProbe::new(), matcher, text, on_line);
                    }
                    None => stream.feed(p, matcher, text, on_line),
                }
            }
        }
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        self.matcher.tables()
    }

    fn sends(&self) -> bool {
        false
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::from([
            ("lines".into(), self.lines as f64),
            ("matched_lines".into(), self.matched_lines as f64),
            ("drop_malformed".into(), self.malformed as f64),
            ("untracked_packets".into(), self.untracked as f64),
        ]);
        m.extend(self.matches().map(|(n, c)| (format!("match.{n}"), c as f64)));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::TestCore;
    use crate::params::AppParams;
    use ifaces::NoProbe;
    use traffic::logs::{LineGen, packetize};

    /// Per-line match sets from the `regex` crate, matching each whole line separately.
    fn reference(patterns: &[(String, String)], text: &str) -> Vec<u64> {
        let set = regex::bytes::RegexSetBuilder::new(patterns.iter().map(|(_, r)| r)).unicode(false).build().unwrap();
        text.lines().map(|l| set.matches(l.as_bytes()).iter().fold(0u64, |m, i| m | 1 << i)).collect()
    }

    fn tuple(port: u16) -> FiveTuple {
        FiveTuple {
            src: "10.9.0.1".parse().unwrap(),
            dst: "10.9.0.2".parse().unwrap(),
            src_port: port,
            dst_port: 514,
            proto: 17,
        }
    }

    #[test]
    fn streaming_matches_equal_a_reference_scan_of_whole_lines() {
        let patterns = Matcher::parse_list(FAIL2BAN).unwrap();
        let m = Matcher::new(&patterns).unwrap();
        let text = LineGen::new(5, 0.3).text(2000);
        let expect = reference(&patterns, &text);
        assert!(expect.iter().filter(|&&s| s != 0).count() > 400, "the generator must produce attacks");
        for chunk in [1, 7, 64, 1000, 1472] {
            let mut got = Vec::new();
            let mut s = m.stream();
            for piece in text.as_bytes().chunks(chunk) {
                s.feed(&mut NoProbe::new(), &m, piece, |set| got.push(set));
            }
            assert_eq!(got, expect, "chunks of {chunk} B");
        }
    }

    #[test]
    fn app_counts_per_pattern_over_interleaved_flows() {
        let patterns = Matcher::parse_list(FAIL2BAN).unwrap();
        let texts = [LineGen::new(1, 0.5).text(500), LineGen::new(2, 0.5).text(500)];
        let mut expect = vec![0u64; patterns.len()];
        for t in &texts {
            for set in reference(&patterns, t) {
                (0..patterns.len()).filter(|i| set >> i & 1 == 1).for_each(|i| expect[i] += 1);
            }
        }
        let a = packetize(texts[0].as_bytes(), tuple(1), 1000).unwrap();
        let b = packetize(texts[1].as_bytes(), tuple(2), 333).unwrap();
        let mut frames: Vec<Vec<u8>> = Vec::new();
        for i in 0..a.len().max(b.len()) {
            frames.extend(a.get(i).cloned());
            frames.extend(b.get(i).cloned());
            if i % 5 == 0 {
                frames.push(vec![0xAB; 30]);
            }
        }
        let core = TestCore::new();
        let mut app = LogMon::new(AppParams::new().reader("logmon")).unwrap();
        for burst in frames.chunks(32) {
            assert!(core.run(&mut app, burst).is_empty(), "the monitor consumes its packets");
        }
        let got: Vec<u64> = app.matches().map(|(_, c)| c).collect();
        assert_eq!(got, expect);
        assert_eq!(app.metrics()["lines"], 1000.0);
        assert!(app.metrics()["drop_malformed"] > 0.0);
        let sshd = LogMon::new(AppParams::new().with("target", "sshd").reader("logmon")).unwrap();
        assert!(sshd.matches().all(|(n, _)| n.starts_with("sshd")) && sshd.matches().count() == 4);
        assert!(LogMon::new(AppParams::new().with("target", "nothing").reader("logmon")).is_err());
    }

    /// `count` 1518 B frames of the traffic generator's log lines over `flows` flows.
    fn log_frames(flows: usize, attack_share: f64, count: usize) -> Vec<Vec<u8>> {
        let c = traffic::GenConfig {
            flows,
            size: traffic::SizeSpec::Fixed(1518),
            payload: traffic::Payload::Logs(traffic::logs::LogConfig { attack_share }),
            ..traffic::GenConfig::default()
        };
        traffic::Generator::new(&c).unwrap().packets(count).into_iter().map(|p| p.data).collect()
    }

    /// A target of Ensō Fig. 19 is charged Hyperscan's measured cost, one call per packet where packets lie
    /// apart (pool buffers): two targets differ by exactly their scans of each payload.
    #[test]
    fn a_measured_target_is_charged_one_hyperscan_call_per_scattered_packet() {
        let frames = log_frames(1, 0.01, 8);
        let cycles = |target: &str| {
            let core = TestCore::new();
            let mut app = LogMon::new(AppParams::new().with("target", target).reader("logmon")).unwrap();
            let mut p = ifaces::probe::CountingProbe::default();
            core.run_with(&mut app, &mut p, &frames);
            p.cycles
        };
        let text: Vec<usize> = frames
            .iter()
            .map(|f| {
                let v = wire::PacketView::new_checked(&f[..]).unwrap();
                v.payload().len() - STAMP_LEN
            })
            .collect();
        let (apache, postfix) = (hyperscan::cost("apache").unwrap(), hyperscan::cost("postfix").unwrap());
        let expect: u64 =
            text.iter().map(|&n| u64::from(apache.cycles(n, true)) - u64::from(postfix.cycles(n, true))).sum();
        assert_eq!(cycles("apache") - cycles("postfix"), expect);
    }

    /// Packets that lie back to back in memory, as in an Ensō pipe (frames at 64 B quanta), share one
    /// Hyperscan call: beyond the first, each is charged its bytes and the bytes between, and no call.
    #[test]
    #[allow(unsafe_code)]
    fn back_to_back_packets_share_one_hyperscan_call() {
        let frames = log_frames(1, 0.01, 4);
        let offsets: Vec<usize> = frames
            .iter()
            .scan(0, |at, f| {
                let o = *at;
                *at += f.len().div_ceil(64) * 64;
                Some(o)
            })
            .collect();
        let mut pipe = vec![0u8; offsets[3] + frames[3].len()];
        for (&o, f) in offsets.iter().zip(&frames) {
            pipe[o..o + f.len()].copy_from_slice(f);
        }
        let core = TestCore::new();
        let base = pipe.as_mut_ptr();
        let mut rx: Vec<Packet<'_>> = offsets
            .iter()
            .zip(&frames)
            .enumerate()
            .map(|(i, (&o, f))| {
                let len = f.len() as u32;
                // SAFETY: each packet covers its own frame's bytes of `pipe`, which outlives the packets
                // (the app drops them), and nothing else touches `pipe` meanwhile.
                unsafe { Packet::lent(core.core(), std::ptr::NonNull::new(base.add(o)).unwrap(), len, len, i as u64) }
            })
            .collect();
        let mut app = LogMon::new(AppParams::new().with("target", "postfix").reader("logmon")).unwrap();
        let mut p = ifaces::probe::CountingProbe::default();
        app.process(&mut p, core.core(), &mut rx, &mut Vec::new());
        let contiguous = p.cycles;
        core.core().take_returned(&mut Vec::new());
        let mut p = ifaces::probe::CountingProbe::default();
        core.run_with(
            &mut LogMon::new(AppParams::new().with("target", "postfix").reader("logmon")).unwrap(),
            &mut p,
            &frames,
        );
        let scattered = p.cycles;
        let cost = hyperscan::cost("postfix").unwrap();
        let text = |i: usize| wire::PacketView::new_checked(&frames[i][..]).unwrap().payload().len() - STAMP_LEN;
        let (mut expect_scattered, mut expect_contiguous) = (0u64, u64::from(cost.cycles(text(0), true)));
        for i in 0..4 {
            expect_scattered += u64::from(cost.cycles(text(i), true));
            if i > 0 {
                let payload = |i: usize| offsets[i] + frames[i].len() - text(i) - STAMP_LEN;
                let gap = payload(i) - payload(i - 1) - text(i - 1);
                assert!(gap <= RUN_GAP, "gap {gap}");
                expect_contiguous += u64::from(cost.cycles(gap + text(i), false));
            }
        }
        assert_eq!(scattered - contiguous, expect_scattered - expect_contiguous);
    }

    /// The traffic generator's log frames (whole lines, then its stamp): every line is counted once and the
    /// stamp is matched as no part of any.
    #[test]
    fn generated_log_frames_are_matched_without_their_stamp() {
        let frames = log_frames(4, 0.3, 64);
        let sent: usize = frames
            .iter()
            .map(|f| {
                let v = wire::PacketView::new_checked(&f[..]).unwrap();
                let text = &v.payload()[..v.payload().len() - STAMP_LEN];
                text.iter().filter(|&&b| b == b'\n').count()
            })
            .sum();
        let core = TestCore::new();
        let mut app = LogMon::new(AppParams::new().reader("logmon")).unwrap();
        for burst in frames.chunks(32) {
            core.run(&mut app, burst);
        }
        let m = app.metrics();
        assert_eq!(m["lines"], sent as f64);
        assert!(m["matched_lines"] > sent as f64 * 0.2, "{} of {sent}", m["matched_lines"]);
    }
}
