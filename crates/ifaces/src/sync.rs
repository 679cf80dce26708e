//! The atomics and locks every protocol uses: std's normally, loom's under `--cfg loom` so that the
//! model tests explore the same code's interleavings (as tokio and s2n-quic do).

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(loom)]
pub use loom::sync::{Arc, Mutex};

#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
pub use std::sync::{Arc, Mutex};

/// Spin-wait hint: loom's yield under the model checker (so spinning makes progress), a pause otherwise.
#[inline(always)]
pub fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
