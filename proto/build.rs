//! Compiles the .proto files under `proto/` with the pure-Rust `protox`
//! compiler (no protoc) and generates prost messages and tonic clients and
//! servers from the resulting descriptor set. The encoded descriptor set is
//! also written to `OUT_DIR/descriptors.bin` for text-format parsing.

use prost::Message;

const FILES: &[&str] = &[
    "google/rpc/status.proto",
    "google/rpc/code.proto",
    "p4/config/v1/p4types.proto",
    "p4/config/v1/p4info.proto",
    "p4/v1/p4data.proto",
    "p4/v1/p4runtime.proto",
    "roceswitch/fabric/v1/fabric.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(FILES, ["proto"])?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("descriptors.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Decodes each message from one `Bytes` (see src/codec.rs).
        .codec_path("crate::codec::BytesCodec")
        .compile_fds(fds)?;
    Ok(())
}
