//! Log lines as payload: a generator of syslog-like lines (RFC 3164 style: `<pri>Mmm dd hh:mm:ss host
//! prog[pid]: message`), mostly benign with a configurable share of the attack lines that Fail2ban's filters
//! look for, as the `logmon` app's traffic (Ensō §7.3.4 feeds its log monitor "MTU-sized packets, carrying
//! system logs"). [`LogConfig`] packs whole lines into each generated frame ([`crate::Payload::Logs`]);
//! [`packetize`] instead cuts one byte stream into frames without regard for line boundaries, as a log
//! shipper streaming over a pipe does.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use wire::{FiveTuple, FrameSpec, build_frame};

/// Benign message templates (`{ip}`, `{user}`, `{pid}`, `{n}` are filled in).
const BENIGN: &[&str] = &[
    "sshd[{pid}]: Accepted publickey for {user} from {ip} port {n} ssh2",
    "CRON[{pid}]: (root) CMD (run-parts /etc/cron.hourly)",
    "kernel: [{n}.{pid}] eth0: link up, 100Gbps, full duplex",
    "systemd[1]: Started Session {n} of user {user}.",
    "postfix/smtpd[{pid}]: connect from mail.example.org[{ip}]",
    "nginx: {ip} - - \"GET /index.html HTTP/1.1\" 200 {n}",
    "dovecot: imap-login: Login: user=<{user}>, method=PLAIN, rip={ip}, lip=10.0.0.1",
];

/// Attack templates, each matched by one of the shipped patterns.
const ATTACKS: &[&str] = &[
    "sshd[{pid}]: Failed password for invalid user {user} from {ip} port {n} ssh2",
    "sshd[{pid}]: Failed password for {user} from {ip} port {n} ssh2",
    "sshd[{pid}]: Invalid user {user} from {ip} port {n}",
    "sshd[{pid}]: Connection closed by invalid user {user} {ip} port {n} [preauth]",
    "postfix/smtpd[{pid}]: NOQUEUE: reject: RCPT from unknown[{ip}]: 554 5.7.1 Relay access denied",
    "postfix/smtpd[{pid}]: warning: unknown[{ip}]: SASL LOGIN authentication failed: UGFzc3dvcmQ6",
    "dovecot: pop3-login: Aborted login (auth failed, 1 attempts in 2 secs): user=<{user}>, rip={ip}, lip=10.0.0.1",
    "nginx: 2024/01/01 00:00:00 [error] {pid}#0: *{n} user \"{user}\": password mismatch, client: {ip}",
    "apache2: [auth_basic:error] [pid {pid}] [client {ip}:{n}] AH01618: user {user} not found: /admin",
    "vsftpd[{pid}]: [{user}] FAIL LOGIN: Client \"{ip}\"",
    "sshd[{pid}]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost={ip}",
    "fail2ban.actions [{pid}]: NOTICE [sshd] Ban {ip}",
];

const USERS: &[&str] = &["root", "admin", "oracle", "git", "alice", "test", "ubuntu"];
const MONTHS: &[&str] = &["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Generates log lines.
#[derive(Debug, Clone)]
pub struct LineGen {
    rng: Xoshiro256PlusPlus,
    attack_share: f64,
}

impl LineGen {
    /// A generator whose lines are attacks with probability `attack_share`.
    pub fn new(seed: u64, attack_share: f64) -> LineGen {
        LineGen { rng: Xoshiro256PlusPlus::seed_from_u64(seed), attack_share: attack_share.clamp(0.0, 1.0) }
    }

    /// The next line, with its `\n`.
    pub fn line(&mut self) -> String {
        let set = if self.rng.random_bool(self.attack_share) { ATTACKS } else { BENIGN };
        let t = set[self.rng.random_range(0..set.len())];
        let r = &mut self.rng;
        let ip =
            format!("{}.{}.{}.{}", r.random_range(1..224), r.random::<u8>(), r.random::<u8>(), r.random_range(1..255));
        let msg = t
            .replace("{ip}", &ip)
            .replace("{user}", USERS[r.random_range(0..USERS.len())])
            .replace("{pid}", &r.random_range(100..65536).to_string())
            .replace("{n}", &r.random_range(1..65536).to_string());
        let (mon, day) = (MONTHS[r.random_range(0..12)], r.random_range(1..29));
        let (h, m, s) = (r.random_range(0..24), r.random_range(0..60), r.random_range(0..60));
        format!("<38>{mon} {day:2} {h:02}:{m:02}:{s:02} host{} {msg}\n", r.random_range(1..10))
    }

    /// `n` lines concatenated.
    pub fn text(&mut self, n: usize) -> String {
        (0..n).map(|_| self.line()).collect()
    }
}

/// Log lines as a generated payload ([`crate::Payload::Logs`]): `payload = { logs = { attack_share = 0.01
/// } }`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// Share of the lines that are attacks, 0..=1. A choice, 1 % by default: Ensō's logs were "extracted
    /// from long-running Linux hosts" and §7.3.4 gives no share.
    pub attack_share: f64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { attack_share: 0.01 }
    }
}

impl LogConfig {
    /// Check the share.
    pub fn check(&self) -> Result<(), String> {
        if (0.0..=1.0).contains(&self.attack_share) {
            Ok(())
        } else {
            Err(format!("the share of attack lines must be within 0..=1, got {}", self.attack_share))
        }
    }
}

/// Lines made once (a pool of [`POOL_LINES`] from [`LineGen`]) and drawn at random, as many whole lines as
/// fit each frame.
#[derive(Debug, Clone)]
pub struct LinePacker {
    pool: Vec<String>,
    body: Vec<u8>,
}

/// Lines in a [`LinePacker`]'s pool.
pub const POOL_LINES: usize = 4096;

impl LinePacker {
    /// The pool of `cfg`'s lines, made from `seed`.
    pub fn new(cfg: &LogConfig, seed: u64) -> LinePacker {
        let mut g = LineGen::new(seed, cfg.attack_share);
        LinePacker { pool: (0..POOL_LINES).map(|_| g.line()).collect(), body: Vec::new() }
    }

    /// Bytes of the longest line, `\n` included: a frame must have room for it.
    pub fn longest(&self) -> usize {
        self.pool.iter().map(String::len).max().unwrap_or(0)
    }

    /// Whole lines drawn with `rng` until the next would not fit in `room` bytes (at least one; `room` must
    /// hold [`LinePacker::longest`]).
    pub fn fill(&mut self, rng: &mut Xoshiro256PlusPlus, room: usize) -> &[u8] {
        self.body.clear();
        loop {
            let line = &self.pool[rng.random_range(..self.pool.len())];
            if !self.body.is_empty() && self.body.len() + line.len() > room {
                return &self.body;
            }
            self.body.extend_from_slice(line.as_bytes());
        }
    }
}

/// Cut `stream` into UDP/IPv4 frames of flow `tuple` carrying up to `chunk` payload bytes each, splitting
/// lines wherever the cut falls.
pub fn packetize(stream: &[u8], tuple: FiveTuple, chunk: usize) -> Result<Vec<Vec<u8>>, String> {
    if !tuple.src.is_ipv4() || tuple.proto != 17 {
        return Err(format!("log streams are carried over UDP/IPv4, not {tuple}"));
    }
    stream
        .chunks(chunk.max(1))
        .map(|c| {
            let frame_len = (42 + c.len() + wire::frame::FCS_LEN).max(wire::frame::MIN_FRAME);
            let mut f = build_frame(&FrameSpec { tuple, frame_len }, c)?;
            // A chunk shorter than the minimum frame's payload was zero-filled; cut the UDP payload back to
            // the chunk (the zeros become Ethernet padding) by fixing both lengths and checksums.
            f[16..18].copy_from_slice(&((28 + c.len()) as u16).to_be_bytes());
            f[38..40].copy_from_slice(&((8 + c.len()) as u16).to_be_bytes());
            wire::rewrite::fill_ipv4_checksum(&mut f, 14);
            let mut v = wire::PacketView::new_checked(&mut f[..]).map_err(|e| e.to_string())?;
            wire::rewrite::fill_l4_checksum(&mut v);
            Ok(f)
        })
        .collect()
}
