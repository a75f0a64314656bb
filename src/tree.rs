//! The runtime tree's parts: what an endpoint is made of besides its builder, and a built tree
//! read back.
//!
//! The builders are at the root ([`ApiDef`](crate::ApiDef), [`GroupDef`](crate::GroupDef),
//! [`HttpEndpoint`](crate::HttpEndpoint), [`StreamEndpoint`](crate::StreamEndpoint),
//! [`ChannelEndpoint`](crate::ChannelEndpoint)). The types here are what those builders take for
//! the less common parts of an endpoint, and what a built [`ApiDef`](crate::ApiDef) hands back
//! when a program, a layer or a tool reads it:
//!
//! | names | for |
//! |---|---|
//! | [`Via`], [`WireCall`] | an address computed from the variables at call time (`.via()`) |
//! | [`PathOptions`] | path parameters, headers and cookies a source or group fills in itself |
//! | [`ResponseParser`] | a source's own reading of response bodies |
//! | [`Topic`] | what a served channel's subscribers share a topic by |
//! | [`SourceOptions`], [`ResolvedGroup`], [`ResolvedEndpoint`], [`EndpointDef`], [`EndpointOptions`] | a built source, its groups and its endpoints, each with everything its place in the tree decides |
//! | [`HttpAddress`], [`StreamSource`], [`ChannelSource`] | where an endpoint is: an address, a `.via()`, or served here |
//! | [`ResolvedPathOptions`] | a call's path options, resolved and told apart |
//! | [`EndpointMeta`], [`Kind`], [`Attempts`] | the facts about one call that layers read from the request's extensions |
//!
//! ```
//! use courier::tree::{EndpointDef, Kind};
//! use courier::{ApiDef, GroupDef, HttpEndpoint};
//!
//! let api = ApiDef::builder()
//!     .base_url("https://api.example.com")
//!     .group("users", GroupDef::new().prefix("/users").endpoint("create", HttpEndpoint::post("")))
//!     .build()?;
//! let create = api.endpoint("users.create").unwrap();
//! assert_eq!(create.kind(), Some(Kind::Mutation));
//! assert!(matches!(create.definition(), EndpointDef::Http(_)));
//! assert_eq!(api.root().group("users").unwrap().endpoints().len(), 1);
//! # Ok::<(), courier::ConfigurationError>(())
//! ```

pub use courier_core::{
    Attempts, ChannelSource, EndpointDef, EndpointMeta, EndpointOptions, HttpAddress, Kind,
    PathOptions, ResolvedEndpoint, ResolvedGroup, ResolvedPathOptions, ResponseParser,
    SourceOptions, StreamSource, Topic, Via, WireCall,
};
