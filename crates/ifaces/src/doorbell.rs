//! Doorbells: device registers that software writes (MMIO) to tell the NIC about new descriptors or
//! consumed completions (shRing §2.1, rxBisect §2). Counted, so runs report doorbell writes.

use crate::probe::Probe;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// One doorbell register: a 32-bit index written by software, read by the device.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Doorbell {
    value: AtomicU32,
    writes: AtomicU64,
}

impl Doorbell {
    /// A doorbell holding `v`.
    pub fn new(v: u32) -> Doorbell {
        Doorbell { value: AtomicU32::new(v), writes: AtomicU64::new(0) }
    }

    /// Software writes `v` (release: descriptors written before are visible to the device that reads it).
    #[inline]
    pub fn ring<P: Probe>(&self, p: &mut P, v: u32) {
        p.mmio_write(self as *const _ as usize, 4);
        self.value.store(v, Ordering::Release);
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// Software sets the value where the device learns it without a register write (release, as
    /// [`Doorbell::ring`]); not counted as a write.
    #[inline]
    pub fn set(&self, v: u32) {
        self.value.store(v, Ordering::Release);
    }

    /// The device reads the register (acquire).
    #[inline]
    pub fn read(&self) -> u32 {
        self.value.load(Ordering::Acquire)
    }

    /// Writes so far.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
}
