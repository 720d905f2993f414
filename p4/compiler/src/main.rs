//! `p4-to-rust`: the compiler's command line.
//!
//! `p4-to-rust compile PROG.p4 -o OUT.rs [--p4info FILE.txtpb]
//! [--p4info-bin FILE.bin] [-I DIR]...`: errors are rendered to stderr and
//! the exit code is 1.
//!
//! `p4-to-rust stf DIR [--filter NAME] [--trace CASE]`: runs every `NAME.p4` + `NAME.stf`
//! pair in DIR (p4c's simple test format) against the compiled program and
//! ends with `N passed, N failed`; exit code 1 if any failed.
//!
//! `p4-to-rust switch PROG.p4 --out DIR`: writes a crate whose binary is a
//! software switch for the program (ports, traffic manager, P4Runtime);
//! `cargo build --release --manifest-path DIR/Cargo.toml`.
//!
//! `p4-to-rust build PROG.p4 -o PROG.p4rs [--target-dir DIR]`: a
//! device-config bundle (the program as a shared library, its P4Info and
//! the ABI fingerprint) for `SetForwardingPipelineConfig` on a running
//! roceswitch; see `p4_compiler::bundle_build`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// P4_16 (v1model) to Rust compiler.
#[derive(Parser, Debug)]
#[command(name = "p4-to-rust", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile a P4 program to a Rust source file.
    Compile {
        /// The P4 program.
        program: PathBuf,
        /// Where to write the generated Rust.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        /// Also write the P4Info in protobuf text format.
        #[arg(long = "p4info")]
        p4info: Option<PathBuf>,
        /// Also write the P4Info in protobuf binary format.
        #[arg(long = "p4info-bin")]
        p4info_bin: Option<PathBuf>,
        /// Include directory (repeatable).
        #[arg(short = 'I', long = "include")]
        include: Vec<PathBuf>,
        /// Leave the packet-trace points out: `rocectl trace` then shows
        /// only the traffic manager for this program, and untraced packets
        /// skip one branch a point.
        #[arg(long)]
        no_trace_points: bool,
    },
    /// Run the STF tests (NAME.p4 + NAME.stf pairs) in a folder.
    Stf {
        /// Folder of test pairs.
        dir: PathBuf,
        /// Only cases whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Print each packet's trace (parser, tables, traffic manager,
        /// deparser) of the cases whose name contains CASE; runs only
        /// those unless --filter says otherwise.
        #[arg(long, value_name = "CASE")]
        trace: Option<String>,
        /// Include directory (repeatable).
        #[arg(short = 'I', long = "include")]
        include: Vec<PathBuf>,
    },
    /// Build a device-config bundle (.p4rs) that a running roceswitch loads
    /// through P4Runtime's SetForwardingPipelineConfig.
    Build {
        /// The P4 program.
        program: PathBuf,
        /// Where to write the bundle.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        /// Cargo target directory shared by bundle builds [default:
        /// $P4RS_TARGET_DIR, else target/p4rs of the roceswitch checkout].
        #[arg(long)]
        target_dir: Option<PathBuf>,
        /// Include directory (repeatable).
        #[arg(short = 'I', long = "include")]
        include: Vec<PathBuf>,
    },
    /// Write a crate whose binary is a software switch for the program.
    Switch {
        /// The P4 program.
        program: PathBuf,
        /// Where to write the crate.
        #[arg(long)]
        out: PathBuf,
        /// Include directory (repeatable).
        #[arg(short = 'I', long = "include")]
        include: Vec<PathBuf>,
        /// Rust file implementing the program's user-defined externs: it
        /// defines `pub struct UserExterns` implementing the generated
        /// `Externs` trait (README.md, "User-defined externs").
        #[arg(long)]
        externs: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    cli_common::restore_pipe_manners();
    cli_common::handle_doc_flags::<Cli>();
    let cli = Cli::parse();
    match cli.command {
        Command::Compile {
            program,
            output,
            p4info,
            p4info_bin,
            include,
            no_trace_points,
        } => {
            let opts = p4_compiler::CompileOptions {
                include_dirs: include,
                without_trace_points: no_trace_points,
            };
            let (result, sources) = p4_compiler::compile_with_sources(&program, &opts);
            match result {
                Ok(out) => {
                    eprint!("{}", p4_compiler::render(&out.warnings, &sources));
                    let writes = [
                        (Some(output), out.rust.into_bytes()),
                        (p4info, out.p4info_text.into_bytes()),
                        (p4info_bin, out.p4info_binary),
                    ];
                    for (path, bytes) in writes {
                        if let Some(path) = path
                            && let Err(e) = std::fs::write(&path, bytes)
                        {
                            eprintln!("error: cannot write {}: {e}", path.display());
                            return ExitCode::from(1);
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(diags) => {
                    eprint!("{}", p4_compiler::render(&diags, &sources));
                    ExitCode::from(1)
                }
            }
        }
        Command::Stf {
            dir,
            filter,
            trace,
            include,
        } => {
            let opts = p4_compiler::CompileOptions {
                include_dirs: include,
                ..Default::default()
            };
            let filter = filter.or_else(|| trace.clone());
            match p4_compiler::stf_harness::run_dir_traced(
                &dir,
                &opts,
                filter.as_deref(),
                trace.as_deref(),
            ) {
                Ok((_, 0)) => ExitCode::SUCCESS,
                Ok(_) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Build {
            program,
            output,
            target_dir,
            include,
        } => {
            let opts = p4_compiler::CompileOptions {
                include_dirs: include,
                ..Default::default()
            };
            let target_dir =
                target_dir.unwrap_or_else(p4_compiler::bundle_build::default_target_dir);
            match p4_compiler::bundle_build::build_bundle(&program, &target_dir, &opts) {
                Ok(bundle) => {
                    if let Err(e) = std::fs::write(&output, bundle.encode()) {
                        eprintln!("error: cannot write {}: {e}", output.display());
                        return ExitCode::from(1);
                    }
                    println!(
                        "wrote {} ({} bytes; {})",
                        output.display(),
                        bundle.library.len(),
                        bundle.abi
                    );
                    ExitCode::SUCCESS
                }
                Err(p4_compiler::bundle_build::BuildError::Compile(diags, sources)) => {
                    eprint!("{}", p4_compiler::render(&diags, &sources));
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Switch {
            program,
            out,
            include,
            externs,
        } => {
            let opts = p4_compiler::CompileOptions {
                include_dirs: include,
                ..Default::default()
            };
            match p4_compiler::switch_crate::write_switch_crate(
                &program,
                &out,
                &opts,
                externs.as_deref(),
            ) {
                Ok(name) => {
                    println!(
                        "wrote {name} to {}; build it with: cargo build --release --manifest-path {}",
                        out.display(),
                        out.join("Cargo.toml").display()
                    );
                    ExitCode::SUCCESS
                }
                Err(p4_compiler::switch_crate::SwitchCrateError::Compile(diags, sources)) => {
                    eprint!("{}", p4_compiler::render(&diags, &sources));
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
