//! (in progress: the in-memory v1model switch)
