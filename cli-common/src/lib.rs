//! What every command-line binary of the project does the same way.
//!
//! - [`restore_pipe_manners`]: `rocectl table list | head` ends the way
//!   `ls | head` does (killed by SIGPIPE, no panic message).
//! - [`handle_doc_flags`]: the shell completions and the man page of a
//!   binary come from its clap definition, so they can never drift from
//!   `--help`. `BIN --generate-completions SHELL` prints a completion script
//!   (bash, zsh, fish, elvish, powershell) and `BIN --generate-man DIR`
//!   writes `DIR/BIN.1` plus one page per subcommand (`BIN-SUB.1`). The
//!   Debian package (`packaging/deb/build`) installs both; the flags are
//!   hidden from `--help` because only packagers need them.
#![warn(missing_docs, unreachable_pub)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory};

/// Makes a closed stdout end the process as the classic Unix tools end.
///
/// Rust ignores SIGPIPE, so `println!` into a closed pipe panics with
/// "failed printing to stdout: Broken pipe". Restoring SIGPIPE's default
/// disposition for the whole process would also kill a client whose TLS or
/// gRPC peer closes a socket mid-write (a `rocectl` test caught exactly
/// that), so only this one case is changed: the panic hook recognises the
/// failed print and re-raises SIGPIPE with its default action, which gives
/// the shell the status it expects (141) and prints nothing.
pub fn restore_pipe_manners() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_stdout(message) {
            die_of_sigpipe();
        }
        previous(info);
    }));
}

/// Ends the process as SIGPIPE's default action would have.
fn die_of_sigpipe() {
    // SAFETY: signal(2) and raise(3) with valid constants; the process is
    // meant to die here, as it would have without Rust's SIG_IGN.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
}

/// Whether a panic message is std's failed print to a closed stdout.
fn is_closed_stdout(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

/// What a hidden documentation flag asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocRequest {
    /// `--generate-completions SHELL`.
    Completions(clap_complete::Shell),
    /// `--generate-man DIR`.
    Man(PathBuf),
}

/// Errors of [`DocRequest::from_args`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocFlagError(String);

impl std::fmt::Display for DocFlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DocFlagError {}

impl DocRequest {
    /// Reads `[--generate-completions SHELL | --generate-man DIR]` from the
    /// arguments after the program name; `None` when the first argument is
    /// neither (the binary then parses its own arguments as usual).
    pub fn from_args<I: IntoIterator<Item = OsString>>(
        args: I,
    ) -> Option<Result<DocRequest, DocFlagError>> {
        let mut args = args.into_iter();
        let flag = args.next()?;
        let value = args.next();
        let request = match flag.to_str()? {
            "--generate-completions" => {
                let shell = value.as_ref().and_then(|v| v.to_str()).unwrap_or("");
                shell
                    .parse::<clap_complete::Shell>()
                    .map(DocRequest::Completions)
                    .map_err(|_| {
                        DocFlagError(format!(
                            "--generate-completions: unknown shell {shell:?} (bash, zsh, fish, elvish, powershell)"
                        ))
                    })
            }
            "--generate-man" => value
                .map(|dir| DocRequest::Man(PathBuf::from(dir)))
                .ok_or_else(|| DocFlagError("--generate-man needs a directory".into())),
            _ => return None,
        };
        Some(request)
    }
}

/// Serves a documentation flag for the binary whose clap definition is `C`
/// and exits, or returns when the arguments ask for something else.
pub fn handle_doc_flags<C: CommandFactory>() {
    let Some(request) = DocRequest::from_args(std::env::args_os().skip(1)) else {
        return;
    };
    let request = match request {
        Ok(request) => request,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match generate(C::command(), &request, &mut std::io::stdout()) {
        Ok(()) => std::process::exit(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => die_of_sigpipe(),
        Err(e) => eprintln!("error: {e}"),
    }
    std::process::exit(1);
}

/// Writes what `request` asks for about `cmd`: a completion script to
/// `out`, or the man pages into a directory (their paths listed on `out`).
pub fn generate(
    mut cmd: Command,
    request: &DocRequest,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let name = cmd.get_name().to_string();
    match request {
        DocRequest::Completions(shell) => {
            clap_complete::generate(*shell, &mut cmd, name, out);
            Ok(())
        }
        DocRequest::Man(dir) => {
            std::fs::create_dir_all(dir)?;
            cmd.build();
            write_man_pages(&cmd, &name, dir, out)
        }
    }
}

/// `DIR/NAME.1` for `cmd`, then one page per visible subcommand, named as
/// git names its pages (`rocectl-fabric.1`, `rocectl-fabric-get.1`).
fn write_man_pages(
    cmd: &Command,
    name: &str,
    dir: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.to_string())
        .render(&mut page)?;
    std::fs::write(&path, page)?;
    writeln!(out, "{}", path.display())?;
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        write_man_pages(sub, &format!("{name}-{}", sub.get_name()), dir, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn doc_flags_are_recognised_only_in_first_position() {
        assert_eq!(
            DocRequest::from_args(args(&["--generate-completions", "bash"])),
            Some(Ok(DocRequest::Completions(clap_complete::Shell::Bash)))
        );
        assert_eq!(
            DocRequest::from_args(args(&["--generate-man", "/tmp/m"])),
            Some(Ok(DocRequest::Man("/tmp/m".into())))
        );
        assert!(
            DocRequest::from_args(args(&["--generate-completions", "tcsh"]))
                .unwrap()
                .is_err()
        );
        assert!(
            DocRequest::from_args(args(&["--generate-man"]))
                .unwrap()
                .is_err()
        );
        assert_eq!(
            DocRequest::from_args(args(&["fabric", "--generate-man", "x"])),
            None
        );
        assert_eq!(DocRequest::from_args(args(&[])), None);
    }

    #[test]
    fn a_closed_stdout_is_told_apart_from_other_panics() {
        assert!(is_closed_stdout(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_closed_stdout(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!is_closed_stdout("index out of bounds"));
    }

    #[derive(clap::Parser)]
    #[command(name = "demo", about = "a demo tool")]
    struct Demo {
        /// How loud.
        #[arg(long)]
        level: Option<u8>,
        #[command(subcommand)]
        cmd: DemoCmd,
    }

    #[derive(clap::Subcommand)]
    enum DemoCmd {
        /// Shows things.
        Show {
            /// What to show.
            what: String,
        },
    }

    #[test]
    fn man_pages_and_completions_come_from_the_clap_definition() {
        let dir = std::env::temp_dir().join(format!("cli-common-man-{}", std::process::id()));
        let mut listing = Vec::new();
        generate(Demo::command(), &DocRequest::Man(dir.clone()), &mut listing).unwrap();
        let listing = String::from_utf8(listing).unwrap();
        assert_eq!(listing.lines().count(), 2, "{listing}");
        let main = std::fs::read_to_string(dir.join("demo.1")).unwrap();
        assert!(main.contains(".TH demo 1"), "{main}");
        assert!(
            main.contains("a demo tool") && main.contains("level"),
            "{main}"
        );
        let show = std::fs::read_to_string(dir.join("demo-show.1")).unwrap();
        assert!(show.contains("Shows things"), "{show}");
        std::fs::remove_dir_all(&dir).unwrap();

        let mut script = Vec::new();
        generate(
            Demo::command(),
            &DocRequest::Completions(clap_complete::Shell::Bash),
            &mut script,
        )
        .unwrap();
        let script = String::from_utf8(script).unwrap();
        assert!(
            script.contains("complete") && script.contains("--level") && script.contains("show")
        );
    }
}
