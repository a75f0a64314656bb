//! The runtime tree: [`ApiDef`] → [`GroupDef`] → [`EndpointDef`].

pub(crate) mod api;
pub(crate) mod endpoint;
pub(crate) mod group;
pub(crate) mod path_options;
pub(crate) mod resolve;

#[cfg(test)]
mod tests;
