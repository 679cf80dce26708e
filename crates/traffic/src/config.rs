//! The generator's configuration, as a TOML experiment embeds it, and its validation.

use crate::flows::{IpVersion, Popularity};
use crate::kvs::client::ClientConfig;
use crate::kvs::proto::HEADER_LEN;
use crate::logs::LogConfig;
use crate::rate::{Burst, Train};
use crate::sizes::{SizeDist, SizeSpec};
use crate::steer::Steering;
use crate::template::body_frame_len;
use crate::trace::TraceError;
use crate::units::Rate;
use serde::Deserialize;
use wire::L4Proto;
use wire::frame::{MAX_FRAME, MIN_FRAME};
use wire::reta::RETA_SIZE;

/// Most flows one generator holds (templates and hashes are kept per flow).
pub const MAX_FLOWS: usize = 1 << 22;

/// Why a generator could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A parameter is out of range or parameters contradict each other.
    #[error("{0}")]
    Config(String),
    /// The capture named by `size = "pcap:FILE"` could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// What the L4 payload of each generated packet carries.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Payload {
    /// The [`wire::Stamp`] at the start of a zeroed payload; frames have the sizes of [`GenConfig::size`].
    #[default]
    Stamp,
    /// One key-value request ([`crate::kvs`]) followed by the stamp as a trailer (the last 16 bytes of the
    /// L4 payload); each frame is as long as its request needs (at least 64 B) and `size` is unused.
    Kvs(ClientConfig),
    /// Syslog lines ([`crate::logs`]) for the `logmon` app: as many whole lines as fit a frame of a size
    /// drawn from [`GenConfig::size`], then the stamp as a trailer; each frame is as long as its lines need,
    /// at most that size.
    Logs(LogConfig),
}

/// A change of load partway through a stream with [`Steering::Target`]: shRing §5.3 (Figure 13) runs
/// NAT and LB under a non-pathological load and, 20 s in, "reconfigure\[s\] the load generator to send a
/// pathological load". The flows stay those chosen at the start; from the first packet after one sent at
/// or past `at_ns`, the target queues get `percent` % of the packets, in frames of `target_size`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSwitch {
    /// When, ns from the start of the stream.
    pub at_ns: u64,
    /// The target queues' share of each port's packets from then on, 0..=100.
    pub percent: f64,
    /// Their frame length (FCS included) from then on; without it, it stays as it was.
    #[serde(default)]
    pub target_size: Option<usize>,
}

/// Everything that defines a synthetic traffic stream. Same config, same bytes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GenConfig {
    /// Seed of the generator's random stream.
    pub seed: u64,
    /// Frame sizes: `"64"`, `"imix"`, `"dc"` or `"pcap:FILE"`.
    pub size: SizeSpec,
    /// Number of flows.
    pub flows: usize,
    /// How often and in which order each flow is chosen: `"uniform"`, `"stepped"` (each in turn, T-Rex's
    /// `op = "inc"`) or `{ zipf = 0.99 }`.
    pub popularity: Popularity,
    /// `"udp"` or `"tcp"`.
    pub proto: L4Proto,
    /// `"v4"` or `"v6"`.
    pub ip: IpVersion,
    /// Offered load: `"10G"` (framing included) or `"5Mpps"`.
    pub rate: Rate,
    /// Optional on/off bursts.
    pub burst: Option<Burst>,
    /// Optional trains: frames back to back at the sender's line rate (`{ frames = 32, line = "100G" }`).
    pub train: Option<Train>,
    /// Queue steering: `"none"`, `{ target = { queues, queue, percent } }` or `{ rss-even = { queues } }`.
    pub steering: Steering,
    /// Payload: `"stamp"` or `{ kvs = { keys, key_len, value_len, get_ratio, zipf } }`.
    pub payload: Payload,
    /// Entries of the receiving NIC's RSS indirection table, filled round-robin, on which steering and
    /// KVS partitions rely to reach their queues (a power of two) [default: 128].
    pub reta: usize,
    /// Optional change of the target queues' load partway through (`{ at_ns, percent, target_size }`).
    pub switch: Option<LoadSwitch>,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            seed: 1,
            size: SizeSpec::default(),
            flows: 1,
            popularity: Popularity::Uniform,
            proto: L4Proto::Udp,
            ip: IpVersion::V4,
            rate: Rate::Gbps(10.0),
            burst: None,
            train: None,
            steering: Steering::None,
            payload: Payload::Stamp,
            reta: RETA_SIZE,
            switch: None,
        }
    }
}

impl GenConfig {
    /// Check every parameter that can be checked without reading files.
    pub fn validate(&self) -> Result<(), GenError> {
        self.check().map_err(GenError::Config)
    }

    /// Mean frame length (FCS included): of the size distribution, or of the KVS requests' frames.
    pub fn mean_frame_len(&self) -> Result<f64, GenError> {
        match &self.payload {
            // An upper bound for log lines, whose frames stop short of the size by part of a line.
            Payload::Stamp | Payload::Logs(_) => Ok(SizeDist::from_spec(&self.size)?.mean()),
            Payload::Kvs(c) => {
                let headers = 14 + if self.ip == IpVersion::V6 { 40 } else { 20 } + self.proto.header_len();
                let len = |value: usize| body_frame_len(headers, HEADER_LEN + c.key_len + value) as f64;
                Ok(c.get_ratio * len(0) + (1.0 - c.get_ratio) * len(c.value_len))
            }
        }
    }

    fn check(&self) -> Result<(), String> {
        self.rate.check()?;
        if !(1..=MAX_FLOWS).contains(&self.flows) {
            return Err(format!("flows must be 1..={MAX_FLOWS}, got {}", self.flows));
        }
        if let Popularity::Zipf(s) = self.popularity
            && !(s.is_finite() && s >= 0.0)
        {
            return Err(format!("the Zipf exponent must be a finite number >= 0, got {s}"));
        }
        if self.burst.is_some_and(|b| b.on_ns == 0) {
            return Err("a burst needs an on period longer than 0".into());
        }
        if let Some(t) = self.train {
            t.line.check()?;
            if t.frames == 0 {
                return Err("a train needs at least 1 frame".into());
            }
            // The line rate must carry the mean rate: compare the gaps of an MTU frame.
            if t.line.gap_ps(MAX_FRAME) > self.rate.gap_ps(MAX_FRAME) {
                return Err(format!("a train's line rate {} is below the offered rate {}", t.line, self.rate));
            }
        }
        let main = match &self.size {
            SizeSpec::Fixed(s) => Some(*s),
            _ => None,
        };
        let target = match self.steering {
            Steering::Target { target_size, .. } => target_size,
            _ => None,
        };
        if let Some(w) = self.switch {
            self.check_switch(w)?;
        }
        let switched = self.switch.and_then(|w| w.target_size);
        for s in [main, target, switched].into_iter().flatten() {
            if !(MIN_FRAME..=MAX_FRAME).contains(&s) {
                return Err(format!(
                    "packet size {s} B is out of range: Ethernet frames (FCS included) are {MIN_FRAME}..={MAX_FRAME} B"
                ));
            }
        }
        match &self.payload {
            Payload::Kvs(c) => c.check()?,
            Payload::Logs(c) => c.check()?,
            Payload::Stamp => {}
        }
        wire::IndirectionTable::check_entries(self.reta)?;
        self.steering.validate(self.flows, self.reta)
    }

    /// A switch changes the share of the target flows, so there must be target flows and others.
    fn check_switch(&self, w: LoadSwitch) -> Result<(), String> {
        match self.steering {
            Steering::Target { percent, .. } if percent > 0.0 && percent < 100.0 => {}
            Steering::Target { percent, .. } => {
                return Err(format!(
                    "a load switch moves packets between the target queues and the others: it needs a target \
                     share between 0 and 100 % to start from, got {percent} %"
                ));
            }
            _ => return Err("a load switch changes the target queues' load: it needs a target queue".into()),
        }
        if !(0.0..=100.0).contains(&w.percent) {
            return Err(format!("the switched target percent must be within 0..=100, got {}", w.percent));
        }
        if matches!(self.payload, Payload::Kvs(_)) {
            return Err("a load switch changes frame sizes and shares, which key-value requests set themselves".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<GenConfig, String> {
        toml::from_str(src).map_err(|e| e.to_string())
    }

    #[test]
    fn deserialises_and_rejects_unknown_fields() {
        let c = parse(
            r#"
            seed = 7
            size = "imix"
            flows = 16
            popularity = { zipf = 0.99 }
            proto = "tcp"
            ip = "v6"
            rate = "5Mpps"
            burst = { on_ns = 1000, off_ns = 500 }
            steering = { target = { queues = 4, queue = 1, percent = 20.0 } }
            "#,
        )
        .unwrap();
        assert_eq!(c.size, SizeSpec::Imix);
        assert_eq!(c.rate, Rate::Mpps(5.0));
        assert!(matches!(c.steering, Steering::Target { queues: 4, queue: 1, .. }));
        assert!(parse("flow = 3").unwrap_err().contains("unknown field"));
        assert!(parse(r#"rate = "-1G""#).unwrap_err().contains("positive"));
        assert_eq!(
            parse("steering = { rss-even = { queues = 8 } }").unwrap().steering,
            Steering::RssEven { queues: 8 }
        );
        let kvs = parse("payload = { kvs = { keys = 10, zipf = 0.99 } }").unwrap().payload;
        assert_eq!(kvs, Payload::Kvs(ClientConfig { keys: 10, zipf: Some(0.99), ..ClientConfig::default() }));
        assert_eq!(parse(r#"payload = "stamp""#).unwrap().payload, Payload::Stamp);
        let logs = parse("payload = { logs = { attack_share = 0.2 } }").unwrap().payload;
        assert_eq!(logs, Payload::Logs(LogConfig { attack_share: 0.2 }));
        assert!(parse("payload = { logs = { attack_share = 2.0 } }").unwrap().validate().is_err());
        assert!(parse("payload = { kvs = { key = 3 } }").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn validation_names_the_problem() {
        let bad = |c: GenConfig| c.validate().unwrap_err().to_string();
        let d = GenConfig::default;
        assert!(bad(GenConfig { rate: Rate::Gbps(0.0), ..d() }).contains("positive"));
        assert!(bad(GenConfig { flows: 0, ..d() }).contains("flows"));
        assert!(bad(GenConfig { size: SizeSpec::Fixed(2000), ..d() }).contains("out of range"));
        let target = |queues, queue, percent| Steering::Target { queues, queue, percent, target_size: None, ports: 1 };
        assert!(bad(GenConfig { flows: 8, steering: target(4, 4, 10.0), ..d() }).contains("does not exist"));
        assert!(bad(GenConfig { flows: 8, steering: target(4, 0, 120.0), ..d() }).contains("0..=100"));
        assert!(bad(GenConfig { flows: 1, steering: target(4, 0, 50.0), ..d() }).contains("2 flows"));
        assert!(bad(GenConfig { flows: 6, steering: Steering::RssEven { queues: 4 }, ..d() }).contains("multiple"));
        assert!(bad(GenConfig { steering: Steering::RssEven { queues: 0 }, ..d() }).contains("queues must be"));
        assert!(bad(GenConfig { popularity: Popularity::Zipf(-1.0), ..d() }).contains("Zipf"));
        let kvs = |get_ratio| Payload::Kvs(ClientConfig { get_ratio, ..ClientConfig::default() });
        assert!(bad(GenConfig { payload: kvs(2.0), ..d() }).contains("GET ratio"));
        // 42 B of headers, 12 + 8 B of request, 16 B of stamp, 4 B of FCS; PUTs add 8 B of value.
        assert_eq!(GenConfig { payload: kvs(0.5), ..d() }.mean_frame_len().unwrap(), 86.0);
        assert_eq!(d().mean_frame_len().unwrap(), 64.0);
    }
}
