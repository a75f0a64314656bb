//! [`ConfigurationError`]: what is wrong with a definition, found when a tree is built.

use std::fmt;

/// The stable code of a [`ConfigurationError`].
///
/// The first eight are mistakes that types cannot rule out, in Rust as in TypeScript; the rest
/// are for what a Rust builder or a config file can get wrong where TypeScript's types would
/// rule it out.
/// [`ErrorCode::as_str`] gives the code as it appears on the wire and in `courier check`'s output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A group named `raw` or `with`, or an endpoint named `options`, `raw` or `with`.
    ReservedEndpointName,
    /// A group or endpoint name contains a dot.
    DottedName,
    /// `cancel_previous` lists a path the API does not define, or one that writes.
    CancelPreviousInvalid,
    /// An API with `session` lists `cookie` or `set-cookie` in its allowed headers.
    SessionHeaderConflict,
    /// A transport setting that cannot be used (a config file's proxy address, client identity…).
    SourceTransportInvalid,
    /// A WebSocket endpoint is called through the proxy with no `ws` path configured.
    WsPathNotConfigured,
    /// The proxy client is called for an endpoint the routes do not name.
    EndpointNotInRoutes,
    /// A proxy call's variables hold raw bytes or a stream outside a form.
    ProxyVariableNotSerializable,
    /// A group or endpoint name is empty.
    EmptyName,
    /// The base URL is not an absolute `http` or `https` URL without query or fragment.
    InvalidBaseUrl,
    /// A prefix or endpoint path is not a valid path template.
    InvalidPath,
    /// A header name or value is not valid HTTP.
    InvalidHeader,
    /// A channel's topic names a variable its address cannot hold, or an option is out of range.
    InvalidOption,
    /// A config file could not be read.
    ConfigIo,
    /// A config file is not valid TOML.
    ConfigSyntax,
    /// A config file has a key courier does not know.
    ConfigUnknownKey,
    /// A config file has a value of the wrong type or shape (for example two verbs on one endpoint).
    ConfigInvalid,
    /// An allow-list or `forward.headers` names `host` or a hop-by-hop header (`connection` and
    /// the headers it names, `keep-alive`, `proxy-connection`, `te`, `trailer`,
    /// `transfer-encoding`, `upgrade`, `proxy-authenticate`, `proxy-authorization`), which never
    /// crosses the proxy.
    HeaderNeverCrosses,
    /// A call names a source the config file does not define (`courier call`).
    UnknownSource,
    /// A call names an endpoint its source does not define (`courier call`).
    UnknownEndpoint,
    /// A call's variables cannot make its request: not one JSON value, or missing a path
    /// parameter, or a value no path can hold (`courier call`).
    InvalidVariables,
}

impl ErrorCode {
    /// The code as text, `SCREAMING_SNAKE_CASE`, e.g. `"DOTTED_NAME"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReservedEndpointName => "RESERVED_ENDPOINT_NAME",
            Self::DottedName => "DOTTED_NAME",
            Self::CancelPreviousInvalid => "CANCEL_PREVIOUS_INVALID",
            Self::SessionHeaderConflict => "SESSION_HEADER_CONFLICT",
            Self::SourceTransportInvalid => "SOURCE_TRANSPORT_INVALID",
            Self::WsPathNotConfigured => "WS_PATH_NOT_CONFIGURED",
            Self::EndpointNotInRoutes => "ENDPOINT_NOT_IN_ROUTES",
            Self::ProxyVariableNotSerializable => "PROXY_VARIABLE_NOT_SERIALIZABLE",
            Self::EmptyName => "EMPTY_NAME",
            Self::InvalidBaseUrl => "INVALID_BASE_URL",
            Self::InvalidPath => "INVALID_PATH",
            Self::InvalidHeader => "INVALID_HEADER",
            Self::InvalidOption => "INVALID_OPTION",
            Self::ConfigIo => "CONFIG_IO",
            Self::ConfigSyntax => "CONFIG_SYNTAX",
            Self::ConfigUnknownKey => "CONFIG_UNKNOWN_KEY",
            Self::ConfigInvalid => "CONFIG_INVALID",
            Self::HeaderNeverCrosses => "HEADER_NEVER_CROSSES",
            Self::UnknownSource => "UNKNOWN_SOURCE",
            Self::UnknownEndpoint => "UNKNOWN_ENDPOINT",
            Self::InvalidVariables => "INVALID_VARIABLES",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A definition that cannot be used, with the dotted path of the offender.
///
/// Raised when a tree is built ([`ApiBuilder::build`](crate::ApiBuilder::build)), when a config
/// file is loaded, and by the proxy client before it sends anything.
///
/// ```
/// use courier::error::ErrorCode;
/// use courier::{ApiDef, GroupDef, HttpEndpoint};
///
/// let err = ApiDef::builder()
///     .base_url("http://127.0.0.1:9000")
///     .group("users", GroupDef::new().endpoint("raw", HttpEndpoint::get("/raw")))
///     .build()
///     .unwrap_err();
/// assert_eq!(err.code(), ErrorCode::ReservedEndpointName);
/// assert_eq!(err.path(), Some("users.raw"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigurationError {
    code: ErrorCode,
    path: Option<String>,
    message: String,
}

impl ConfigurationError {
    /// An error with a code and a message; the message should say what to change.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            path: None,
            message: message.into(),
        }
    }

    /// Names the offender by its dotted path (`users.posts.list`, or a config key path).
    #[must_use]
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The dotted path of the offender, when there is one.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The message, without the code or path.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{} at `{}`: {}", self.code, path, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for ConfigurationError {}
