//! Digests (spec "DigestEntry" and "Digest messages"): a controller turns
//! a digest on with a `DigestEntry` config, and the primary's stream then
//! receives the program's `digest<T>()` data batched in `DigestList`s.
//!
//! [`DigestConfig`] is the validated config. [`DigestEngine`] is the
//! per-stream state machine, sans-IO in the quinn-proto style: feed it
//! digests ([`DigestEngine::handle_digest`]) and acks
//! ([`DigestEngine::handle_ack`]) with the current time, take lists with
//! [`DigestEngine::poll_list`] and wake it at [`DigestEngine::poll_timeout`].
//!
//! Semantics:
//! * Digests of an id without a config are not reported (not buffered).
//! * A list is sent when it holds `max_list_size` digests (0: no limit but
//!   [`MAX_LIST_LEN`]) or when its oldest digest has waited
//!   `max_timeout_ns` (0: at once, one digest a list).
//! * Data already sent in a list not yet acknowledged is not sent again
//!   until the list is acked or `ack_timeout_ns` passes (the spec's
//!   duplicate suppression: the dataplane keeps reporting an unknown MAC
//!   until the controller has installed it). An ack clears the list's data.
//! * `list_id`s count up from 1 per digest id.

use std::collections::{HashMap, HashSet, VecDeque};

use p4_target::info::DigestInfo;
use proto::p4::v1 as pb;

use super::bytes::{encode, encode_signed};
use super::error::P4Error;

/// Longest list sent when `max_list_size` is 0 (no limit asked).
pub const MAX_LIST_LEN: usize = 1024;

/// Time in nanoseconds on the caller's clock.
pub type Nanos = u64;

/// A validated `DigestEntry.Config`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DigestConfig {
    /// Longest a digest waits in a list before the list goes out.
    pub max_timeout_ns: u64,
    /// Digests per list (0: no limit).
    pub max_list_size: u32,
    /// How long sent data stays suppressed without an ack.
    pub ack_timeout_ns: u64,
}

impl DigestConfig {
    /// Validates a config; `field` names it in errors.
    pub fn from_proto(c: Option<&pb::digest_entry::Config>, field: &str) -> Result<Self, P4Error> {
        let c = c.ok_or_else(|| P4Error::invalid(field, "missing"))?;
        let non_negative = |v: i64, name: &str| {
            u64::try_from(v)
                .map_err(|_| P4Error::invalid(format!("{field}.{name}"), "must not be negative"))
        };
        Ok(DigestConfig {
            max_timeout_ns: non_negative(c.max_timeout_ns, "max_timeout_ns")?,
            max_list_size: u32::try_from(c.max_list_size).map_err(|_| {
                P4Error::invalid(format!("{field}.max_list_size"), "must not be negative")
            })?,
            ack_timeout_ns: non_negative(c.ack_timeout_ns, "ack_timeout_ns")?,
        })
    }

    /// The config as it is read back.
    pub fn to_proto(self) -> pb::digest_entry::Config {
        pb::digest_entry::Config {
            max_timeout_ns: i64::try_from(self.max_timeout_ns).unwrap_or(i64::MAX),
            max_list_size: i32::try_from(self.max_list_size).unwrap_or(i32::MAX),
            ack_timeout_ns: i64::try_from(self.ack_timeout_ns).unwrap_or(i64::MAX),
        }
    }

    fn list_len(self) -> usize {
        match self.max_list_size {
            0 => MAX_LIST_LEN,
            n => (n as usize).min(MAX_LIST_LEN),
        }
    }
}

/// A digest list being filled.
#[derive(Debug, Default)]
struct Filling {
    since: Nanos,
    data: Vec<Vec<u128>>,
}

/// A sent list awaiting its ack.
#[derive(Debug)]
struct Unacked {
    list_id: u64,
    expires: Nanos,
    data: Vec<Vec<u128>>,
}

/// Per digest id state.
#[derive(Debug, Default)]
struct PerDigest {
    filling: Filling,
    next_list_id: u64,
    unacked: VecDeque<Unacked>,
    /// Data in `filling` or `unacked`: not to be reported again.
    suppressed: HashSet<Vec<u128>>,
}

/// Batching and duplicate suppression for one controller stream.
#[derive(Debug)]
pub struct DigestEngine {
    digests: &'static [DigestInfo],
    state: HashMap<u32, PerDigest>,
    ready: VecDeque<pb::DigestList>,
    /// Digests left out because they repeated data awaiting an ack.
    pub suppressed: u64,
}

impl DigestEngine {
    /// An engine for the program's `digests`.
    pub fn new(digests: &'static [DigestInfo]) -> Self {
        DigestEngine {
            digests,
            state: HashMap::new(),
            ready: VecDeque::new(),
            suppressed: 0,
        }
    }

    /// One digest emitted by the dataplane; `config` is its id's config
    /// (`None`: not enabled, dropped).
    pub fn handle_digest(
        &mut self,
        id: u32,
        values: Vec<u128>,
        config: Option<DigestConfig>,
        now: Nanos,
    ) {
        let Some(config) = config else { return };
        if !self.digests.iter().any(|d| d.id == id) {
            return;
        }
        self.expire(now);
        let st = self.state.entry(id).or_default();
        if !st.suppressed.insert(values.clone()) {
            self.suppressed += 1;
            return;
        }
        if st.filling.data.is_empty() {
            st.filling.since = now;
        }
        st.filling.data.push(values);
        if st.filling.data.len() >= config.list_len() || config.max_timeout_ns == 0 {
            self.flush(id, config, now);
        }
    }

    /// The controller acknowledged `list_id` of `id`: its data may be
    /// reported again. Unknown acks are ignored.
    pub fn handle_ack(&mut self, id: u32, list_id: u64) {
        let Some(st) = self.state.get_mut(&id) else {
            return;
        };
        if let Some(i) = st.unacked.iter().position(|u| u.list_id == list_id) {
            let done = st.unacked.remove(i).expect("index from position");
            for d in done.data {
                st.suppressed.remove(&d);
            }
        }
    }

    /// Sends the lists whose oldest digest waited `max_timeout_ns` and
    /// forgets sent data whose ack timed out; `configs` gives each id's config.
    pub fn handle_timeout(&mut self, now: Nanos, configs: impl Fn(u32) -> Option<DigestConfig>) {
        self.expire(now);
        let due: Vec<(u32, DigestConfig)> = self
            .state
            .iter()
            .filter(|(_, st)| !st.filling.data.is_empty())
            .filter_map(|(&id, st)| {
                let c = configs(id)?;
                (now.saturating_sub(st.filling.since) >= c.max_timeout_ns).then_some((id, c))
            })
            .collect();
        for (id, c) in due {
            self.flush(id, c, now);
        }
    }

    /// The next list to send.
    pub fn poll_list(&mut self) -> Option<pb::DigestList> {
        self.ready.pop_front()
    }

    /// When [`DigestEngine::handle_timeout`] has work next.
    pub fn poll_timeout(&self, configs: impl Fn(u32) -> Option<DigestConfig>) -> Option<Nanos> {
        self.state
            .iter()
            .flat_map(|(&id, st)| {
                let fill = (!st.filling.data.is_empty())
                    .then(|| configs(id))
                    .flatten()
                    .map(|c| st.filling.since.saturating_add(c.max_timeout_ns));
                fill.into_iter()
                    .chain(st.unacked.front().map(|u| u.expires))
            })
            .min()
    }

    /// Forgets everything about `id` (its config was deleted or changed).
    pub fn reset(&mut self, id: u32) {
        self.state.remove(&id);
        self.ready.retain(|l| l.digest_id != id);
    }

    fn expire(&mut self, now: Nanos) {
        for st in self.state.values_mut() {
            while st.unacked.front().is_some_and(|u| u.expires <= now) {
                let old = st.unacked.pop_front().expect("checked front");
                for d in old.data {
                    st.suppressed.remove(&d);
                }
            }
        }
    }

    fn flush(&mut self, id: u32, config: DigestConfig, now: Nanos) {
        let Some(info) = self.digests.iter().find(|d| d.id == id) else {
            return;
        };
        let st = self.state.entry(id).or_default();
        let data = std::mem::take(&mut st.filling.data);
        if data.is_empty() {
            return;
        }
        st.next_list_id += 1;
        let list_id = st.next_list_id;
        self.ready.push_back(pb::DigestList {
            digest_id: id,
            list_id,
            data: data.iter().map(|v| struct_data(info, v)).collect(),
            timestamp: wall_clock_ns(),
        });
        st.unacked.push_back(Unacked {
            list_id,
            expires: now.saturating_add(config.ack_timeout_ns),
            data,
        });
    }
}

/// One digest as the `P4Data` struct of its members, or the bitstring of a
/// scalar digest (canonical bytes; `int<W>` in two's complement, spec §8.4).
fn struct_data(info: &DigestInfo, values: &[u128]) -> pb::P4Data {
    let bits = |v: u128, f: &p4_target::info::MetaFieldInfo| {
        if f.signed {
            encode_signed(v, f.bitwidth)
        } else {
            encode(v)
        }
    };
    if info.scalar {
        // `digest<bit<W>>`: the value itself, a bitstring.
        let v = values.first().copied().unwrap_or(0);
        let data = info
            .fields
            .first()
            .map_or_else(|| encode(v), |f| bits(v, f));
        return pb::P4Data {
            data: Some(pb::p4_data::Data::Bitstring(data)),
        };
    }
    let members = values
        .iter()
        .zip(info.fields)
        .map(|(&v, f)| pb::P4Data {
            data: Some(pb::p4_data::Data::Bitstring(bits(v, f))),
        })
        .collect();
    pb::P4Data {
        data: Some(pb::p4_data::Data::Struct(pb::P4StructLike { members })),
    }
}

/// `DigestList.timestamp`: nanoseconds since the Unix epoch. The one clock
/// read here, kept out of the state machine's timing.
fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use p4_target::info::MetaFieldInfo;

    static FIELDS: [MetaFieldInfo; 2] = [
        MetaFieldInfo {
            id: 1,
            name: "src_addr",
            bitwidth: 48,
            signed: false,
        },
        MetaFieldInfo {
            id: 2,
            name: "ingress_port",
            bitwidth: 9,
            signed: false,
        },
    ];
    static DIGESTS: [DigestInfo; 1] = [DigestInfo {
        id: 7,
        name: "mac_learn_t",
        fields: &FIELDS,
        scalar: false,
    }];

    const MS: u64 = 1_000_000;

    fn cfg(max_timeout_ns: u64, max_list_size: u32, ack_timeout_ns: u64) -> Option<DigestConfig> {
        Some(DigestConfig {
            max_timeout_ns,
            max_list_size,
            ack_timeout_ns,
        })
    }

    fn lists(e: &mut DigestEngine) -> Vec<pb::DigestList> {
        std::iter::from_fn(|| e.poll_list()).collect()
    }

    fn values(l: &pb::DigestList) -> Vec<Vec<Vec<u8>>> {
        l.data
            .iter()
            .map(|d| match &d.data {
                Some(pb::p4_data::Data::Struct(s)) => s
                    .members
                    .iter()
                    .map(|m| match &m.data {
                        Some(pb::p4_data::Data::Bitstring(b)) => b.clone(),
                        other => panic!("member {other:?}"),
                    })
                    .collect(),
                other => panic!("data {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_scalar_digest_is_a_bitstring_not_a_struct() {
        // p4c's `digest<bit<32>>(1, x)`: P4Info says `bitstring`, so the
        // data is the value's canonical bytes.
        static ONE: [MetaFieldInfo; 1] = [MetaFieldInfo {
            id: 1,
            name: "digest_0",
            bitwidth: 32,
            signed: false,
        }];
        static SCALAR: [DigestInfo; 1] = [DigestInfo {
            id: 9,
            name: "digest_0",
            fields: &ONE,
            scalar: true,
        }];
        let mut e = DigestEngine::new(&SCALAR);
        e.handle_digest(9, vec![0x0102], cfg(0, 0, MS), 0);
        let l = lists(&mut e);
        assert_eq!(l.len(), 1);
        let data: Vec<_> = l[0].data.iter().map(|d| d.data.clone()).collect();
        assert_eq!(data, [Some(pb::p4_data::Data::Bitstring(vec![1, 2]))]);
    }

    #[test]
    fn unconfigured_or_unknown_digests_are_not_reported() {
        let mut e = DigestEngine::new(&DIGESTS);
        e.handle_digest(7, vec![1, 2], None, 0);
        e.handle_digest(8, vec![1, 2], cfg(0, 1, MS), 0);
        assert!(lists(&mut e).is_empty());
        assert_eq!(e.poll_timeout(|_| cfg(0, 1, MS)), None);
    }

    #[test]
    fn zero_timeout_sends_each_digest_at_once_in_canonical_bytes() {
        let mut e = DigestEngine::new(&DIGESTS);
        e.handle_digest(7, vec![0x0200_0000_000a, 3], cfg(0, 0, MS), 0);
        let l = lists(&mut e);
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].digest_id, l[0].list_id), (7, 1));
        assert_eq!(
            values(&l[0]),
            vec![vec![vec![2, 0, 0, 0, 0, 0x0a], vec![3]]]
        );
        assert!(l[0].timestamp > 0);
    }

    #[test]
    fn lists_fill_up_to_max_size_or_wait_max_timeout() {
        let mut e = DigestEngine::new(&DIGESTS);
        let c = cfg(10 * MS, 3, 100 * MS);
        for mac in 1..=4u64 {
            e.handle_digest(7, vec![u128::from(mac), 1], c, mac * MS);
        }
        let l = lists(&mut e);
        assert_eq!(l.len(), 1, "full at 3");
        assert_eq!(l[0].data.len(), 3);
        // The fourth waits for its timeout, 10 ms after it arrived at 4 ms.
        assert_eq!(e.poll_timeout(|_| c), Some(14 * MS));
        e.handle_timeout(13 * MS, |_| c);
        assert!(lists(&mut e).is_empty());
        e.handle_timeout(14 * MS, |_| c);
        let l = lists(&mut e);
        assert_eq!((l.len(), l[0].list_id, l[0].data.len()), (1, 2, 1));
    }

    #[test]
    fn repeats_are_suppressed_until_ack_or_ack_timeout() {
        let mut e = DigestEngine::new(&DIGESTS);
        let c = cfg(0, 1, 50 * MS);
        e.handle_digest(7, vec![0xa, 1], c, 0);
        assert_eq!(lists(&mut e).len(), 1);
        // The dataplane keeps reporting the unknown MAC: filtered.
        e.handle_digest(7, vec![0xa, 1], c, MS);
        assert!(lists(&mut e).is_empty());
        assert_eq!(e.suppressed, 1);
        // Other data still flows.
        e.handle_digest(7, vec![0xb, 1], c, 2 * MS);
        assert_eq!(lists(&mut e)[0].list_id, 2);
        // Ack of list 1 lets 0xa through again.
        e.handle_ack(7, 1);
        e.handle_digest(7, vec![0xa, 1], c, 3 * MS);
        assert_eq!(lists(&mut e)[0].list_id, 3);
        // List 2 (0xb) is never acked: after 50 ms it may be sent again.
        e.handle_digest(7, vec![0xb, 1], c, 51 * MS);
        assert!(lists(&mut e).is_empty());
        e.handle_digest(7, vec![0xb, 1], c, 52 * MS);
        assert_eq!(lists(&mut e)[0].list_id, 4);
        // Unknown acks change nothing.
        e.handle_ack(7, 99);
        e.handle_ack(9, 1);
    }

    #[test]
    fn configs_validate_each_field() {
        let ok = pb::digest_entry::Config {
            max_timeout_ns: 1,
            max_list_size: 2,
            ack_timeout_ns: 3,
        };
        let c = DigestConfig::from_proto(Some(&ok), "digest_entry.config").unwrap();
        assert_eq!(c.to_proto(), ok);
        for bad in [
            pb::digest_entry::Config {
                max_timeout_ns: -1,
                ..ok
            },
            pb::digest_entry::Config {
                max_list_size: -1,
                ..ok
            },
            pb::digest_entry::Config {
                ack_timeout_ns: -1,
                ..ok
            },
        ] {
            let e = DigestConfig::from_proto(Some(&bad), "digest_entry.config").unwrap_err();
            assert_eq!(e.code, tonic::Code::InvalidArgument);
        }
        assert!(DigestConfig::from_proto(None, "digest_entry.config").is_err());
    }
}
