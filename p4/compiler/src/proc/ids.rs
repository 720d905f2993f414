//! P4Runtime ID assignment, compatible with p4c's (`--p4runtime-files`).
//!
//! Every P4Info object gets a 32-bit id: the object kind's prefix in the top
//! byte (`p4_target::info::id_prefix`, P4Runtime spec §6.3 "ID allocation")
//! and 24 bits that are either the `@id(n)` the program gave or derived from
//! the object's fully qualified name. p4c's rules, which we follow so the
//! same program gets the same ids from both compilers:
//!
//! 1. Objects with `@id(n)` get `n | prefix << 24`. `n` may already carry the
//!    prefix in its top byte; any *other* non-zero top byte is an error, as
//!    is the same id on two objects.
//! 2. The remaining objects of each kind, sorted by name (byte order), get
//!    `prefix << 24 | (h & 0xff_ffff)` where `h` is the 32-bit Jenkins
//!    one-at-a-time hash of the name; if that id is taken, `h + 1`, `h + 2`...
//!    (linear probing, wrapping at 2^32).
//! 3. The same (kind, name) listed twice is one object: both get one id.
//!
//! Contract: pure functions, no panics. [`try_assign_ids`] reports bad
//! `@id`s; [`assign_ids`] never fails (a bad `@id` is treated as absent).

use std::collections::{BTreeMap, HashMap, HashSet};

use thiserror::Error;

/// Problems with `@id` annotations.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum IdError {
    /// `@id(n)` where `n`'s top byte is another kind's prefix.
    #[error("@id({id:#010x}) on `{name}` has the wrong 8-bit prefix (expected {prefix:#04x})")]
    WrongPrefix {
        /// Object name.
        name: String,
        /// The annotated id.
        id: u32,
        /// The prefix its kind requires.
        prefix: u8,
    },
    /// Two objects with the same `@id`.
    #[error("@id {id:#010x} is assigned to both `{first}` and `{second}`")]
    Duplicate {
        /// The id.
        id: u32,
        /// The object that had it first.
        first: String,
        /// The other one.
        second: String,
    },
    /// All 2^24 ids of a kind are taken.
    #[error("no id left for `{name}`")]
    Exhausted {
        /// Object name.
        name: String,
    },
}

/// Bob Jenkins' one-at-a-time hash, as p4c uses for P4Runtime ids.
pub fn jenkins_one_at_a_time(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0;
    for &b in bytes {
        hash = hash.wrapping_add(u32::from(b));
        hash = hash.wrapping_add(hash << 10);
        hash ^= hash >> 6;
    }
    hash = hash.wrapping_add(hash << 3);
    hash ^= hash >> 11;
    hash = hash.wrapping_add(hash << 15);
    hash
}

/// Assigns ids to `(prefix, fully qualified name, @id)` objects; the result
/// is in input order. A bad `@id` (wrong prefix, duplicate) is ignored and
/// the object hashed instead; use [`try_assign_ids`] to report those.
pub fn assign_ids(objects: &[(u8, &str, Option<u32>)]) -> Vec<u32> {
    assign(objects).0
}

/// As [`assign_ids`], failing on the first bad `@id`.
pub fn try_assign_ids(objects: &[(u8, &str, Option<u32>)]) -> Result<Vec<u32>, IdError> {
    let (ids, errors) = assign(objects);
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(ids),
    }
}

fn assign(objects: &[(u8, &str, Option<u32>)]) -> (Vec<u32>, Vec<IdError>) {
    let mut errors = Vec::new();
    let mut taken: HashSet<u32> = HashSet::new();
    // (prefix, name) → id, so a repeated object gets the same id.
    let mut by_key: HashMap<(u8, &str), u32> = HashMap::new();
    let mut owner: HashMap<u32, &str> = HashMap::new();

    // 1. Explicit ids, in input order.
    for &(prefix, name, id) in objects {
        let Some(n) = id else { continue };
        if by_key.contains_key(&(prefix, name)) {
            continue;
        }
        let top = n >> 24;
        if top != 0 && top != u32::from(prefix) {
            errors.push(IdError::WrongPrefix {
                name: name.to_owned(),
                id: n,
                prefix,
            });
            continue;
        }
        let full = n | u32::from(prefix) << 24;
        if let Some(first) = owner.get(&full) {
            errors.push(IdError::Duplicate {
                id: full,
                first: (*first).to_owned(),
                second: name.to_owned(),
            });
            continue;
        }
        taken.insert(full);
        owner.insert(full, name);
        by_key.insert((prefix, name), full);
    }

    // 2. Hashed ids, per kind, in name order.
    let mut pending: BTreeMap<u8, BTreeMap<&str, ()>> = BTreeMap::new();
    for &(prefix, name, _) in objects {
        if !by_key.contains_key(&(prefix, name)) {
            pending.entry(prefix).or_default().insert(name, ());
        }
    }
    for (prefix, names) in pending {
        let base = u32::from(prefix) << 24;
        for name in names.keys() {
            let start = jenkins_one_at_a_time(name.as_bytes());
            let mut value = start;
            let id = loop {
                let candidate = base | (value & 0x00ff_ffff);
                if !taken.contains(&candidate) {
                    break Some(candidate);
                }
                value = value.wrapping_add(1);
                if value == start {
                    break None;
                }
            };
            match id {
                Some(id) => {
                    taken.insert(id);
                    by_key.insert((prefix, name), id);
                }
                None => errors.push(IdError::Exhausted {
                    name: (*name).to_owned(),
                }),
            }
        }
    }

    let ids = objects
        .iter()
        .map(|&(prefix, name, _)| by_key.get(&(prefix, name)).copied().unwrap_or(0))
        .collect();
    (ids, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use p4_target::info::id_prefix::{ACTION, COUNTER, TABLE};

    #[test]
    fn hash_matches_published_test_vectors() {
        assert_eq!(jenkins_one_at_a_time(b"a"), 0xca2e_9442);
        assert_eq!(
            jenkins_one_at_a_time(b"The quick brown fox jumps over the lazy dog"),
            0x519e_91f5
        );
        assert_eq!(jenkins_one_at_a_time(b""), 0);
    }

    #[test]
    fn ids_match_p4c_for_the_tutorial_basic_program() {
        // The ids p4c writes into basic.p4info.txt of the P4 tutorials.
        let ids = assign_ids(&[
            (TABLE, "MyIngress.ipv4_lpm", None),
            (ACTION, "NoAction", None),
            (ACTION, "MyIngress.drop", None),
            (ACTION, "MyIngress.ipv4_forward", None),
        ]);
        assert_eq!(ids, [37_375_156, 21_257_015, 25_652_968, 28_792_405]);
    }

    #[test]
    fn explicit_ids_win_and_get_the_prefix() {
        let ids = assign_ids(&[
            (ACTION, "a", Some(5)),
            (ACTION, "b", Some(0x0100_0006)),
            (TABLE, "t", Some(5)),
        ]);
        assert_eq!(ids, [0x0100_0005, 0x0100_0006, 0x0200_0005]);
    }

    #[test]
    fn bad_explicit_ids_are_reported() {
        let e = try_assign_ids(&[(ACTION, "a", Some(0x0200_0001))]).expect_err("wrong prefix");
        assert!(matches!(e, IdError::WrongPrefix { prefix: ACTION, .. }));
        let e = try_assign_ids(&[(ACTION, "a", Some(1)), (ACTION, "b", Some(1))]).expect_err("dup");
        assert_eq!(
            e.to_string(),
            "@id 0x01000001 is assigned to both `a` and `b`"
        );
        // assign_ids falls back to the hash.
        let ids = assign_ids(&[(ACTION, "a", Some(1)), (ACTION, "b", Some(1))]);
        assert_eq!(ids[0], 0x0100_0001);
        assert_eq!(
            ids[1],
            0x0100_0000 | (jenkins_one_at_a_time(b"b") & 0xff_ffff)
        );
    }

    #[test]
    fn collisions_probe_linearly_in_name_order() {
        // Force a collision: give `x` by @id the id `y` would hash to.
        let hy = u32::from(COUNTER) << 24 | (jenkins_one_at_a_time(b"y") & 0xff_ffff);
        let ids = assign_ids(&[(COUNTER, "y", None), (COUNTER, "x", Some(hy))]);
        assert_eq!(ids, [hy + 1, hy]);
        // Same name twice, same kind: one object, one id.
        let ids = assign_ids(&[(ACTION, "n", None), (ACTION, "n", None), (TABLE, "n", None)]);
        assert_eq!(ids[0], ids[1]);
        assert_ne!(ids[0], ids[2]);
        assert_eq!(ids[0] & 0xff_ffff, ids[2] & 0xff_ffff);
    }

    #[test]
    fn assignment_does_not_depend_on_input_order() {
        let objs = [
            (ACTION, "c.a", None),
            (ACTION, "b.a", None),
            (TABLE, "t", None),
            (ACTION, "z", Some(9)),
        ];
        let mut rev = objs;
        rev.reverse();
        let a = assign_ids(&objs);
        let mut b = assign_ids(&rev);
        b.reverse();
        assert_eq!(a, b);
    }
}
