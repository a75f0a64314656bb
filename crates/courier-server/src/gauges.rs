//! What the proxy counts of itself through the `metrics` facade, beside its clients' call
//! durations (`Proxy::metrics`): the refusals it answers, by code, and the streams and channels
//! it holds open. Without a recorder installed, each costs a load and a branch.

/// The counter of refusals: `courier.proxy.refusals`, labelled `code` (the refusal's code, one
/// of a fixed set).
pub(crate) const REFUSALS: &str = "courier.proxy.refusals";

/// The gauge of open streams: `courier.proxy.open_streams`.
pub(crate) const OPEN_STREAMS: &str = "courier.proxy.open_streams";

/// The gauge of open channels: `courier.proxy.open_channels`.
pub(crate) const OPEN_CHANNELS: &str = "courier.proxy.open_channels";

/// Counts a refusal answered with `code`.
pub(crate) fn refused(code: &'static str) {
    metrics::counter!(REFUSALS, "code" => code).increment(1);
}

/// One open stream or channel, counted in its gauge while it lives.
pub(crate) struct Open(&'static str);

impl Open {
    /// An open stream, counted until dropped.
    pub(crate) fn stream() -> Self {
        Self::of(OPEN_STREAMS)
    }

    /// An open channel, counted until dropped.
    pub(crate) fn channel() -> Self {
        Self::of(OPEN_CHANNELS)
    }

    fn of(gauge: &'static str) -> Self {
        metrics::gauge!(gauge).increment(1.0);
        Self(gauge)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        metrics::gauge!(self.0).decrement(1.0);
    }
}
