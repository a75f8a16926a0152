//! bsrmm errors as napi errors: the message carries the C status name first.

/// `"<C status name>: <message>"`, which the TypeScript layer splits into `code` and `message`.
pub fn to_napi(e: bsrmm::Error) -> napi::Error {
    napi::Error::from_reason(e.to_string())
}

/// An invalid-argument error worded like the core's.
pub fn invalid(message: impl Into<String>) -> napi::Error {
    to_napi(bsrmm::Error::invalid_argument(message))
}

/// `?` for bsrmm results inside napi functions.
pub trait IntoNapi<T> {
    fn napi(self) -> napi::Result<T>;
}

impl<T> IntoNapi<T> for bsrmm::Result<T> {
    fn napi(self) -> napi::Result<T> {
        self.map_err(to_napi)
    }
}

/// An UNSUPPORTED error worded like the core's.
pub fn unsupported(message: impl Into<String>) -> napi::Error {
    to_napi(bsrmm::Error::new(bsrmm::Status::Unsupported, message))
}
