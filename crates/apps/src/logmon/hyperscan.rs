//! What Hyperscan's streaming scan costs the core, per call and per byte, for each of the ten targets of
//! Ensō §7.3.4 (Figure 19): the ten most popular Debian packages Fail2ban has filters for, each scanned
//! with the regular expressions the Ensō artifact extracts from Fail2ban (`enso_eval`,
//! `log_monitor/log_regex/<target>_regex.txt`: apache 24, sshd 22, exim 13, nginx 5, dovecot 4, and one
//! each for mysql, pam, postfix, selinux and sieve).
//!
//! Measured, not fitted to the figure: Hyperscan 5.4.0 (Debian's `libhyperscan5`), each target's
//! expressions compiled as the artifact's `build_regex_database.cpp` compiles them (`HS_MODE_STREAM`,
//! `HS_FLAG_PREFILTER` plus the file's flags), one stream scanning a 256 KiB window of rxlab's own log
//! traffic (`rxlab trace gen --size 1518 --log-lines 0.01`, frame payloads up to their last newline),
//! cached, 200 times over, in calls of 1,514 B (a frame, as the artifact's DPDK monitor calls
//! `hs_scan_stream` once per mbuf) and of 64 KiB (an Ensō batch). The per-byte cost is the 64 KiB calls'
//! time over their bytes, the per-call cost what a 1,514 B call takes beyond its bytes (none where noise
//! makes that negative); each value is the best of 35 runs (five processes of seven) on a 2.6 GHz AMD
//! EPYC (Zen 4, AVX-512) and is converted to cycles at that clock. Hyperscan's cost is compute in cache:
//! the text's own loads are the memory model's, as every app's packet reads are.
//!
//! With these costs a 1,514 B frame takes 180-205 cycles to scan for postfix, selinux or sieve and 9,100
//! for apache, where one DFA for every target (rxlab's [`super::matcher`], which does the matching) would
//! charge about 4,400 for each.

/// Cycles one `hs_scan_stream` call costs beyond its bytes, and cycles per byte scanned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanCost {
    /// Cycles a call costs beyond its bytes (loading and saving the stream state, engine start-up).
    pub per_call: f64,
    /// Cycles per byte scanned.
    pub per_byte: f64,
}

impl ScanCost {
    /// Cycles of scanning `bytes` bytes, in a call of their own if `new_call`, else as more of the call
    /// before.
    pub fn cycles(&self, bytes: usize, new_call: bool) -> u32 {
        let call = if new_call { self.per_call } else { 0.0 };
        (call + self.per_byte * bytes as f64).round() as u32
    }
}

/// Clock of the machine the costs were measured on, GHz (cycles = ns x this).
const MEASURED_GHZ: f64 = 2.6;

/// Per target: ns per 1,514 B call and ns per 64 KiB call (see the module documentation).
const MEASURED_NS: [(&str, f64, f64); 10] = [
    ("apache", 3512.8, 132_343.8),
    ("dovecot", 343.0, 12_510.0),
    ("exim", 881.7, 32_272.2),
    ("mysql", 419.9, 15_425.3),
    ("nginx", 330.5, 14_050.1),
    ("pam", 129.1, 4_505.1),
    ("postfix", 78.7, 1_947.0),
    ("selinux", 73.4, 3_429.2),
    ("sieve", 68.6, 2_907.8),
    ("sshd", 1404.0, 51_633.7),
];

/// The ten targets' names, in the table's order.
pub fn targets() -> impl Iterator<Item = &'static str> {
    MEASURED_NS.iter().map(|(t, _, _)| *t)
}

/// Hyperscan's cost for `target`, if it is one of the ten measured.
pub fn cost(target: &str) -> Option<ScanCost> {
    let &(_, frame_ns, batch_ns) = MEASURED_NS.iter().find(|(t, _, _)| *t == target)?;
    let per_byte_ns = batch_ns / 65_536.0;
    let per_call_ns = (frame_ns - 1514.0 * per_byte_ns).max(0.0);
    Some(ScanCost { per_call: per_call_ns * MEASURED_GHZ, per_byte: per_byte_ns * MEASURED_GHZ })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_measurement() {
        let apache = cost("apache").unwrap();
        // 64 KiB in one call: the measured time at 2.6 GHz.
        assert!((f64::from(apache.cycles(65_536, false)) - 132_343.8 * 2.6).abs() < 1_200.0);
        // A frame: the measured 1,514 B call.
        assert!((f64::from(apache.cycles(1514, true)) - 3512.8 * 2.6).abs() < 2.0);
        // selinux's per-call cost measured below zero: none.
        assert_eq!(cost("selinux").unwrap().per_call, 0.0);
        assert!(cost("vsftpd").is_none());
        assert_eq!(targets().count(), 10);
        // The simple targets scan a frame an order of magnitude cheaper than the complex ones.
        for simple in ["postfix", "selinux", "sieve"] {
            assert!(cost(simple).unwrap().cycles(1514, true) * 10 < cost("sshd").unwrap().cycles(1514, true));
        }
    }
}
