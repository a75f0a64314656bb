//! The proxy caller's cookie jar: what a browser's `credentials: "include"` does for the proxy
//! route. Cookies the proxy sets (`set-cookie` passed back where allow-listed, or the app's own)
//! are kept by RFC 6265's rules (`cookie_store`) and sent with every later call, stream and
//! channel handshake to the addresses they match. The jar is the outermost layer of the
//! caller's stack: it adds its cookies before the other layers see a request (so coalescing
//! tells two users' reads apart) and keeps what a response sets once they answer.
//!
//! With the session's CSRF names (the routes record's `csrf`, or the builder's), every `POST`
//! repeats the CSRF cookie's value in the CSRF header, as the browser package does from
//! `document.cookie`: a call that sets the header itself keeps its own.

use cookie_store::{CookieStore, RawCookie};
use courier_core::{Body, BoxFuture};
use http::header::{COOKIE, SET_COOKIE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, Uri};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tower::{Layer, Service};
use url::Url;

/// A shared jar; clones share the cookies. As a [`Layer`], it wraps a service in [`WithJar`].
#[derive(Clone, Default)]
pub(crate) struct Jar {
    store: Arc<Mutex<CookieStore>>,
    /// The session's double-submit token: the cookie it is read from, the header a `POST`
    /// repeats it in.
    csrf: Option<Arc<(String, HeaderName)>>,
}

impl<S> Layer<S> for Jar {
    type Service = WithJar<S>;

    fn layer(&self, inner: S) -> WithJar<S> {
        WithJar {
            jar: self.clone(),
            inner,
        }
    }
}

/// A service whose requests carry the jar's cookies and whose responses' cookies are kept.
#[derive(Clone)]
pub(crate) struct WithJar<S> {
    jar: Jar,
    inner: S,
}

impl<S> Service<Request<Body>> for WithJar<S>
where
    S: Service<Request<Body>, Response = Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let uri = request.uri().clone();
        self.jar.add_to(&uri, request.headers_mut());
        if request.method() == Method::POST {
            self.jar.add_csrf(&uri, request.headers_mut());
        }
        let jar = self.jar.clone();
        let call = self.inner.call(request);
        Box::pin(async move {
            let response = call.await?;
            jar.store_from(&uri, response.headers());
            Ok(response)
        })
    }
}

impl Jar {
    /// A jar whose `POST`s repeat the CSRF token of cookie `cookie` in header `header`.
    pub(crate) fn with_csrf(cookie: String, header: HeaderName) -> Self {
        Self {
            store: Arc::default(),
            csrf: Some(Arc::new((cookie, header))),
        }
    }

    /// Adds the CSRF header, with the value of the CSRF cookie that matches `uri`, unless the
    /// call set the header itself or there is no such cookie (the proxy then refuses the write,
    /// as it would a browser's).
    fn add_csrf(&self, uri: &Uri, headers: &mut HeaderMap) {
        let Some(csrf) = &self.csrf else {
            return;
        };
        let (cookie, header) = &**csrf;
        if headers.contains_key(header) {
            return;
        }
        let Ok(url) = Url::parse(&uri.to_string()) else {
            return;
        };
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        let token = store
            .get_request_values(&url)
            .find(|(name, _)| name == cookie)
            .and_then(|(_, value)| HeaderValue::try_from(value).ok());
        drop(store);
        if let Some(token) = token {
            headers.insert(header.clone(), token);
        }
    }

    /// Adds a `cookie` header with the cookies that match `uri`, if any.
    pub(crate) fn add_to(&self, uri: &Uri, headers: &mut HeaderMap) {
        let Ok(url) = Url::parse(&uri.to_string()) else {
            return;
        };
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        let pairs: Vec<String> = store
            .get_request_values(&url)
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        drop(store);
        if pairs.is_empty() {
            return;
        }
        if let Ok(value) = HeaderValue::try_from(pairs.join("; ")) {
            headers.insert(COOKIE, value);
        }
    }

    /// Keeps the cookies a response to `uri` sets; a malformed `set-cookie` is ignored, as a
    /// browser ignores it.
    pub(crate) fn store_from(&self, uri: &Uri, headers: &HeaderMap) {
        if !headers.contains_key(SET_COOKIE) {
            return;
        }
        let Ok(url) = Url::parse(&uri.to_string()) else {
            return;
        };
        let cookies = headers
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| RawCookie::parse(v.to_owned()).ok())
            .collect::<Vec<_>>();
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        store.store_response_cookies(cookies.into_iter(), &url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_is_set_and_sends_it_back_where_it_matches() {
        let jar = Jar::default();
        let uri: Uri = "http://127.0.0.1:8080/api/request?_s=demo".parse().unwrap();
        let mut set = HeaderMap::new();
        set.append(
            SET_COOKIE,
            HeaderValue::from_static("sid=abc; Path=/; HttpOnly"),
        );
        set.append(
            SET_COOKIE,
            HeaderValue::from_static("scoped=1; Path=/admin"),
        );
        set.append(SET_COOKIE, HeaderValue::from_static("=broken"));
        jar.store_from(&uri, &set);

        let mut headers = HeaderMap::new();
        jar.add_to(&uri, &mut headers);
        assert_eq!(headers[COOKIE], "sid=abc");

        let mut expire = HeaderMap::new();
        expire.append(
            SET_COOKIE,
            HeaderValue::from_static("sid=; Path=/; Max-Age=0"),
        );
        jar.store_from(&uri, &expire);
        let mut headers = HeaderMap::new();
        jar.add_to(&uri, &mut headers);
        assert!(
            !headers.contains_key(COOKIE),
            "an expired cookie is dropped"
        );
    }
}
