//! `p4-to-rust`: the compiler's command line.
//!
//! `p4-to-rust compile PROG.p4 -o OUT.rs [--p4info FILE.txtpb]
//! [--p4info-bin FILE.bin] [-I DIR]...`: errors are rendered to stderr and
//! the exit code is 1. Other subcommands (`stf`, `switch`) are added next to
//! `compile` in [`Command`].

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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Compile {
            program,
            output,
            p4info,
            p4info_bin,
            include,
        } => {
            let opts = p4_compiler::CompileOptions {
                include_dirs: include,
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
    }
}
