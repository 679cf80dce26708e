//! The other socket of a two-socket server ([`crate::profile::RemoteSocket`]), as programs there that use
//! this socket's memory meet it (`numactl --cpunodebind=1 --membind=0`): their lines go through that
//! socket's LLC, of this one's geometry and policy, and a miss reads the line from this socket's DRAM
//! across the links ([`crate::upi`]), a dirty victim going back the other way. Their private caches are
//! left out: the programs run there stream or scatter over arrays hundreds of times the L2's size.

use crate::cache::{Policy, SetAssoc};
use crate::dram::Dram;
use crate::profile::Profile;
use crate::slices::Sliced;
use crate::upi::{Upi, Way};

/// A socket of a two-socket server, named from the NIC's side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Socket {
    /// The socket the NIC is attached to.
    #[default]
    Local,
    /// The other socket, reached over the links between the sockets ([`crate::upi`]).
    Remote,
}

/// The other socket's LLC and the links to it.
#[derive(Debug, Clone)]
pub struct OtherSocket {
    llc: SetAssoc<Policy, Sliced>,
    llc_ps: u64,
    /// The links between the sockets.
    pub upi: Upi,
}

impl OtherSocket {
    /// The other socket of `p`, if it has one.
    pub fn new(p: &Profile) -> Option<OtherSocket> {
        let r = p.remote_socket.as_ref()?;
        let c = &p.cpu;
        let mut llc = SetAssoc::new(c.llc.ways, c.llc_policy, Sliced::new(c.llc.sets(), c.llc_slices.as_ref()));
        llc.start_duel(c.llc_duel_start);
        let llc_ps = (f64::from(c.llc.latency_cycles) * p.ps_per_cycle()) as u64;
        Some(OtherSocket { llc, llc_ps, upi: Upi::new(r) })
    }

    /// A core there reads (`write` false) or writes `line` of this socket's memory at `now`: its latency,
    /// ps, and when the line's data has crossed the links (`now` for a hit). A miss reads the line (a
    /// write reads it for ownership) from `dram` across the links; a dirty victim is written back.
    pub fn access(&mut self, dram: &mut Dram, line: u64, write: bool, now: u64) -> (u64, u64) {
        match self.llc.access(line) {
            Ok(hit) => {
                if write && !hit.dirty {
                    self.llc.set_dirty(hit.slot, true);
                }
                (self.llc_ps, now)
            }
            Err(miss) => {
                let (_, victim) = self.llc.install(miss, self.llc.all_ways(), write);
                if victim.is_some_and(|v| v.dirty) {
                    dram.transfer(now, 64, true);
                    self.upi.carry(Way::In, now, 64);
                }
                dram.transfer(now, 64, false);
                let arrival = self.upi.carry(Way::Out, now, 64);
                (self.llc_ps + dram.latency_ps() + self.upi.hop_ps(), arrival)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line read twice crosses once; lines written and then pushed out by a stream over more than the
    /// LLC go back to DRAM; a profile with one socket has no other.
    #[test]
    fn misses_cross_the_links_and_dirty_victims_come_back() {
        let p = Profile::r640_silver4216();
        let mut dram = Dram::new(&p.dram);
        let mut other = OtherSocket::new(&p).unwrap();
        let (miss, _) = other.access(&mut dram, 7, false, 0);
        let (hit, at) = other.access(&mut dram, 7, false, 0);
        assert!(miss > hit + 110_000 && at == 0, "{miss} ps, then {hit}");
        assert_eq!((dram.read_bytes, dram.write_bytes), (64, 0));
        let lines = 2 * p.cpu.llc.size as u64 / 64;
        for line in 1000..1000 + lines {
            other.access(&mut dram, line, true, 0);
        }
        assert_eq!(dram.read_bytes, 64 * (lines + 1));
        assert!(dram.write_bytes >= 64 * lines / 3, "{} B written back", dram.write_bytes);
        assert!(OtherSocket::new(&Profile::i9_9960x_enso()).is_none());
    }
}
