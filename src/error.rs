//! An error's details: what the accessors of [`Error`](crate::Error) and
//! [`ConfigurationError`](crate::ConfigurationError) return, for code that goes past their
//! `is_*` questions.
//!
//! A call fails with one [`Error`](crate::Error), as a reqwest call does; most code asks it
//! questions (`is_timeout()`, `is_http()`, `status()`) and needs nothing here. The types here
//! are what its accessors hand over, like tower-http's `error` modules:
//!
//! | accessor | gives |
//! |---|---|
//! | [`Error::http_error`](crate::Error::http_error) | [`HttpError`]: a response with status 400 or above, its body parsed |
//! | [`Error::refused`](crate::Error::refused) | [`Refused`]: a layer of the stack refused the call before anything was sent |
//! | [`Error::close`](crate::Error::close) | [`Close`]: how a server closed a channel for good |
//! | [`Error::network`](crate::Error::network) | [`NetworkErrorKind`]: which network failure, found with [`classify`] |
//! | [`ConfigurationError::code`](crate::ConfigurationError::code) | [`ErrorCode`]: the stable code of a definition that cannot be used |
//!
//! A body that does not fit the call's type ([`Error::is_decode`](crate::Error::is_decode)) is a
//! [`DecodeError`](crate::response::DecodeError) underneath, which lives in
//! [`response`](crate::response) beside the [`FromResponse`](crate::response::FromResponse) it is
//! the error of.
//!
//! ```
//! use courier::error::ErrorCode;
//! use courier::{ApiDef, GroupDef, HttpEndpoint};
//!
//! let err = ApiDef::builder()
//!     .group("users", GroupDef::new().endpoint("by.id", HttpEndpoint::get("/:id")))
//!     .build()
//!     .unwrap_err();
//! assert_eq!(err.code(), ErrorCode::DottedName);
//! ```

pub use courier_core::ErrorCode;

#[cfg(feature = "client")]
pub use courier_client::{classify, Close, HttpError, NetworkErrorKind, Refused};
