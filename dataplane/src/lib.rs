//! `dataplane`: the fixed-function half of the switch.
#![warn(missing_docs, unreachable_pub)]
