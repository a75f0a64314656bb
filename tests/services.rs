//! Endpoints as `tower::Service`s (`.services()`, `EndpointService`, `Client::service`) against
//! an axum backend on 127.0.0.1: the same answers as the views' calls, tower's layers around one
//! endpoint (a concurrency limit and a load shed, a buffer shared by tasks), code generic over
//! any service, the proxy caller through a real `Proxy`, streams and channels, and a runtime
//! tree's endpoints by dotted path.

use axum::extract::Path;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};
use courier::config::{Config, ProxyPaths};
use courier::error::ErrorCode;
use courier::live::Event;
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{
    channel, endpoint, stream, Channel, ChannelHandlers, ChannelPeer, EndpointService, Group, Http,
    Mutation, Stream,
};
use courier::ProxyCaller;
use courier::{ApiDef, CallOptions, Caller, Client};
use courier_test_support::serve;
use futures_util::StreamExt;
use http::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tower::buffer::Buffer;
use tower::load_shed::error::Overloaded;
use tower::{Service, ServiceBuilder, ServiceExt};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
    tenant: Option<String>,
}

#[derive(Serialize)]
struct UserId(u64);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tick {
    n: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Said {
    room: String,
    text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Say {
    text: String,
}

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    /// Answers once the test lets it (`Backend::release`).
    held: Http<User, UserId>,
    ticks: Stream<Tick, u64>,
    room: Channel<Said, String, Say>,
}

#[derive(courier::Group)]
struct Admin {
    purge: Http<Value, (), Mutation>,
}

#[derive(courier::Api)]
struct Demo {
    users: Group<Users>,
    admin: Group<Admin>,
}

/// The backend, and a gate its `held` answers wait on.
struct Backend {
    addr: SocketAddr,
    gate: Arc<Semaphore>,
    arrived: Arc<Notify>,
    calls: Arc<AtomicUsize>,
}

impl Backend {
    async fn start() -> Self {
        let gate = Arc::new(Semaphore::new(0));
        let arrived = Arc::new(Notify::new());
        let calls = Arc::new(AtomicUsize::new(0));
        let user = |id: u64, headers: &HeaderMap| {
            let tenant = headers
                .get("x-tenant")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            Json(json!({ "id": id, "name": format!("user {id}"), "tenant": tenant }))
        };
        let (held_gate, held_arrived, counted) = (gate.clone(), arrived.clone(), calls.clone());
        let app = Router::new()
            .route(
                "/users/{id}",
                get(move |Path(id): Path<u64>, headers: HeaderMap| {
                    let calls = counted.clone();
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        user(id, &headers)
                    }
                }),
            )
            .route(
                "/held/{id}",
                get(move |Path(id): Path<u64>, headers: HeaderMap| {
                    let (gate, arrived) = (held_gate.clone(), held_arrived.clone());
                    async move {
                        arrived.notify_one();
                        if let Ok(permit) = gate.acquire().await {
                            permit.forget();
                        }
                        user(id, &headers)
                    }
                }),
            )
            .route(
                "/admin/purge",
                axum::routing::post(|| async { Json(json!("purged")) }),
            );
        Self {
            addr: serve(app).await,
            gate,
            arrived,
            calls,
        }
    }

    fn release(&self, calls: usize) {
        self.gate.add_permits(calls);
    }

    fn api(&self) -> courier::Api<Demo> {
        api(&format!("http://{}", self.addr))
    }
}

fn api(base_url: &str) -> courier::Api<Demo> {
    let users = Group::new(Users {
        get: endpoint().get("/users/:id"),
        held: endpoint().get("/held/:id"),
        ticks: stream().implement(|every: u64| {
            futures_util::stream::iter((1..=3).map(move |n| Event::new(Tick { n: n * every })))
        }),
        room: channel().implement_handlers(ChannelHandlers::on_message(
            |peer: ChannelPeer<Said, String>, say: Say| async move {
                peer.publish(&Said {
                    room: peer.variables().clone(),
                    text: say.text,
                })
            },
        )),
    })
    .expose(true);
    let admin = Group::new(Admin {
        purge: endpoint().post("/admin/purge"),
    });
    ApiDef::builder()
        .base_url(base_url)
        .build_typed(Demo { users, admin })
        .expect("a valid definition")
}

/// A proxy route on 127.0.0.1 serving `api` as the source `demo`, channels at `/api/ws`.
async fn proxy(api: &courier::Api<Demo>) -> String {
    let router = Proxy::new()
        .source("demo", api.def().clone())
        .ws_path("/api/ws")
        .into_router()
        .expect("the proxy builds");
    format!("http://{}", serve(router).await)
}

fn ws_path() -> ProxyPaths {
    ProxyPaths {
        ws: Some("/api/ws".into()),
        ..ProxyPaths::default()
    }
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("within 10 s")
}

fn user(id: u64) -> User {
    User {
        id,
        name: format!("user {id}"),
        tenant: None,
    }
}

/// Code that takes any service of user ids answering users: an endpoint of courier's or not.
async fn fetch_all<S>(mut users: S, ids: &[u64]) -> Result<Vec<User>, S::Error>
where
    S: Service<UserId, Response = User>,
{
    let mut found = Vec::new();
    for &id in ids {
        found.push(users.ready().await?.call(UserId(id)).await?);
    }
    Ok(found)
}

#[tokio::test]
async fn an_endpoint_service_answers_what_the_views_call_does() {
    let backend = Backend::start().await;
    let caller = Caller::new(backend.api()).unwrap();

    let by_view = caller.users().get(UserId(7)).await.unwrap();
    let get = caller.users().services().get().unwrap();
    assert_eq!(get.path(), "users.get");
    assert_eq!(get.clone().oneshot(UserId(7)).await.unwrap(), by_view);

    // Raw mode, from the view or from the service: the whole response.
    let whole = caller.users().raw().services().get().unwrap();
    let whole = whole.oneshot(UserId(8)).await.unwrap();
    assert_eq!((whole.status.as_u16(), whole.data), (200, user(8)));
    let raw = get.clone().raw().oneshot(UserId(9)).await.unwrap();
    assert_eq!(raw.headers["content-type"], "application/json");
    assert_eq!(raw.data, user(9));

    // The view's `.with()` options go with every call of its services.
    let tenant = CallOptions::new().header(
        HeaderName::from_static("x-tenant"),
        HeaderValue::from_static("acme"),
    );
    let scoped = caller.users().with(tenant).services().get().unwrap();
    assert_eq!(
        scoped.oneshot(UserId(1)).await.unwrap().tenant.as_deref(),
        Some("acme")
    );
    // Each of the five calls above reached the backend once.
    assert_eq!(backend.calls.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn an_endpoint_service_is_any_service_of_its_types() {
    let backend = Backend::start().await;
    let caller = Caller::new(backend.api()).unwrap();
    let get = caller.users().services().get().unwrap();
    let users = fetch_all(get, &[1, 2, 3]).await.unwrap();
    assert_eq!(users, [user(1), user(2), user(3)]);

    // The caller's errors come through the service as they come through the view.
    let gone = Caller::new(api("http://127.0.0.1:1")).unwrap();
    let error = fetch_all(gone.users().services().get().unwrap(), &[1])
        .await
        .unwrap_err();
    assert_eq!(error.status_code(), 0, "{error}");
    assert!(error.is_connect(), "{error}");
}

#[tokio::test]
async fn a_concurrency_limit_and_a_load_shed_guard_one_endpoint() {
    let backend = Backend::start().await;
    let caller = Caller::new(backend.api()).unwrap();
    let mut held = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(1)
        .service(caller.users().services().held().unwrap());

    // The first call is on the wire, waiting for the backend's answer…
    let first = tokio::spawn(held.ready().await.unwrap().call(UserId(1)));
    within(backend.arrived.notified()).await;
    // …so a second one is shed at once rather than queued: it never reaches the backend.
    let refused = held
        .ready()
        .await
        .unwrap()
        .call(UserId(2))
        .await
        .unwrap_err();
    assert!(refused.is::<Overloaded>(), "{refused}");
    // Back as a caller's error: a 503 the handler can answer with `?`.
    let refused = courier::Error::from(refused);
    assert_eq!(refused.status_code(), 503, "{refused}");
    assert_eq!(
        refused.http_error().unwrap().data["error"]["code"],
        "OVERLOADED"
    );
    // Other endpoints, and this one without the layers, are not limited.
    let plain = caller.users().services().get().unwrap();
    assert_eq!(plain.oneshot(UserId(3)).await.unwrap(), user(3));

    backend.release(1);
    assert_eq!(within(first).await.unwrap().unwrap(), user(1));
    // The place is free again.
    backend.release(1);
    let third = held.ready().await.unwrap().call(UserId(4));
    assert_eq!(within(third).await.unwrap(), user(4));

    // A courier error still comes out of the stack, as a boxed `courier::Error`.
    let gone = Caller::new(api("http://127.0.0.1:1")).unwrap();
    let error = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(1)
        .service(gone.users().services().get().unwrap())
        .oneshot(UserId(1))
        .await
        .unwrap_err();
    assert!(error.is::<courier::Error>(), "the caller's error: {error}");
    let error = courier::Error::from(error);
    assert!(error.is_connect(), "{error}");
}

#[tokio::test]
async fn a_buffered_endpoint_service_is_shared_by_tasks() {
    let backend = Backend::start().await;
    let caller = Caller::new(backend.api()).unwrap();
    let buffered = Buffer::new(caller.users().services().get().unwrap(), 16);
    let tasks: Vec<_> = (1..=8)
        .map(|id| {
            let mut service = buffered.clone();
            tokio::spawn(async move { service.ready().await?.call(UserId(id)).await })
        })
        .collect();
    for (id, task) in (1..=8).zip(tasks) {
        assert_eq!(within(task).await.unwrap().unwrap(), user(id));
    }
    assert_eq!(backend.calls.load(Ordering::SeqCst), 8);
}

#[tokio::test]
async fn endpoint_services_run_over_the_proxy_caller() {
    let backend = Backend::start().await;
    let proxy = proxy(&backend.api()).await;

    let routed = ProxyCaller::<Demo>::routes(&proxy, Routes::from_api("demo", backend.api().def()))
        .proxy_path(ws_path())
        .build()
        .unwrap();
    let get = routed.users().services().get().unwrap();
    assert_eq!(
        fetch_all(get.clone(), &[5, 6]).await.unwrap(),
        [user(5), user(6)]
    );
    // The same value as the proxied view's call and as the direct call.
    let direct = Caller::new(backend.api()).unwrap();
    assert_eq!(
        get.oneshot(UserId(7)).await.unwrap(),
        direct.users().get(UserId(7)).await.unwrap()
    );
    let whole = routed.users().raw().services().get().unwrap();
    assert_eq!(whole.oneshot(UserId(8)).await.unwrap().status, 200);

    // `admin` is not exposed, so the routes leave it out: refused when the service is made.
    let missing = routed.admin().services().purge().unwrap_err();
    assert_eq!(missing.code(), ErrorCode::EndpointNotInRoutes);
    assert_eq!(missing.path(), Some("admin.purge"));

    // Behind a buffer, shared by tasks, through the proxy.
    let source = ProxyCaller::source(&proxy, "demo", backend.api())
        .proxy_path(ws_path())
        .build()
        .unwrap();
    let buffered = Buffer::new(source.users().services().get().unwrap(), 4);
    let tasks: Vec<_> = (1..=4)
        .map(|id| tokio::spawn(buffered.clone().oneshot(UserId(id))))
        .collect();
    for (id, task) in (1..=4).zip(tasks) {
        assert_eq!(within(task).await.unwrap().unwrap(), user(id));
    }
}

#[tokio::test]
async fn stream_and_channel_services_open_what_the_views_open() {
    // In process: the stream and the channel this process implements.
    let caller = Caller::new(api("http://127.0.0.1:1")).unwrap();
    let ticks = caller.users().services().ticks().unwrap();
    let events: Vec<u64> = ticks
        .oneshot(10)
        .await
        .unwrap()
        .map(|event| event.unwrap().data.n)
        .collect()
        .await;
    assert_eq!(events, [10, 20, 30]);

    // Over SSE and WebSocket, through a real proxy route and the proxy caller.
    let served = api("http://127.0.0.1:1");
    let proxy = proxy(&served).await;
    let remote = ProxyCaller::source(&proxy, "demo", served)
        .proxy_path(ws_path())
        .build()
        .unwrap();
    let services = remote.users().services();
    let events: Vec<Tick> = within(
        services
            .ticks()
            .unwrap()
            .oneshot(5)
            .await
            .unwrap()
            .map(|event| event.unwrap().data)
            .collect(),
    )
    .await;
    assert_eq!(events, [Tick { n: 5 }, Tick { n: 10 }, Tick { n: 15 }]);

    let mut room = services.room().unwrap();
    let mut ada = room
        .ready()
        .await
        .unwrap()
        .call("lobby".into())
        .await
        .unwrap();
    let mut bob = room
        .ready()
        .await
        .unwrap()
        .call("lobby".into())
        .await
        .unwrap();
    ada.send(Say { text: "hi".into() }).unwrap();
    let said = Said {
        room: "lobby".into(),
        text: "hi".into(),
    };
    assert_eq!(within(bob.next()).await.unwrap().unwrap(), said);
    assert_eq!(within(ada.next()).await.unwrap().unwrap(), said);
}

#[tokio::test]
async fn a_runtime_trees_endpoints_are_services_by_dotted_path() {
    let backend = Backend::start().await;
    let config = Config::from_toml_str(&format!(
        r#"
        [sources.demo]
        base_url = "http://{}"

        [sources.demo.groups.users.endpoints.get]
        get = "/users/:id"

        [sources.demo.groups.users.endpoints.events]
        stream = "/events"
        "#,
        backend.addr
    ))
    .unwrap();
    let client = Client::new(config.source("demo").unwrap().clone()).unwrap();

    let get = client.service("users.get").unwrap();
    let body = get.clone().oneshot(json!({ "id": 7 })).await.unwrap();
    assert_eq!(body, json!({ "id": 7, "name": "user 7", "tenant": null }));
    let whole = get.clone().raw().oneshot(json!({ "id": 8 })).await.unwrap();
    assert_eq!((whole.status.as_u16(), &whole.data["id"]), (200, &json!(8)));
    assert_eq!(
        whole.data,
        client
            .call("users.get", json!({ "id": 8 }))
            .await
            .unwrap()
            .data
    );

    // Behind tower's layers as a typed one is.
    let limited = ServiceBuilder::new()
        .concurrency_limit(2)
        .service(get.clone());
    assert_eq!(limited.oneshot(json!({ "id": 1 })).await.unwrap()["id"], 1);

    // Variables the endpoint cannot use are the call's error, as `Client::call`'s.
    let error = get.oneshot(json!({})).await.unwrap_err();
    assert!(error.is_configuration(), "{error}");

    // Refused when made, with the codes a call would fail with; nothing is sent.
    let unknown = client.service("users.gone").unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::EndpointNotInRoutes);
    assert_eq!(unknown.path(), Some("users.gone"));
    let not_http = client.service("users.events").unwrap_err();
    assert_eq!(not_http.code(), ErrorCode::InvalidOption);
    assert_eq!(
        client.stream_service("users.get").unwrap_err().code(),
        ErrorCode::InvalidOption
    );
    assert_eq!(
        client.channel_service("users.events").unwrap_err().code(),
        ErrorCode::InvalidOption
    );
    assert!(client.stream_service("users.events").is_ok());

    // The typed form of the same lookup, over any caller.
    let typed = EndpointService::<Client, Http<User, UserId>>::at(&client, "users.get").unwrap();
    assert_eq!(typed.oneshot(UserId(3)).await.unwrap(), user(3));
}

#[tokio::test]
async fn runtime_stream_and_channel_services_answer_json() {
    let client = Client::new(api("http://127.0.0.1:1").def().clone()).unwrap();
    let events: Vec<Value> = client
        .stream_service("users.ticks")
        .unwrap()
        .oneshot(json!(2))
        .await
        .unwrap()
        .map(|event| event.unwrap().data)
        .collect()
        .await;
    assert_eq!(
        events,
        [json!({ "n": 2 }), json!({ "n": 4 }), json!({ "n": 6 })]
    );

    let room = client.channel_service("users.room").unwrap();
    let mut member = room.oneshot(json!("attic")).await.unwrap();
    member.send(json!({ "text": "up here" })).unwrap();
    assert_eq!(
        within(member.next()).await.unwrap().unwrap(),
        json!({ "room": "attic", "text": "up here" })
    );
}
