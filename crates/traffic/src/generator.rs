//! The synthetic traffic generator: seeded, deterministic, and cheap per packet.
//!
//! Construction does the expensive work once: it chooses the flows ([`crate::steer`]) and builds one
//! header template per flow ([`crate::template`]), both shared with the process's other generators of the
//! same flows (`chosen.rs`), and the samplers for flows and sizes. [`Generator::next_packet`]
//! then draws a group, a flow and a size, copies the template into the caller's buffer, stamps it and
//! advances the pacer: no allocation, no parsing.

use crate::chosen::Chosen;
use crate::config::{GenConfig, GenError, LoadSwitch, Payload};
use crate::flows::{FlowInfo, FlowSet, Picker};
use crate::kvs::client::Client;
use crate::kvs::proto::HEADER_LEN;
use crate::logs::LinePacker;
use crate::rate::Pacer;
use crate::sizes::{SizeDist, SizeSpec};
use crate::steer::Steering;
use crate::template::{Template, Templates, body_frame_len, min_frame_len};
use crate::trace::{OutputFormat, Trace, TraceError, TracePacket, TraceWriter};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::Path;
use std::sync::Arc;
use wire::frame::{FCS_LEN, MAX_FRAME};
use wire::stamp::STAMP_LEN;
use wire::{FrameSpec, IndirectionTable, L4Proto, Stamp};

/// Packets between two calls of [`Generator::write_trace`]'s progress callback.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// What the generator wrote into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketMeta {
    /// Send time in ns from the start of the stream (also in the stamp).
    pub ts_ns: u64,
    /// Bytes written: the frame length minus the FCS.
    pub len: usize,
    /// Index of the flow in [`Generator::flows`].
    pub flow: u32,
    /// Sequence number, from 0 (also in the stamp).
    pub seq: u64,
}

impl PacketMeta {
    /// The frame's length by rxlab's convention (FCS included).
    pub fn frame_len(&self) -> usize {
        self.len + FCS_LEN
    }
}

/// When a finite run of the generator stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After this many packets.
    Count(u64),
    /// Before the first packet sent at or after this many nanoseconds.
    Duration(u64),
}

/// A set of flows that share a packet share and a size distribution.
#[derive(Debug, Clone)]
struct Group {
    members: Arc<[u32]>,
    picker: Picker,
    sizes: SizeDist,
}

/// A deterministic packet source: the same [`GenConfig`] gives the same bytes and timestamps.
#[derive(Debug, Clone)]
pub struct Generator {
    rng: Xoshiro256PlusPlus,
    /// The flows.
    chosen: Arc<Chosen>,
    /// Their frames' headers.
    templates: Templates,
    groups: Vec<Group>,
    /// `random::<u64>() < threshold` picks group 0 when there are two groups.
    first_threshold: u64,
    pacer: Pacer,
    seq: u64,
    max_len: usize,
    /// The request source of a KVS payload ([`Payload::Kvs`]).
    kvs: Option<Client>,
    /// The lines of a log payload ([`Payload::Logs`]).
    logs: Option<LinePacker>,
    /// For a KVS payload with several partitions: the flows RSS steers to each partition's core.
    by_partition: Vec<Vec<u32>>,
    /// The load switch still to come ([`LoadSwitch`]).
    switch: Option<Pending>,
    /// Send time of the packet sent last, ns.
    last_ns: u64,
}

/// A [`LoadSwitch`] ready to apply: when, group 0's (the target flows') new threshold and sizes.
#[derive(Debug, Clone)]
struct Pending {
    at_ns: u64,
    first_threshold: u64,
    sizes: Option<SizeDist>,
}

/// `random::<u64>() < threshold(p)` holds with probability `p`.
fn threshold(p: f64) -> u64 {
    (p.clamp(0.0, 1.0) * 2f64.powi(64)).min(u64::MAX as f64) as u64
}

impl Generator {
    /// Validate `cfg` and choose its flows.
    pub fn new(cfg: &GenConfig) -> Result<Generator, GenError> {
        cfg.validate()?;
        let chosen = crate::chosen::chosen(cfg)?;
        let mut rng = chosen.rng.clone();
        let sizes = SizeDist::from_spec(&cfg.size)?;
        let target_sizes = match cfg.steering {
            Steering::Target { target_size: Some(s), .. } => SizeDist::from_spec(&SizeSpec::Fixed(s))?,
            _ => sizes.clone(),
        };
        let groups: Vec<Group> = chosen
            .groups
            .iter()
            .map(|(members, target)| Group {
                picker: Picker::new(cfg.popularity, members.len()),
                sizes: if *target { target_sizes.clone() } else { sizes.clone() },
                members: members.clone(),
            })
            .collect();
        let kvs = match &cfg.payload {
            Payload::Stamp | Payload::Logs(_) => None,
            Payload::Kvs(c) => Some(Client::new(c.clone(), rng.random()).map_err(GenError::Config)?),
        };
        let logs = match &cfg.payload {
            Payload::Logs(c) => Some(LinePacker::new(c, rng.random())),
            _ => None,
        };
        let by_partition = match &cfg.payload {
            Payload::Kvs(c) if c.partitions > 1 => flows_by_queue(&chosen.flows, c.partitions, cfg.reta)?,
            _ => Vec::new(),
        };
        let switch = cfg
            .switch
            .map(|w: LoadSwitch| -> Result<Pending, GenError> {
                let sizes = w.target_size.map(|s| SizeDist::from_spec(&SizeSpec::Fixed(s))).transpose()?;
                Ok(Pending { at_ns: w.at_ns, first_threshold: threshold(w.percent / 100.0), sizes })
            })
            .transpose()?;
        let max_len = match &cfg.payload {
            Payload::Stamp | Payload::Logs(_) => {
                let dists = groups.iter().map(|g| &g.sizes).chain(switch.as_ref().and_then(|w| w.sizes.as_ref()));
                Self::sized_max_len(cfg, &chosen.flows, dists, logs.as_ref().map_or(0, LinePacker::longest))?
            }
            Payload::Kvs(c) => {
                let body = HEADER_LEN + c.key_len + c.value_len;
                let header = |f: FlowInfo| FrameSpec { tuple: f.tuple, frame_len: 0 }.header_len();
                let longest = chosen.flows.iter().map(|f| body_frame_len(header(f), body)).max().unwrap_or(MAX_FRAME);
                if longest > MAX_FRAME {
                    return Err(GenError::Config(format!(
                        "a KVS request of {body} B and the 16 B stamp need {longest} B frames, more than {MAX_FRAME} B"
                    )));
                }
                longest - FCS_LEN
            }
        };
        let first_threshold = threshold(chosen.first_share);
        Ok(Generator {
            rng,
            chosen,
            templates: Templates::new(),
            groups,
            first_threshold,
            pacer: Pacer::new(cfg.rate, cfg.burst, cfg.train),
            seq: 0,
            max_len,
            kvs,
            logs,
            by_partition,
            switch,
            last_ns: 0,
        })
    }

    /// Largest frame without FCS of the size distributions `dists`, checking that their smallest frames
    /// carry the headers, the stamp and a `line` of that many bytes (the longest log line; 0 without).
    fn sized_max_len<'a>(
        cfg: &GenConfig,
        flows: &FlowSet,
        dists: impl Iterator<Item = &'a SizeDist> + Clone,
        line: usize,
    ) -> Result<usize, GenError> {
        let need = flows.get(0).map_or(0, |f| min_frame_len(&f.tuple)) + line;
        let smallest = dists.clone().map(SizeDist::min).min().unwrap_or(MAX_FRAME);
        if smallest < need {
            let proto = if cfg.proto == L4Proto::Tcp { "TCP" } else { "UDP" };
            let line = if line > 0 { format!("a log line of up to {line} B with ") } else { String::new() };
            return Err(GenError::Config(format!(
                "{smallest} B frames cannot carry {line}{proto}/{} headers and the 16 B stamp: use frames of at \
                 least {need} B",
                cfg.ip
            )));
        }
        Ok(dists.map(SizeDist::max).max().unwrap_or(MAX_FRAME) - FCS_LEN)
    }

    /// The flows, indexed by [`PacketMeta::flow`].
    pub fn flows(&self) -> &FlowSet {
        &self.chosen.flows
    }

    /// Largest number of bytes [`Generator::next_packet`] writes: buffers must hold this much.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The headers of flow `flow`'s frames.
    #[inline]
    fn template(&self, flow: u32) -> Template {
        self.templates.of(&self.chosen.flows.get(flow as usize).expect("a flow of the set").tuple)
    }

    /// The next packet's group (an index into `groups`) and flow.
    #[inline]
    fn next_flow(&mut self) -> (usize, u32) {
        if self.switch.as_ref().is_some_and(|w| self.last_ns >= w.at_ns) {
            self.apply_switch();
        }
        let i = match self.groups.len() {
            1 => 0,
            _ => usize::from(self.rng.random::<u64>() >= self.first_threshold),
        };
        let g = &mut self.groups[i];
        (i, g.members[g.picker.pick(&mut self.rng)])
    }

    /// The load switch has come: the target flows (group 0, `GenConfig::validate` makes sure there are
    /// two groups) take their new share and sizes.
    #[cold]
    fn apply_switch(&mut self) {
        if let Some(w) = self.switch.take() {
            self.first_threshold = w.first_threshold;
            if let Some(s) = w.sizes {
                self.groups[0].sizes = s;
            }
        }
    }

    /// Write the next packet into `buf` (an Ethernet frame without FCS) and say what it is.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Generator::max_len`].
    #[inline]
    pub fn next_packet(&mut self, buf: &mut [u8]) -> PacketMeta {
        let (g, mut flow) = self.next_flow();
        let g = &self.groups[g];
        let seq = self.seq;
        self.seq += 1;
        let (ts_ns, len) = match &mut self.kvs {
            None => {
                let frame_len = g.sizes.sample(&mut self.rng);
                let template = self.template(flow);
                let (ts_ns, len) = match &mut self.logs {
                    None => {
                        let ts_ns = self.pacer.next(frame_len);
                        (ts_ns, template.write(frame_len, Stamp { seq, tx_ns: ts_ns }, buf))
                    }
                    Some(lines) => {
                        let room = frame_len - FCS_LEN - template.header_len() - STAMP_LEN;
                        let body = lines.fill(&mut self.rng, room);
                        let ts_ns = self.pacer.next(template.body_frame_len(body.len()));
                        (ts_ns, template.write_body(body, Stamp { seq, tx_ns: ts_ns }, buf))
                    }
                };
                self.last_ns = ts_ns;
                (ts_ns, len)
            }
            Some(client) => {
                let (op, k, id) = client.next_op();
                let (body, part) = client.request(op, k, id);
                // MICA §4.1: a request goes to its key's partition, so pick a flow RSS steers to that core.
                if let Some(flows) = self.by_partition.get(part) {
                    flow = flows[self.rng.random_range(..flows.len())];
                }
                let template = self.template(flow);
                let ts_ns = self.pacer.next(template.body_frame_len(body.len()));
                (ts_ns, template.write_body(&body, Stamp { seq, tx_ns: ts_ns }, buf))
            }
        };
        PacketMeta { ts_ns, len, flow, seq }
    }

    /// [`Generator::next_packet`] into `frame`, a buffer that only this method and
    /// [`FrameBuf::restamp`] write: the same packet and the same bytes, but the generator knows which
    /// bytes of the buffer are already zero and clears only the others (a stamped payload of a fixed-size
    /// stream then costs the headers and the stamp, not a fill of the whole frame).
    ///
    /// # Panics
    /// If `frame` was made for a generator with a smaller [`Generator::max_len`].
    #[inline]
    pub fn next_frame(&mut self, frame: &mut FrameBuf) -> PacketMeta {
        let meta = match (&self.kvs, &self.logs) {
            (None, None) => {
                let (g, flow) = self.next_flow();
                let g = &self.groups[g];
                let seq = self.seq;
                self.seq += 1;
                let frame_len = g.sizes.sample(&mut self.rng);
                let ts_ns = self.pacer.next(frame_len);
                self.last_ns = ts_ns;
                let template = self.template(flow);
                let len =
                    template.write_over(frame_len, Stamp { seq, tx_ns: ts_ns }, &mut frame.bytes, frame.zero_from);
                // Written: headers and stamp, zeros up to `len`; beyond it what was there before.
                let written = template.header_len() + STAMP_LEN;
                frame.zero_from = if frame.zero_from > len { frame.zero_from.max(written) } else { written };
                PacketMeta { ts_ns, len, flow, seq }
            }
            _ => {
                let meta = self.next_packet(&mut frame.bytes);
                frame.zero_from = frame.zero_from.max(meta.len);
                meta
            }
        };
        frame.len = meta.len;
        meta
    }

    /// The next `n` packets, each in its own buffer, for replay.
    pub fn packets(&mut self, n: usize) -> Vec<TracePacket> {
        self.take(Stop::Count(n as u64)).collect()
    }

    /// The next packets until `stop`, as a trace.
    pub fn to_trace(&mut self, stop: Stop) -> Trace {
        Trace { packets: self.take(stop).collect() }
    }

    /// Stream the next packets until `stop` into a trace file (written atomically); returns the count.
    /// `progress` gets the packets written and the last timestamp (ns) every [`PROGRESS_EVERY`] packets.
    pub fn write_trace(
        &mut self,
        path: impl AsRef<Path>,
        stop: Stop,
        format: OutputFormat,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, TraceError> {
        let mut w = TraceWriter::create(path, format)?;
        let mut buf = vec![0u8; self.max_len];
        while let Some(meta) = self.next_before(stop, w.written(), &mut buf) {
            w.write(meta.ts_ns, &buf[..meta.len], meta.len as u32)?;
            if w.written() % PROGRESS_EVERY == 0 {
                progress(w.written(), meta.ts_ns);
            }
        }
        let n = w.written();
        w.finish()?;
        Ok(n)
    }

    fn take(&mut self, stop: Stop) -> impl Iterator<Item = TracePacket> + '_ {
        let mut buf = vec![0u8; self.max_len];
        let mut made = 0;
        std::iter::from_fn(move || {
            let meta = self.next_before(stop, made, &mut buf)?;
            made += 1;
            Some(TracePacket { ts_ns: meta.ts_ns, data: buf[..meta.len].to_vec(), orig_len: meta.len as u32 })
        })
    }

    /// The next packet, unless `stop` has been reached after `made` packets of this run (a packet past a
    /// duration is drawn but not returned).
    fn next_before(&mut self, stop: Stop, made: u64, buf: &mut [u8]) -> Option<PacketMeta> {
        if matches!(stop, Stop::Count(n) if made >= n) {
            return None;
        }
        let meta = self.next_packet(buf);
        match stop {
            Stop::Duration(d) if meta.ts_ns >= d => None,
            _ => Some(meta),
        }
    }
}

/// A frame buffer reused packet after packet ([`Generator::next_frame`]), which remembers from where on
/// its bytes are zero.
#[derive(Debug, Clone)]
pub struct FrameBuf {
    bytes: Box<[u8]>,
    len: usize,
    /// Every byte from here on is zero.
    zero_from: usize,
}

impl FrameBuf {
    /// A zeroed buffer for the frames of `generator`.
    pub fn new(generator: &Generator) -> FrameBuf {
        FrameBuf { bytes: vec![0; generator.max_len()].into_boxed_slice(), len: 0, zero_from: 0 }
    }

    /// The frame written last (without FCS); empty before the first.
    #[inline]
    pub fn frame(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The frame written last up to where only zeros follow in it: [`FrameBuf::frame`] is these bytes
    /// and then zeros.
    pub fn head(&self) -> &[u8] {
        &self.bytes[..self.len.min(self.zero_from)]
    }

    /// Make the frame `len` bytes long: `head` and then zeros (a frame given back by its
    /// [`FrameBuf::head`]), rewriting only what the previous frame left after `head`.
    ///
    /// # Panics
    /// If `head` is longer than `len` or `len` longer than the buffer.
    pub fn put(&mut self, head: &[u8], len: usize) {
        assert!(head.len() <= len && len <= self.bytes.len(), "a head of {} B in a {len} B frame", head.len());
        let n = head.len();
        self.bytes[..n].copy_from_slice(head);
        if self.zero_from > n {
            self.bytes[n..self.zero_from].fill(0);
        }
        self.zero_from = n;
        self.len = len;
    }

    /// Replace the stamp of the frame written last, in its L4 payload that starts at `payload_off`
    /// ([`Stamp::locate`]: at the payload's start, else as its trailer); whether it had one.
    #[inline]
    pub fn restamp(&mut self, payload_off: usize, stamp: Stamp) -> bool {
        let Some(payload) = self.bytes.get_mut(payload_off..self.len) else { return false };
        let Some(o) = Stamp::locate(payload) else { return false };
        let _ = stamp.write(&mut payload[o..]);
        self.zero_from = self.zero_from.max(payload_off + o + STAMP_LEN);
        true
    }
}

/// The flows the round-robin indirection table of `partitions` queues and `entries` entries steers to each
/// queue: where a KVS request for a partition must go. Every partition needs at least one flow.
fn flows_by_queue(flows: &FlowSet, partitions: usize, entries: usize) -> Result<Vec<Vec<u32>>, GenError> {
    let reta = IndirectionTable::round_robin_sized(partitions, entries).map_err(GenError::Config)?;
    let mut by = vec![Vec::new(); partitions];
    for (i, f) in flows.iter().enumerate() {
        by[usize::from(reta.queue(f.hash))].push(i as u32);
    }
    match by.iter().position(Vec::is_empty) {
        Some(q) => Err(GenError::Config(format!(
            "kvs: no flow reaches core {q} of {partitions}, so its partition gets no request; use more --flows or --rss-even"
        ))),
        None => Ok(by),
    }
}
