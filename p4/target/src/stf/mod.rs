//! (in progress: the STF runner)
