//! `AuthLayer` over a real hyper-util client against a real axum server on 127.0.0.1.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;
use courier_core::{Body, BoxError};
use courier_layers::auth::error::TokenError;
use courier_layers::auth::AuthLayer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::RwLock;
use tower::{Layer, ServiceExt};

/// Serves `/me`, which answers with the `authorization` header it was sent, and counts the
/// requests it sees.
async fn serve(seen: Arc<AtomicUsize>) -> SocketAddr {
    async fn me(State(seen): State<Arc<AtomicUsize>>, headers: HeaderMap) -> String {
        seen.fetch_add(1, Ordering::SeqCst);
        headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("none")
            .to_owned()
    }
    let app = Router::new().route("/me", get(me)).with_state(seen);
    let address = courier_test_support::serve(app).await;
    address
}

#[tokio::test]
async fn the_server_sees_the_token_from_an_async_supplier() -> Result<(), BoxError> {
    let address = serve(Arc::default()).await;
    // A token store another task refreshes.
    let store = Arc::new(RwLock::new(String::from("first-token")));
    let get_token = {
        let store = Arc::clone(&store);
        move || {
            let store = Arc::clone(&store);
            async move { Ok::<_, BoxError>(store.read().await.clone()) }
        }
    };
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = AuthLayer::new(get_token).layer(client);
    let me = || http::Request::get(format!("http://{address}/me")).body(Body::empty());

    let response = service.clone().oneshot(me()?).await?;
    assert_eq!(
        response.into_body().collect().await?.to_bytes(),
        "Bearer first-token"
    );

    *store.write().await = String::from("second-token");
    let response = service.oneshot(me()?).await?;
    assert_eq!(
        response.into_body().collect().await?.to_bytes(),
        "Bearer second-token"
    );
    Ok(())
}

#[tokio::test]
async fn a_failing_supplier_sends_nothing() -> Result<(), BoxError> {
    let seen = Arc::new(AtomicUsize::new(0));
    let address = serve(Arc::clone(&seen)).await;
    let get_token = || async { Err::<String, BoxError>("the identity provider is down".into()) };
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = AuthLayer::new(get_token).layer(client);

    let request = http::Request::get(format!("http://{address}/me")).body(Body::empty())?;
    let err = service.oneshot(request).await.unwrap_err();
    let token_error = err.downcast_ref::<TokenError>().expect("a TokenError");
    assert_eq!(
        std::error::Error::source(token_error).map(ToString::to_string),
        Some(String::from("the identity provider is down"))
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    Ok(())
}
