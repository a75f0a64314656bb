//! [`IdempotencyKeyLayer`]: gives a write whose endpoint sets `idempotency_key` an
//! `Idempotency-Key` header, made once per call, so that [`Retry`](super::Retry) may send it
//! again (on a connection failure, a 429 or a 503) and an upstream that deduplicates by the key
//! applies it once.

use courier_core::{EndpointMeta, IDEMPOTENCY_KEY};
use http::{HeaderValue, Request};
use std::task::{Context, Poll};
use tower::util::rng::{HasherRng, Rng};
use tower::{Layer, Service};

/// Puts an `Idempotency-Key` on each write whose [`EndpointMeta`] sets
/// [`idempotency_key`](courier_core::LayerSettings::get_idempotency_key), unless the request
/// carries one already (a caller's own, or the one a browser made, which the proxy passes on).
///
/// It sits outside [`RetryLayer`](super::RetryLayer), so that the key is made once per call and
/// every attempt carries it. A key is 32 hex digits: 128 bits from a randomly keyed hasher and a
/// counter, unique per call, not a secret.
///
/// ```
/// use courier::layers::retry::IdempotencyKeyLayer;
/// use courier::transport::Body;
/// use courier::options::LayerSettings;
/// use courier::tree::{EndpointMeta, Kind};
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), courier::BoxError> {
/// let upstream = service_fn(|request: http::Request<Body>| async move {
///     let key = request.headers()["idempotency-key"].to_str()?.to_owned();
///     Ok::<_, courier::BoxError>(key)
/// });
/// let service = ServiceBuilder::new().layer(IdempotencyKeyLayer::new()).service(upstream);
/// let mut request = http::Request::post("http://127.0.0.1/orders").body(Body::empty())?;
/// let settings = LayerSettings::new().idempotency_key(true);
/// request.extensions_mut().insert(EndpointMeta::new("orders.create", Kind::Mutation).settings(settings));
/// let key = service.oneshot(request).await?;
/// assert_eq!(key.len(), 32);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct IdempotencyKeyLayer;

impl IdempotencyKeyLayer {
    /// The layer.
    pub fn new() -> Self {
        Self
    }

    /// Whether the layer gives the requests of an endpoint with `meta` a key: a write whose
    /// endpoint sets `idempotency_key`. A client puts the layer in those endpoints' stacks only.
    pub fn applies_to(meta: &EndpointMeta) -> bool {
        keyed(meta)
    }
}

impl<S> Layer<S> for IdempotencyKeyLayer {
    type Service = IdempotencyKeys<S>;

    fn layer(&self, inner: S) -> Self::Service {
        IdempotencyKeys { inner }
    }
}

/// The service of [`IdempotencyKeyLayer`].
#[derive(Clone, Debug)]
pub struct IdempotencyKeys<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for IdempotencyKeys<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let keyed = request
            .extensions()
            .get::<EndpointMeta>()
            .is_some_and(keyed);
        if keyed && !request.headers().contains_key(IDEMPOTENCY_KEY) {
            request.headers_mut().insert(IDEMPOTENCY_KEY, fresh_key());
        }
        self.inner.call(request)
    }
}

/// Whether `meta` is a write whose endpoint sends an idempotency key.
pub(super) fn keyed(meta: &EndpointMeta) -> bool {
    !meta.is_read() && meta.get_settings().get_idempotency_key() == Some(true)
}

/// A fresh key: 32 hex digits.
fn fresh_key() -> HeaderValue {
    let mut rng = HasherRng::new();
    let key = format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64());
    HeaderValue::try_from(key).unwrap_or_else(|_| unreachable!("hex digits"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::{Kind, LayerSettings};
    use std::convert::Infallible;
    use tower::{service_fn, ServiceExt};

    async fn key_of(meta: Option<EndpointMeta>, own: Option<&'static str>) -> Option<String> {
        let service =
            IdempotencyKeyLayer::new().layer(service_fn(|request: Request<()>| async move {
                Ok::<_, Infallible>(
                    request
                        .headers()
                        .get(IDEMPOTENCY_KEY)
                        .map(|v| v.to_str().unwrap().to_owned()),
                )
            }));
        let mut request = Request::post("http://x/orders").body(()).unwrap();
        if let Some(meta) = meta {
            request.extensions_mut().insert(meta);
        }
        if let Some(own) = own {
            request
                .headers_mut()
                .insert(IDEMPOTENCY_KEY, HeaderValue::from_static(own));
        }
        service.oneshot(request).await.unwrap()
    }

    fn meta(kind: Kind, keyed: bool) -> EndpointMeta {
        let settings = LayerSettings::new().idempotency_key(keyed);
        EndpointMeta::new("orders.create", kind).settings(settings)
    }

    #[tokio::test]
    async fn keyed_writes_get_a_fresh_key_each_and_a_key_given_is_kept() {
        let a = key_of(Some(meta(Kind::Mutation, true)), None)
            .await
            .unwrap();
        let b = key_of(Some(meta(Kind::Mutation, true)), None)
            .await
            .unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b, "a key per call");
        let own = key_of(Some(meta(Kind::Mutation, true)), Some("job-41")).await;
        assert_eq!(own.as_deref(), Some("job-41"));
        // Not keyed: a write that does not ask, a read, a request without meta.
        assert_eq!(key_of(Some(meta(Kind::Mutation, false)), None).await, None);
        assert_eq!(key_of(Some(meta(Kind::Query, true)), None).await, None);
        assert_eq!(key_of(None, None).await, None);
    }
}
