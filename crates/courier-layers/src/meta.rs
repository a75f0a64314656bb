//! [`FromMeta`]: the layers' default source of per-request decisions.

/// Reads each layer's per-request decision from the
/// [`EndpointMeta`](courier_core::EndpointMeta) in the request's extensions, which every request
/// a courier client sends carries.
///
/// The default of every layer's decision trait (`TimeoutFor`, `CoalesceFor`, `CancelFor`,
/// `RetryFor`, `SessionFor`, `ForwardFor`, `AllowFor`); each module says what it reads, and what
/// it decides for a request without an `EndpointMeta`. A layer given a closure instead reads
/// nothing from `EndpointMeta`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FromMeta;
