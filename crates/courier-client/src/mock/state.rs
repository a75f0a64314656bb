//! What a mock keeps (its answers, the calls it saw, the messages channels sent it) and the
//! service that answers calls from it.

use super::answer::{Answer, Reply};
use super::{socket, Recorded};
use crate::sent::Sent;
use bytes::Bytes;
use courier_core::{Body, BoxError, BoxFuture, EndpointMeta};
use futures_util::stream::{self, StreamExt};
use http::header::{CACHE_CONTROL, CONNECTION, CONTENT_TYPE, UPGRADE};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::sync::broadcast;

/// How many pushed messages an open stream or channel may fall behind by before it misses some.
const PUSHED: usize = 1024;

/// The mock's book: what it answers, and what it saw.
#[derive(Default)]
pub(super) struct State {
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    /// The answers, in the order they were given; the newest that matches a call answers it.
    rules: Vec<Rule>,
    /// Every call, in the order the mock saw them.
    calls: Vec<Recorded>,
    /// What channels' clients sent, by endpoint, in order.
    received: Vec<(Arc<str>, Value)>,
    /// Where pushed events and messages go, by endpoint: every open stream or channel of it.
    pushes: HashMap<Arc<str>, broadcast::Sender<String>>,
}

/// Answers for one endpoint, for any variables or for these only.
pub(super) struct Rule {
    pub(super) path: Arc<str>,
    pub(super) variables: Option<Value>,
    pub(super) answers: Vec<Answer>,
    /// The next answer's index; past the last, the last answers again.
    pub(super) next: usize,
}

impl State {
    fn book(&self) -> MutexGuard<'_, Book> {
        // A test that panicked while holding the lock leaves the book as it was: still usable.
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn add(&self, rule: Rule) {
        self.book().rules.push(rule);
    }

    pub(super) fn calls(&self, path: Option<&str>) -> Vec<Recorded> {
        let book = self.book();
        book.calls
            .iter()
            .filter(|call| path.is_none_or(|path| call.endpoint == path))
            .cloned()
            .collect()
    }

    pub(super) fn received(&self, path: &str) -> Vec<Value> {
        let book = self.book();
        book.received
            .iter()
            .filter(|(at, _)| &**at == path)
            .map(|(_, message)| message.clone())
            .collect()
    }

    pub(super) fn receive(&self, path: &Arc<str>, message: Value) {
        self.book().received.push((Arc::clone(path), message));
    }

    /// Pushes `text` to every open stream or channel of `path`; how many it reached.
    pub(super) fn push(&self, path: &str, text: String) -> usize {
        let book = self.book();
        book.pushes
            .get(path)
            .and_then(|sender| sender.send(text).ok())
            .unwrap_or(0)
    }

    /// What is pushed to `path` from now on.
    pub(super) fn pushed(&self, path: &Arc<str>) -> broadcast::Receiver<String> {
        let mut book = self.book();
        book.pushes
            .entry(Arc::clone(path))
            .or_insert_with(|| broadcast::channel(PUSHED).0)
            .subscribe()
    }

    pub(super) fn reset(&self) {
        let mut book = self.book();
        book.rules.clear();
        book.calls.clear();
        book.received.clear();
    }

    /// The answer to a call of `path` with `variables`: the newest rule that matches, its next
    /// answer.
    fn pick(&self, path: &str, variables: &Value) -> Option<Answer> {
        let mut book = self.book();
        let rule = book.rules.iter_mut().rev().find(|rule| {
            &*rule.path == path && rule.variables.as_ref().is_none_or(|own| own == variables)
        })?;
        let at = rule.next.min(rule.answers.len().checked_sub(1)?);
        rule.next += 1;
        Some(rule.answers[at].clone())
    }

    /// Answers `request`: records it, then answers from the book.
    async fn answer(self: Arc<Self>, request: Request<Body>) -> Result<Response<Body>, BoxError> {
        let path: Arc<str> = request
            .extensions()
            .get::<EndpointMeta>()
            .map_or_else(|| Arc::from(""), |meta| Arc::clone(meta.path_arc()));
        let variables = request
            .extensions()
            .get::<Sent>()
            .map_or(Value::Null, |sent| sent.0.clone());
        let (parts, body) = request.into_parts();
        // An upload is read whole, as an upstream reads it (its progress runs to the end).
        let body = body.collect().await?.to_bytes();
        let answer = self.pick(&path, &variables);
        self.book().calls.push(Recorded {
            endpoint: path.to_string(),
            variables: variables.clone(),
            method: parts.method.clone(),
            uri: parts.uri.clone(),
            headers: parts.headers.clone(),
            body,
            answered: answer.is_some(),
        });
        let Some(answer) = answer else {
            return Ok(unanswered(&path, &variables));
        };
        if let Some(delay) = answer.delay {
            tokio::time::sleep(delay).await;
        }
        match answer.reply {
            Reply::Http {
                status,
                headers,
                body,
            } => {
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = status;
                *response.headers_mut() = headers;
                Ok(response)
            }
            Reply::Failure(kind) => Err(Box::new(io::Error::new(
                kind,
                "courier::mock answered with a failed connection",
            ))),
            Reply::Events(events) => Ok(self.events(&path, events)),
            Reply::Messages(messages) => {
                let upgrade = parts
                    .headers
                    .get(UPGRADE)
                    .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
                if !upgrade {
                    return Ok(unanswered(&path, &variables));
                }
                let pushed = self.pushed(&path);
                socket::open(parts, messages, pushed, Arc::clone(&self), path).await
            }
        }
    }

    /// A stream's opening: `events`, then what is pushed, as server-sent events; open until the
    /// client leaves or the mock is gone.
    fn events(&self, path: &Arc<str>, events: Vec<String>) -> Response<Body> {
        let pushed = self.pushed(path);
        let live = stream::unfold(pushed, |mut pushed| async move {
            loop {
                match pushed.recv().await {
                    Ok(text) => return Some((text, pushed)),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        let frames = stream::iter(events)
            .chain(live)
            .map(|data| Ok::<_, BoxError>(Bytes::from(format!("data: {data}\n\n"))));
        let mut response = Response::new(Body::from_stream(frames));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

/// The answer to a call the mock was given no answer for: `501 Not Implemented`, saying so.
fn unanswered(path: &str, variables: &Value) -> Response<Body> {
    let message = if path.is_empty() {
        "courier::mock has no answer for a request no courier client made".to_owned()
    } else {
        format!("courier::mock has no answer for `{path}` with {variables}")
    };
    let mut response = Response::new(Body::from(json!({ "message": message }).to_string()));
    *response.status_mut() = StatusCode::NOT_IMPLEMENTED;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The mock as a transport: every request it is sent is answered from its book.
#[derive(Clone)]
pub(super) struct Answering(pub(super) Arc<State>);

impl tower::Service<Request<Body>> for Answering {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        Box::pin(Arc::clone(&self.0).answer(request))
    }
}
