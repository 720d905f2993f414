//! Watchdog state-machine tests.
