//! Search parameters: the pluggable serializer and its default rules.
//!
//! The rules are described, with examples, in the [module docs](super#how-variables-become-search-parameters).

use serde_json::{Map, Value};

use super::SearchParamsError;

mod flatten;
mod parse;

pub(in crate::encode) use flatten::write_urlencoded;

/// Turns variables into a query string and back: the source's `searchParamsSerializer`.
///
/// Implement it to match a backend's own conventions (comma-separated arrays, `key[]=`, JSON in
/// one parameter, ...). [`DefaultSearchParams`] is used when a source sets none.
pub trait SearchParamsSerializer: Send + Sync + std::fmt::Debug {
    /// Writes `params` as a query string, without the leading `?`; empty when nothing is sent.
    fn stringify(&self, params: &Map<String, Value>) -> String;

    /// Reads a query string (without the leading `?`) back into variables. A client calls it to
    /// read a URL-encoded answer of the `form` response type, so a source whose upstream writes
    /// its own encoding reads it back by the same rules.
    fn parse(&self, query: &str) -> Result<Map<String, Value>, SearchParamsError>;
}

/// The default search-parameter rules: repeated keys for arrays, brackets for nested objects.
///
/// See the [module docs](super#how-variables-become-search-parameters) for the rules and the
/// one ambiguity of reading them back.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultSearchParams;

impl SearchParamsSerializer for DefaultSearchParams {
    fn stringify(&self, params: &Map<String, Value>) -> String {
        let mut out = String::new();
        write_urlencoded(params, &mut out);
        out
    }

    fn parse(&self, query: &str) -> Result<Map<String, Value>, SearchParamsError> {
        parse::parse(query)
    }
}

#[cfg(test)]
mod tests;
