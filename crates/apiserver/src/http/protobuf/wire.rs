//! Protobuf wire primitives: varints, tags, length-delimited fields and a bounds-checked
//! reader that reports truncation instead of panicking.

use super::codec::CodecError;

pub(super) const VARINT: u8 = 0;
pub(super) const FIXED64: u8 = 1;
pub(super) const LEN: u8 = 2;
pub(super) const FIXED32: u8 = 5;

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn put_tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire));
}

pub(super) fn put_len(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(super) fn put_string(out: &mut Vec<u8>, field: u32, s: &str) {
    put_len(out, field, s.as_bytes());
}

/// Reads one message's bytes front to back.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(super) fn varint(&mut self) -> Result<u64, CodecError> {
        let mut v: u64 = 0;
        for (i, b) in self.buf.iter().enumerate().take(10) {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.buf = &self.buf[i + 1..];
                return Ok(v);
            }
        }
        Err(CodecError::new(if self.buf.len() < 10 { "truncated varint" } else { "varint longer than 10 bytes" }))
    }

    /// The next field number and wire type.
    pub(super) fn tag(&mut self) -> Result<(u32, u8), CodecError> {
        let t = self.varint()?;
        let field = u32::try_from(t >> 3).map_err(|_| CodecError::new("field number out of range"))?;
        if field == 0 {
            return Err(CodecError::new("field number 0 is invalid"));
        }
        Ok((field, (t & 7) as u8))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        if n > self.buf.len() {
            return Err(CodecError::new(format!("truncated: {n} bytes announced, {} left", self.buf.len())));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// A length-delimited value.
    pub(super) fn bytes(&mut self) -> Result<&'a [u8], CodecError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| CodecError::new("length out of range"))?;
        self.take(n)
    }

    pub(super) fn fixed64(&mut self) -> Result<u64, CodecError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    pub(super) fn fixed32(&mut self) -> Result<u32, CodecError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Skips a value of a field this message does not know.
    pub(super) fn skip(&mut self, wire: u8) -> Result<(), CodecError> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.fixed32().map(drop),
            w => Err(CodecError::new(format!("unsupported wire type {w}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_truncation_is_an_error() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX, (-1i64) as u64] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(Reader::new(&out).varint().expect("decodes"), v);
            assert!(Reader::new(&out[..out.len() - 1]).varint().is_err());
        }
    }

    #[test]
    fn a_length_beyond_the_buffer_is_an_error() {
        let mut out = Vec::new();
        put_len(&mut out, 1, b"hello");
        let mut r = Reader::new(&out[..out.len() - 1]);
        assert_eq!(r.tag().expect("tag"), (1, LEN));
        assert!(r.bytes().is_err());
    }
}
