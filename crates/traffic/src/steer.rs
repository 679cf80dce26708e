//! Steering: choosing flows by the queue RSS sends them to, as the papers' load generators do.
//!
//! - [`Steering::Target`]: X % of packets to one target queue of N (shRing §5.3 "Traffic Variability",
//!   rxBisect §6.2): target-queue flows carry X % of packets, flows of the other queues the rest. With
//!   several NIC ports ("a target core per NIC", both papers), the queues split into one equal group per
//!   port and each port's target gets X % of that port's packets.
//! - [`Steering::RssEven`]: the same number of flows on every queue, so RSS spreads flows evenly.
//!
//! Flows are drawn from a seeded stream and kept when the Toeplitz hash (Microsoft key, addresses and
//! ports) and the round-robin indirection table put them on a queue that still needs flows.

use crate::config::GenError;
use crate::flows::{Candidates, FlowInfo, FlowSet, IpVersion};
use rand::Rng;
use serde::Deserialize;
use wire::L4Proto;

/// How flows are placed on queues.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Steering {
    /// Flows wherever RSS puts them (their `queue` refers to a single queue).
    #[default]
    None,
    /// `percent` % of packets to queue `queue` of `queues`, the rest spread over the other queues; with
    /// `ports` NIC ports, queue `queue` of every port's group of `queues / ports` is a target, and each
    /// gets `percent` % of its port's packets.
    Target {
        /// Receive queues (1..=128), all ports together.
        queues: usize,
        /// The target queue within its port's group, below `queues / ports`.
        queue: usize,
        /// Share of each port's packets for its target queue, 0..=100.
        percent: f64,
        /// NIC ports, each with an equal share of the traffic and of the queues (queues `k * queues /
        /// ports ..` are port `k`'s); 1 when absent.
        #[serde(default = "one_port")]
        ports: usize,
        /// Frame length of the target queue's packets, if it differs from the rest (the papers send
        /// 64 B frames to the target core and 1500 B frames to the others).
        #[serde(default)]
        target_size: Option<usize>,
    },
    /// An equal number of flows on each of `queues` queues (flows must be a multiple of `queues`).
    RssEven {
        /// Receive queues (1..=128).
        queues: usize,
    },
}

/// One NIC port: the default of [`Steering::Target`]'s `ports`.
fn one_port() -> usize {
    1
}

/// A group of flows that share a packet share, e.g. the target queue's flows.
#[derive(Debug, Clone)]
pub struct Group {
    /// Indices into the flow set.
    pub members: Vec<u32>,
    /// Whether these are the target queue's flows (they may have their own frame size).
    pub target: bool,
}

/// Chosen flows and groups; packets pick group 0 with probability `first_share`, else group 1.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The flows.
    pub flows: FlowSet,
    /// One or two non-empty groups.
    pub groups: Vec<Group>,
    /// Probability of group 0 when there are two.
    pub first_share: f64,
}

impl Steering {
    /// The target queues, one per port (none without [`Steering::Target`]).
    pub fn targets(&self) -> Vec<usize> {
        match *self {
            Steering::Target { queues, queue, ports, .. } => (0..ports).map(|k| k * queues / ports + queue).collect(),
            _ => Vec::new(),
        }
    }

    /// Check the parameters against the number of flows and the indirection table's entries.
    pub fn validate(&self, flows: usize, reta: usize) -> Result<(), String> {
        let check_queues = |q: usize| {
            if (1..=reta).contains(&q) {
                Ok(())
            } else {
                Err(format!("queues must be 1..={reta} (the indirection table has {reta} entries), got {q}"))
            }
        };
        match *self {
            Steering::None => Ok(()),
            Steering::Target { queues, queue, percent, ports, .. } => {
                check_queues(queues)?;
                if ports == 0 || !queues.is_multiple_of(ports) {
                    return Err(format!("{queues} queues do not split evenly over {ports} NIC ports"));
                }
                let per_port = queues / ports;
                if queue >= per_port {
                    return Err(format!(
                        "target queue {queue} does not exist with {per_port} queues per port: queues are numbered \
                         0..={}",
                        per_port - 1
                    ));
                }
                if !(0.0..=100.0).contains(&percent) {
                    return Err(format!("target percent must be within 0..=100, got {percent}"));
                }
                if percent < 100.0 && per_port < 2 {
                    return Err("sending less than 100 % to the target queue needs at least 2 queues per port".into());
                }
                if percent > 0.0 && flows < ports {
                    return Err(format!("a target on each of {ports} ports needs at least {ports} flows"));
                }
                if percent > 0.0 && percent < 100.0 && flows < 2 * ports {
                    return Err(format!(
                        "a target share between 0 and 100 % on {ports} ports needs at least {} flows",
                        2 * ports
                    ));
                }
                Ok(())
            }
            Steering::RssEven { queues } => {
                check_queues(queues)?;
                if !flows.is_multiple_of(queues) {
                    return Err(format!(
                        "even RSS spread needs a number of flows that is a multiple of {queues} queues, got {flows}"
                    ));
                }
                Ok(())
            }
        }
    }

    /// Choose `n` flows for a NIC whose indirection table has `reta` entries (the parameters must have
    /// passed [`Steering::validate`]).
    pub fn select<R: Rng>(
        &self,
        rng: &mut R,
        n: usize,
        ip: IpVersion,
        proto: L4Proto,
        reta: usize,
    ) -> Result<Selection, GenError> {
        let all = |flows: Vec<FlowInfo>, queues| {
            let members = (0..flows.len() as u32).collect();
            Selection {
                flows: FlowSet::new(flows, queues),
                groups: vec![Group { members, target: false }],
                first_share: 1.0,
            }
        };
        match *self {
            Steering::None => {
                let mut c = Candidates::new(rng, ip, proto, 1, reta).map_err(GenError::Config)?;
                Ok(all((0..n).map(|_| c.draw()).collect(), 1))
            }
            Steering::RssEven { queues } => {
                let per_queue = find(rng, ip, proto, queues, reta, &vec![n / queues; queues])?;
                // Interleave queues so that popularity ranks are spread over them too.
                let flows = (0..n).map(|i| per_queue[i % queues][i / queues]).collect();
                Ok(all(flows, queues))
            }
            Steering::Target { queues, queue, percent, ports, .. } => {
                let target_flows = match percent {
                    p if p <= 0.0 => 0,
                    p if p >= 100.0 => n,
                    p => ((n as f64 * p / 100.0).round() as usize).clamp(ports, n - ports),
                };
                let per_port = queues / ports;
                let (targets, others): (Vec<usize>, Vec<usize>) = (0..queues).partition(|q| q % per_port == queue);
                // Flows in turn over each kind's queues, so every target and every other queue gets its share.
                let order: Vec<usize> =
                    (0..n)
                        .map(|i| {
                            if i < target_flows {
                                targets[i % ports]
                            } else {
                                others[(i - target_flows) % others.len()]
                            }
                        })
                        .collect();
                let mut quota = vec![0; queues];
                for &q in &order {
                    quota[q] += 1;
                }
                let per_queue = find(rng, ip, proto, queues, reta, &quota)?;
                let mut next = vec![0; queues];
                let flows: Vec<FlowInfo> = order
                    .iter()
                    .map(|&q| {
                        next[q] += 1;
                        per_queue[q][next[q] - 1]
                    })
                    .collect();
                let target = Group { members: (0..target_flows as u32).collect(), target: true };
                let rest = Group { members: (target_flows as u32..n as u32).collect(), target: false };
                let groups = [target, rest].into_iter().filter(|g| !g.members.is_empty()).collect();
                Ok(Selection { flows: FlowSet::new(flows, queues), groups, first_share: percent / 100.0 })
            }
        }
    }
}

/// Draw flows until queue `q` (of a `reta`-entry table) has `quota[q]` of them, for every queue.
fn find<R: Rng>(
    rng: &mut R,
    ip: IpVersion,
    proto: L4Proto,
    queues: usize,
    reta: usize,
    quota: &[usize],
) -> Result<Vec<Vec<FlowInfo>>, GenError> {
    let wanted: usize = quota.iter().sum();
    let max_draws = 64 * wanted + 100_000;
    let mut c = Candidates::new(rng, ip, proto, queues, reta).map_err(GenError::Config)?;
    let mut per_queue: Vec<Vec<FlowInfo>> = quota.iter().map(|&q| Vec::with_capacity(q)).collect();
    let mut found = 0;
    for _ in 0..max_draws {
        if found == wanted {
            break;
        }
        let f = c.draw();
        let q = usize::from(f.queue);
        if per_queue[q].len() < quota[q] {
            per_queue[q].push(f);
            found += 1;
        }
    }
    if found < wanted {
        return Err(GenError::Config(format!(
            "found only {found} of {wanted} flows with the requested queues after {max_draws} tries; ask for fewer flows"
        )));
    }
    Ok(per_queue)
}
