//! A growing window over a file, so the slice parsers of `pcap-file` can stream a capture of any size
//! while every record keeps its absolute byte offset for error messages.

use pcap_file::PcapError;
use std::io::{self, Read};

/// Bytes read from the file at a time.
const CHUNK: usize = 256 * 1024;
/// Largest record the reader accepts (a jumbo frame is 9 KiB, a loopback packet 64 KiB); anything
/// larger is a corrupt length field, and refusing it bounds memory.
pub const MAX_RECORD: usize = 16 * 1024 * 1024;

/// Why a record could not be taken from the source.
#[derive(Debug)]
pub enum Fail {
    /// Reading the file failed.
    Io(io::Error),
    /// The file ends inside the record.
    Truncated,
    /// The record claims more than [`MAX_RECORD`] bytes.
    TooLarge,
    /// The parser rejected the record.
    Invalid(PcapError),
}

/// A reader plus the unparsed bytes read from it so far.
pub struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    base: u64,
    eof: bool,
}

impl<R: Read> Source<R> {
    /// Wrap `inner`, positioned at byte 0.
    pub fn new(inner: R) -> Source<R> {
        Source { inner, buf: Vec::new(), pos: 0, base: 0, eof: false }
    }

    /// Absolute offset of the next unparsed byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Parse the next record with `parse`, which returns the bytes it consumed and its (owned) result,
    /// reading more of the file while `parse` reports an incomplete buffer. `None` at a clean end of file.
    pub fn next<T>(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<(usize, T), PcapError>,
    ) -> Result<Option<T>, Fail> {
        loop {
            match parse(&self.buf[self.pos..]) {
                Ok((used, item)) => {
                    self.pos += used;
                    return Ok(Some(item));
                }
                Err(PcapError::IncompleteBuffer) if self.eof => {
                    return if self.pos == self.buf.len() { Ok(None) } else { Err(Fail::Truncated) };
                }
                Err(PcapError::IncompleteBuffer) => self.fill()?,
                Err(e) => return Err(Fail::Invalid(e)),
            }
        }
    }

    /// Drop the parsed prefix and append the next chunk of the file.
    fn fill(&mut self) -> Result<(), Fail> {
        self.buf.drain(..self.pos);
        self.base += self.pos as u64;
        self.pos = 0;
        let have = self.buf.len();
        if have > MAX_RECORD {
            return Err(Fail::TooLarge);
        }
        self.buf.resize(have + CHUNK.max(have), 0);
        let n = loop {
            match self.inner.read(&mut self.buf[have..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(have);
                    return Err(Fail::Io(e));
                }
            }
        };
        self.buf.truncate(have + n);
        self.eof = n == 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parser of 4-byte records, to exercise refills across chunk borders.
    fn word(b: &[u8]) -> Result<(usize, u32), PcapError> {
        let w = b.get(..4).ok_or(PcapError::IncompleteBuffer)?;
        Ok((4, u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
    }

    #[test]
    fn streams_records_and_reports_offsets() {
        let bytes: Vec<u8> = (0..CHUNK as u32 + 3).flat_map(|i| i.to_le_bytes()).collect();
        let mut s = Source::new(&bytes[..]);
        for i in 0..CHUNK as u32 + 3 {
            assert_eq!(s.offset(), u64::from(i) * 4);
            assert_eq!(s.next(word).unwrap(), Some(i));
        }
        assert_eq!(s.next(word).unwrap(), None);
    }

    #[test]
    fn a_partial_record_at_the_end_is_truncated() {
        let mut s = Source::new(&[1u8, 0, 0, 0, 9, 9][..]);
        assert_eq!(s.next(word).unwrap(), Some(1));
        assert!(matches!(s.next(word), Err(Fail::Truncated)));
        assert_eq!(s.offset(), 4);
    }
}
