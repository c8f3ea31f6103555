// SPDX-License-Identifier: GPL-2.0

//! Bounds-checked little-endian cursors: a reader over a borrowed frame and
//! a writer into a caller's buffer.
//!
//! All the bounds checking of the codec lives here. Message code only calls
//! these methods, so it cannot index past the end of a buffer even by mistake.

use super::error::Error;
use super::qid::Qid;

// ANCHOR: reader
/// A cursor over the bytes of one message.
///
/// Everything it returns borrows from the input (lifetime `'a`), so decoding
/// copies no strings or payloads.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    /// The bytes not read yet.
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { rest: buf }
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The next `n` bytes, borrowed from the input.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let (head, tail) = self.rest.split_at_checked(n).ok_or(Error::Truncated)?;
        self.rest = tail;
        Ok(head)
    }

    /// The next `N` bytes as an array (for the integer readers).
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let (head, tail) = self.rest.split_first_chunk::<N>().ok_or(Error::Truncated)?;
        self.rest = tail;
        Ok(*head)
    }
    // ANCHOR_END: reader

    /// A `u8`.
    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(u8::from_le_bytes(self.array()?))
    }

    /// A little-endian `u16`.
    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A little-endian `u64`.
    pub(crate) fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    // ANCHOR: string
    /// A string: `len[2]` then `len` bytes, borrowed.
    ///
    /// 9P says strings are UTF-8, but Linux file names are any bytes except
    /// `/` and NUL, so the codec hands out bytes and leaves judging them to
    /// the server.
    pub(crate) fn string(&mut self) -> Result<&'a [u8], Error> {
        let len = self.u16()?;
        self.bytes(usize::from(len))
    }
    // ANCHOR_END: string

    /// A qid: `type[1] version[4] path[8]`.
    pub(crate) fn qid(&mut self) -> Result<Qid, Error> {
        Ok(Qid {
            ty: self.u8()?,
            version: self.u32()?,
            path: self.u64()?,
        })
    }

    /// Checks that the message used its frame up exactly.
    pub(crate) fn finish(self) -> Result<(), Error> {
        match self.rest.len() {
            0 => Ok(()),
            n => Err(Error::TrailingBytes(n)),
        }
    }
}

// ANCHOR: writer
/// A cursor that writes a message into a caller-provided buffer.
///
/// Every write checks the space left first; a message that does not fit is
/// `Error::BufferTooSmall`, and the buffer past `position()` is untouched.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    /// The whole output buffer.
    buf: &'a mut [u8],
    /// How many bytes have been written.
    pos: usize,
}

impl<'a> Writer<'a> {
    /// A writer at the start of `buf`.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// How many bytes have been written so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// How many more bytes fit.
    pub(crate) fn space(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Appends `bytes`, or fails without writing anything.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let end = self
            .pos
            .checked_add(bytes.len())
            .ok_or(Error::BufferTooSmall)?;
        let dst = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(Error::BufferTooSmall)?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }
    // ANCHOR_END: writer

    /// A `u8`.
    pub(crate) fn u8(&mut self, v: u8) -> Result<(), Error> {
        self.bytes(&[v])
    }

    /// A little-endian `u16`.
    pub(crate) fn u16(&mut self, v: u16) -> Result<(), Error> {
        self.bytes(&v.to_le_bytes())
    }

    /// A little-endian `u32`.
    pub(crate) fn u32(&mut self, v: u32) -> Result<(), Error> {
        self.bytes(&v.to_le_bytes())
    }

    /// A little-endian `u64`.
    pub(crate) fn u64(&mut self, v: u64) -> Result<(), Error> {
        self.bytes(&v.to_le_bytes())
    }

    /// A string: `len[2]` then the bytes.
    pub(crate) fn string(&mut self, s: &[u8]) -> Result<(), Error> {
        let len = u16::try_from(s.len()).map_err(|_| Error::StringTooLong(s.len()))?;
        self.u16(len)?;
        self.bytes(s)
    }

    /// A qid: `type[1] version[4] path[8]`.
    pub(crate) fn qid(&mut self, qid: &Qid) -> Result<(), Error> {
        self.u8(qid.ty)?;
        self.u32(qid.version)?;
        self.u64(qid.path)
    }

    /// Overwrites the `u32` written earlier at `at` (a length not known until
    /// the bytes it counts were written).
    pub(crate) fn patch_u32(&mut self, at: usize, v: u32) -> Result<(), Error> {
        let end = at.checked_add(4).ok_or(Error::BufferTooSmall)?;
        if end > self.pos {
            return Err(Error::BufferTooSmall);
        }
        let dst = self.buf.get_mut(at..end).ok_or(Error::BufferTooSmall)?;
        dst.copy_from_slice(&v.to_le_bytes());
        Ok(())
    }
}
