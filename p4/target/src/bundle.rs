//! The device-config bundle (`.p4rs`) that `p4-to-rust build` writes and
//! a roceswitch loads from `SetForwardingPipelineConfig.p4_device_config`:
//! a compiled program as a shared library, with its P4Info and the ABI
//! fingerprint it was built with.
//!
//! # Format (version 1)
//!
//! ```text
//! magic   8 bytes  "P4RSBNDL"
//! version u32 LE   1
//! then sections, in any order, each:
//!   tag   4 bytes ASCII
//!   len   u64 LE
//!   bytes len bytes
//! ```
//!
//! Sections: `NAME` the program name (UTF-8), `ABI ` the library's
//! [`crate::abi::FINGERPRINT`] (UTF-8), `COMP` the compiler that generated
//! the code (`p4-to-rust VERSION`, UTF-8), `P4IB` the P4Info (protobuf
//! binary), `LIB ` the shared library (ELF bytes). Unknown sections are
//! skipped; a section given twice, a missing one or a short read is an
//! error. Pure bytes: no allocation beyond the returned vectors, no I/O.

/// First bytes of a bundle.
pub const MAGIC: &[u8; 8] = b"P4RSBNDL";
/// The format version written and read.
pub const VERSION: u32 = 1;

/// A bundle's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    /// The P4 program's name.
    pub name: String,
    /// The ABI fingerprint the library was built with.
    pub abi: String,
    /// The compiler that generated the program's code.
    pub compiler: String,
    /// The P4Info, protobuf binary.
    pub p4info: Vec<u8>,
    /// The shared library.
    pub library: Vec<u8>,
}

/// Why bytes are not a bundle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// Wrong magic: not a bundle at all.
    #[error("not a p4-to-rust bundle (expected the magic \"P4RSBNDL\", got {0:?})")]
    NotABundle(String),
    /// A version this build does not read.
    #[error("bundle format version {0}, this switch reads version {VERSION}")]
    Version(u32),
    /// Cut short or malformed.
    #[error("bundle damaged: {0}")]
    Damaged(String),
    /// A required section is missing.
    #[error("bundle has no {0} section")]
    Missing(&'static str),
}

impl Bundle {
    /// Whether `bytes` start like a bundle (the magic).
    pub fn is_bundle(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The bundle's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.library.len() + self.p4info.len() + 1024);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        for (tag, bytes) in [
            (b"NAME", self.name.as_bytes()),
            (b"ABI ", self.abi.as_bytes()),
            (b"COMP", self.compiler.as_bytes()),
            (b"P4IB", &self.p4info[..]),
            (b"LIB ", &self.library[..]),
        ] {
            out.extend_from_slice(tag);
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        out
    }

    /// Parses a bundle.
    pub fn decode(bytes: &[u8]) -> Result<Bundle, BundleError> {
        if !Self::is_bundle(bytes) {
            let head = &bytes[..bytes.len().min(8)];
            return Err(BundleError::NotABundle(
                String::from_utf8_lossy(head).into_owned(),
            ));
        }
        let damaged = |what: &str| BundleError::Damaged(what.to_string());
        let version = u32::from_le_bytes(
            bytes
                .get(8..12)
                .ok_or_else(|| damaged("no version"))?
                .try_into()
                .expect("4 bytes"),
        );
        if version != VERSION {
            return Err(BundleError::Version(version));
        }
        let mut pos = 12;
        let mut sections: [Option<&[u8]>; 5] = [None; 5];
        const TAGS: [&[u8; 4]; 5] = [b"NAME", b"ABI ", b"COMP", b"P4IB", b"LIB "];
        while pos < bytes.len() {
            let head = bytes
                .get(pos..pos + 12)
                .ok_or_else(|| damaged("section header cut short"))?;
            let tag: [u8; 4] = head[..4].try_into().expect("4 bytes");
            let len = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
            let start = pos + 12;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| start.checked_add(l))
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    damaged(&format!(
                        "section {} cut short",
                        String::from_utf8_lossy(&tag).trim_end()
                    ))
                })?;
            if let Some(i) = TAGS.iter().position(|t| **t == tag) {
                if sections[i].is_some() {
                    return Err(damaged(&format!(
                        "section {} given twice",
                        String::from_utf8_lossy(&tag).trim_end()
                    )));
                }
                sections[i] = Some(&bytes[start..end]);
            }
            pos = end;
        }
        let names = ["NAME", "ABI", "COMP", "P4IB", "LIB"];
        let get = |i: usize| sections[i].ok_or(BundleError::Missing(names[i]));
        let text = |i: usize| -> Result<String, BundleError> {
            String::from_utf8(get(i)?.to_vec())
                .map_err(|_| damaged(&format!("section {} is not UTF-8", names[i])))
        };
        Ok(Bundle {
            name: text(0)?,
            abi: text(1)?,
            compiler: text(2)?,
            p4info: get(3)?.to_vec(),
            library: get(4)?.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Bundle {
        Bundle {
            name: "basic".into(),
            abi: crate::abi::FINGERPRINT.into(),
            compiler: "p4-to-rust 0.1.0".into(),
            p4info: vec![1, 2, 3],
            library: b"\x7fELF...".to_vec(),
        }
    }

    #[test]
    fn a_bundle_round_trips() {
        let b = sample();
        assert_eq!(Bundle::decode(&b.encode()).unwrap(), b);
    }

    #[test]
    fn foreign_short_and_incomplete_bytes_are_refused_with_a_reason() {
        let json = br#"{"program": "basic.json"}"#;
        let e = Bundle::decode(json).unwrap_err();
        assert!(matches!(e, BundleError::NotABundle(_)), "{e}");
        let bytes = sample().encode();
        let e = Bundle::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(e.to_string().contains("LIB cut short"), "{e}");
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert_eq!(Bundle::decode(&v2).unwrap_err(), BundleError::Version(2));
        let only_magic = [&MAGIC[..], &VERSION.to_le_bytes()].concat();
        assert_eq!(
            Bundle::decode(&only_magic).unwrap_err(),
            BundleError::Missing("NAME")
        );
    }
}
