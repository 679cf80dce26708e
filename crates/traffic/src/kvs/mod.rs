//! Key-value requests: the MICA-style wire format ([`proto`]) and a client that generates requests
//! ([`client`]), for the `kvs` app and for the generator's KVS payload ([`crate::config::Payload`]).

pub mod client;
pub mod proto;
