//! Traffic-manager tests, grouped by state.
