//! Exact-match engine: a hash map from the key values to the entry.
//!
//! Contract: lookup hashes the `&[u128]` key slice in place (FxHash) and
//! never allocates; one probe per lookup whatever the table size. Keys are
//! the entry's exact values in key order, already validated to fit their
//! widths; the caller masks packet fields to width, so equal P4 values
//! hash equally.

use rustc_hash::FxHashMap;

use crate::runtime::FieldMatch;

/// Hash map engine for tables whose keys are all `exact`.
#[derive(Debug, Default)]
pub(crate) struct ExactEngine {
    map: FxHashMap<Box<[u128]>, u32>,
}

fn values(matches: &[Option<FieldMatch>]) -> Box<[u128]> {
    matches
        .iter()
        .map(|m| match m {
            Some(FieldMatch::Exact(v)) => *v,
            // Validation lets only exact values into an all-exact table.
            _ => 0,
        })
        .collect()
}

impl ExactEngine {
    pub(crate) fn insert(&mut self, id: u32, matches: &[Option<FieldMatch>]) {
        self.map.insert(values(matches), id);
    }

    pub(crate) fn remove(&mut self, matches: &[Option<FieldMatch>]) {
        self.map.remove(&values(matches));
    }

    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        self.map.get(key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_inserted_keys() {
        let mut e = ExactEngine::default();
        e.insert(7, &[Some(FieldMatch::Exact(1)), Some(FieldMatch::Exact(2))]);
        e.insert(8, &[Some(FieldMatch::Exact(2)), Some(FieldMatch::Exact(1))]);
        assert_eq!(e.lookup(&[1, 2]), Some(7));
        assert_eq!(e.lookup(&[2, 1]), Some(8));
        assert_eq!(e.lookup(&[1, 1]), None);
        e.remove(&[Some(FieldMatch::Exact(1)), Some(FieldMatch::Exact(2))]);
        assert_eq!(e.lookup(&[1, 2]), None);
        assert_eq!(e.lookup(&[2, 1]), Some(8));
    }
}
