//! The gRPC codec of every generated client and server: an encoder that
//! writes the message into a plain `Vec<u8>` and copies it into tonic's
//! send buffer once, and a decoder that first takes the whole message out
//! of tonic's receive buffer as one [`bytes::Bytes`] and decodes from that.
//!
//! Why: `tonic_prost::ProstCodec` decodes straight from tonic's
//! `DecodeBuf`, a length-limited view of a `BytesMut`, so every varint and
//! field key goes through that view's `chunk`/`advance` (with
//! `BytesMut`'s offset bookkeeping). A `Bytes` is a plain slice to prost:
//! on a 1,000-update `WriteRequest` (43 KB) decoding and dropping took
//! about a fifth less time (a scratch loop, release, load 8–9: ~1,050–1,190
//! against ~860–935 µs a request). Taking the message out costs no copy:
//! the `Bytes` shares tonic's buffer, and bytes fields are still copied
//! into their own `Vec<u8>` as prost does from any buffer.
//!
//! Encoding is the same story the other way: prost writing field by field
//! into tonic's `EncodeBuf` (a `BytesMut` behind a `BufMut`) took about
//! twice as long as writing into a `Vec<u8>` and copying that in (a
//! 1,000-update `WriteRequest` at load ~11: ~510–700 against ~260–470 µs,
//! the copy included). The `Vec` is a per-thread scratch buffer, kept between
//! messages up to [`SCRATCH_KEEP_BYTES`].
//!
//! Contract: the same bytes on the wire and the same errors as
//! `ProstCodec` (a malformed message is `INTERNAL` with prost's
//! description).

use std::cell::RefCell;
use std::marker::PhantomData;

use bytes::{Buf, BufMut};
use prost::Message;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The scratch buffer a thread keeps after encoding a message; a bigger
/// one (a large read response) is given back.
pub const SCRATCH_KEEP_BYTES: usize = 1 << 20;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A [`Codec`] of prost messages that encodes through a scratch `Vec` and
/// decodes from one contiguous [`bytes::Bytes`] (module doc).
#[derive(Debug, Clone)]
pub struct BytesCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for BytesCodec<T, U> {
    fn default() -> Self {
        BytesCodec { _pd: PhantomData }
    }
}

impl<T, U> Codec for BytesCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = VecEncoder<T>;
    type Decoder = BytesDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        VecEncoder { _pd: PhantomData }
    }

    fn decoder(&mut self) -> Self::Decoder {
        BytesDecoder { _pd: PhantomData }
    }
}

/// The [`Encoder`] of [`BytesCodec`].
#[derive(Debug, Clone)]
pub struct VecEncoder<T> {
    _pd: PhantomData<T>,
}

impl<T: Message> Encoder for VecEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        encode_via_scratch(&item, buf);
        Ok(())
    }
}

/// Encodes `item` into this thread's scratch `Vec` and appends that to
/// `buf`.
fn encode_via_scratch<T: Message>(item: &T, buf: &mut impl BufMut) {
    SCRATCH.with(|scratch| {
        let Ok(mut scratch) = scratch.try_borrow_mut() else {
            // Not reached (encoding does not re-enter); encode directly.
            item.encode(buf).expect("tonic's buffer grows as needed");
            return;
        };
        scratch.clear();
        item.encode(&mut *scratch).expect("a Vec grows as needed");
        buf.put_slice(&scratch);
        if scratch.capacity() > SCRATCH_KEEP_BYTES {
            *scratch = Vec::new();
        }
    });
}

/// The [`Decoder`] of [`BytesCodec`].
#[derive(Debug, Clone)]
pub struct BytesDecoder<U> {
    _pd: PhantomData<U>,
}

impl<U: Message + Default> Decoder for BytesDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        decode_whole(buf).map(Some)
    }
}

/// Decodes all of `buf` as one `U`, from a [`bytes::Bytes`] taken out of it.
fn decode_whole<U: Message + Default>(buf: &mut impl Buf) -> Result<U, Status> {
    let whole = buf.copy_to_bytes(buf.remaining());
    U::decode(whole).map_err(|e| Status::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use bytes::{BufMut, BytesMut};

    use super::*;
    use crate::p4::v1 as pb;

    fn request() -> pb::WriteRequest {
        pb::WriteRequest {
            device_id: 7,
            updates: vec![pb::Update {
                r#type: pb::update::Type::Insert as i32,
                entity: Some(pb::Entity {
                    entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                        table_id: 0x0200_0001,
                        r#match: vec![pb::FieldMatch {
                            field_id: 1,
                            field_match_type: Some(pb::field_match::FieldMatchType::Exact(
                                pb::field_match::Exact {
                                    value: vec![10, 0, 0, 1],
                                },
                            )),
                        }],
                        metadata: b"cookie".to_vec(),
                        ..Default::default()
                    })),
                }),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn decodes_what_prost_encodes_and_consumes_the_buffer() {
        let mut buf = BytesMut::new();
        buf.put_slice(&request().encode_to_vec());
        let got: pb::WriteRequest = decode_whole(&mut buf).unwrap();
        assert_eq!(got, request());
        assert_eq!(buf.remaining(), 0);
    }

    #[test]
    fn encodes_the_bytes_prost_encodes_after_what_the_buffer_holds() {
        let mut buf = BytesMut::from(&b"hdr"[..]);
        encode_via_scratch(&request(), &mut buf);
        assert_eq!(&buf[..3], b"hdr");
        assert_eq!(&buf[3..], &request().encode_to_vec()[..]);
        // A second message through the same scratch buffer.
        let mut again = BytesMut::new();
        encode_via_scratch(&pb::WriteRequest::default(), &mut again);
        assert!(again.is_empty());
    }

    #[test]
    fn a_big_message_does_not_stay_in_the_scratch_buffer() {
        let mut big = request();
        big.updates = vec![big.updates[0].clone(); 40_000];
        let mut buf = BytesMut::new();
        encode_via_scratch(&big, &mut buf);
        assert_eq!(&buf[..], &big.encode_to_vec()[..]);
        assert!(big.encoded_len() > SCRATCH_KEEP_BYTES);
        SCRATCH.with(|s| assert_eq!(s.borrow().capacity(), 0));
    }

    #[test]
    fn a_truncated_message_is_internal_as_with_prost_codec() {
        let bytes = request().encode_to_vec();
        let mut buf = BytesMut::from(&bytes[..bytes.len() - 3]);
        let err = decode_whole::<pb::WriteRequest>(&mut buf).unwrap_err();
        assert_eq!(err.code(), tonic::Code::Internal);
    }
}
