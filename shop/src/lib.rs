//! Shop: an app server built on courier, as a team using it writes one — and tests it.
//!
//! An orders API sits behind it ([`api`]). The app ([`app`]) has handlers of its own that call
//! it with a typed [`Caller`] — a summary of the orders (`GET /summary`) and a checkout
//! (`POST /checkout`, a write sent with an idempotency key, so that it is retried safely) — and
//! mounts courier's proxy route on the same client, for the page's own calls. With
//! [`metrics`], it serves what its calls recorded in Prometheus's text format.
//!
//! Its tests (`tests/`) are the ones such a team writes: the handlers and the proxy route
//! against courier's mock, with no server at all; a checkout retried through an upstream that
//! drops the connection before it answers; a Prometheus scrape after known calls.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use courier::server::{Proxy, ProxyError};
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::{Api, ApiDef, Caller, ConfigurationError};
use metrics_exporter_prometheus::PrometheusHandle;
use serde::{Deserialize, Serialize};

/// An order, as the orders API answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// Its id.
    pub id: u64,
    /// What was ordered.
    pub item: String,
    /// Its price, in cents.
    pub cents: u64,
}

/// An order's id.
#[derive(Clone, Debug, Serialize)]
pub struct OrderId(pub u64);

/// An order to place.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewOrder {
    /// What to order.
    pub item: String,
    /// Its price, in cents.
    pub cents: u64,
}

/// The orders API's endpoints.
#[derive(courier::Group)]
pub struct Orders {
    /// One order (the page reads it through the proxy route).
    pub get: Http<Order, OrderId>,
    /// Every order.
    pub list: Http<Vec<Order>>,
    /// Places an order: a write, with an idempotency key.
    pub create: Http<Order, NewOrder, Mutation>,
}

/// The orders API.
#[derive(courier::Api)]
pub struct Shop {
    /// Its orders.
    pub orders: Group<Orders>,
}

/// The orders API at `base_url`. Checkouts carry an `Idempotency-Key`, so a checkout whose
/// answer was lost is sent again with the same key and placed once.
///
/// # Errors
///
/// A base URL that does not parse.
pub fn api(base_url: &str) -> Result<Api<Shop>, ConfigurationError> {
    let orders = Group::new(Orders {
        get: endpoint().get("/:id").expose(true),
        list: endpoint().get(""),
        create: endpoint().post("").idempotency_key(true),
    })
    .prefix("/orders");
    ApiDef::builder()
        .base_url(base_url)
        .build_typed(Shop { orders })
}

/// What the summary says.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How many orders there are.
    pub count: usize,
    /// What they come to, in cents.
    pub cents: u64,
}

async fn summary(State(caller): State<Caller<Shop>>) -> Result<Json<Summary>, courier::Error> {
    let orders = caller.orders().list().await?;
    Ok(Json(Summary {
        count: orders.len(),
        cents: orders.iter().map(|order| order.cents).sum(),
    }))
}

async fn checkout(
    State(caller): State<Caller<Shop>>,
    Json(order): Json<NewOrder>,
) -> Result<(StatusCode, Json<Order>), courier::Error> {
    let placed = caller.orders().create(order).await?;
    Ok((StatusCode::CREATED, Json(placed)))
}

/// The app: its own routes, and courier's proxy route (`/api/request`) on the same client, with
/// its calls' metrics on.
///
/// # Errors
///
/// The proxy's, when it cannot be built.
pub fn app(caller: Caller<Shop>) -> Result<Router, ProxyError> {
    let own = Router::new()
        .route("/summary", get(summary))
        .route("/checkout", post(checkout))
        .with_state(caller.clone());
    let proxy = Proxy::new()
        .source_client("shop", caller.client().clone())
        .metrics(true)
        .into_router()?;
    Ok(proxy.merge(own))
}

/// `GET /metrics`: what the app recorded, in Prometheus's text format, from the recorder the
/// app installed (`PrometheusBuilder::install_recorder`).
pub fn metrics(handle: PrometheusHandle) -> Router {
    Router::new().route("/metrics", get(move || async move { handle.render() }))
}
