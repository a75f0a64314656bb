//! A mock of an API's upstream for tests: calls answered by typed endpoint with typed values,
//! and what was called, with which variables, read back. No server, no socket.
//!
//! A [`Mock`] is built from the same [`Api`] the app calls. A test says what each endpoint
//! answers — [`Mock::on`] picks the endpoint through the typed views, as a call would — and
//! gives the app a caller whose calls the mock answers: [`Mock::caller`], or any client built
//! with [`ClientBuilder::mock`](crate::ClientBuilder::mock),
//! [`CallerBuilder::mock`](crate::CallerBuilder::mock) or
//! [`ProxyCallerBuilder::mock`](crate::proxy::ProxyCallerBuilder::mock).
//!
//! ```
//! use courier::mock::{Answer, Mock};
//! use courier::typed::{endpoint, Group, Http, Mutation};
//! use courier::{Api, ApiDef};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! pub struct User { pub id: u64, pub name: String }
//! #[derive(Serialize)]
//! pub struct UserId(pub u64);
//!
//! #[derive(courier::Group)]
//! pub struct Users { pub get: Http<User, UserId> }
//! #[derive(courier::Api)]
//! pub struct Example { pub users: Group<Users> }
//!
//! fn api() -> Api<Example> {
//!     let users = Group::new(Users { get: endpoint().get("/:id") }).prefix("/users");
//!     ApiDef::builder().base_url("http://users.internal").build_typed(Example { users }).unwrap()
//! }
//!
//! # async fn demo() -> Result<(), courier::Error> {
//! let mock = Mock::new(api())?;
//! let ada = User { id: 7, name: "Ada".into() };
//! mock.on(|api| api.users().services().get()).returns(&ada);
//! mock.on(|api| api.users().services().get()).with(&UserId(8)).fails(404);
//!
//! let caller = mock.caller();          // what the app under test is given
//! assert_eq!(caller.users().get(UserId(7)).await?, ada);
//! let missing = caller.users().get(UserId(8)).await.unwrap_err();
//! assert_eq!(missing.status_code(), 404);
//!
//! mock.assert_called_with(|api| api.users().services().get(), &UserId(7));
//! assert_eq!(mock.calls(|api| api.users().services().get()).len(), 2);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
//!
//! A tree built at runtime (an `ApiDef` without Rust types, or a config file's) is mocked with
//! [`Mock::untyped`], its endpoints named by dotted path: [`Mock::on_path`],
//! [`Mock::calls_at`], [`Mock::push_at`], [`Mock::received_at`].
//!
//! # Where the mock sits
//!
//! The mock is the transport: a call goes down the client's whole stack — its middleware, the
//! session and forwarded headers, the cache, coalescing, cancel-previous, retry and timeouts —
//! and the mock answers what reaches the bottom, as an upstream would. So:
//!
//! - two reads that share a call in flight are one call to the mock; a call the cache answers is
//!   none;
//! - a retried call is as many calls as attempts: `answers([Answer::status(503),
//!   Answer::json(&user)])` is retried once and succeeds, and [`Mock::calls`] shows both;
//! - an answer's [`delay`](Answer::delay) meets the call's timeout, or a newer call that
//!   cancels it, as a slow upstream's would;
//! - the request recorded ([`Recorded`]) is what the upstream would be sent: the session's
//!   cookies, forwarded headers, an `Idempotency-Key`.
//!
//! A proxy route (`courier::server::Proxy`) tested without an upstream is given the mock's
//! client: `Proxy::new().source_client("users", mock.client())`. Its route then runs
//! every check on the browser's request, and the mock answers the calls it lets through.
//!
//! # Which answer
//!
//! The newest [`Mock::on`] that matches a call answers it: one with [`When::with`] matches
//! those variables only (compared as JSON), one without matches any. A sequence
//! ([`When::answers`]) answers the calls it matches in turn, and its last answer the calls after
//! it. A call nothing matches is answered `501 Not Implemented` with a message naming the
//! endpoint and the variables, and listed by [`Mock::unanswered`].
//!
//! # Streams and channels
//!
//! [`When::events`] opens a stream with events; [`When::messages`] opens a channel with
//! messages, over a WebSocket connection in memory that the channel client upgrades as it
//! would a socket. Both stay open, and [`Mock::push`] sends each open one more.
//! [`Mock::received`] is what the channel's clients sent. A channel the API implements in
//! process (`.implement()`) is not the mock's: it runs as it does in the app.

mod answer;
mod socket;
mod state;

pub use answer::Answer;

use crate::caller::{Caller, Client};
use crate::error::Error;
use bytes::Bytes;
use courier_core::typed::{
    ApiSpec, Channel, Data, Endpoint, EndpointService, Http, Mode, Scope, Stream,
};
use courier_core::{Api, ApiBuilder, ApiDef, ConfigurationError, Dispatch, HttpService};
use http::{HeaderMap, Method, Uri};
use serde::Serialize;
use serde_json::Value;
use state::{Answering, Rule, State};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// A mock of `A`'s upstream: what its endpoints answer, and the calls they were sent. Cheap to
/// clone: clones share what they are told and what they saw. See the [module docs](self).
pub struct Mock<A: ApiSpec> {
    state: Arc<State>,
    /// The client the mock answers, under [`Mock::caller`].
    client: Client,
    _api: PhantomData<fn() -> A>,
}

impl<A: ApiSpec> Mock<A> {
    /// A mock of `api`'s upstream, answering nothing yet.
    ///
    /// # Errors
    ///
    /// As [`ClientBuilder::build`](crate::ClientBuilder::build): an endpoint without an
    /// address (a definition built for its routes only).
    pub fn new(api: Api<A>) -> Result<Self, Error> {
        Self::of(api.into_def())
    }

    fn of(api: ApiDef) -> Result<Self, Error> {
        let state = Arc::new(State::default());
        let service = HttpService::new(Answering(Arc::clone(&state)));
        let client = Client::builder(api).answered_by(service).build()?;
        Ok(Self {
            state,
            client,
            _api: PhantomData,
        })
    }

    /// A caller of the API whose calls the mock answers, with the default settings (what
    /// [`Caller::new`] builds). For settings of the app's own (its layers, a retry policy),
    /// build it with [`CallerBuilder::mock`](crate::CallerBuilder::mock). Every clone shares
    /// one client: its cache and its calls in flight.
    pub fn caller(&self) -> Caller<A> {
        Caller::over(self.client.clone())
    }

    /// The untyped client under [`Mock::caller`]: what a `Proxy` is given
    /// (`Proxy::source_client`), or a handler that calls by dotted path.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The mock as the transport a client's builder puts under its layers.
    pub(crate) fn service(&self) -> HttpService {
        HttpService::new(Answering(Arc::clone(&self.state)))
    }

    /// What the endpoint `pick` names answers: `pick` is given the typed views and names the
    /// endpoint through their services (`|api| api.users().services().get()`). The answer is
    /// given by [`When`]'s last method.
    ///
    /// # Panics
    ///
    /// When `pick` fails: the views reach no such endpoint.
    #[track_caller]
    pub fn on<E, M>(&self, pick: impl FnOnce(&Caller<A>) -> Picked<E, M>) -> When<'_, E> {
        When {
            state: &self.state,
            path: self.path_of(pick),
            variables: None,
            delay: None,
            _endpoint: PhantomData,
        }
    }

    /// The calls of the endpoint `pick` names, in the order the mock was sent them: each
    /// attempt of a retried call, none for a read that shared another's or that the cache
    /// answered.
    ///
    /// # Panics
    ///
    /// When `pick` fails.
    #[track_caller]
    pub fn calls<E, M>(&self, pick: impl FnOnce(&Caller<A>) -> Picked<E, M>) -> Vec<Recorded> {
        self.state.calls(Some(&self.path_of(pick)))
    }

    /// Every call the mock was sent, in order.
    pub fn all_calls(&self) -> Vec<Recorded> {
        self.state.calls(None)
    }

    /// The calls nothing answered (each was answered `501`).
    pub fn unanswered(&self) -> Vec<Recorded> {
        let mut calls = self.state.calls(None);
        calls.retain(|call| !call.answered);
        calls
    }

    /// Checks that the endpoint `pick` names was called with `variables` (compared as JSON).
    ///
    /// # Panics
    ///
    /// When it was not: the message lists the variables it was called with.
    #[track_caller]
    pub fn assert_called_with<E, M>(
        &self,
        pick: impl FnOnce(&Caller<A>) -> Picked<E, M>,
        variables: &E::Vars,
    ) where
        E: Endpoint,
        E::Vars: Serialize,
    {
        let path = self.path_of(pick);
        let expected = to_json(variables);
        let calls = self.state.calls(Some(&path));
        if !calls.iter().any(|call| call.variables == expected) {
            let seen: Vec<String> = calls.iter().map(|c| c.variables.to_string()).collect();
            panic!(
                "courier::mock: `{path}` was not called with {expected}; it was called {} \
                 time(s){}{}",
                seen.len(),
                if seen.is_empty() { "" } else { ", with: " },
                seen.join(", "),
            );
        }
    }

    /// Sends `message` to every open stream (an event) or channel (a message) of the endpoint
    /// `pick` names; how many it reached.
    ///
    /// # Panics
    ///
    /// When `pick` fails, or `message` does not serialize to JSON.
    #[track_caller]
    pub fn push<E, M>(
        &self,
        pick: impl FnOnce(&Caller<A>) -> Picked<E, M>,
        message: &E::Response,
    ) -> usize
    where
        E: Endpoint,
        E::Response: Serialize,
    {
        let path = self.path_of(pick);
        self.state.push(&path, answer::text(message))
    }

    /// The messages the clients of the channel `pick` names sent it, as JSON, in order.
    ///
    /// # Panics
    ///
    /// When `pick` fails.
    #[track_caller]
    pub fn received<E, M>(&self, pick: impl FnOnce(&Caller<A>) -> Picked<E, M>) -> Vec<Value> {
        self.state.received(&self.path_of(pick))
    }

    /// What the endpoint at dotted `path` answers, untyped: its variables and values as JSON.
    /// What [`Mock::on`] is for a runtime tree ([`Mock::untyped`]), or a table of endpoints.
    ///
    /// ```
    /// use courier::mock::Mock;
    /// use courier::{ApiDef, GroupDef, HttpEndpoint};
    /// use serde_json::json;
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let api = ApiDef::builder()
    ///     .base_url("http://users.internal")
    ///     .group("users", GroupDef::new().prefix("/users").endpoint("get", HttpEndpoint::get("/:id")))
    ///     .build()?;
    /// let mock = Mock::untyped(api)?;
    /// mock.on_path("users.get").with(&json!({ "id": 7 })).returns(&json!({ "name": "Ada" }));
    ///
    /// let user = mock.client().call("users.get", json!({ "id": 7 })).await?;
    /// assert_eq!(user.data["name"], "Ada");
    /// assert_eq!(mock.calls_at("users.get").len(), 1);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// When the API has no endpoint at `path`.
    #[track_caller]
    pub fn on_path(&self, path: &str) -> When<'_, Http<Value, Value>> {
        When {
            state: &self.state,
            path: self.path_at(path),
            variables: None,
            delay: None,
            _endpoint: PhantomData,
        }
    }

    /// The calls of the endpoint at dotted `path`; see [`Mock::calls`].
    ///
    /// # Panics
    ///
    /// When the API has no endpoint at `path`.
    #[track_caller]
    pub fn calls_at(&self, path: &str) -> Vec<Recorded> {
        self.state.calls(Some(&self.path_at(path)))
    }

    /// Sends `message` to every open stream or channel of the endpoint at dotted `path`; see
    /// [`Mock::push`].
    ///
    /// # Panics
    ///
    /// When the API has no endpoint at `path`, or `message` does not serialize to JSON.
    #[track_caller]
    pub fn push_at<T: Serialize + ?Sized>(&self, path: &str, message: &T) -> usize {
        self.state.push(&self.path_at(path), answer::text(message))
    }

    /// What the clients of the channel at dotted `path` sent it; see [`Mock::received`].
    ///
    /// # Panics
    ///
    /// When the API has no endpoint at `path`.
    #[track_caller]
    pub fn received_at(&self, path: &str) -> Vec<Value> {
        self.state.received(&self.path_at(path))
    }

    /// Forgets every answer, every call and every message received. Open streams and channels
    /// stay open.
    pub fn reset(&self) {
        self.state.reset();
    }

    #[track_caller]
    fn path_of<E, M>(&self, pick: impl FnOnce(&Caller<A>) -> Picked<E, M>) -> Arc<str> {
        match pick(&self.caller()) {
            Ok(service) => Arc::from(service.path()),
            Err(e) => panic!("courier::mock: {e}"),
        }
    }

    #[track_caller]
    fn path_at(&self, path: &str) -> Arc<str> {
        match self.client.api().endpoint(path) {
            Some(endpoint) => Arc::from(endpoint.path()),
            None => panic!("courier::mock: `{path}` is not an endpoint of this API"),
        }
    }
}

impl Mock<Untyped> {
    /// A mock of the upstream of a runtime tree (an `ApiDef` built without Rust types, or read
    /// from a config file): its endpoints are named by dotted path ([`Mock::on_path`]), and
    /// [`Mock::client`] calls them by path (`client.call("users.get", json!({ "id": 7 }))`).
    ///
    /// # Errors
    ///
    /// As [`Mock::new`].
    pub fn untyped(api: ApiDef) -> Result<Self, Error> {
        Self::of(api)
    }
}

/// The shape of a mock of a runtime tree ([`Mock::untyped`]): no typed views; its caller derefs
/// to the [`Client`], which calls by dotted path.
#[derive(Debug)]
pub enum Untyped {}

impl ApiSpec for Untyped {
    type Client<C: Dispatch> = C;
    type View<'a, C: Dispatch + 'a, M: Mode> = Scope<'a, C, M>;

    fn register(self, _api: ApiBuilder) -> ApiBuilder {
        match self {}
    }
}

impl<A: ApiSpec> Clone for Mock<A> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            client: self.client.clone(),
            _api: PhantomData,
        }
    }
}

impl<A: ApiSpec> fmt::Debug for Mock<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mock")
            .field("calls", &self.state.calls(None).len())
            .finish_non_exhaustive()
    }
}

/// What a test's `pick` returns: the service of the endpoint it names, through the typed views
/// (`|api| api.users().services().get()`).
pub type Picked<E, M = Data> = Result<EndpointService<Client, E, M>, ConfigurationError>;

/// What one endpoint answers, being said: narrowed to some variables ([`When::with`]), delayed
/// ([`When::delay`]), then given with one of the answering methods, which are typed by the
/// endpoint's kind: [`returns`](When::returns) for an HTTP endpoint's value,
/// [`events`](When::events) for a stream's, [`messages`](When::messages) for a channel's.
#[must_use = "nothing is answered until an answering method (`returns`, `answers`, …) is called"]
pub struct When<'m, E> {
    state: &'m State,
    path: Arc<str>,
    variables: Option<Value>,
    delay: Option<Duration>,
    _endpoint: PhantomData<fn() -> E>,
}

impl<E: Endpoint> When<'_, E> {
    /// Answers only calls with these variables (compared as JSON).
    ///
    /// # Panics
    ///
    /// When `variables` do not serialize to JSON.
    #[track_caller]
    pub fn with(mut self, variables: &E::Vars) -> Self
    where
        E::Vars: Serialize,
    {
        self.variables = Some(to_json(variables));
        self
    }

    /// Answers each call after `delay` (unless the answer has a delay of its own).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Answers the calls in turn with `answers`, the last one answering every call after.
    ///
    /// # Panics
    ///
    /// When `answers` is empty.
    #[track_caller]
    pub fn answers(self, answers: impl IntoIterator<Item = Answer>) {
        let delay = self.delay;
        let answers: Vec<Answer> = answers
            .into_iter()
            .map(|mut answer| {
                answer.delay = answer.delay.or(delay);
                answer
            })
            .collect();
        assert!(
            !answers.is_empty(),
            "courier::mock: `{}` was given no answers",
            self.path
        );
        self.state.add(Rule {
            path: self.path,
            variables: self.variables,
            answers,
            next: 0,
        });
    }

    /// Answers every call with `answer`.
    pub fn answer(self, answer: Answer) {
        self.answers([answer]);
    }

    /// Answers every call with `status` and no body: with 400 or more, the call fails with an
    /// [`HttpError`](crate::HttpError) of that status.
    ///
    /// # Panics
    ///
    /// When `status` is not between 100 and 999.
    #[track_caller]
    pub fn fails(self, status: u16) {
        self.answers([Answer::status(status)]);
    }
}

impl<R: Serialize, V, K> When<'_, Http<R, V, K>>
where
    Http<R, V, K>: Endpoint,
{
    /// Answers every call with `value`: `200 OK`, its JSON as the body.
    ///
    /// # Panics
    ///
    /// When `value` does not serialize to JSON.
    #[track_caller]
    pub fn returns(self, value: &R) {
        self.answers([Answer::json(value)]);
    }
}

impl<R: Serialize, V> When<'_, Stream<R, V>>
where
    Stream<R, V>: Endpoint,
{
    /// Opens each subscription with `events`, then keeps it open for what [`Mock::push`]
    /// sends.
    ///
    /// # Panics
    ///
    /// When an event does not serialize to JSON.
    #[track_caller]
    pub fn events(self, events: impl IntoIterator<Item = R>) {
        self.answers([Answer::events(events)]);
    }
}

impl<R: Serialize, V, S> When<'_, Channel<R, V, S>>
where
    Channel<R, V, S>: Endpoint,
{
    /// Opens each connection with `messages`, then keeps it open for what [`Mock::push`]
    /// sends; what the client sends is [`Mock::received`].
    ///
    /// # Panics
    ///
    /// When a message does not serialize to JSON.
    #[track_caller]
    pub fn messages(self, messages: impl IntoIterator<Item = R>) {
        self.answers([Answer::messages(messages)]);
    }
}

impl<E> fmt::Debug for When<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("When")
            .field("path", &self.path)
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

/// One call as the mock was sent it: what an upstream would have received.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Recorded {
    /// The endpoint's dotted path.
    pub endpoint: String,
    /// The call's variables, as JSON (`null` for none; an upload's form as an object of its text
    /// fields and its files' names).
    pub variables: Value,
    /// The request's method.
    pub method: Method,
    /// The request's address.
    pub uri: Uri,
    /// The request's headers, as the layers left them.
    pub headers: HeaderMap,
    /// The request's body.
    pub body: Bytes,
    /// Whether the mock had an answer for it.
    pub answered: bool,
}

#[track_caller]
fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value)
        .unwrap_or_else(|e| panic!("courier::mock: the variables do not serialize: {e}"))
}
