//! Arrow IPC input checked before arrow decodes it: worker answers (the stream format) and
//! data files (the file format) come from outside, and arrow's readers trust the lengths a
//! message declares (a buffer of 2⁴⁰ bytes in a 100-byte body panics inside
//! `Buffer::slice_with_length`; a declared body of 2⁶⁰ bytes is allocated up front). Arrow's
//! own validation (on by default, never switched off here) checks the arrays it builds, but
//! only after these slices are cut.
//!
//! So every message is checked first, then handed to arrow's push decoders
//! ([`read_record_batch`], [`FileDecoder`]):
//!
//! * the flatbuffer metadata is verified (`root_as_message` / `root_as_footer`) and at most
//!   [`MAX_METADATA_BYTES`] long;
//! * a declared body is at most the caller's cap (streams) or inside the file (files), and
//!   is read in chunks, so memory follows the bytes actually sent, not the bytes declared;
//! * every buffer lies inside its body (`0 ≤ offset`, `0 ≤ length`, `offset + length ≤
//!   body`), every array length and null count is non-negative and at most 8 × the body's
//!   bytes (one bit per value is the least any array with data needs), and compressed
//!   bodies are refused (no codec is built in; a codec would allocate the declared
//!   uncompressed length);
//! * a file's blocks lie inside the file, before its footer.
//!
//! Anything else is an [`ArrowError`], never a panic.

use std::collections::HashMap;
use std::io::Read;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::reader::{FileDecoder, read_dictionary, read_record_batch};
use arrow_ipc::{Message, MessageHeader};
use arrow_schema::{ArrowError, SchemaRef};

/// Largest flatbuffer metadata of one message (a schema of about 10⁵ columns).
pub const MAX_METADATA_BYTES: usize = 16 << 20;

/// The marker before a message's metadata length (Arrow ≥ 0.15).
const CONTINUATION: [u8; 4] = [0xff; 4];
/// The magic at both ends of a file.
const MAGIC: &[u8; 6] = b"ARROW1";

fn invalid(what: impl core::fmt::Display) -> ArrowError {
    ArrowError::IpcError(format!("invalid Arrow IPC message: {what}"))
}

/// Checks the lengths a message declares against its body of `body` bytes.
fn check_message(message: &Message<'_>, body: u64) -> Result<(), ArrowError> {
    let batch = match message.header_type() {
        MessageHeader::RecordBatch => message.header_as_record_batch(),
        MessageHeader::DictionaryBatch => {
            message.header_as_dictionary_batch().and_then(|d| d.data())
        }
        // A schema (or an empty message) has no body to index.
        _ if body == 0 => return Ok(()),
        _ => return Err(invalid("a schema message with a body")),
    };
    let batch = batch.ok_or_else(|| invalid("a batch message without its header"))?;
    if batch.compression().is_some() {
        return Err(invalid(
            "compressed buffers are not supported (write the file uncompressed)",
        ));
    }
    // One bit per value is the least an array with data needs; an empty array may be longer
    // only for the null type, which no numeric table holds.
    let most_values = body.saturating_mul(8);
    let count = |what: &str, v: i64| match u64::try_from(v) {
        Ok(v) if v <= most_values => Ok(()),
        _ => Err(invalid(format!(
            "{what} {v} does not fit a body of {body} bytes"
        ))),
    };
    count("a batch length of", batch.length())?;
    for n in batch.nodes().iter().flatten() {
        count("an array length of", n.length())?;
        count("a null count of", n.null_count())?;
    }
    for b in batch.buffers().iter().flatten() {
        let inside = match (u64::try_from(b.offset()), u64::try_from(b.length())) {
            (Ok(o), Ok(l)) => o.checked_add(l).is_some_and(|end| end <= body),
            _ => false,
        };
        if !inside {
            return Err(invalid(format!(
                "a buffer at offset {} of length {} lies outside its body of {body} bytes",
                b.offset(),
                b.length()
            )));
        }
    }
    for c in batch.variadicBufferCounts().iter().flatten() {
        count("a variadic buffer count of", c)?;
    }
    Ok(())
}

/// Verifies the flatbuffer `fb` of a message and checks the lengths it declares against
/// its body of `body` bytes.
fn checked_message(fb: &[u8], body: u64) -> Result<Message<'_>, ArrowError> {
    let message = arrow_ipc::root_as_message(fb).map_err(|e| invalid(format!("metadata: {e}")))?;
    if u64::try_from(message.bodyLength()).ok() != Some(body) {
        return Err(invalid(format!(
            "a declared body of {} bytes where {body} are given",
            message.bodyLength()
        )));
    }
    check_message(&message, body)?;
    Ok(message)
}

/// [`checked_message`] of an encapsulated message's metadata region (`[continuation]
/// length flatbuffer`).
fn parse_checked(meta: &[u8], body: u64) -> Result<Message<'_>, ArrowError> {
    let fb = match meta {
        [0xff, 0xff, 0xff, 0xff, _, _, _, _, rest @ ..] => rest,
        [a, b, c, d, rest @ ..] if [*a, *b, *c, *d] != CONTINUATION => rest,
        _ => return Err(invalid("a message shorter than its header")),
    };
    checked_message(fb, body)
}

/// Reads up to `n` bytes, growing the buffer with the bytes that arrive (fallibly).
fn read_exactly(r: &mut impl Read, n: u64, out: &mut Vec<u8>) -> Result<(), ArrowError> {
    let mut chunk = [0u8; 1 << 16];
    let mut left = n;
    while left > 0 {
        let want = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        let k = match r.read(&mut chunk[..want]) {
            Ok(0) => {
                return Err(invalid(format!(
                    "the stream ended {left} bytes before the end of a message"
                )));
            }
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        out.try_reserve(k)
            .map_err(|e| ArrowError::MemoryError(e.to_string()))?;
        out.extend_from_slice(&chunk[..k]);
        left -= k as u64;
    }
    Ok(())
}

/// An Arrow IPC stream whose every message is checked before it is decoded: the stream
/// format's replacement for `arrow_ipc::reader::StreamReader` on input from outside.
#[derive(Debug)]
pub struct CheckedStream<R> {
    reader: R,
    schema: Option<SchemaRef>,
    dictionaries: HashMap<i64, ArrayRef>,
    max_body: u64,
    done: bool,
}

impl<R: Read> CheckedStream<R> {
    /// Reads the schema message of `reader`; a message body above `max_body` bytes is
    /// refused later.
    ///
    /// # Errors
    /// The stream does not start with a valid schema message.
    pub fn try_new(reader: R, max_body: u64) -> Result<Self, ArrowError> {
        let mut s = Self {
            reader,
            schema: None,
            dictionaries: HashMap::new(),
            max_body,
            done: false,
        };
        match s.next_message()? {
            Some(None) if s.schema.is_some() => Ok(s),
            _ => Err(invalid("the stream does not start with a schema")),
        }
    }

    /// The underlying reader (e.g. to read what a worker wrote instead of a message).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The stream's schema.
    #[must_use]
    pub fn schema(&self) -> SchemaRef {
        self.schema
            .clone()
            .unwrap_or_else(|| SchemaRef::new(arrow_schema::Schema::empty()))
    }

    /// The next message: `None` at the end of the stream, `Some(None)` for a message that is
    /// not a record batch (schema, dictionary), `Some(Some(batch))` for a batch.
    fn next_message(&mut self) -> Result<Option<Option<RecordBatch>>, ArrowError> {
        let mut head = [0u8; 4];
        if let Err(e) = self.reader.read_exact(&mut head) {
            return if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Ok(None)
            } else {
                Err(e.into())
            };
        }
        if head == CONTINUATION {
            self.reader.read_exact(&mut head)?;
        }
        let len = i32::from_le_bytes(head);
        if len == 0 {
            return Ok(None);
        }
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_METADATA_BYTES)
            .ok_or_else(|| invalid(format!("a metadata length of {len} bytes")))?;
        let mut fb = Vec::new();
        read_exactly(&mut self.reader, len as u64, &mut fb)?;
        let declared = arrow_ipc::root_as_message(&fb)
            .map_err(|e| invalid(format!("metadata: {e}")))?
            .bodyLength();
        let body_len = u64::try_from(declared)
            .ok()
            .filter(|&b| b <= self.max_body)
            .ok_or_else(|| {
                invalid(format!(
                    "a declared body of {declared} bytes (at most {} here)",
                    self.max_body
                ))
            })?;
        let message = checked_message(&fb, body_len)?;
        let mut body = Vec::new();
        read_exactly(&mut self.reader, body_len, &mut body)?;
        let body = Buffer::from(body);
        let version = message.version();
        match message.header_type() {
            MessageHeader::Schema => {
                if self.schema.is_some() {
                    return Err(invalid("a second schema"));
                }
                let s = message
                    .header_as_schema()
                    .ok_or_else(|| invalid("a schema message without its schema"))?;
                self.schema = Some(SchemaRef::new(arrow_ipc::convert::try_fb_to_schema(s)?));
                Ok(Some(None))
            }
            MessageHeader::RecordBatch => {
                let schema = self.schema.clone().ok_or_else(|| invalid("no schema"))?;
                let batch = message
                    .header_as_record_batch()
                    .ok_or_else(|| invalid("a batch message without its header"))?;
                let b =
                    read_record_batch(&body, batch, schema, &self.dictionaries, None, &version)?;
                Ok(Some(Some(b)))
            }
            MessageHeader::DictionaryBatch => {
                let schema = self.schema.clone().ok_or_else(|| invalid("no schema"))?;
                let d = message
                    .header_as_dictionary_batch()
                    .ok_or_else(|| invalid("a dictionary message without its header"))?;
                read_dictionary(&body, d, &schema, &mut self.dictionaries, &version)?;
                Ok(Some(None))
            }
            MessageHeader::NONE => Ok(Some(None)),
            t => Err(invalid(format!("a message of type {t:?}"))),
        }
    }
}

impl<R: Read> Iterator for CheckedStream<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.next_message() {
                Ok(Some(Some(b))) => return Some(Ok(b)),
                Ok(Some(None)) => {}
                Ok(None) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// An Arrow IPC file held in memory, decoded with every block and message checked first:
/// its schema, its schema metadata and its record batches.
///
/// # Errors
/// Not an Arrow IPC file (magic, footer), a block outside the file, a message whose lengths
/// do not fit its body, or arrow's own validation of the arrays.
pub fn read_file(bytes: Vec<u8>) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let n = bytes.len();
    if n < 2 * MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC || &bytes[n - 6..] != MAGIC {
        return Err(ArrowError::ParseError(
            "not an Arrow IPC file (no ARROW1 magic at both ends)".into(),
        ));
    }
    let mut len4 = [0u8; 4];
    len4.copy_from_slice(&bytes[n - 10..n - 6]);
    let footer_len = i32::from_le_bytes(len4);
    let footer_start = usize::try_from(footer_len)
        .ok()
        .and_then(|l| (n - 10).checked_sub(l))
        .filter(|&s| s >= MAGIC.len())
        .ok_or_else(|| invalid(format!("a footer of {footer_len} bytes")))?;
    let buf = Buffer::from(bytes);
    let footer = arrow_ipc::root_as_footer(&buf[footer_start..n - 10])
        .map_err(|e| invalid(format!("footer: {e}")))?;
    let ipc_schema = footer
        .schema()
        .ok_or_else(|| invalid("a footer without a schema"))?;
    if !ipc_schema.endianness().equals_to_target_endianness() {
        return Err(invalid("a file of the other endianness"));
    }
    let schema = SchemaRef::new(arrow_ipc::convert::try_fb_to_schema(ipc_schema)?);
    let mut decoder = FileDecoder::new(SchemaRef::clone(&schema), footer.version());
    // The block's bytes, after checking that the block lies before the footer and that its
    // message fits its body.
    let block_bytes = |block: &arrow_ipc::Block| -> Result<Buffer, ArrowError> {
        let (Ok(offset), Ok(meta), Ok(body)) = (
            usize::try_from(block.offset()),
            usize::try_from(block.metaDataLength()),
            u64::try_from(block.bodyLength()),
        ) else {
            return Err(invalid("a block with a negative offset or length"));
        };
        let end = usize::try_from(body)
            .ok()
            .and_then(|b| offset.checked_add(meta)?.checked_add(b))
            .filter(|&e| e <= footer_start)
            .ok_or_else(|| invalid("a block outside the file"))?;
        parse_checked(&buf[offset..offset + meta], body)?;
        Ok(buf.slice_with_length(offset, end - offset))
    };
    for block in footer.dictionaries().iter().flatten() {
        decoder.read_dictionary(block, &block_bytes(block)?)?;
    }
    let mut batches = Vec::new();
    for block in footer.recordBatches().iter().flatten() {
        if let Some(b) = decoder.read_record_batch(block, &block_bytes(block)?)? {
            batches.push(b);
        }
    }
    Ok((schema, batches))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array};
    use arrow_ipc::writer::{FileWriter, StreamWriter};
    use std::sync::Arc;

    /// A batch of an int64 column with one null (validity buffer at (0, 8), values at
    /// (8, 40)) and a float64 column.
    fn batch() -> RecordBatch {
        RecordBatch::try_from_iter([
            (
                "a",
                Arc::new(Int64Array::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(4),
                    Some(5),
                ])) as ArrayRef,
            ),
            (
                "b",
                Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5, 3.5, 4.5])) as ArrayRef,
            ),
        ])
        .unwrap()
    }

    fn stream_bytes() -> Vec<u8> {
        let b = batch();
        let mut w = StreamWriter::try_new(Vec::new(), &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    }

    fn file_bytes() -> Vec<u8> {
        let b = batch();
        let mut w = FileWriter::try_new(Vec::new(), &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    }

    /// Sets the length of the first buffer of length 40 (the int64 values; its flatbuffer
    /// entry is an 8-aligned offset below 256, then the length) to 2⁴⁰: the forgery arrow's
    /// own readers panic on. Returns whether it found one.
    fn forge(bytes: &mut [u8]) -> bool {
        for i in (0..bytes.len().saturating_sub(16)).step_by(4) {
            let word = |j: usize| i64::from_le_bytes(bytes[j..j + 8].try_into().unwrap());
            let (offset, length) = (word(i), word(i + 8));
            if length == 40 && (0..256).contains(&offset) && offset % 8 == 0 {
                bytes[i + 8..i + 16].copy_from_slice(&(1_i64 << 40).to_le_bytes());
                return true;
            }
        }
        false
    }

    fn read_stream(bytes: &[u8]) -> Result<Vec<RecordBatch>, ArrowError> {
        CheckedStream::try_new(bytes, 1 << 20)?.collect()
    }

    #[test]
    fn valid_streams_and_files_read_back() {
        let got = read_stream(&stream_bytes()).unwrap();
        assert_eq!(got, vec![batch()]);
        let (schema, got) = read_file(file_bytes()).unwrap();
        assert_eq!(schema, batch().schema());
        assert_eq!(got, vec![batch()]);
    }

    #[test]
    fn a_forged_buffer_length_is_an_error_not_a_panic() {
        // The bytes arrow's own readers panic on (`slice_with_length`).
        let mut s = stream_bytes();
        assert!(forge(&mut s));
        let e = read_stream(&s).unwrap_err().to_string();
        assert!(e.contains("outside its body"), "{e}");
        let mut f = file_bytes();
        assert!(forge(&mut f));
        let e = read_file(f).unwrap_err().to_string();
        assert!(e.contains("outside its body"), "{e}");
    }

    #[test]
    fn a_declared_body_above_the_cap_is_refused_before_it_is_read() {
        let s = stream_bytes();
        let e = CheckedStream::try_new(&s[..], 8)
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 8 here"), "{e}");
    }

    /// Seeded byte noise and truncations of a valid stream and file: every outcome is a
    /// value or an error, never a panic (arrow's own readers panic on some of these).
    #[test]
    fn byte_noise_never_panics() {
        let mut x: u64 = 20_261_122;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (kind, clean) in [(0, stream_bytes()), (1, file_bytes())] {
            for _ in 0..3000 {
                let mut b = clean.clone();
                let edits = 1 + next() % 4;
                for _ in 0..edits {
                    let i = usize::try_from(next() % b.len() as u64).unwrap();
                    b[i] = u8::try_from(next() & 0xff).unwrap();
                }
                if next() % 8 == 0 {
                    b.truncate(usize::try_from(next() % b.len() as u64).unwrap());
                }
                let r = std::panic::catch_unwind(|| {
                    if kind == 0 {
                        drop(read_stream(&b));
                    } else {
                        drop(read_file(b.clone()));
                    }
                });
                assert!(r.is_ok(), "panicked on {b:?}");
            }
        }
    }
}
