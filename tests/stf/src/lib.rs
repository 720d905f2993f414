//! The STF corpus: every `NAME.p4` in `tests/stf/` compiled by
//! `p4-to-rust` at build time (see `build.rs`) and paired with its
//! `NAME.stf`, for `tests/corpus.rs` to run through
//! [`dataplane::stf::run`]: the production switch core on ideal output
//! queues.
//!
//! A program the compiler rejects is still a case: running it fails with
//! the compiler's rendered diagnostics.

#![warn(missing_docs, unreachable_pub)]

use dataplane::stf::StfReport;

/// One `NAME.p4` / `NAME.stf` pair.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The file stem.
    pub name: &'static str,
    /// The STF text (empty when `NAME.stf` is missing).
    pub stf: &'static str,
    /// Runs the compiled program against an STF text, or the compiler's
    /// diagnostics when the program did not compile.
    pub program: Result<fn(&str) -> StfReport, &'static str>,
}

impl Case {
    /// Runs the case: `Ok` when the STF passed, `Err` with the reason
    /// otherwise (a panic in the program counts as a failure).
    pub fn run(&self) -> Result<StfReport, String> {
        let run = match self.program {
            Ok(run) => run,
            Err(diagnostics) => return Err(format!("does not compile:\n{diagnostics}")),
        };
        if self.stf.trim().is_empty() {
            return Err(format!("{}.stf is missing or empty", self.name));
        }
        let stf = self.stf;
        match std::panic::catch_unwind(move || run(stf)) {
            Ok(report) if report.passed => Ok(report),
            Ok(report) => Err(report.to_string()),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(no message)".into());
                Err(format!("panicked: {msg}"))
            }
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/registry.rs"));
