//! Which rxlab produced a result: its version and commit, and a fingerprint of the running executable. A sweep resumes only the
//! points that this very build finished, so a changed model never hides behind results of the old one.

use std::sync::OnceLock;

/// The workspace version and the commit this binary was built from (`crates/lab/build.rs`), as
/// `rxlab --version` prints it: `0.1.0 (abc1234)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("RXLAB_COMMIT"), ")");

/// 16 hex digits of FNV-1a over the bytes of the running executable (`unknown` if it cannot be read).
pub fn id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|bytes| format!("{:016x}", crate::point::fnv1a(&bytes)))
            .unwrap_or_else(|_| "unknown".into())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fingerprint_is_stable_within_a_process() {
        assert_eq!(super::id(), super::id());
        assert_eq!(super::id().len(), 16);
    }
}
