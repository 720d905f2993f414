//! Entry keys (canonical matches and priority) stored as fixed-size byte
//! records, one per entry id, for reading entries back.
//!
//! A table's record layout follows its key: per field, `ceil(width / 8)`
//! value bytes (big-endian), plus for LPM one prefix-length byte (0 is the
//! wildcard), for ternary the mask bytes (a zero mask is the wildcard), for
//! range the high bytes (the full range is the wildcard), for optional one
//! presence byte; then the priority (4 bytes) in tables that have one. The
//! encoding is exact for canonical matches (see `validate.rs`), so a record
//! decodes to the matches it was made from, and two entries have the same
//! key exactly when their records are equal. An IPv4 route takes 5 bytes.
//!
//! Contract: `put`/`get` never allocate beyond the record array itself;
//! `get` allocates the returned match list. Widths above 128 bits are
//! stored in 16 bytes (values are `u128`).

use crate::info::{MatchKind, TableInfo};
use crate::runtime::FieldMatch;

/// Fixed-size key records indexed by entry id.
#[derive(Debug)]
pub(crate) struct Records {
    /// Per field: (kind, value bytes).
    fields: Box<[(MatchKind, usize)]>,
    with_priority: bool,
    size: usize,
    bytes: Vec<u8>,
}

fn put_value(out: &mut [u8], v: u128) {
    let n = out.len();
    out.copy_from_slice(&v.to_be_bytes()[16 - n..]);
}

fn get_value(b: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    buf[16 - b.len()..].copy_from_slice(b);
    u128::from_be_bytes(buf)
}

/// [`Records::encode`] on a layout.
fn encode_with(
    fields: &[(MatchKind, usize)],
    with_priority: bool,
    matches: &[Option<FieldMatch>],
    priority: i32,
    out: &mut [u8],
) {
    let mut at = 0;
    for (&(kind, n), m) in fields.iter().zip(matches) {
        let (a, b, extra): (u128, u128, Option<u8>) = match (kind, *m) {
            (MatchKind::Exact, Some(FieldMatch::Exact(v))) => (v, 0, None),
            (MatchKind::Exact, _) => (0, 0, None),
            (MatchKind::Lpm, Some(FieldMatch::Lpm { value, prefix_len })) => {
                (value, 0, Some(prefix_len as u8))
            }
            (MatchKind::Lpm, _) => (0, 0, Some(0)),
            (MatchKind::Optional, Some(FieldMatch::Optional(v))) => (v, 0, Some(1)),
            (MatchKind::Optional, _) => (0, 0, Some(0)),
            (MatchKind::Ternary, Some(FieldMatch::Ternary { value, mask })) => (value, mask, None),
            (MatchKind::Ternary, _) => (0, 0, None),
            (MatchKind::Range, Some(FieldMatch::Range { low, high })) => (low, high, None),
            // The wildcard range: low 1 > high 0 never comes from a
            // canonical Some.
            (MatchKind::Range, _) => (1, 0, None),
        };
        put_value(&mut out[at..at + n], a);
        at += n;
        match kind {
            MatchKind::Ternary | MatchKind::Range => {
                put_value(&mut out[at..at + n], b);
                at += n;
            }
            MatchKind::Lpm | MatchKind::Optional => {
                out[at] = extra.unwrap_or(0);
                at += 1;
            }
            MatchKind::Exact => {}
        }
    }
    if with_priority {
        out[at..at + 4].copy_from_slice(&priority.to_be_bytes());
    }
}

impl Records {
    pub(crate) fn new(info: &TableInfo, with_priority: bool) -> Self {
        let fields: Box<[(MatchKind, usize)]> = info
            .keys
            .iter()
            .map(|k| (k.kind, (k.bitwidth.div_ceil(8) as usize).clamp(1, 16)))
            .collect();
        let size = fields
            .iter()
            .map(|&(kind, n)| match kind {
                MatchKind::Exact => n,
                MatchKind::Lpm | MatchKind::Optional => n + 1,
                MatchKind::Ternary | MatchKind::Range => 2 * n,
            })
            .sum::<usize>()
            + if with_priority { 4 } else { 0 };
        Records {
            fields,
            with_priority,
            size,
            bytes: Vec::new(),
        }
    }

    /// Bytes a record takes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Encodes canonical `matches` and `priority` into `out` (`size()` bytes).
    pub(crate) fn encode(&self, matches: &[Option<FieldMatch>], priority: i32, out: &mut [u8]) {
        encode_with(&self.fields, self.with_priority, matches, priority, out);
    }

    /// Decodes a record.
    pub(crate) fn decode(&self, rec: &[u8]) -> (Vec<Option<FieldMatch>>, i32) {
        let mut at = 0;
        let mut out = Vec::with_capacity(self.fields.len());
        for &(kind, n) in self.fields.iter() {
            let a = get_value(&rec[at..at + n]);
            at += n;
            let m = match kind {
                MatchKind::Exact => Some(FieldMatch::Exact(a)),
                MatchKind::Lpm => {
                    let len = rec[at];
                    at += 1;
                    (len > 0).then_some(FieldMatch::Lpm {
                        value: a,
                        prefix_len: len as u32,
                    })
                }
                MatchKind::Optional => {
                    let present = rec[at] != 0;
                    at += 1;
                    present.then_some(FieldMatch::Optional(a))
                }
                MatchKind::Ternary => {
                    let mask = get_value(&rec[at..at + n]);
                    at += n;
                    (mask != 0).then_some(FieldMatch::Ternary { value: a, mask })
                }
                MatchKind::Range => {
                    let high = get_value(&rec[at..at + n]);
                    at += n;
                    (a <= high).then_some(FieldMatch::Range { low: a, high })
                }
            };
            out.push(m);
        }
        let priority = if self.with_priority {
            i32::from_be_bytes([rec[at], rec[at + 1], rec[at + 2], rec[at + 3]])
        } else {
            0
        };
        (out, priority)
    }

    /// The record of entry `id`.
    pub(crate) fn get(&self, id: u32) -> &[u8] {
        let s = id as usize * self.size;
        &self.bytes[s..s + self.size]
    }

    /// Stores the record of entry `id`, growing the array as needed.
    pub(crate) fn put(&mut self, id: u32, matches: &[Option<FieldMatch>], priority: i32) {
        let s = id as usize * self.size;
        if self.bytes.len() < s + self.size {
            super::lpm::grow(&mut self.bytes, s + self.size, 0);
        }
        encode_with(
            &self.fields,
            self.with_priority,
            matches,
            priority,
            &mut self.bytes[s..s + self.size],
        );
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.capacity() + self.fields.len() * std::mem::size_of::<(MatchKind, usize)>()
    }
}
