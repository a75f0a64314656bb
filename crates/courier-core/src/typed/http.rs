use super::view::{Endpoint, HttpCall, Mode, Scope};
use crate::body::BoxError;
use crate::options::ResponseType;
use crate::tree::endpoint::{HttpEndpoint, WireCall};
use crate::tree::meta::Kind;
use crate::{Dispatch, GroupDef};
use serde::de::DeserializeOwned;
use std::fmt;
use std::marker::PhantomData;

/// The kind marker of a read: `Http<R, V, Query>` (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct Query;

/// The kind marker of a write: `Http<R, V, Mutation>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mutation;

/// A kind marker: [`Query`] or [`Mutation`].
pub trait HttpKind: Send + Sync + 'static {
    /// The runtime kind.
    const KIND: Kind;
}

impl HttpKind for Query {
    const KIND: Kind = Kind::Query;
}

impl HttpKind for Mutation {
    const KIND: Kind = Kind::Mutation;
}

/// A typed HTTP endpoint: responds with `R`, takes variables `V` (none when `()`), reads or
/// writes by `K`.
///
/// Built from the [`endpoint()`] head; the verb fixes the kind, so a `get` cannot stand in a
/// `Mutation` field and a `post` cannot stand in a `Query` one unless declared [`Http::reads`].
pub struct Http<R, V = (), K = Query> {
    def: HttpEndpoint,
    _types: PhantomData<fn(V) -> (R, K)>,
}

impl<R, V, K> Http<R, V, K> {
    /// Wraps a runtime descriptor. The kind of the descriptor should match `K`; the typed heads
    /// guarantee it, a hand-wrapped descriptor keeps its own.
    pub fn from_def(def: HttpEndpoint) -> Self {
        Self {
            def,
            _types: PhantomData,
        }
    }

    /// The runtime descriptor.
    pub fn def(&self) -> &HttpEndpoint {
        &self.def
    }

    /// The runtime descriptor, owned.
    pub fn into_def(self) -> HttpEndpoint {
        self.def
    }

    fn map(self, f: impl FnOnce(HttpEndpoint) -> HttpEndpoint) -> Self {
        Self::from_def(f(self.def))
    }

    fn retype<R2, V2, K2>(self) -> Http<R2, V2, K2> {
        Http::from_def(self.def)
    }

    /// Declares the variables' type; a field's type usually declares it instead.
    pub fn variables<T>(self) -> Http<R, T, K> {
        self.retype()
    }

    /// Declares the response type.
    pub fn response<T>(self) -> Http<T, V, K> {
        self.retype()
    }

    /// See [`HttpEndpoint::sensitive_variables`].
    #[must_use]
    pub fn sensitive_variables(self) -> Self {
        self.map(HttpEndpoint::sensitive_variables)
    }

    /// See [`HttpEndpoint::stream_response`].
    #[must_use]
    pub fn stream_response(self) -> Self {
        self.map(HttpEndpoint::stream_response)
    }

    /// See [`HttpEndpoint::response_type`].
    #[must_use]
    pub fn response_type(self, response_type: ResponseType) -> Self {
        self.map(|d| d.response_type(response_type))
    }
}

impl<R, V> Http<R, V, Mutation> {
    /// Declares a write-verb endpoint a read, e.g. a search sent as POST.
    pub fn reads(self) -> Http<R, V, Query> {
        Http::from_def(self.def.reads())
    }
}

crate::tree::endpoint::common_builders!([R, V, K] Http<R, V, K>; this => this.def.options);

impl<R, V, K> Clone for Http<R, V, K> {
    fn clone(&self) -> Self {
        Self::from_def(self.def.clone())
    }
}

impl<R, V, K> fmt::Debug for Http<R, V, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Http").field(&self.def).finish()
    }
}

impl<R, V, K> super::group::Member for Http<R, V, K> {
    fn add_to(self, name: &str, group: GroupDef) -> GroupDef {
        group.endpoint(name, self.def)
    }
}

impl<R, V, K> Endpoint for Http<R, V, K>
where
    R: crate::FromResponse,
    V: crate::IntoVariables + Send,
{
    type Vars = V;
    type Response = R;
    type Call<'a, C: Dispatch + 'a, M: Mode> = HttpCall<'a, C, M, R, V>;

    fn call<'a, C: Dispatch + 'a, M: Mode>(
        scope: &Scope<'a, C, M>,
        name: &'static str,
        vars: V,
    ) -> HttpCall<'a, C, M, R, V> {
        HttpCall::new(scope.clone(), name, vars)
    }
}

/// The head of HTTP endpoints: a verb, or `.via()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointHead;

/// The head of HTTP endpoints; types come from the field the endpoint is assigned to.
///
/// ```
/// use courier::typed::{endpoint, Http, Mutation};
/// # #[derive(serde::Deserialize)] struct User;
/// # #[derive(serde::Serialize)] struct NewUser;
/// # #[derive(serde::Serialize)] struct UserId(u64);
/// let get: Http<User, UserId> = endpoint().get("/:id");
/// let create: Http<User, NewUser, Mutation> = endpoint().post("");
/// let search: Http<Vec<User>, NewUser> = endpoint().post("/search").reads();
/// # let _ = (get, create, search);
/// ```
pub fn endpoint() -> EndpointHead {
    EndpointHead
}

impl EndpointHead {
    /// A GET read.
    pub fn get<R, V>(self, path: impl Into<String>) -> Http<R, V, Query> {
        Http::from_def(HttpEndpoint::get(path))
    }

    /// A POST write.
    pub fn post<R, V>(self, path: impl Into<String>) -> Http<R, V, Mutation> {
        Http::from_def(HttpEndpoint::post(path))
    }

    /// A PUT write.
    pub fn put<R, V>(self, path: impl Into<String>) -> Http<R, V, Mutation> {
        Http::from_def(HttpEndpoint::put(path))
    }

    /// A PATCH write.
    pub fn patch<R, V>(self, path: impl Into<String>) -> Http<R, V, Mutation> {
        Http::from_def(HttpEndpoint::patch(path))
    }

    /// A DELETE write.
    pub fn delete<R, V>(self, path: impl Into<String>) -> Http<R, V, Mutation> {
        Http::from_def(HttpEndpoint::delete(path))
    }

    /// [`EndpointHead::delete`](Self::delete) under the name JavaScript code gives it, `delete`
    /// being a JavaScript keyword; kept as an alias.
    pub fn del<R, V>(self, path: impl Into<String>) -> Http<R, V, Mutation> {
        self.delete(path)
    }

    /// An address computed from the typed variables at request time; the field's kind marker
    /// decides read or write. The closure gets the variables as the caller gave them.
    pub fn via<R, V, K, F>(self, f: F) -> Http<R, V, K>
    where
        V: DeserializeOwned,
        K: HttpKind,
        F: Fn(V) -> Result<WireCall, BoxError> + Send + Sync + 'static,
    {
        let def = HttpEndpoint::via(move |value| f(serde_json::from_value(value)?));
        let def = match K::KIND {
            Kind::Query => def.reads(),
            Kind::Mutation => def,
        };
        Http::from_def(def)
    }
}
