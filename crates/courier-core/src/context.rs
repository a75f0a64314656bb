//! The served-request context: the request a server is serving while a call is made.
//!
//! A call made while a server serves a user carries that user's session and forwarded headers.
//! The server puts the served request in scope around its handler's future with
//! [`ServedRequest::scope`]; layers read it with [`ServedRequest::current`]. The scope is a
//! `tokio::task_local!`: a task spawned from the handler does not inherit it, so carry it over
//! with [`ServedRequest::scope`] again:
//!
//! ```
//! use courier::layers::context::ServedRequest;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (parts, ()) = http::Request::get("/profile").header("cookie", "sid=abc").body(()).unwrap().into_parts();
//! let served = ServedRequest::new(parts, None);
//! served.scope(async {
//!     assert!(ServedRequest::is_serving());
//!     // Spawned work takes the context with it explicitly.
//!     let context = ServedRequest::current().unwrap();
//!     tokio::spawn(context.scope(async {
//!         assert_eq!(ServedRequest::current().unwrap().headers()["cookie"], "sid=abc");
//!     }))
//!     .await
//!     .unwrap();
//! })
//! .await;
//! assert!(!ServedRequest::is_serving());
//! # }
//! ```

use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::task::futures::TaskLocalFuture;

tokio::task_local! {
    static SERVED: ServedRequest;
}

/// The request a server is serving: its method, address, headers and the peer's address.
/// Cloning is cheap (an `Arc` inside).
#[derive(Clone, Debug)]
pub struct ServedRequest {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    parts: Parts,
    peer: Option<SocketAddr>,
    /// Headers calls made while serving add to the served response (the session's
    /// `set-cookie` pass-back); the server's context layer takes them when the handler is done.
    response_headers: Mutex<HeaderMap>,
    /// Headers a proxy relayed from this request as the call's own (see
    /// [`ServedRequest::relaying`]).
    relayed: Vec<HeaderName>,
    /// The served request is answered by a call's own response ([`ServedRequest::answered_by_call`]).
    answered_by_call: bool,
}

/// Headers a call's layers add for the served response (the session's `set-cookie` pass-back),
/// carried in the extensions of that call's own response when the served request is answered
/// by it ([`ServedRequest::answered_by_call`], a proxy): the response brings them back, and the
/// proxy adds them to what it answers.
#[derive(Clone, Debug, Default)]
pub struct ResponseHeaders(pub HeaderMap);

impl ServedRequest {
    /// The served request's head, and the peer's address when the server knows it.
    pub fn new(parts: Parts, peer: Option<SocketAddr>) -> Self {
        Self {
            inner: Arc::new(Inner {
                parts,
                peer,
                response_headers: Mutex::new(HeaderMap::new()),
                relayed: Vec::new(),
                answered_by_call: false,
            }),
        }
    }

    /// Marks the served request as answered by the response of the one call made for it, as a
    /// proxy answers: headers the call's layers add for the served response
    /// ([`add_response_header`](Self::add_response_header)) come back in that response's
    /// extensions ([`ResponseHeaders`]) rather than being collected here for a server to take.
    #[must_use]
    pub fn answered_by_call(mut self) -> Self {
        self.inner_mut().answered_by_call = true;
        self
    }

    /// Marks `names` as relayed: a call made while serving this request carries this request's
    /// copies of them (a proxy's allow-listed headers) under its own ([`relay_into`]). A header
    /// that the source, the endpoint's `.via()`, the call or a middleware sets is sent instead
    /// and the browser's copy is not, so a layer that keeps a header it finds already set (such
    /// as `courier_layers::auth::AuthLayer`) replaces a relayed one instead: see
    /// [`ServedRequest::is_relayed`].
    ///
    /// [`relay_into`]: ServedRequest::relay_into
    ///
    /// ```
    /// use courier::layers::context::ServedRequest;
    /// use http::header::AUTHORIZATION;
    ///
    /// let (parts, ()) = http::Request::get("/api/request").body(()).unwrap().into_parts();
    /// let served = ServedRequest::new(parts, None).relaying([AUTHORIZATION]);
    /// let call = http::Request::get("/users/7").extension(served).body(()).unwrap();
    /// assert!(ServedRequest::is_relayed(&call, &AUTHORIZATION));
    /// ```
    #[must_use]
    pub fn relaying<I>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = HeaderName>,
    {
        let inner = self.inner_mut();
        for name in names {
            if !inner.relayed.contains(&name) {
                inner.relayed.push(name);
            }
        }
        self
    }

    /// This request's own state to change: in place when it is not shared yet (as when a proxy
    /// marks the request it just made), which spares copying its head — that copy cost a
    /// proxied call 3,700 instructions of 87,000; else a copy of its own, which takes the
    /// response headers collected so far.
    fn inner_mut(&mut self) -> &mut Inner {
        if Arc::get_mut(&mut self.inner).is_none() {
            self.inner = Arc::new(Inner {
                parts: self.inner.parts.clone(),
                peer: self.inner.peer,
                response_headers: Mutex::new(self.take_response_headers()),
                relayed: self.inner.relayed.clone(),
                answered_by_call: self.inner.answered_by_call,
            });
        }
        Arc::get_mut(&mut self.inner).expect("a request of its own")
    }

    /// Puts the relayed headers ([`relaying`](Self::relaying)) on a call's `headers`, each of
    /// a name `headers` does not hold yet: what the definition or the call sets wins, and the
    /// browser's copy of it is not sent. A client does this as it builds a call's request, under
    /// the source's, the `.via()` closure's and the call's own headers.
    ///
    /// ```
    /// use courier::layers::context::ServedRequest;
    /// use http::header::{ACCEPT_LANGUAGE, AUTHORIZATION};
    /// use http::{HeaderMap, HeaderValue};
    ///
    /// let (parts, ()) = http::Request::get("/api/request")
    ///     .header(ACCEPT_LANGUAGE, "fr")
    ///     .header(AUTHORIZATION, "Bearer from-the-page")
    ///     .body(())
    ///     .unwrap()
    ///     .into_parts();
    /// let served = ServedRequest::new(parts, None).relaying([ACCEPT_LANGUAGE, AUTHORIZATION]);
    /// let mut call = HeaderMap::new();
    /// call.insert(AUTHORIZATION, HeaderValue::from_static("Bearer the-sources"));
    /// served.relay_into(&mut call);
    /// assert_eq!(call[ACCEPT_LANGUAGE], "fr");
    /// assert_eq!(call[AUTHORIZATION], "Bearer the-sources");
    /// ```
    pub fn relay_into(&self, headers: &mut HeaderMap) {
        for name in &self.inner.relayed {
            if headers.contains_key(name) {
                continue;
            }
            for value in self.inner.parts.headers.get_all(name) {
                headers.append(name.clone(), value.clone());
            }
        }
    }

    /// Whether `request`'s `name` header is the one relayed from the request it serves
    /// ([`ServedRequest::relaying`]): marked relayed and holding the served request's values,
    /// not a value the definition or a layer set in its place. Read from the served request
    /// `request` carries in its extensions; a call made outside a proxy has none.
    pub fn is_relayed<B>(request: &http::Request<B>, name: &HeaderName) -> bool {
        request
            .extensions()
            .get::<ServedRequest>()
            .is_some_and(|served| {
                served.inner.relayed.contains(name)
                    && request.headers().get_all(name).iter().eq(served
                        .inner
                        .parts
                        .headers
                        .get_all(name)
                        .iter())
            })
    }

    /// Runs `future` with this request in scope.
    pub fn scope<F: Future>(self, future: F) -> TaskLocalFuture<ServedRequest, F> {
        SERVED.scope(self, future)
    }

    /// Polls `stream` with this request in scope: what [`scope`](Self::scope) does for a
    /// future, for a stream whose items are produced while serving the request, such as an
    /// implemented stream's events answering a browser's subscription. Calls made while
    /// producing an item carry the request's session and forwarded headers.
    ///
    /// ```
    /// use courier::layers::context::ServedRequest;
    /// use futures_util::StreamExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let (parts, ()) = http::Request::get("/api/sse").header("x-user", "ada").body(()).unwrap().into_parts();
    /// let served = ServedRequest::new(parts, None);
    /// let users = futures_util::stream::repeat_with(|| {
    ///     ServedRequest::current().map(|served| served.parts().headers["x-user"].clone())
    /// });
    /// let mut users = served.scope_stream(users.take(2));
    /// assert_eq!(users.next().await.flatten().unwrap(), "ada");
    /// # });
    /// ```
    pub fn scope_stream<S: futures_core::Stream>(
        self,
        stream: S,
    ) -> impl futures_core::Stream<Item = S::Item> {
        // Boxed so that the closure below, and with it the returned stream, is `Unpin`.
        let mut stream = Box::pin(stream);
        futures_util::stream::poll_fn(move |cx| {
            SERVED.sync_scope(self.clone(), || stream.as_mut().poll_next(cx))
        })
    }

    /// The request in scope, if a server is serving one on this task.
    pub fn current() -> Option<Self> {
        SERVED.try_with(Clone::clone).ok()
    }

    /// The served request a request carries in its extensions (a call given one explicitly),
    /// else the one in scope on this task.
    pub fn for_request<B>(request: &http::Request<B>) -> Option<Self> {
        request
            .extensions()
            .get::<ServedRequest>()
            .cloned()
            .or_else(Self::current)
    }

    /// Whether a server is serving a request on this task.
    pub fn is_serving() -> bool {
        SERVED.try_with(|_| ()).is_ok()
    }

    /// The served request's head.
    pub fn parts(&self) -> &Parts {
        &self.inner.parts
    }

    /// Its method.
    pub fn method(&self) -> &Method {
        &self.inner.parts.method
    }

    /// Its address.
    pub fn uri(&self) -> &Uri {
        &self.inner.parts.uri
    }

    /// Its headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.inner.parts.headers
    }

    /// The peer's address.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.inner.peer
    }

    /// Adds a header to the served response, after any of the same name already added.
    pub fn append_response_header(&self, name: HeaderName, value: HeaderValue) {
        self.response_headers().append(name, value);
    }

    /// Adds a header for the served response that a call's `response` brought (the session's
    /// `set-cookie` pass-back): on `response` itself, in its [`ResponseHeaders`], when the
    /// served request is [answered by the call](Self::answered_by_call); else collected here
    /// ([`append_response_header`](Self::append_response_header)) for the server to take.
    pub fn add_response_header<B>(
        &self,
        response: &mut http::Response<B>,
        name: HeaderName,
        value: HeaderValue,
    ) {
        if self.inner.answered_by_call {
            let added = response
                .extensions_mut()
                .get_or_insert_default::<ResponseHeaders>();
            added.0.append(name, value);
        } else {
            self.append_response_header(name, value);
        }
    }

    /// Takes the headers added for the served response so far.
    pub fn take_response_headers(&self) -> HeaderMap {
        std::mem::take(&mut *self.response_headers())
    }

    fn response_headers(&self) -> std::sync::MutexGuard<'_, HeaderMap> {
        // A panic while the lock was held cannot leave a header map half-written in a way that
        // matters here; keep serving rather than poisoning every later call.
        self.inner
            .response_headers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::{ResponseHeaders, ServedRequest};
    use http::header::{AUTHORIZATION, SET_COOKIE};
    use http::HeaderValue;

    fn served() -> ServedRequest {
        let (parts, ()) = http::Request::get("/api/request")
            .header(AUTHORIZATION, "Bearer page")
            .body(())
            .unwrap()
            .into_parts();
        ServedRequest::new(parts, None)
    }

    #[test]
    fn a_header_for_the_served_response_is_collected_or_rides_on_the_calls_response() {
        let cookie = HeaderValue::from_static("sid=1; Path=/");
        // A handler's calls: collected here, for the server to take.
        let collecting = served();
        let mut response = http::Response::new(());
        collecting.add_response_header(&mut response, SET_COOKIE, cookie.clone());
        assert!(response.extensions().get::<ResponseHeaders>().is_none());
        assert_eq!(collecting.take_response_headers()[SET_COOKIE], cookie);

        // A proxy's: on the call's own response, nothing collected.
        let answered = served().answered_by_call();
        let mut response = http::Response::new(());
        answered.add_response_header(&mut response, SET_COOKIE, cookie.clone());
        let ResponseHeaders(added) = response.extensions().get::<ResponseHeaders>().unwrap();
        assert_eq!(added[SET_COOKIE], cookie);
        assert!(answered.take_response_headers().is_empty());
    }

    #[test]
    fn a_shared_request_is_marked_on_a_copy_of_its_own() {
        let shared = served();
        let _other = shared.clone();
        let answered = shared.answered_by_call();
        let mut response = http::Response::new(());
        let cookie = HeaderValue::from_static("sid=1; Path=/");
        answered.add_response_header(&mut response, SET_COOKIE, cookie);
        assert!(response.extensions().get::<ResponseHeaders>().is_some());
        assert_eq!(answered.headers()[AUTHORIZATION], "Bearer page");
    }

    #[test]
    fn a_relayed_header_replaced_by_the_call_is_no_longer_relayed() {
        let served = served().relaying([AUTHORIZATION]);
        let mut headers = http::HeaderMap::new();
        served.relay_into(&mut headers);
        let mut call = http::Request::builder()
            .extension(served.clone())
            .body(())
            .unwrap();
        *call.headers_mut() = headers;
        assert!(ServedRequest::is_relayed(&call, &AUTHORIZATION));
        // The definition or a layer set its own value: the header is not the browser's any more.
        call.headers_mut()
            .insert(AUTHORIZATION, HeaderValue::from_static("Bearer source"));
        assert!(!ServedRequest::is_relayed(&call, &AUTHORIZATION));
    }
}
