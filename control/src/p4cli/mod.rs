//! P4Runtime for people at a terminal: objects and values by name
//! ([`names`]) and the few exchanges a command-line tool needs ([`ops`]).
//! `rocectl table` and `rocectl counter` are thin callers of this module.

pub mod names;
pub mod ops;

/// Why a by-name P4Runtime command did not happen.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A name or value in the command is wrong.
    #[error(transparent)]
    Name(#[from] names::NameError),
    /// The command's shape is wrong (too few values, a missing action, ...).
    #[error("{0}")]
    Input(String),
    /// The server answered, but not as the command needs.
    #[error("{0}")]
    Server(String),
    /// The server refused a request.
    #[error(transparent)]
    Status(#[from] tonic::Status),
}

impl Error {
    /// Whether the fault is in what was typed (exit status 2) rather than
    /// in the server's answer (1).
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Name(_) | Error::Input(_))
    }
}
