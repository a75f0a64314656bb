//! [`EndpointService`]: one endpoint bound to a caller, as a `tower::Service` of its variables.

use super::channel::Channel;
use super::http::Http;
use super::stream::Stream;
use super::view::{Data, Mode, Raw, Scope};
use crate::call::{
    CallOptions, ChannelDispatch, Dispatch, HttpCallRequest, IntoVariables, StreamDispatch,
};
use crate::error::{ConfigurationError, ErrorCode};
use crate::response::FromResponse;
use crate::tree::endpoint::EndpointDef;
use crate::tree::path_options::BoxFuture;
use crate::tree::resolve::ResolvedEndpoint;
use serde::de::DeserializeOwned;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::Service;

/// One endpoint of a caller as a [`tower::Service`] of its variables: the endpoint's calls, with
/// their types, for tower's and tower-http's layers, `tower::buffer::Buffer`, or any code that
/// takes a `Service<V, Response = R>`.
///
/// `C` is the caller (the direct `Client`, the proxy caller's `ProxyClient`, any
/// [`Dispatch`]), `E` the endpoint's field type and `M` the mode:
///
/// | `E` | `Service<V>` with `Response =` |
/// |---|---|
/// | [`Http<R, V, K>`](Http) | `R` in [`Data`] mode, [`HttpResponse<R>`](crate::HttpResponse) in [`Raw`] mode ([`EndpointService::raw`]) |
/// | [`Stream<R, V>`](Stream) | the subscription, `C::Events<R>` ([`StreamDispatch`]) |
/// | [`Channel<R, V, S>`](Channel) | the connection, `C::Connection<R, S>` ([`ChannelDispatch`]) |
///
/// The error is the caller's (`courier::Error` for both of courier's callers). A derived view
/// makes them with `.services()`: `caller.users().services().get()?` is the service of the
/// endpoint `caller.users().get(id)` calls, with the view's `.with()` options and mode. A
/// runtime tree's endpoint is made by dotted path with [`EndpointService::at`].
///
/// A call runs exactly as the view's method runs it — the caller's
/// [`Dispatch::http`] (or `subscribe`, `connect`) with the endpoint, the variables and the
/// options — so a service's call goes through the same layers, resolves to the same value and
/// fails with the same errors. The endpoint is found once, when the service is made: an endpoint
/// the caller cannot reach (a proxy caller whose routes leave it out) is an error then, not at
/// each call.
///
/// The service is always ready (the caller's own stack waits for its layers inside the call),
/// cheap to clone (one `Arc`), and `Send + Sync + 'static` whenever the caller and the types are;
/// its future is boxed, `Send` and `'static`.
///
/// Wrapped in tower's layers (`load_shed`, `concurrency_limit`, `timeout`, a `Buffer`), the stack
/// fails with tower's `BoxError`; `courier::Error::from` (and so `?` in a handler returning
/// `Result<_, courier::Error>`) turns it back into the caller's error — the call's own as it was,
/// a load-shed refusal as an `HttpError` 503 `OVERLOADED`, tower's timeout as a timeout — which,
/// with courier's `axum` feature, is the handler's response.
///
/// ```
/// use courier::typed::{endpoint, Group, Http};
/// use courier::{ApiDef, Caller};
/// use serde::{Deserialize, Serialize};
/// use tower::{Service, ServiceExt};
///
/// #[derive(Debug, Deserialize)]
/// struct User { id: u64 }
/// #[derive(Serialize)]
/// struct UserId(u64);
///
/// #[derive(courier::Group)]
/// struct Users { get: Http<User, UserId> }
/// #[derive(courier::Api)]
/// struct Example { users: Group<Users> }
///
/// // Any service of user ids that answers users: an endpoint of courier's, or not.
/// async fn first<S>(mut users: S) -> Result<User, S::Error>
/// where
///     S: Service<UserId, Response = User>,
/// {
///     users.ready().await?.call(UserId(1)).await
/// }
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let addr = listener.local_addr()?;
/// # let app = axum::Router::new().route(
/// #     "/users/{id}",
/// #     axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u64>| async move {
/// #         axum::Json(serde_json::json!({ "id": id }))
/// #     }),
/// # );
/// # tokio::spawn(async move { axum::serve(listener, app).await });
/// let users = Group::new(Users { get: endpoint().get("/:id") }).prefix("/users");
/// let api = ApiDef::builder()
///     .base_url(format!("http://{addr}"))
///     .build_typed(Example { users })?;
/// let caller = Caller::new(api)?;
///
/// let get = caller.users().services().get()?;         // EndpointService<Client, Http<User, UserId>>
/// assert_eq!(first(get.clone()).await?.id, 1);
/// let whole = get.raw().oneshot(UserId(7)).await?;    // HttpResponse<User>
/// assert_eq!((whole.status.as_u16(), whole.data.id), (200, 7));
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub struct EndpointService<C, E, M = Data> {
    bound: Arc<Bound<C>>,
    _types: PhantomData<fn() -> (E, M)>,
}

/// What every call of the service needs, shared by its clones and moved into each call's future
/// as one `Arc`.
struct Bound<C> {
    client: C,
    endpoint: Arc<ResolvedEndpoint>,
    options: Option<Arc<CallOptions>>,
}

impl<C, E, M> EndpointService<C, E, M> {
    fn bind(client: C, endpoint: Arc<ResolvedEndpoint>, options: Option<Arc<CallOptions>>) -> Self {
        Self {
            bound: Arc::new(Bound {
                client,
                endpoint,
                options,
            }),
            _types: PhantomData,
        }
    }

    /// The service of the endpoint `name` in `scope`'s group, with the scope's options. What a
    /// derived view's `.services()` calls, one method per endpoint; a hand-written view calls it
    /// with the field's type as `E`. (`E` is not checked here: a service whose types do not
    /// make a call is not a `tower::Service`, and says so where it is used.)
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` when the caller's tree lacks the endpoint (a proxy caller whose
    /// routes leave it out).
    pub fn new(scope: &Scope<'_, C, M>, name: &str) -> Result<Self, ConfigurationError>
    where
        C: Dispatch + Clone,
    {
        let endpoint = Arc::clone(scope.endpoint(name)?);
        Ok(Self::bind(
            scope.client().clone(),
            endpoint,
            scope.shared_options(),
        ))
    }

    /// The endpoint's dotted path.
    pub fn path(&self) -> &str {
        self.bound.endpoint.path()
    }

    /// The endpoint, as the caller's tree resolved it.
    pub fn endpoint(&self) -> &Arc<ResolvedEndpoint> {
        &self.bound.endpoint
    }

    /// The caller the calls run on.
    pub fn client(&self) -> &C {
        &self.bound.client
    }

    /// The per-call options every call carries (the view's `.with()`), if any.
    pub fn options(&self) -> Option<&CallOptions> {
        self.bound.options.as_deref()
    }

    fn retype<M2>(self) -> EndpointService<C, E, M2> {
        EndpointService {
            bound: self.bound,
            _types: PhantomData,
        }
    }
}

/// The endpoint at dotted `path` of `client`'s tree, when its head is `what`.
fn find<C: Dispatch>(
    client: &C,
    path: &str,
    what: &str,
    is: fn(&EndpointDef) -> bool,
) -> Result<Arc<ResolvedEndpoint>, ConfigurationError> {
    let endpoint = client.api().endpoint(path).ok_or_else(|| {
        ConfigurationError::new(
            ErrorCode::EndpointNotInRoutes,
            format!(
                "`{path}` is not an endpoint this caller can reach: a proxy caller reaches what \
                 its routes name; mark it `.expose(true)` (`expose = true` in a config file) and \
                 write the routes again"
            ),
        )
        .at(path)
    })?;
    if !is(endpoint.definition()) {
        return Err(ConfigurationError::new(
            ErrorCode::InvalidOption,
            format!("`{path}` is not {what}"),
        )
        .at(path));
    }
    Ok(Arc::clone(endpoint))
}

impl<C, R, V, K, M> EndpointService<C, Http<R, V, K>, M> {
    /// The service of the HTTP endpoint at dotted `path` (`users.posts.list`) of `client`'s
    /// tree: a runtime tree's endpoint, or a typed one reached by path. With
    /// `Http<serde_json::Value, serde_json::Value>`, a `Service<Value>` answering JSON, whatever
    /// the endpoint's kind (a kind marker is not checked against the tree); `Client::service`
    /// is this over the direct client.
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the tree lacks; `INVALID_OPTION` when the endpoint
    /// there is a stream or a channel.
    pub fn at(client: &C, path: &str) -> Result<Self, ConfigurationError>
    where
        C: Dispatch + Clone,
    {
        let endpoint = find(client, path, "an HTTP endpoint", |d| d.as_http().is_some())?;
        Ok(Self::bind(client.clone(), endpoint, None))
    }

    /// The same service resolving to the whole [`HttpResponse`](crate::HttpResponse) (status,
    /// headers and body), as a view's `.raw()` does.
    pub fn raw(self) -> EndpointService<C, Http<R, V, K>, Raw> {
        self.retype()
    }

    /// The same service resolving to the body.
    pub fn data(self) -> EndpointService<C, Http<R, V, K>, Data> {
        self.retype()
    }
}

impl<C, R, V, M> EndpointService<C, Stream<R, V>, M> {
    /// The service of the stream at dotted `path` of `client`'s tree; see
    /// [`EndpointService::at`](EndpointService#method.at).
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the tree lacks; `INVALID_OPTION` when the endpoint
    /// there is not a stream.
    pub fn at(client: &C, path: &str) -> Result<Self, ConfigurationError>
    where
        C: Dispatch + Clone,
    {
        let endpoint = find(client, path, "a stream", |d| d.as_stream().is_some())?;
        Ok(Self::bind(client.clone(), endpoint, None))
    }
}

impl<C, R, V, S, M> EndpointService<C, Channel<R, V, S>, M> {
    /// The service of the channel at dotted `path` of `client`'s tree; see
    /// [`EndpointService::at`](EndpointService#method.at).
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the tree lacks; `INVALID_OPTION` when the endpoint
    /// there is not a channel.
    pub fn at(client: &C, path: &str) -> Result<Self, ConfigurationError>
    where
        C: Dispatch + Clone,
    {
        let endpoint = find(client, path, "a channel", |d| d.as_channel().is_some())?;
        Ok(Self::bind(client.clone(), endpoint, None))
    }
}

impl<C, R, V, K, M> Service<V> for EndpointService<C, Http<R, V, K>, M>
where
    C: Dispatch + 'static,
    R: FromResponse,
    V: IntoVariables + Send + 'static,
    M: Mode,
{
    type Response = M::Output<R>;
    type Error = C::Error;
    type Future = BoxFuture<'static, Result<M::Output<R>, C::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, variables: V) -> Self::Future {
        let bound = Arc::clone(&self.bound);
        Box::pin(async move {
            let request =
                HttpCallRequest::new(&bound.endpoint, variables, bound.options.as_deref());
            let response = bound.client.http::<R, V>(request).await?;
            Ok(M::finish(response))
        })
    }
}

impl<C, R, V, M> Service<V> for EndpointService<C, Stream<R, V>, M>
where
    C: StreamDispatch + 'static,
    R: DeserializeOwned + Send + 'static,
    V: IntoVariables + Send + 'static,
{
    type Response = C::Events<R>;
    type Error = C::Error;
    type Future = BoxFuture<'static, Result<C::Events<R>, C::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, variables: V) -> Self::Future {
        let bound = Arc::clone(&self.bound);
        Box::pin(async move {
            let request =
                HttpCallRequest::new(&bound.endpoint, variables, bound.options.as_deref());
            bound.client.subscribe::<R, V>(request).await
        })
    }
}

impl<C, R, V, S, M> Service<V> for EndpointService<C, Channel<R, V, S>, M>
where
    C: ChannelDispatch + 'static,
    R: DeserializeOwned + Send + 'static,
    S: Send + 'static,
    V: IntoVariables + Send + 'static,
{
    type Response = C::Connection<R, S>;
    type Error = C::Error;
    type Future = BoxFuture<'static, Result<C::Connection<R, S>, C::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, variables: V) -> Self::Future {
        let bound = Arc::clone(&self.bound);
        Box::pin(async move {
            let request =
                HttpCallRequest::new(&bound.endpoint, variables, bound.options.as_deref());
            bound.client.connect::<R, S, V>(request).await
        })
    }
}

impl<C, E, M> Clone for EndpointService<C, E, M> {
    fn clone(&self) -> Self {
        Self {
            bound: Arc::clone(&self.bound),
            _types: PhantomData,
        }
    }
}

impl<C, E, M> fmt::Debug for EndpointService<C, E, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointService")
            .field("path", &self.path())
            .field("options", &self.bound.options)
            .finish_non_exhaustive()
    }
}
