//! The runtime tree: [`ApiDef`] → [`GroupDef`] → [`EndpointDef`].

pub(crate) mod api;
pub(crate) mod endpoint;
pub(crate) mod group;
pub(crate) mod meta;
pub(crate) mod path_options;
pub(crate) mod resolve;
pub(crate) mod source;

#[cfg(test)]
mod tests;
