//! Traces: timestamped Ethernet frames read from and written to pcap and pcapng files.
//!
//! Reading detects the format by its magic number (pcap in micro- or nanoseconds, either byte order;
//! pcapng with per-interface `if_tsresol`), streams the file record by record ([`TraceReader`]) and
//! normalises every packet to an Ethernet frame ([`crate::link`]). Every error names the file and the
//! byte offset of the record or block at fault. Writing goes to a temporary file next to the target
//! ([`crate::atomic`]), renamed into place by [`TraceWriter::finish`]; a writer dropped before that (an
//! error, a full disk) or interrupted by a signal leaves nothing behind.

use crate::atomic::AtomicFile;
use crate::link::{self, LinkType};
use crate::source::{Fail, MAX_RECORD, Source};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapParser, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::{Block, PcapNgParser, PcapNgWriter};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wire::frame::FCS_LEN;

/// Snapshot length written into pcap headers and pcapng interfaces (tcpdump's default).
const SNAPLEN: u32 = 262_144;
const PCAPNG_MAGIC: u32 = 0x0a0d_0d0a;
const PCAP_MAGICS: [u32; 4] = [0xa1b2_c3d4, 0xd4c3_b2a1, 0xa1b2_3c4d, 0x4d3c_b2a1];

/// One captured packet: an Ethernet frame without FCS, as a NIC delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracePacket {
    /// Capture (or send) time in nanoseconds.
    pub ts_ns: u64,
    /// The captured bytes, starting with the Ethernet header; may be cut short by the capture's snaplen.
    pub data: Vec<u8>,
    /// Length of the frame on the link (without FCS) before any snaplen truncation.
    pub orig_len: u32,
}

impl TracePacket {
    /// The frame's size by rxlab's convention: its length on the link including the FCS.
    pub fn frame_len(&self) -> usize {
        self.orig_len as usize + FCS_LEN
    }
}

/// A whole trace in memory: packets in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The packets.
    pub packets: Vec<TracePacket>,
}

impl Trace {
    /// Read every packet of a pcap or pcapng file.
    pub fn read(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        Ok(Trace { packets: TraceReader::open(path)?.collect::<Result<_, _>>()? })
    }

    /// Write the trace to `path` (atomically, see [`TraceWriter`]).
    pub fn write(&self, path: impl AsRef<Path>, format: OutputFormat) -> Result<(), TraceError> {
        let mut w = TraceWriter::create(path, format)?;
        for p in &self.packets {
            w.write(p.ts_ns, &p.data, p.orig_len)?;
        }
        w.finish()
    }
}

/// Why a trace could not be read or written. Each message names the file and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read, created or renamed.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason (part of the message, so not also a `source()`).
        reason: io::Error,
    },
    /// The file does not start with a pcap or pcapng magic number.
    #[error(
        "{path}: not a pcap or pcapng file ({found}); give a capture written by tcpdump, Wireshark or `rxlab trace gen`"
    )]
    NotPcap {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        found: String,
    },
    /// The file ends inside a header, record or block.
    #[error(
        "{path}: truncated {what} at byte {offset}: the file ends inside it; re-capture, or cut the trace before that byte"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The file header, a packet record or a pcapng block.
        what: &'static str,
        /// Offset of its first byte.
        offset: u64,
    },
    /// A header, record or block is invalid.
    #[error("{path}: bad {what} at byte {offset}: {detail}; the file is corrupt")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The file header, a packet record or a pcapng block.
        what: &'static str,
        /// Offset of its first byte.
        offset: u64,
        /// What is wrong with it.
        detail: String,
    },
    /// Packets of a link type rxlab does not read.
    #[error("{path}: link type {link} at byte {offset} is not supported; rxlab reads {supported}", supported = link::SUPPORTED)]
    LinkType {
        /// The file.
        path: PathBuf,
        /// The link type, as `NAME (number)`.
        link: String,
        /// Offset of the header or block that declares it, or of the packet that uses it.
        offset: u64,
    },
    /// A packet cannot be written in the output format.
    #[error("{path}: cannot write packet {index}: {detail}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// Position of the packet in the output, from 0.
        index: u64,
        /// Why.
        detail: String,
    },
}

/// Container format of a written trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Container {
    /// Classic libpcap format.
    #[default]
    Pcap,
    /// pcapng, one Ethernet interface.
    PcapNg,
}

/// Timestamp resolution of a written trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resolution {
    /// Microseconds (classic pcap magic 0xa1b2c3d4, pcapng `if_tsresol` 6); nanoseconds are truncated.
    #[default]
    Micro,
    /// Nanoseconds (pcap magic 0xa1b23c4d, pcapng `if_tsresol` 9).
    Nano,
}

/// How to write a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputFormat {
    /// pcap or pcapng.
    pub container: Container,
    /// Micro- or nanosecond timestamps.
    pub resolution: Resolution,
}

impl OutputFormat {
    /// Bytes a trace of `packets` frames of mean length `frame_len` (FCS included, as rxlab names sizes)
    /// takes in this format: headers, per-record overhead and pcapng's 4-byte padding included.
    pub fn estimate_bytes(&self, packets: u64, frame_len: f64) -> u64 {
        let data = (frame_len - FCS_LEN as f64).max(0.0);
        let (header, record, data) = match self.container {
            Container::Pcap => (24.0, 16.0, data),
            // Section header and interface description blocks; an enhanced packet block is 32 bytes
            // around its data, which is padded to 4 bytes.
            Container::PcapNg => (28.0 + 24.0, 32.0, data + 3.0),
        };
        (header + packets as f64 * (record + data)).ceil() as u64
    }
}

/// One pcapng interface: its link type (or the unsupported number) and timestamp resolution.
struct Interface {
    link: Result<LinkType, DataLink>,
    tsresol: u8,
}

enum Format {
    Pcap { parser: PcapParser, link: LinkType, nanos: bool },
    PcapNg { parser: PcapNgParser, interfaces: Vec<Interface>, last_ts: u64 },
}

/// What one pcapng block contributes.
enum NgItem {
    Packet { interface: Option<u32>, raw_ts: Option<u64>, data: Vec<u8>, orig_len: u32 },
    Interface(Interface),
    Section,
    Other,
}

/// A streaming reader: an iterator over the packets of a pcap or pcapng file that holds one chunk of
/// the file in memory at a time. It stops after the first error.
pub struct TraceReader {
    path: PathBuf,
    src: Source<Box<dyn Read + Send>>,
    format: Format,
    done: bool,
}

impl TraceReader {
    /// Open a pcap or pcapng file and read its file header (pcap) or section header (pcapng).
    pub fn open(path: impl AsRef<Path>) -> Result<TraceReader, TraceError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|reason| TraceError::Io { path: path.clone(), reason })?;
        TraceReader::from_reader(path, file)
    }

    /// Read a pcap or pcapng stream (e.g. stdin, or bytes in memory); `name` stands for it in errors.
    pub fn from_reader(
        name: impl Into<PathBuf>,
        reader: impl Read + Send + 'static,
    ) -> Result<TraceReader, TraceError> {
        let path = name.into();
        let mut src = Source::new(Box::new(reader) as Box<dyn Read + Send>);
        let magic = src
            .next(|b| {
                let m = b.get(..4).ok_or(PcapError::IncompleteBuffer)?;
                Ok((0, u32::from_be_bytes([m[0], m[1], m[2], m[3]])))
            })
            .map_err(|f| fail(&path, f, "file header", 0))?;
        let format = match magic {
            None => {
                return Err(TraceError::NotPcap { path, found: "the file is empty or shorter than 4 bytes".into() });
            }
            Some(PCAPNG_MAGIC) => {
                let parser = src
                    .next(|b| PcapNgParser::new(b).map(|(rem, p)| (b.len() - rem.len(), p)))
                    .map_err(|f| fail(&path, f, "pcapng section header", 0))?
                    .ok_or_else(|| truncated(&path, "pcapng section header", 0))?;
                Format::PcapNg { parser, interfaces: Vec::new(), last_ts: 0 }
            }
            Some(m) if PCAP_MAGICS.contains(&m) => {
                let parser = src
                    .next(|b| PcapParser::new(b).map(|(rem, p)| (b.len() - rem.len(), p)))
                    .map_err(|f| fail(&path, f, "pcap file header", 0))?
                    .ok_or_else(|| truncated(&path, "pcap file header", 0))?;
                let header = parser.header();
                let link = LinkType::from_number(header.datalink.into())
                    .ok_or_else(|| unsupported(&path, header.datalink, 20))?;
                Format::Pcap { link, nanos: header.ts_resolution == TsResolution::NanoSecond, parser }
            }
            Some(m) => {
                return Err(TraceError::NotPcap { path, found: format!("it starts with 0x{m:08x}") });
            }
        };
        Ok(TraceReader { path, src, format, done: false })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn next_packet(&mut self) -> Result<Option<TracePacket>, TraceError> {
        match &mut self.format {
            Format::Pcap { parser, link, nanos } => {
                let offset = self.src.offset();
                let raw = self
                    .src
                    .next(|b| {
                        let (rem, p) = parser.next_raw_packet(b)?;
                        Ok((b.len() - rem.len(), (p.ts_sec, p.ts_frac, p.orig_len, p.data.into_owned())))
                    })
                    .map_err(|f| fail(&self.path, f, "packet record", offset))?;
                let Some((sec, frac, orig_len, data)) = raw else { return Ok(None) };
                let frac_ns = if *nanos { Some(frac) } else { frac.checked_mul(1000) };
                let frac_ns = frac_ns.filter(|&f| f < 1_000_000_000).ok_or_else(|| TraceError::Malformed {
                    path: self.path.clone(),
                    what: "packet record",
                    offset,
                    detail: format!("timestamp fraction {frac} is a second or more"),
                })?;
                let orig_len = orig_len.max(data.len() as u32);
                let (data, orig_len) = link.to_ethernet(&data, orig_len);
                Ok(Some(TracePacket { ts_ns: u64::from(sec) * 1_000_000_000 + u64::from(frac_ns), data, orig_len }))
            }
            Format::PcapNg { parser, interfaces, last_ts } => loop {
                let offset = self.src.offset();
                let item = self
                    .src
                    .next(|b| {
                        let (rem, block) = parser.next_block(b)?;
                        Ok((b.len() - rem.len(), ng_item(block)))
                    })
                    .map_err(|f| fail(&self.path, f, "pcapng block", offset))?;
                let (interface, raw_ts, data, orig_len) = match item {
                    None => return Ok(None),
                    Some(NgItem::Section) => {
                        interfaces.clear();
                        continue;
                    }
                    Some(NgItem::Interface(i)) => {
                        interfaces.push(i);
                        continue;
                    }
                    Some(NgItem::Other) => continue,
                    Some(NgItem::Packet { interface, raw_ts, data, orig_len }) => (interface, raw_ts, data, orig_len),
                };
                let malformed = |detail: String| TraceError::Malformed {
                    path: self.path.clone(),
                    what: "pcapng packet block",
                    offset,
                    detail,
                };
                let id = interface.unwrap_or(0);
                let iface = interfaces.get(id as usize).ok_or_else(|| {
                    malformed(format!("packet of interface {id}, but {} interfaces are declared", interfaces.len()))
                })?;
                let link = iface.link.map_err(|l| unsupported(&self.path, l, offset))?;
                if let Some(raw) = raw_ts {
                    *last_ts = ts_to_ns(raw, iface.tsresol).ok_or_else(|| {
                        malformed(format!("timestamp {raw} overflows at resolution {}", iface.tsresol))
                    })?;
                }
                let orig_len = orig_len.max(data.len() as u32);
                let (data, orig_len) = link.to_ethernet(&data, orig_len);
                return Ok(Some(TracePacket { ts_ns: *last_ts, data, orig_len }));
            },
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TracePacket, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_packet().transpose();
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}

fn ng_item(block: Block<'_>) -> NgItem {
    match block {
        Block::SectionHeader(_) => NgItem::Section,
        Block::InterfaceDescription(idb) => {
            let tsresol = idb
                .options
                .iter()
                .find_map(|o| match o {
                    InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                    _ => None,
                })
                .unwrap_or(6);
            let link = LinkType::from_number(idb.linktype.into()).ok_or(idb.linktype);
            NgItem::Interface(Interface { link, tsresol })
        }
        Block::EnhancedPacket(epb) => NgItem::Packet {
            interface: Some(epb.interface_id),
            // pcap-file stores the raw timestamp units as nanoseconds; the interface says what they are.
            raw_ts: Some(u64::try_from(epb.timestamp.as_nanos()).unwrap_or(u64::MAX)),
            orig_len: epb.original_len,
            data: epb.data.into_owned(),
        },
        Block::Packet(pb) => NgItem::Packet {
            interface: Some(u32::from(pb.interface_id)),
            raw_ts: Some(pb.timestamp),
            orig_len: pb.original_len,
            data: pb.data.into_owned(),
        },
        // A simple packet block has no timestamp and belongs to the first interface.
        Block::SimplePacket(spb) => {
            NgItem::Packet { interface: None, raw_ts: None, orig_len: spb.original_len, data: spb.data.into_owned() }
        }
        _ => NgItem::Other,
    }
}

/// Convert a pcapng timestamp in units of `if_tsresol` (bit 7 clear: 10^-n s, set: 2^-n s) to ns.
fn ts_to_ns(raw: u64, tsresol: u8) -> Option<u64> {
    let n = u32::from(tsresol & 0x7f);
    let ns = if tsresol & 0x80 != 0 {
        (u128::from(raw) * 1_000_000_000) >> n
    } else if n <= 9 {
        u128::from(raw) * 10u128.pow(9 - n)
    } else {
        10u128.checked_pow(n - 9).map_or(0, |d| u128::from(raw) / d)
    };
    u64::try_from(ns).ok()
}

fn truncated(path: &Path, what: &'static str, offset: u64) -> TraceError {
    TraceError::Truncated { path: path.to_path_buf(), what, offset }
}

fn unsupported(path: &Path, link: DataLink, offset: u64) -> TraceError {
    TraceError::LinkType { path: path.to_path_buf(), link: format!("{link:?} ({})", u32::from(link)), offset }
}

fn fail(path: &Path, f: Fail, what: &'static str, offset: u64) -> TraceError {
    let path = path.to_path_buf();
    match f {
        Fail::Io(reason) => TraceError::Io { path, reason },
        Fail::Truncated => TraceError::Truncated { path, what, offset },
        Fail::TooLarge => {
            TraceError::Malformed { path, what, offset, detail: format!("it claims more than {MAX_RECORD} bytes") }
        }
        Fail::Invalid(e) => TraceError::Malformed { path, what, offset, detail: e.to_string() },
    }
}

type Out = BufWriter<AtomicFile>;

enum Sink {
    Pcap(PcapWriter<Out>),
    PcapNg(PcapNgWriter<Out>, Resolution),
}

/// Writes a trace packet by packet to a temporary file in the target's directory; [`TraceWriter::finish`]
/// renames it to the target. Dropping the writer (on any error) deletes the temporary file.
pub struct TraceWriter {
    path: PathBuf,
    sink: Sink,
    written: u64,
}

impl TraceWriter {
    /// Start writing `path` in `format`.
    pub fn create(path: impl AsRef<Path>, format: OutputFormat) -> Result<TraceWriter, TraceError> {
        let path = path.as_ref();
        let file = AtomicFile::create(path).map_err(|reason| TraceError::Io { path: path.to_path_buf(), reason })?;
        TraceWriter::to(file, format)
    }

    /// Start writing `file` in `format`.
    fn to(file: AtomicFile, format: OutputFormat) -> Result<TraceWriter, TraceError> {
        let path = file.target().to_path_buf();
        let out = BufWriter::with_capacity(1 << 20, file);
        let pcap_err = |e: PcapError| TraceError::Write { path: path.clone(), index: 0, detail: e.to_string() };
        let sink = match format.container {
            Container::Pcap => {
                let header = PcapHeader {
                    snaplen: SNAPLEN,
                    datalink: DataLink::ETHERNET,
                    ts_resolution: match format.resolution {
                        Resolution::Micro => TsResolution::MicroSecond,
                        Resolution::Nano => TsResolution::NanoSecond,
                    },
                    endianness: Endianness::Little,
                    ..PcapHeader::default()
                };
                Sink::Pcap(PcapWriter::with_header(out, header).map_err(pcap_err)?)
            }
            Container::PcapNg => {
                let mut w = PcapNgWriter::with_endianness(out, Endianness::Little).map_err(pcap_err)?;
                let tsresol = match format.resolution {
                    Resolution::Micro => 6,
                    Resolution::Nano => 9,
                };
                let idb = InterfaceDescriptionBlock {
                    linktype: DataLink::ETHERNET,
                    snaplen: SNAPLEN,
                    options: vec![InterfaceDescriptionOption::IfTsResol(tsresol)],
                };
                w.write_pcapng_block(idb).map_err(pcap_err)?;
                Sink::PcapNg(w, format.resolution)
            }
        };
        Ok(TraceWriter { path, sink, written: 0 })
    }

    /// Append one Ethernet frame (without FCS) sent or captured at `ts_ns`, `orig_len` bytes long on the
    /// link (at least `data.len()`).
    pub fn write(&mut self, ts_ns: u64, data: &[u8], orig_len: u32) -> Result<(), TraceError> {
        let index = self.written;
        let orig_len = orig_len.max(u32::try_from(data.len()).unwrap_or(u32::MAX));
        let result = match &mut self.sink {
            Sink::Pcap(w) => w.write_packet(&PcapPacket::new(Duration::from_nanos(ts_ns), orig_len, data)).map(drop),
            Sink::PcapNg(w, res) => {
                let units = match res {
                    Resolution::Micro => ts_ns / 1000,
                    Resolution::Nano => ts_ns,
                };
                let epb = EnhancedPacketBlock {
                    interface_id: 0,
                    timestamp: Duration::from_nanos(units),
                    original_len: orig_len,
                    data: Cow::Borrowed(data),
                    options: vec![],
                };
                w.write_pcapng_block(epb).map(drop)
            }
        };
        result.map_err(|e| TraceError::Write { path: self.path.clone(), index, detail: e.to_string() })?;
        self.written += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flush the data and move the file to its name.
    pub fn finish(self) -> Result<(), TraceError> {
        let path = self.path;
        let out = match self.sink {
            Sink::Pcap(w) => w.into_writer(),
            Sink::PcapNg(w, _) => w.into_inner(),
        };
        let io_err = |reason| TraceError::Io { path: path.clone(), reason };
        out.into_inner().map_err(|e| io_err(e.into_error()))?.commit().map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock as Epb;

    fn read(bytes: &[u8]) -> Result<Vec<TracePacket>, TraceError> {
        TraceReader::from_reader("test", std::io::Cursor::new(bytes.to_vec()))?.collect()
    }

    #[test]
    fn big_endian_microsecond_pcap_with_sll2_and_short_snaplen() {
        let header = PcapHeader {
            snaplen: 20,
            datalink: DataLink::LINUX_SLL2,
            endianness: Endianness::Big,
            ..PcapHeader::default()
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
        let mut sll2 = vec![0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0];
        sll2.extend_from_slice(&[0x45; 4]);
        // orig_len above the snaplen, as `tcpdump -s` writes it.
        w.write_raw_packet(&pcap_file::pcap::RawPcapPacket {
            ts_sec: 3,
            ts_frac: 5,
            incl_len: 24,
            orig_len: 100,
            data: Cow::Borrowed(&sll2),
        })
        .unwrap();
        let p = read(&w.into_writer()).unwrap();
        assert_eq!(p[0].ts_ns, 3_000_005_000);
        assert_eq!(&p[0].data[12..], &[0x08, 0x00, 0x45, 0x45, 0x45, 0x45]);
        assert_eq!(p[0].orig_len, 94);
    }

    #[test]
    fn pcapng_resolutions_and_interfaces() {
        let mut w = PcapNgWriter::with_endianness(Vec::new(), Endianness::Big).unwrap();
        for (link, tsresol) in [(DataLink::ETHERNET, 0x80 | 10), (DataLink::IPV6, 3), (DataLink::IEEE802_11, 9)] {
            let options = vec![InterfaceDescriptionOption::IfTsResol(tsresol)];
            w.write_pcapng_block(InterfaceDescriptionBlock { linktype: link, snaplen: 0, options }).unwrap();
        }
        for (interface_id, units) in [(0, 2048u64), (1, 7)] {
            let epb = Epb {
                interface_id,
                timestamp: Duration::from_nanos(units),
                original_len: 1,
                data: Cow::Borrowed(&[0x60]),
                options: vec![],
            };
            w.write_pcapng_block(epb).unwrap();
        }
        let good = w.get_ref().clone();
        let p = read(&good).unwrap();
        assert_eq!(p[0].ts_ns, 2_000_000_000);
        assert_eq!(p[1].ts_ns, 7_000_000);
        assert_eq!(&p[1].data[12..], &[0x86, 0xdd, 0x60]);
        let epb = Epb {
            interface_id: 2,
            timestamp: Duration::ZERO,
            original_len: 1,
            data: Cow::Borrowed(&[0]),
            options: vec![],
        };
        w.write_pcapng_block(epb).unwrap();
        let e = read(w.get_ref()).unwrap_err().to_string();
        assert!(e.contains("link type IEEE802_11 (105)") && e.contains(&format!("at byte {}", good.len())), "{e}");
    }

    #[test]
    fn an_aborted_writer_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pcap");
        let mut w = TraceWriter::create(&path, OutputFormat::default()).unwrap();
        w.write(0, &[0; 60], 60).unwrap();
        assert!(w.write(u64::MAX, &[0; 60], 60).is_err());
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn size_estimates_match_written_traces() {
        let dir = tempfile::tempdir().unwrap();
        for container in [Container::Pcap, Container::PcapNg] {
            let format = OutputFormat { container, ..OutputFormat::default() };
            let path = dir.path().join("est");
            let t = Trace { packets: vec![TracePacket { ts_ns: 1, data: vec![0; 60], orig_len: 60 }; 100] };
            t.write(&path, format).unwrap();
            let written = std::fs::metadata(&path).unwrap().len();
            let estimate = format.estimate_bytes(100, 64.0);
            assert!(estimate >= written && estimate < written + 400, "{container:?}: {estimate} vs {written}");
        }
    }

    #[test]
    fn a_full_disk_is_one_line_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full.pcap");
        let file = AtomicFile::with_writer(&path, crate::atomic::FullAfter { room: 100_000 }).unwrap();
        let mut w = TraceWriter::to(file, OutputFormat::default()).unwrap();
        // Past the 1 MiB buffer, so the writes reach the full disk.
        let e = (0..20_000).find_map(|i| w.write(i, &[0; 60], 60).err()).expect("the disk fills");
        let msg = e.to_string();
        assert!(msg.contains("full.pcap") && !msg.contains('\n'), "{msg}");
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
