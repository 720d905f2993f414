//! The ABI fingerprint of this build of `p4-target`: its version, a digest
//! of its sources, the rustc that compiled it and the target triple
//! (computed by `build.rs`).
//!
//! Rust has no stable ABI. A pipeline library (`p4-to-rust build`) hands
//! the switch a `Box<dyn DynPipeline>` and both sides then share
//! [`crate::runtime::Runtime`] values: that is sound only when both were
//! compiled from the same sources of this crate by the same compiler for
//! the same target, which is exactly when their fingerprints are equal.
//! A loader compares the library's fingerprint (read through a C-ABI
//! function, which needs no agreement) with its own before calling
//! anything else in the library.

/// `p4-target=VERSION src=DIGEST; rustc=VERSION; target=TRIPLE`.
pub const FINGERPRINT: &str = env!("P4_TARGET_ABI_FINGERPRINT");

/// Name of the C-ABI function a pipeline library exports:
/// `extern "C" fn(len: *mut usize) -> *const u8`, the library's
/// [`FINGERPRINT`] as UTF-8 bytes (valid as long as the library is loaded).
pub const FINGERPRINT_SYMBOL: &str = "roceswitch_pipeline_abi";

/// Name of the Rust-ABI constructor a pipeline library exports:
/// `fn() -> Box<dyn DynPipeline>`. Call it only after the fingerprints
/// matched.
pub const CONSTRUCTOR_SYMBOL: &str = "roceswitch_pipeline_new";

/// The parts of two fingerprints that differ, as `name: ours vs theirs`
/// (empty when they are equal).
pub fn differences(ours: &str, theirs: &str) -> Vec<String> {
    let parts = |s: &str| -> Vec<(String, String)> {
        s.split(';')
            .flat_map(|p| p.split_whitespace())
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (String::new(), kv.to_string()),
            })
            .collect()
    };
    if ours == theirs {
        return Vec::new();
    }
    let (o, t) = (parts(ours), parts(theirs));
    let mut out = Vec::new();
    // Values of a key may span several words (the rustc version).
    let group = |v: &[(String, String)]| {
        let mut g: Vec<(String, String)> = Vec::new();
        for (k, val) in v {
            match (k.is_empty(), g.last_mut()) {
                (true, Some(last)) => {
                    last.1.push(' ');
                    last.1.push_str(val);
                }
                _ => g.push((k.clone(), val.clone())),
            }
        }
        g
    };
    let (o, t) = (group(&o), group(&t));
    for (k, v) in &o {
        match t.iter().find(|(tk, _)| tk == k) {
            Some((_, tv)) if tv == v => {}
            Some((_, tv)) => out.push(format!("{k}: this switch has {v}, the library {tv}")),
            None => out.push(format!("{k}: missing in the library's fingerprint")),
        }
    }
    if out.is_empty() {
        out.push(format!("fingerprint '{theirs}' is not '{ours}'"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_names_sources_compiler_and_target() {
        assert!(FINGERPRINT.starts_with("p4-target="), "{FINGERPRINT}");
        assert!(FINGERPRINT.contains(" src="), "{FINGERPRINT}");
        assert!(FINGERPRINT.contains("rustc=rustc "), "{FINGERPRINT}");
        assert!(FINGERPRINT.contains("target="), "{FINGERPRINT}");
    }

    #[test]
    fn differences_name_the_part_that_differs() {
        assert!(differences(FINGERPRINT, FINGERPRINT).is_empty());
        let other = FINGERPRINT.replace("rustc=rustc ", "rustc=rustc 0.0.1-old ");
        let d = differences(FINGERPRINT, &other);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("rustc: "), "{d:?}");
    }
}
