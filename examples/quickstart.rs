//! What this shows: an API declared once as Rust structs, validated when built, and its typed
//! calls — a read, a write, a nested group, `.raw()`, `.with()` and an error — encoded into real
//! HTTP requests against a demo backend started in-process on 127.0.0.1.
//!
//! Run it with `cargo run --example quickstart`.

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use courier::typed::{endpoint, ApiSpec, Group, Http, Mutation};
use courier::{
    build_request, resolve_path_options, ApiDef, Body, CallOptions, ConfigurationError, Dispatch,
    FromResponse, GroupDef, HttpCallRequest, HttpEndpoint, HttpResponse, IntoVariables,
    RequestError, ResponseBody,
};
use http_body_util::BodyExt;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use std::future::Future;
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
        create: endpoint().post("").expose(),
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

// ---- a minimal caller: build the request, send it with hyper-util, parse JSON ----------------

/// What can go wrong in this example's caller.
#[derive(Debug)]
enum DemoError {
    Configuration(ConfigurationError),
    Request(RequestError),
    Status(u16, String),
    Transport(String),
    Timeout,
}

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Configuration(e) => write!(f, "{e}"),
            Self::Request(e) => write!(f, "{e}"),
            Self::Status(status, body) => write!(f, "status {status}: {body}"),
            Self::Transport(e) => write!(f, "transport: {e}"),
            Self::Timeout => f.write_str("timed out"),
        }
    }
}

impl std::error::Error for DemoError {}

impl From<ConfigurationError> for DemoError {
    fn from(e: ConfigurationError) -> Self {
        Self::Configuration(e)
    }
}

struct HyperCaller {
    api: ApiDef,
    client: Client<HttpConnector, Body>,
}

impl HyperCaller {
    async fn send<R: FromResponse, V: IntoVariables>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> Result<HttpResponse<R>, DemoError> {
        let variables = request
            .variables
            .into_variables()
            .map_err(|e| DemoError::Transport(e.to_string()))?;
        let values = resolve_path_options(request.endpoint.path_options(), None)
            .await
            .map_err(|e| DemoError::Transport(e.to_string()))?;
        let headers = request.options.map(CallOptions::headers);
        let http_request = build_request(&self.api, request.endpoint, variables, &values, headers)
            .map_err(DemoError::Request)?;
        println!("  -> {} {}", http_request.method(), http_request.uri());
        let response = self
            .client
            .request(http_request)
            .await
            .map_err(|e| DemoError::Transport(e.to_string()))?;
        let (parts, body) = response.into_parts();
        let bytes = body
            .collect()
            .await
            .map_err(|e| DemoError::Transport(e.to_string()))?
            .to_bytes();
        if parts.status.as_u16() >= 400 {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            return Err(DemoError::Status(parts.status.as_u16(), text));
        }
        let data = R::from_response(ResponseBody::Json(bytes))
            .map_err(|e| DemoError::Transport(e.to_string()))?;
        Ok(HttpResponse {
            status: parts.status,
            headers: parts.headers,
            data,
        })
    }
}

impl Dispatch for HyperCaller {
    type Error = DemoError;

    fn api(&self) -> &ApiDef {
        &self.api
    }

    fn http<R, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<HttpResponse<R>, DemoError>> + Send
    where
        R: FromResponse,
        V: IntoVariables + Send,
    {
        let timeout = request
            .options
            .and_then(CallOptions::timeout_value)
            .or(request.endpoint.definition().options().timeout)
            .or(self.api.options().timeout);
        let call = self.send(request);
        async move {
            match timeout {
                Some(t) => tokio::time::timeout(t, call)
                    .await
                    .map_err(|_| DemoError::Timeout)?,
                None => call.await,
            }
        }
    }
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

    // 3. Typed calls.
    let caller = HyperCaller {
        api: api.def().clone(),
        client: Client::builder(TokioExecutor::new()).build_http(),
    };
    let client = <Demo as ApiSpec>::Client::from(caller);

    println!("\nusers.get(UserId(7)):");
    let user: User = client.users().get(UserId(7)).await?;
    println!("  {user:?}");

    println!("users.raw().get(UserId(8)):");
    let whole = client.users().raw().get(UserId(8)).await?;
    println!("  status {} data {:?}", whole.status, whole.data);

    println!("users.create(NewUser):");
    let created = client
        .users()
        .create(NewUser { name: "Ada".into() })
        .await?;
    println!("  {created:?}");

    println!("users.search(Search):");
    let found = client
        .users()
        .search(Search {
            q: "a b".into(),
            tags: vec!["x".into(), "y".into()],
        })
        .await?;
    println!("  {found:?}");

    println!("users.posts().list(PostsOf):");
    let posts = client
        .users()
        .posts()
        .list(PostsOf { id: 7, page: 2 })
        .await?;
    println!("  {posts:?}");

    println!("users.get(UserId(404)):");
    match client.users().get(UserId(404)).await {
        Err(DemoError::Status(status, body)) => println!("  error: status {status}, body {body}"),
        other => println!("  unexpected: {other:?}"),
    }

    println!("users.with(timeout 200 ms).get(UserId(999)):");
    let fast = client
        .users()
        .with(CallOptions::new().timeout(Duration::from_millis(200)))
        .get(UserId(999))
        .await;
    match fast {
        Err(DemoError::Timeout) => println!("  error: timed out after 200 ms"),
        other => println!("  unexpected: {other:?}"),
    }
    Ok(())
}
