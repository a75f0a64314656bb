//! What the derived views are made of: a [`Scope`] (caller, group, call options, mode), the
//! [`Endpoint`] trait that turns a field's type into a typed call, and the calls themselves.

use crate::call::{
    CallOptions, ChannelDispatch, Dispatch, HttpCallRequest, HttpResponse, IntoVariables,
    StreamDispatch,
};
use crate::error::{ConfigurationError, ErrorCode};
use crate::response::FromResponse;
use crate::tree::path_options::BoxFuture;
use crate::tree::resolve::{ResolvedEndpoint, ResolvedGroup};
use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;
use std::sync::Arc;

/// What a view's calls resolve to: the body ([`Data`]) or the whole response ([`Raw`]).
pub trait Mode: Send + Sync + 'static {
    /// The output of a call whose body parses as `R`.
    type Output<R>;
    /// Picks the output from a whole response.
    fn finish<R>(response: HttpResponse<R>) -> Self::Output<R>;
}

/// Calls resolve to the parsed body (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct Data;

/// Calls resolve to the whole [`HttpResponse`] (after `.raw()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Raw;

impl Mode for Data {
    type Output<R> = R;
    fn finish<R>(response: HttpResponse<R>) -> R {
        response.data
    }
}

impl Mode for Raw {
    type Output<R> = HttpResponse<R>;
    fn finish<R>(response: HttpResponse<R>) -> HttpResponse<R> {
        response
    }
}

/// Where a view stands: its caller, its group in the caller's tree, the options `.with()` set,
/// and its mode. Derived views hold one; cloning it is cheap.
pub struct Scope<'a, C, M = Data> {
    client: &'a C,
    group: Result<&'a ResolvedGroup, Arc<str>>,
    options: Option<Arc<CallOptions>>,
    _mode: PhantomData<M>,
}

impl<'a, C: Dispatch, M> Scope<'a, C, M> {
    /// The root of `client`'s tree.
    pub fn root(client: &'a C) -> Self {
        Self {
            client,
            group: Ok(client.api().root()),
            options: None,
            _mode: PhantomData,
        }
    }
}

impl<'a, C, M> Scope<'a, C, M> {
    /// The caller.
    pub fn client(&self) -> &'a C {
        self.client
    }

    /// The options `.with()` set, if any.
    pub fn options(&self) -> Option<&CallOptions> {
        self.options.as_deref()
    }

    /// The options `.with()` set, shared (what an [`EndpointService`](super::EndpointService)
    /// keeps).
    pub(crate) fn shared_options(&self) -> Option<Arc<CallOptions>> {
        self.options.clone()
    }

    /// The dotted path of the group this scope stands in.
    pub fn path(&self) -> &str {
        match &self.group {
            Ok(group) => group.path(),
            Err(missing) => missing,
        }
    }

    /// The nested group `name`. A group the caller's tree lacks (a proxy caller whose routes
    /// leave it out) makes every call below it fail with `ENDPOINT_NOT_IN_ROUTES`.
    pub fn group(&self, name: &str) -> Self {
        let group = match &self.group {
            Ok(group) => group.group(name).ok_or_else(|| join(group.path(), name)),
            Err(missing) => Err(join(missing, name)),
        };
        Self {
            client: self.client,
            group,
            options: self.options.clone(),
            _mode: PhantomData,
        }
    }

    /// The same scope with `options` merged over the current ones.
    pub fn with(&self, options: CallOptions) -> Self {
        let options = match &self.options {
            Some(current) => current.merged(&options),
            None => options,
        };
        Self {
            options: Some(Arc::new(options)),
            ..self.clone()
        }
    }

    /// The same scope resolving to whole responses.
    pub fn raw(&self) -> Scope<'a, C, Raw> {
        self.retype()
    }

    /// The same scope in the default mode (streams and channels have no raw form).
    pub fn erase(&self) -> Scope<'a, C, Data> {
        self.retype()
    }

    fn retype<M2>(&self) -> Scope<'a, C, M2> {
        Scope {
            client: self.client,
            group: self.group.clone(),
            options: self.options.clone(),
            _mode: PhantomData,
        }
    }

    /// The endpoint `name` of this scope's group.
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` when the caller's tree lacks it.
    pub fn endpoint(&self, name: &str) -> Result<&'a Arc<ResolvedEndpoint>, ConfigurationError> {
        let found = match &self.group {
            Ok(group) => group.endpoint(name),
            Err(_) => None,
        };
        found.ok_or_else(|| {
            let path = join(self.path(), name);
            ConfigurationError::new(
                ErrorCode::EndpointNotInRoutes,
                format!(
                    "`{path}` is not an endpoint this caller can reach: a proxy caller reaches \
                     what its routes name; mark it `.expose(true)` (`expose = true` in a config \
                     file) and write the routes again"
                ),
            )
            .at(&*path)
        })
    }
}

fn join(parent: &str, name: &str) -> Arc<str> {
    if parent.is_empty() {
        name.into()
    } else {
        format!("{parent}.{name}").into()
    }
}

impl<C, M> Clone for Scope<'_, C, M> {
    fn clone(&self) -> Self {
        Self {
            client: self.client,
            group: self.group.clone(),
            options: self.options.clone(),
            _mode: PhantomData,
        }
    }
}

impl<C, M> fmt::Debug for Scope<'_, C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("path", &self.path())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// A field type that is an endpoint: it says what a call takes and gives.
///
/// Implemented by [`Http`](super::Http), [`Stream`](super::Stream) and
/// [`Channel`](super::Channel); the derived views call it.
pub trait Endpoint {
    /// The variables a call takes.
    type Vars;
    /// What a call gives: an HTTP endpoint's body, a stream's events' data, a channel's
    /// messages.
    type Response;
    /// The typed call.
    type Call<'a, C: Dispatch + 'a, M: Mode>;
    /// Makes the call `name` in `scope`.
    fn call<'a, C: Dispatch + 'a, M: Mode>(
        scope: &Scope<'a, C, M>,
        name: &'static str,
        vars: Self::Vars,
    ) -> Self::Call<'a, C, M>;
}

/// The variables an endpoint's calls take, read off its field type.
///
/// ```
/// use courier::typed::{Http, InferResponse, InferVariables, Mutation, Stream};
/// # #[derive(serde::Serialize, serde::Deserialize)] struct User;
/// # #[derive(serde::Serialize)] struct NewUser;
/// # #[derive(serde::Serialize, serde::Deserialize)] struct Tick;
/// type Create = Http<User, NewUser, Mutation>;
/// fn create(variables: InferVariables<Create>) -> InferResponse<Create> {
///     let NewUser = variables;
///     User
/// }
/// let Tick: InferResponse<Stream<Tick, u64>> = Tick;
/// let every: InferVariables<Stream<Tick, u64>> = 5_u64;
/// # let _ = (create(NewUser), every);
/// ```
pub type InferVariables<E> = <E as Endpoint>::Vars;

/// What an endpoint's calls give, read off its field type: an HTTP endpoint's response body, a
/// stream's event data, a channel's message. See [`InferVariables`].
pub type InferResponse<E> = <E as Endpoint>::Response;

/// A typed HTTP call: `.await` it (it is [`IntoFuture`]) for the body, or for the whole
/// response in raw mode.
#[must_use = "a call does nothing until it is awaited"]
pub struct HttpCall<'a, C, M, R, V> {
    scope: Scope<'a, C, M>,
    name: &'static str,
    variables: V,
    _response: PhantomData<fn() -> R>,
}

impl<'a, C, M, R, V> HttpCall<'a, C, M, R, V> {
    pub(crate) fn new(scope: Scope<'a, C, M>, name: &'static str, variables: V) -> Self {
        Self {
            scope,
            name,
            variables,
            _response: PhantomData,
        }
    }

    /// The variables.
    pub fn variables(&self) -> &V {
        &self.variables
    }

    /// The endpoint's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl<'a, C, M, R, V> IntoFuture for HttpCall<'a, C, M, R, V>
where
    C: Dispatch + 'a,
    M: Mode,
    R: FromResponse,
    V: IntoVariables + Send + 'a,
{
    type Output = Result<M::Output<R>, C::Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let endpoint = self.scope.endpoint(self.name)?;
            let request = HttpCallRequest::new(endpoint, self.variables, self.scope.options());
            let response = self.scope.client().http::<R, V>(request).await?;
            Ok(M::finish(response))
        })
    }
}

impl<C, M, R, V: fmt::Debug> fmt::Debug for HttpCall<'_, C, M, R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpCall")
            .field("path", &join(self.scope.path(), self.name))
            .field("variables", &self.variables)
            .finish()
    }
}

/// A typed subscription to a stream, events of type `R`. The stream client opens it.
#[must_use = "a subscription does nothing until it is opened"]
pub struct StreamCall<'a, C, R, V> {
    scope: Scope<'a, C>,
    name: &'static str,
    variables: V,
    _event: PhantomData<fn() -> R>,
}

impl<'a, C, R, V> StreamCall<'a, C, R, V> {
    pub(crate) fn new(scope: Scope<'a, C>, name: &'static str, variables: V) -> Self {
        Self {
            scope,
            name,
            variables,
            _event: PhantomData,
        }
    }

    /// The scope the stream was reached through.
    pub fn scope(&self) -> &Scope<'a, C> {
        &self.scope
    }

    /// The stream's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The variables.
    pub fn variables(&self) -> &V {
        &self.variables
    }

    /// The scope, name and variables, to open the subscription with.
    pub fn into_parts(self) -> (Scope<'a, C>, &'static str, V) {
        (self.scope, self.name, self.variables)
    }
}

/// Awaiting a stream call opens the subscription: the events, typed, as they come.
impl<'a, C, R, V> IntoFuture for StreamCall<'a, C, R, V>
where
    C: StreamDispatch + 'a,
    R: serde::de::DeserializeOwned + Send + 'static,
    V: IntoVariables + Send + 'a,
{
    type Output = Result<C::Events<R>, C::Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let endpoint = self.scope.endpoint(self.name)?;
            let request = HttpCallRequest::new(endpoint, self.variables, self.scope.options());
            self.scope.client().subscribe::<R, V>(request).await
        })
    }
}

/// A typed connection request to a channel: messages of type `R`, sending `S`. The channel
/// client opens it.
#[must_use = "a connection does nothing until it is opened"]
pub struct ChannelCall<'a, C, R, V, S> {
    scope: Scope<'a, C>,
    name: &'static str,
    variables: V,
    _types: PhantomData<fn(S) -> R>,
}

impl<'a, C, R, V, S> ChannelCall<'a, C, R, V, S> {
    pub(crate) fn new(scope: Scope<'a, C>, name: &'static str, variables: V) -> Self {
        Self {
            scope,
            name,
            variables,
            _types: PhantomData,
        }
    }

    /// The scope the channel was reached through.
    pub fn scope(&self) -> &Scope<'a, C> {
        &self.scope
    }

    /// The channel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The variables.
    pub fn variables(&self) -> &V {
        &self.variables
    }

    /// The scope, name and variables, to open the connection with.
    pub fn into_parts(self) -> (Scope<'a, C>, &'static str, V) {
        (self.scope, self.name, self.variables)
    }
}

/// Awaiting a channel call opens the connection: the messages, typed, as they come, and a
/// sender once the channel has `.send()`.
impl<'a, C, R, V, S> IntoFuture for ChannelCall<'a, C, R, V, S>
where
    C: ChannelDispatch + 'a,
    R: serde::de::DeserializeOwned + Send + 'static,
    S: Send + 'static,
    V: IntoVariables + Send + 'a,
{
    type Output = Result<C::Connection<R, S>, C::Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let endpoint = self.scope.endpoint(self.name)?;
            let request = HttpCallRequest::new(endpoint, self.variables, self.scope.options());
            self.scope.client().connect::<R, S, V>(request).await
        })
    }
}
