//! The fabric QoS service (in progress).
