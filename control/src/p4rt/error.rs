//! Status codes for P4Runtime requests: one error type for per-update and
//! per-request problems, the single mapping from [`RuntimeError`] to a gRPC
//! code, and the Write error shape of the spec ("Error Reporting"; reference
//! §1.4): gRPC UNKNOWN whose `grpc-status-details-bin` is a
//! `google.rpc.Status` holding one `Any(p4.v1.Error)` per update, in request
//! order, OK updates included.

use p4_target::runtime::RuntimeError;
use prost::Message;
use tonic::Code;

/// `Any.type_url` of a `p4.v1.Error`.
pub const P4_ERROR_TYPE_URL: &str = "type.googleapis.com/p4.v1.Error";

/// A request problem: a gRPC code and a message that names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct P4Error {
    /// Canonical code.
    pub code: Code,
    /// Human-readable message; names the offending field first.
    pub message: String,
}

impl P4Error {
    /// A problem with `code`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        P4Error {
            code,
            message: message.into(),
        }
    }

    /// INVALID_ARGUMENT naming `field`.
    pub fn invalid(field: impl std::fmt::Display, reason: impl std::fmt::Display) -> Self {
        P4Error::new(Code::InvalidArgument, format!("{field}: {reason}"))
    }

    /// UNIMPLEMENTED.
    pub fn unimplemented(what: impl std::fmt::Display) -> Self {
        P4Error::new(Code::Unimplemented, format!("{what} is not supported"))
    }

    /// The same error with `prefix: ` in front of the message.
    pub fn context(mut self, prefix: impl std::fmt::Display) -> Self {
        self.message = format!("{prefix}: {}", self.message);
        self
    }

    /// As a gRPC status (for request-wide problems).
    pub fn to_status(&self) -> tonic::Status {
        tonic::Status::new(self.code, self.message.clone())
    }
}

impl From<RuntimeError> for P4Error {
    fn from(e: RuntimeError) -> Self {
        P4Error::new(runtime_error_code(&e), e.to_string())
    }
}

/// The one place [`RuntimeError`] becomes a status code (P4Runtime spec
/// "Error Reporting", reference §1.4 "Canonical error codes per update").
pub fn runtime_error_code(e: &RuntimeError) -> Code {
    match e {
        RuntimeError::UnknownId { .. } => Code::InvalidArgument,
        RuntimeError::Invalid { .. } => Code::InvalidArgument,
        RuntimeError::AlreadyExists { .. } => Code::AlreadyExists,
        RuntimeError::NotFound { .. } => Code::NotFound,
        RuntimeError::Full { .. } => Code::ResourceExhausted,
        // Writes to const tables and const default actions.
        RuntimeError::NotPermitted(_) => Code::PermissionDenied,
        // Deleting a member or group an entry still points at.
        RuntimeError::InUse(_) => Code::FailedPrecondition,
        // A group or entry naming a member or group that is not there
        // (spec §9.1.2, §9.2.2).
        RuntimeError::MissingRef(_) => Code::NotFound,
    }
}

/// Builds the Write RPC's error status from per-update results, or `None`
/// when every update succeeded.
pub fn write_status(results: &[Result<(), P4Error>]) -> Option<tonic::Status> {
    batch_status(results, "updates", Code::Unknown)
}

/// Builds the Read RPC's error status from per-request results (§13.3),
/// or `None` when every request succeeded: UNKNOWN with one `p4.v1.Error`
/// per request, OK ones included. A Read of a single request answers
/// with that request's own code (its `p4.v1.Error` in the details too),
/// as PI-based servers do and clients checking the code expect.
pub fn read_status(results: &[Result<(), P4Error>]) -> Option<tonic::Status> {
    let code = match results {
        [Err(e)] => e.code,
        _ => Code::Unknown,
    };
    batch_status(results, "requests", code)
}

/// A batch RPC's status: `code` with a `google.rpc.Status` whose details
/// are one `p4.v1.Error` per item, in order.
fn batch_status(results: &[Result<(), P4Error>], items: &str, code: Code) -> Option<tonic::Status> {
    let failed = results.iter().filter(|r| r.is_err()).count();
    if failed == 0 {
        return None;
    }
    let details = results
        .iter()
        .map(|r| {
            let err = match r {
                Ok(()) => proto::p4::v1::Error::default(),
                Err(e) => proto::p4::v1::Error {
                    canonical_code: e.code as i32,
                    message: e.message.clone(),
                    ..Default::default()
                },
            };
            prost_types::Any {
                type_url: P4_ERROR_TYPE_URL.into(),
                value: err.encode_to_vec(),
            }
        })
        .collect();
    let first = results
        .iter()
        .find_map(|r| r.as_ref().err())
        .map(|e| e.message.as_str())
        .unwrap_or("");
    let message = if code != Code::Unknown {
        first.to_string()
    } else {
        format!(
            "{failed} of {} {items} failed; first: {first}",
            results.len()
        )
    };
    let status = proto::google::rpc::Status {
        code: code as i32,
        message: message.clone(),
        details,
    };
    Some(tonic::Status::with_details(
        code,
        message,
        bytes::Bytes::from(status.encode_to_vec()),
    ))
}

/// Decodes the per-update errors of a Write status (for clients and tests):
/// `(canonical_code, message)` per update.
pub fn decode_write_errors(status: &tonic::Status) -> Option<Vec<(i32, String)>> {
    let s = proto::google::rpc::Status::decode(status.details()).ok()?;
    s.details
        .iter()
        .map(|any| {
            (any.type_url == P4_ERROR_TYPE_URL)
                .then(|| proto::p4::v1::Error::decode(any.value.as_slice()).ok())
                .flatten()
                .map(|e| (e.canonical_code, e.message))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_error_maps_to_the_spec_code() {
        let cases = [
            (
                RuntimeError::UnknownId {
                    kind: "table",
                    id: 1,
                },
                Code::InvalidArgument,
            ),
            (
                RuntimeError::Invalid {
                    field: "f".into(),
                    reason: "r".into(),
                },
                Code::InvalidArgument,
            ),
            (
                RuntimeError::AlreadyExists { table: "t" },
                Code::AlreadyExists,
            ),
            (RuntimeError::NotFound { table: "t" }, Code::NotFound),
            (
                RuntimeError::Full {
                    table: "t",
                    size: 1,
                },
                Code::ResourceExhausted,
            ),
            (
                RuntimeError::NotPermitted("const".into()),
                Code::PermissionDenied,
            ),
            (RuntimeError::InUse("m".into()), Code::FailedPrecondition),
            (RuntimeError::MissingRef("m".into()), Code::NotFound),
        ];
        for (e, code) in cases {
            assert_eq!(runtime_error_code(&e), code, "{e}");
        }
    }

    #[test]
    fn write_status_has_one_detail_per_update_in_order() {
        let results = vec![
            Ok(()),
            Err(P4Error::new(
                Code::AlreadyExists,
                "entry already exists in t",
            )),
            Ok(()),
        ];
        let status = write_status(&results).unwrap();
        assert_eq!(status.code(), Code::Unknown);
        let decoded = decode_write_errors(&status).unwrap();
        assert_eq!(
            decoded,
            vec![
                (0, String::new()),
                (
                    Code::AlreadyExists as i32,
                    "entry already exists in t".into()
                ),
                (0, String::new())
            ]
        );
        assert!(write_status(&[Ok(()), Ok(())]).is_none());
    }
}
