//! Bakes the ABI fingerprint (`p4_target::abi::FINGERPRINT`) into the crate:
//! this crate's version and a digest of its sources, the rustc that builds
//! it and the target. A pipeline library and the switch that loads it agree
//! on the fingerprint only when both were built from the same sources by
//! the same compiler, the condition under which Rust trait objects may
//! cross the library boundary.

use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

/// FNV-1a, 64 bits: enough to tell source trees apart, no dependency.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    visit(&root.join("src"), &mut files);
    files.push(root.join("build.rs"));
    files.sort();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        fnv(&mut h, rel.to_string_lossy().as_bytes());
        fnv(&mut h, &std::fs::read(f).unwrap_or_default());
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown rustc".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    println!(
        "cargo:rustc-env=P4_TARGET_ABI_FINGERPRINT=p4-target={} src={h:016x}; rustc={version}; target={target}",
        env!("CARGO_PKG_VERSION")
    );
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
