//! The error type every fallible call returns: the core's status and its message.

use std::fmt;

/// The core's status codes (`bsrmm_status` in `bsrmm.h`), minus success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// A value breaks a documented rule (shape, index, stride, buffer length).
    InvalidArgument,
    /// Valid, but this backend, dtype or shape is not provided.
    Unsupported,
    /// A host or device allocation failed.
    OutOfMemory,
    /// CUDA not compiled in, no driver, or no such device.
    NoDevice,
    /// A CUDA call failed; the message holds CUDA's own string.
    CudaError,
    /// A bug in bsrmm.
    Internal,
    /// The tuner cache could not be read or written.
    IoError,
}

impl Status {
    /// The C status name, e.g. `"BSRMM_STATUS_INVALID_ARGUMENT"`: stable across bindings.
    pub fn name(self) -> &'static str {
        match self {
            Status::InvalidArgument => "BSRMM_STATUS_INVALID_ARGUMENT",
            Status::Unsupported => "BSRMM_STATUS_UNSUPPORTED",
            Status::OutOfMemory => "BSRMM_STATUS_OUT_OF_MEMORY",
            Status::NoDevice => "BSRMM_STATUS_NO_DEVICE",
            Status::CudaError => "BSRMM_STATUS_CUDA_ERROR",
            Status::Internal => "BSRMM_STATUS_INTERNAL",
            Status::IoError => "BSRMM_STATUS_IO_ERROR",
        }
    }

    fn from_name(name: &str) -> Status {
        [
            Status::InvalidArgument,
            Status::Unsupported,
            Status::OutOfMemory,
            Status::NoDevice,
            Status::CudaError,
            Status::IoError,
        ]
        .into_iter()
        .find(|s| s.name() == name)
        .unwrap_or(Status::Internal)
    }
}

/// A failed bsrmm call: [`code`](Error::code) names the status, the message names the argument
/// and the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// The status of the failure.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The C status name, e.g. `"BSRMM_STATUS_INVALID_ARGUMENT"`.
    pub fn code(&self) -> &'static str {
        self.status.name()
    }

    /// The message, e.g. `"col_idx[17] = 40 >= block_cols 32"`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// An `InvalidArgument` error: for layers above (bindings, Burn) that check their own
    /// arguments before reaching the core, so every argument error looks the same.
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error { status: Status::InvalidArgument, message: message.into() }
    }

    /// An error with any status and message.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
}

impl From<bsrmm_sys::cxx::Exception> for Error {
    fn from(e: bsrmm_sys::cxx::Exception) -> Error {
        let (code, message) = bsrmm_sys::split_error(e.what());
        Error { status: Status::from_name(code), message: message.to_owned() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Result<T, bsrmm::Error>`.
pub type Result<T> = std::result::Result<T, Error>;
