//! `CancelPreviousLayer` over a real hyper-util client against a real axum server on 127.0.0.1.

use axum::extract::{Query, State};
use axum::routing::get;
use axum::Router;
use courier_core::{Body, BoxError, EndpointMeta, Kind};
use courier_layers::cancel_previous::error::Cancelled;
use courier_layers::cancel_previous::CancelPreviousLayer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tower::{Layer, ServiceExt};

/// What the server tells the test about the slow search.
#[derive(Clone)]
struct Upstream {
    /// Notified when the slow search has reached the handler.
    arrived: Arc<Notify>,
    /// Sent to when the slow search's handler is dropped without answering.
    abandoned: mpsc::UnboundedSender<()>,
}

struct Abandoned(Option<mpsc::UnboundedSender<()>>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// Serves `/users/search?q=..`: `q=slow` never answers, any other query answers at once.
async fn serve(upstream: Upstream) -> SocketAddr {
    async fn search(
        State(upstream): State<Upstream>,
        Query(query): Query<HashMap<String, String>>,
    ) -> String {
        let q = query.get("q").cloned().unwrap_or_default();
        if q == "slow" {
            let _abandoned = Abandoned(Some(upstream.abandoned.clone()));
            upstream.arrived.notify_one();
            std::future::pending::<()>().await;
        }
        format!("results for {q}")
    }
    let app = Router::new()
        .route("/users/search", get(search))
        .with_state(upstream);
    let address = courier_test_support::serve(app).await;
    address
}

#[tokio::test]
async fn a_newer_search_cancels_the_slow_one_in_flight() -> Result<(), BoxError> {
    let (abandoned, mut abandoned_rx) = mpsc::unbounded_channel();
    let arrived = Arc::new(Notify::new());
    let address = serve(Upstream {
        arrived: Arc::clone(&arrived),
        abandoned,
    })
    .await;

    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = CancelPreviousLayer::new().layer(client);
    let meta = EndpointMeta::new("users.search", Kind::Query).cancel_previous(true);
    let search = |q: &str| {
        http::Request::get(format!("http://{address}/users/search?q={q}"))
            .extension(meta.clone())
            .body(Body::empty())
    };

    let older = tokio::spawn(service.clone().oneshot(search("slow")?));
    // The slow search is in the server's hands before the newer one is made.
    arrived.notified().await;

    let newer = service.clone().oneshot(search("fast")?).await?;
    let body = newer.into_body().collect().await?.to_bytes();
    assert_eq!(body, "results for fast");

    let err = older.await?.unwrap_err();
    let cancelled = err.downcast_ref::<Cancelled>().expect("a Cancelled error");
    assert_eq!(cancelled.status().as_u16(), 499);
    assert_eq!(
        err.to_string(),
        "cancelled by a newer call of `users.search`"
    );

    // The upstream request was abandoned: the client dropped its connection, and the server
    // dropped the handler. The bound only keeps a failure from hanging the test.
    tokio::time::timeout(Duration::from_secs(5), abandoned_rx.recv())
        .await
        .expect("the server saw the slow search abandoned");
    Ok(())
}

#[tokio::test]
async fn reads_without_cancel_previous_all_answer() -> Result<(), BoxError> {
    let (abandoned, _abandoned_rx) = mpsc::unbounded_channel();
    let address = serve(Upstream {
        arrived: Arc::new(Notify::new()),
        abandoned,
    })
    .await;

    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = CancelPreviousLayer::new().layer(client);
    let meta = EndpointMeta::new("users.search", Kind::Query);
    let answers = Arc::new(Mutex::new(Vec::new()));
    let mut calls = Vec::new();
    for q in ["a", "b", "c"] {
        let request = http::Request::get(format!("http://{address}/users/search?q={q}"))
            .extension(meta.clone())
            .body(Body::empty())?;
        let service = service.clone();
        let answers = Arc::clone(&answers);
        calls.push(tokio::spawn(async move {
            let response = service.oneshot(request).await?;
            let body = response.into_body().collect().await?.to_bytes();
            answers
                .lock()
                .unwrap()
                .push(String::from_utf8(body.to_vec())?);
            Ok::<_, BoxError>(())
        }));
    }
    for call in calls {
        call.await??;
    }
    let mut answers = answers.lock().unwrap().clone();
    answers.sort();
    assert_eq!(answers, ["results for a", "results for b", "results for c"]);
    Ok(())
}
