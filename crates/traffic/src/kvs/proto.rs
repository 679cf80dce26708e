//! The key-value wire format: one request or response per UDP payload, little-endian, MICA-style (one
//! fixed header, then the key and value bytes).
//!
//! Request:  `op u8 | key_len u8 | value_len u16 | id u64 | key | value` (value only for PUT).
//! Response: `status u8 | 0 u8 | value_len u16 | id u64 | value` (value only for a GET hit).
//! `id` is the client's tag (e.g. a send timestamp, Ensō §7.3.3) and is echoed back. A request may end
//! with the traffic generator's [`Stamp`] as a trailer; the response then starts with it (before its
//! header, so the value stays last and can be sent from its own buffer, as nmKVS does).

use crate::hash::hash_bytes;
use wire::Stamp;
use wire::stamp::STAMP_LEN;

/// Bytes of the fixed header of requests and responses.
pub const HEADER_LEN: usize = 12;

/// The hash of a key, shared by client and server (partitions, index buckets and tags derive from it).
pub fn key_hash(key: &[u8]) -> u64 {
    hash_bytes(key, 0x4d49_4341)
}

/// The partition (server core) that owns a key of hash `hash`: MICA maps keys to partitions by hash
/// (MICA §4.1).
pub fn partition(hash: u64, partitions: usize) -> usize {
    ((hash >> 16) % partitions.max(1) as u64) as usize
}

/// A request's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read a key.
    Get = 1,
    /// Write a key.
    Put = 2,
}

/// A response's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// GET found the key; the value follows.
    Hit = 0,
    /// GET did not find the key (never stored, or evicted: the store is lossy).
    Miss = 1,
    /// PUT stored the value.
    Stored = 2,
    /// PUT could not store the item (larger than the log).
    TooLarge = 3,
}

/// A parsed request, borrowing the packet payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// GET or PUT.
    pub op: Op,
    /// Client tag, echoed in the response.
    pub id: u64,
    /// The key (1 to 255 bytes).
    pub key: &'a [u8],
    /// The value (PUT only; empty for GET).
    pub value: &'a [u8],
}

impl<'a> Request<'a> {
    /// Parse a request; `None` if the payload is short, the op unknown or the key empty.
    pub fn parse(payload: &'a [u8]) -> Option<Request<'a>> {
        let h = payload.get(..HEADER_LEN)?;
        let op = match h[0] {
            1 => Op::Get,
            2 => Op::Put,
            _ => return None,
        };
        let klen = usize::from(h[1]);
        let vlen = if op == Op::Put { usize::from(u16::from_le_bytes([h[2], h[3]])) } else { 0 };
        let id = u64::from_le_bytes(h[4..12].try_into().ok()?);
        let key = payload.get(HEADER_LEN..HEADER_LEN + klen).filter(|k| !k.is_empty())?;
        let value = payload.get(HEADER_LEN + klen..HEADER_LEN + klen + vlen)?;
        Some(Request { op, id, key, value })
    }

    /// The encoded request; `None` if the key is empty or longer than 255 bytes, or the value longer than
    /// 65535 bytes.
    pub fn encode(&self) -> Option<Vec<u8>> {
        let klen = u8::try_from(self.key.len()).ok().filter(|&k| k > 0)?;
        let vlen = u16::try_from(self.value.len()).ok()?;
        let mut out = Vec::with_capacity(HEADER_LEN + self.key.len() + self.value.len());
        out.extend_from_slice(&[self.op as u8, klen]);
        out.extend_from_slice(&vlen.to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(self.key);
        out.extend_from_slice(self.value);
        Some(out)
    }
}

/// Write a response header into `out[..HEADER_LEN]` (which must be that long).
pub fn write_response_header(out: &mut [u8], status: Status, id: u64, value_len: u16) {
    out[0] = status as u8;
    out[1] = 0;
    out[2..4].copy_from_slice(&value_len.to_le_bytes());
    out[4..12].copy_from_slice(&id.to_le_bytes());
}

/// A parsed response: status, the echoed id and the value (after the echoed stamp, if any).
pub fn parse_response(payload: &[u8]) -> Option<(Status, u64, &[u8])> {
    let payload = if Stamp::read(payload).is_some() { &payload[STAMP_LEN..] } else { payload };
    let h = payload.get(..HEADER_LEN)?;
    let status = match h[0] {
        0 => Status::Hit,
        1 => Status::Miss,
        2 => Status::Stored,
        3 => Status::TooLarge,
        _ => return None,
    };
    let vlen = usize::from(u16::from_le_bytes([h[2], h[3]]));
    Some((status, u64::from_le_bytes(h[4..12].try_into().ok()?), payload.get(HEADER_LEN..HEADER_LEN + vlen)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let r = Request { op: Op::Put, id: 7, key: b"key", value: b"value" };
        let bytes = r.encode().unwrap();
        assert_eq!(Request::parse(&bytes), Some(r));
        assert_eq!(Request::parse(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Request { key: b"", ..r }.encode(), None);
        let mut bad = bytes.clone();
        bad[0] = 9;
        assert_eq!(Request::parse(&bad), None);
        let mut resp = [0u8; 15];
        write_response_header(&mut resp, Status::Hit, 9, 3);
        resp[12..].copy_from_slice(b"abc");
        assert_eq!(parse_response(&resp), Some((Status::Hit, 9, &b"abc"[..])));
        let mut stamped = vec![0u8; STAMP_LEN];
        Stamp { seq: 1, tx_ns: 2 }.write(&mut stamped).unwrap();
        stamped.extend_from_slice(&resp);
        assert_eq!(parse_response(&stamped), Some((Status::Hit, 9, &b"abc"[..])));
    }
}
