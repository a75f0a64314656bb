//! `trace_layer()` over a real hyper-util client against a real axum server on 127.0.0.1.

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use courier_core::{Body, BoxError, EndpointMeta, Kind};
use courier_layers::trace::trace_layer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tower::{Layer, ServiceExt};
use tracing_subscriber::fmt::MakeWriter;

/// Everything a `fmt` subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

/// Serves `/users/7`, and `/broken`, which answers 500.
async fn serve() -> SocketAddr {
    let app = Router::new()
        .route("/users/7", get(|| async { "{\"id\":7}" }))
        .route(
            "/broken",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "oops") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

// A current-thread runtime, so the subscriber set for this thread sees the whole call.
#[tokio::test(flavor = "current_thread")]
async fn a_real_call_is_logged_in_its_span() -> Result<(), BoxError> {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let address = serve().await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = trace_layer().layer(client);

    let request = http::Request::get(format!("http://{address}/users/7?fields=name"))
        .extension(EndpointMeta::new("users.get", Kind::Query))
        .body(Body::empty())?;
    let response = service.clone().oneshot(request).await?;
    assert_eq!(
        response.into_body().collect().await?.to_bytes(),
        "{\"id\":7}"
    );

    let request = http::Request::get(format!("http://{address}/broken?token=abc"))
        .extension(EndpointMeta::new("status.broken", Kind::Query).sensitive(true))
        .body(Body::empty())?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.status(), 500);

    let log = captured.text();
    let span = format!(
        "courier.call{{endpoint=users.get method=GET uri=http://{address}/users/7?fields=name}}"
    );
    let answered = log
        .lines()
        .find(|line| line.contains("finished processing request") && line.contains(&span))
        .unwrap_or_else(|| panic!("no response logged in {span}: {log}"));
    assert!(answered.contains("status=200"), "{answered}");

    let failed = log
        .lines()
        .find(|line| line.contains("response failed"))
        .unwrap_or_else(|| panic!("no failure logged: {log}"));
    assert!(failed.contains("ERROR"), "{failed}");
    assert!(
        failed.contains(&format!(
            "courier.call{{endpoint=status.broken method=GET uri=http://{address}/broken}}"
        )),
        "{failed}"
    );
    assert!(!log.contains("token=abc"), "{log}");
    Ok(())
}
