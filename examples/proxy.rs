//! The browser-facing half, end to end on 127.0.0.1: a backend, an app server that mounts
//! courier's proxy route in front of it, the routes record written from the endpoints marked
//! `.expose(true)`, and a `ProxyCaller` making the same typed calls a page would — a cached read
//! (GET), a write (POST), a file upload (multipart), a per-call timeout sent to the proxy, a
//! call the routes do not allow (refused before sending) and one the proxy refuses.
//!
//! ```sh
//! cargo run --example proxy
//! ```

use axum::extract::{Multipart, Path};
use axum::routing::{get, post};
use axum::{Json, Router};
use courier::encode::{FilePart, Form};
use courier::options::CacheOptions;
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::ProxyCaller;
use courier::{ApiDef, CallOptions};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Serialize)]
struct UserId(u64);

#[derive(Serialize)]
struct NewUser {
    name: String,
}

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    create: Http<User, NewUser, Mutation>,
    avatar: Http<Value, Form, Mutation>,
    slow: Http<Value>,
}

#[derive(courier::Group)]
struct Admin {
    purge: Http<Value, (), Mutation>,
}

#[derive(courier::Api)]
struct Example {
    users: Group<Users>,
    admin: Group<Admin>,
}

fn api(backend: SocketAddr) -> Result<courier::Api<Example>, courier::ConfigurationError> {
    let users = Group::new(Users {
        get: endpoint().get("/:id").cache(CacheOptions::new()),
        create: endpoint().post(""),
        avatar: endpoint().post("/:id/avatar"),
        slow: endpoint().get("/slow"),
    })
    .prefix("/users")
    .expose(true);
    // Not exposed: the browser (and so the routes) never see it.
    let admin = Group::new(Admin {
        purge: endpoint().post("/admin/purge"),
    });
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .build_typed(Example { users, admin })
}

async fn serve(app: Router) -> Result<SocketAddr, std::io::Error> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    Ok(addr)
}

fn backend() -> Router {
    Router::new()
        .route(
            "/users/{id}",
            get(|Path(id): Path<u64>| async move {
                Json(json!({ "id": id, "name": format!("user {id}") }))
            }),
        )
        .route(
            "/users",
            post(
                |Json(v): Json<Value>| async move { Json(json!({ "id": 42, "name": v["name"] })) },
            ),
        )
        .route(
            "/users/{id}/avatar",
            post(|Path(id): Path<u64>, mut form: Multipart| async move {
                let mut parts = Vec::new();
                while let Ok(Some(field)) = form.next_field().await {
                    let name = field.name().unwrap_or_default().to_owned();
                    let bytes = field.bytes().await.map(|b| b.len()).unwrap_or(0);
                    parts.push(json!({ "part": name, "bytes": bytes }));
                }
                Json(json!({ "user": id, "received": parts }))
            }),
        )
        .route(
            "/users/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                Json(json!("late"))
            }),
        )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = serve(backend()).await?;

    // The app server: the proxy route for source "demo".
    let definition = api(backend)?;
    let app = Proxy::new()
        .source("demo", definition.def().clone())
        .into_router()?;
    let app_addr = serve(app).await?;
    println!("backend on http://{backend}, proxy route on http://{app_addr}/api/request");

    // What `courier routes` writes for the page: the exposed endpoints and how to reach them.
    let routes = Routes::from_api("demo", definition.def());
    println!("routes: {}", routes.to_json());

    // The page's side.
    let caller = ProxyCaller::<Example>::routes(format!("http://{app_addr}"), routes)
        .on_error(|e| println!("  (on_error saw status {})", e.status_code()))
        .build()?;

    let user = caller.users().get(UserId(7)).await?;
    println!("users.get(7) over GET            -> {user:?}");

    let created = caller
        .users()
        .create(NewUser { name: "Ada".into() })
        .await?;
    println!("users.create over POST           -> {created:?}");

    let form = Form::new().text("id", "7").file(
        "photo",
        FilePart::new(vec![0u8; 4096])
            .filename("me.png")
            .content_type("image/png"),
    );
    let uploaded = caller
        .users()
        .with(CallOptions::new().on_upload_progress(|p| {
            if p.percent >= 1.0 {
                println!("  upload progress reached 100%");
            }
        }))
        .avatar(form)
        .await?;
    println!("users.avatar as multipart        -> {uploaded}");

    let err = caller
        .users()
        .with(CallOptions::new().timeout(Duration::from_millis(300)))
        .slow()
        .await
        .expect_err("the backend takes 2 s");
    println!(
        "users.slow with a 300 ms timeout -> timeout: {} (status {})",
        err.is_timeout() || err.status_code() == 504,
        err.status_code()
    );

    let err = caller.admin().purge().await.expect_err("not in the routes");
    println!(
        "admin.purge                      -> {} (nothing was sent)",
        err.configuration()
            .map(|c| c.code().as_str())
            .unwrap_or("?")
    );

    // The proxy itself refuses a write over GET, whatever a client does.
    let err = caller
        .users()
        .with(CallOptions::new().method(http::Method::GET))
        .create(NewUser { name: "Eve".into() })
        .await
        .expect_err("a write over GET");
    println!(
        "users.create forced to GET       -> {} {}",
        err.status_code(),
        err.http_error()
            .map(|h| h.data["error"]["code"].to_string())
            .unwrap_or_default()
    );
    Ok(())
}
