//! The NIC thread's packet source: packets built before the run, so that producing one costs a copy
//! and a stamp (pre-built packets, so generating costs little).
//!
//! Frames come from the synthetic generator or from a pcap. Each carries its RSS hash, computed once
//! here as the NIC's hash unit would (Toeplitz, Microsoft key, addresses and ports), the offset of its
//! 16-byte stamp (where the generator put it: payload start or trailer) and its flow index. The NIC thread cycles through them, writing a fresh sequence number
//! and send time into each copy it delivers. Replayed captures get the stamp written over the first 16
//! bytes of their UDP/TCP payload, as T-Rex's latency streams do; frames with less payload are sent
//! untimed and counted.

use crate::feed::Feed;
use traffic::{GenConfig, Generator, Trace};
use wire::{FiveTuple, PacketView, RssFields, RssKey, Toeplitz};

/// One pre-built frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Bytes as the NIC receives them (no FCS).
    pub bytes: Vec<u8>,
    /// Toeplitz hash of its flow.
    pub hash: u32,
    /// Offset of its stamp, if it has room for one.
    pub stamp_at: Option<usize>,
    /// Dense index of its flow.
    pub flow: u32,
}

/// The frames of a run and what they cover.
#[derive(Debug)]
pub struct Prebuilt {
    /// Frames in send order; the NIC cycles through them.
    pub frames: Vec<Frame>,
    /// Number of distinct flows.
    pub flows: usize,
    /// Where the L4 payload starts in every frame, if it starts at the same offset in all of them (the
    /// receive end then finds stamps without parsing, [`wire::Stamp::in_frame`]).
    pub payload_at: Option<usize>,
    /// How the NIC takes them ([`Prebuilt::offer`]).
    pub(crate) feed: Feed,
    /// The next frame to send.
    pub(crate) next: usize,
}

/// Memory the pre-built frames may take: enough distinct packets that cycling through them does not
/// repeat within a burst, small enough to stay out of the way of the rings.
pub const PREBUILT_BYTES: usize = 32 << 20;

impl Prebuilt {
    /// Frames from the synthetic generator: as many as fit in [`PREBUILT_BYTES`].
    pub fn generate(cfg: &GenConfig) -> Result<Prebuilt, traffic::GenError> {
        let mut g = Generator::new(cfg)?;
        let count = (PREBUILT_BYTES / g.max_len().max(1)).max(1);
        let mut buf = vec![0u8; g.max_len()];
        let mut offsets = Vec::with_capacity(count);
        let frames = (0..count)
            .map(|_| {
                let m = g.next_packet(&mut buf);
                let bytes = buf[..m.len].to_vec();
                let view = PacketView::new_checked(&bytes[..]).expect("generated frames parse");
                offsets.push(view.payload_offset());
                Frame {
                    hash: g.flows().get(m.flow as usize).map_or(0, |f| f.hash),
                    // At the start of the payload, or its trailer after a KVS request.
                    stamp_at: wire::Stamp::locate(view.payload()).map(|at| view.payload_offset() + at),
                    flow: m.flow,
                    bytes,
                }
            })
            .collect();
        let payload_at = common(&offsets);
        Ok(Prebuilt { frames, flows: g.flows().len(), payload_at, feed: Feed::Memory, next: 0 })
    }

    /// Frames of a capture, in capture order (up to [`PREBUILT_BYTES`]); frames that are not IP hash as
    /// 0 and carry no stamp.
    pub fn from_trace(trace: Trace) -> Prebuilt {
        let key = Toeplitz::new(RssKey::MICROSOFT);
        let mut ids = std::collections::HashMap::<FiveTuple, u32>::new();
        let mut budget = PREBUILT_BYTES;
        let mut frames = Vec::new();
        let mut offsets = Vec::new();
        for p in trace.packets {
            if p.data.len() > budget {
                break;
            }
            budget -= p.data.len();
            let (hash, stamp_at, flow) = match PacketView::new_checked(&p.data[..]) {
                Ok(v) => {
                    offsets.push(v.payload_offset());
                    let next = ids.len() as u32;
                    let flow = *ids.entry(*v.five_tuple()).or_insert(next);
                    let room = v.payload().len() >= wire::stamp::STAMP_LEN && v.five_tuple().src_port != 0;
                    (key.hash_tuple(v.five_tuple(), RssFields::IpPorts), room.then_some(v.payload_offset()), flow)
                }
                Err(_) => (0, None, u32::MAX),
            };
            frames.push(Frame { bytes: p.data, hash, stamp_at, flow });
        }
        let flows = ids.len();
        for f in frames.iter_mut().filter(|f| f.flow == u32::MAX) {
            f.flow = flows as u32;
        }
        Prebuilt { frames, flows: flows + 1, payload_at: common(&offsets), feed: Feed::Memory, next: 0 }
    }

    /// The shares of `ports` NIC ports: flow `f`'s frames go to port `f % ports`, in order, so each port
    /// sends whole flows, as a load generator with one link per NIC does. A port may get no frame (fewer
    /// flows than ports).
    pub fn split(self, ports: usize) -> Vec<Prebuilt> {
        let mut shares: Vec<Vec<Frame>> = (0..ports).map(|_| Vec::new()).collect();
        for f in self.frames {
            shares[f.flow as usize % ports].push(f);
        }
        shares
            .into_iter()
            .map(|frames| Prebuilt {
                frames,
                flows: self.flows,
                payload_at: self.payload_at,
                feed: Feed::Memory,
                next: 0,
            })
            .collect()
    }

    /// Largest frame.
    pub fn max_len(&self) -> usize {
        self.frames.iter().map(|f| f.bytes.len()).max().unwrap_or(0)
    }

    /// Mean frame length including the FCS, for Gbps accounting.
    pub fn mean_frame_len(&self) -> f64 {
        let n = self.frames.len().max(1) as f64;
        self.frames.iter().map(|f| (f.bytes.len() + wire::frame::FCS_LEN) as f64).sum::<f64>() / n
    }
}

/// The value every element of `offsets` has, if they all have one.
fn common(offsets: &[usize]) -> Option<usize> {
    let first = *offsets.first()?;
    offsets.iter().all(|&o| o == first).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_each_port_whole_flows_in_order() {
        let src = Prebuilt::generate(&GenConfig { flows: 5, ..GenConfig::default() }).unwrap();
        let (total, flows) = (src.frames.len(), src.flows);
        let order: Vec<u32> = src.frames.iter().map(|f| f.flow).collect();
        let shares = src.split(2);
        assert_eq!(shares.iter().map(|s| s.frames.len()).sum::<usize>(), total);
        for (k, share) in shares.iter().enumerate() {
            assert!(share.frames.iter().all(|f| f.flow as usize % 2 == k));
            assert_eq!(share.flows, flows);
            let mine: Vec<u32> = order.iter().copied().filter(|f| *f as usize % 2 == k).collect();
            assert_eq!(share.frames.iter().map(|f| f.flow).collect::<Vec<_>>(), mine);
        }
    }
}
