//! What this shows: an API declared once as Rust structs, validated when built, and called with
//! compile-time types through `Caller` — a read, a write, a nested group, `.raw()`, an HTTP error
//! and a per-call timeout — against a demo backend started in-process on 127.0.0.1.
//!
//! Run it with `cargo run --example quickstart`.

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::{ApiDef, CallOptions, Caller, ConfigurationError, GroupDef, HttpEndpoint};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

// ---- the API's types -------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Post {
    id: u64,
    title: String,
}

/// Fills `/users/:id` on its own: a scalar fills a template's only parameter.
#[derive(Serialize)]
struct UserId(pub u64);

#[derive(Serialize)]
struct NewUser {
    name: String,
}

#[derive(Serialize)]
struct Search {
    q: String,
    tags: Vec<String>,
}

#[derive(Serialize)]
struct PostsOf {
    id: u64,
    page: u32,
}

// ---- the API's shape ---------------------------------------------------------------------------

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    create: Http<User, NewUser, Mutation>,
    search: Http<Vec<User>, Search>,
    posts: Group<Posts>,
}

#[derive(courier::Group)]
struct Posts {
    list: Http<Vec<Post>, PostsOf>,
}

#[derive(courier::Api)]
struct Demo {
    users: Group<Users>,
}

fn demo_api(base_url: &str) -> Result<courier::Api<Demo>, ConfigurationError> {
    let posts = Group::new(Posts {
        list: endpoint().get(""),
    })
    .prefix("/:id/posts");
    let users = Group::new(Users {
        get: endpoint().get("/:id"),
        create: endpoint().post("").expose(true),
        search: endpoint().get("/search"),
        posts,
    })
    .prefix("/users")
    .expose(true);
    ApiDef::builder()
        .base_url(base_url)
        .header("x-api-key", "demo-key")
        .default_query_params(serde_json::json!({ "lang": "en" }))
        .cancel_previous(["users.search"])
        .build_typed(Demo { users })
}

// ---- the demo backend --------------------------------------------------------------------------

async fn backend() -> std::io::Result<SocketAddr> {
    async fn user(
        Path(id): Path<u64>,
    ) -> Result<Json<User>, (StatusCode, Json<serde_json::Value>)> {
        if id == 404 {
            return Err((
                StatusCode::NOT_FOUND,
                Json(serde_json::json!({ "error": "no such user" })),
            ));
        }
        if id == 999 {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        Ok(Json(User {
            id,
            name: format!("user {id}"),
        }))
    }
    async fn create(Json(new): Json<serde_json::Value>) -> (StatusCode, Json<User>) {
        let name = new["name"].as_str().unwrap_or_default().to_owned();
        (StatusCode::CREATED, Json(User { id: 100, name }))
    }
    async fn search(Query(q): Query<Vec<(String, String)>>) -> Json<Vec<User>> {
        let names = q
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>();
        Json(vec![User {
            id: 1,
            name: format!("matched {}", names.join("&")),
        }])
    }
    async fn posts(Path(id): Path<u64>) -> Json<Vec<Post>> {
        Json(vec![Post {
            id: id * 10,
            title: format!("first post of user {id}"),
        }])
    }
    let app = Router::new()
        .route("/users", axum::routing::post(create))
        .route("/users/search", get(search))
        .route("/users/{id}", get(user))
        .route("/users/{id}/posts", get(posts));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = backend().await?;
    println!("demo backend on http://{addr}\n");

    // 1. The definition, validated and resolved when built.
    let api = demo_api(&format!("http://{addr}"))?;
    println!("endpoints:");
    for e in api.endpoints() {
        let template = e.template().map(|t| t.as_str()).unwrap_or("(via)");
        println!(
            "  {:<18} {:<9} {:<22} exposed={}",
            e.path(),
            e.kind().map(|k| k.as_str()).unwrap_or("-"),
            template,
            e.is_exposed()
        );
    }

    // 2. A definition that cannot be used fails when built, naming the offender.
    let bad = ApiDef::builder()
        .group(
            "users",
            GroupDef::new().endpoint("by.id", HttpEndpoint::get("/:id")),
        )
        .build();
    if let Err(e) = bad {
        println!("\na bad definition: {e}");
    }

    // 3. Typed calls through the default transport (hyper-util with rustls).
    let client = Caller::new(api)?;

    let user: User = client.users().get(UserId(7)).await?;
    println!("\nusers.get(UserId(7))          -> {user:?}");

    let whole = client.users().raw().get(UserId(8)).await?;
    println!(
        "users.raw().get(UserId(8))    -> status {}, content-type {:?}, data {:?}",
        whole.status, whole.headers["content-type"], whole.data
    );

    let created = client
        .users()
        .create(NewUser { name: "Ada".into() })
        .await?;
    println!("users.create(NewUser)         -> {created:?}");

    let found = client
        .users()
        .search(Search {
            q: "a b".into(),
            tags: vec!["x".into(), "y".into()],
        })
        .await?;
    println!("users.search(Search)          -> {found:?}");

    let posts = client
        .users()
        .posts()
        .list(PostsOf { id: 7, page: 2 })
        .await?;
    println!("users.posts().list(PostsOf)   -> {posts:?}");

    // 4. An HTTP error keeps status, headers and the parsed body.
    let err = client.users().get(UserId(404)).await.unwrap_err();
    let http = err.http_error().expect("a 404 is an HTTP error");
    println!(
        "users.get(UserId(404))        -> error: {err}; data {}",
        http.data
    );

    // 5. A per-call timeout, told apart from other failures.
    let slow = client
        .users()
        .with(CallOptions::new().timeout(Duration::from_millis(200)))
        .get(UserId(999))
        .await;
    match slow {
        Err(e) if e.is_timeout() => println!("users.with(200 ms).get(999)   -> error: {e}"),
        other => println!("users.with(200 ms).get(999)   -> unexpected: {other:?}"),
    }
    Ok(())
}
