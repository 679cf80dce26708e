//! Pinning threads to CPUs: the NIC thread to the first allowed CPU, worker i to the next ones. With more
//! threads than CPUs, threads run unpinned (correct but not timing-meaningful).

/// CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<core_affinity::CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

/// Pin the calling thread to `cpu`; returns whether it worked.
pub fn pin(cpu: Option<core_affinity::CoreId>) -> bool {
    cpu.is_some_and(core_affinity::set_for_current)
}
