//! Typed calls through `Caller` over the default transport, against an axum backend on
//! 127.0.0.1: the views' types, `.raw()`, `.with()`, nested groups, `.via()` with every verb of
//! the request client, uploads, streamed bodies and empty responses.

use axum::extract::{Multipart, Path, Request};
use axum::http::StatusCode;
use axum::routing::{any, get, post};
use axum::{Json, Router};
use courier::encode::{FilePart, Form};
use courier::response::BodyStream;
use courier::tree::WireCall;
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::{ApiDef, CallOptions, Caller};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
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

#[derive(Serialize, Deserialize)]
struct Verb {
    verb: String,
}

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    create: Http<User, NewUser, Mutation>,
    remove: Http<(), UserId, Mutation>,
    avatar: Http<Value, Form, Mutation>,
    posts: Group<Posts>,
}

#[derive(courier::Group)]
struct Misc {
    maybe: Http<Option<User>, UserId>,
    export: Http<BodyStream>,
    any_verb: Http<Value, Verb>,
}

#[derive(courier::Group)]
struct Posts {
    count: Http<u64, UserId>,
}

#[derive(courier::Api)]
struct Demo {
    users: Group<Users>,
    misc: Group<Misc>,
}

async fn backend(seen: Arc<Mutex<Vec<String>>>) -> SocketAddr {
    let record = move |req: Request| {
        let seen = seen.clone();
        async move {
            let method = req.method().to_string();
            let uri = req.uri().to_string();
            let body = req
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            seen.lock()
                .unwrap()
                .push(format!("{method} {uri} {}", String::from_utf8_lossy(&body)));
            Json(json!({ "method": method }))
        }
    };
    let app = Router::new()
        .route(
            "/users/{id}",
            get(|Path(id): Path<u64>| async move {
                if id == 999 {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                }
                Json(json!({ "id": id, "name": format!("user {id}") }))
            })
            .delete(|| async { StatusCode::NO_CONTENT }),
        )
        .route(
            "/users",
            post(|Json(v): Json<Value>| async move { Json(json!({ "id": 1, "name": v["name"] })) }),
        )
        .route("/maybe/{id}", get(|| async { StatusCode::NO_CONTENT }))
        .route(
            "/users/{id}/avatar",
            post(|Path(id): Path<u64>, mut form: Multipart| async move {
                let mut parts = Vec::new();
                while let Ok(Some(field)) = form.next_field().await {
                    let name = field.name().unwrap_or_default().to_owned();
                    let len = field.bytes().await.map(|b| b.len()).unwrap_or(0);
                    parts.push(json!([name, len]));
                }
                Json(json!({ "id": id, "parts": parts }))
            }),
        )
        .route("/export", get(|| async { "a,b\n1,2\n" }))
        .route(
            "/users/{id}/posts/count",
            get(|Path(id): Path<u64>| async move { Json(id * 3) }),
        )
        .route("/verbs", any(record));
    let addr = courier_test_support::serve(app).await;
    addr
}

fn api(addr: SocketAddr) -> courier::Api<Demo> {
    let users = Group::new(Users {
        get: endpoint().get("/:id"),
        create: endpoint().post(""),
        remove: endpoint().del("/:id"),
        avatar: endpoint().post("/:id/avatar"),
        posts: Group::new(Posts {
            count: endpoint().get("/count"),
        })
        .prefix("/:id/posts"),
    })
    .prefix("/users");
    let misc = Group::new(Misc {
        maybe: endpoint().get("/maybe/:id"),
        export: endpoint().get("/export").stream_response(),
        any_verb: endpoint().via(|v: Verb| {
            let call = match v.verb.as_str() {
                "get" => WireCall::get("/verbs"),
                "post" => WireCall::post("/verbs"),
                "put" => WireCall::put("/verbs"),
                "patch" => WireCall::patch("/verbs"),
                "del" => WireCall::del("/verbs"),
                "head" => WireCall::head("/verbs"),
                "options" => WireCall::options("/verbs"),
                _ => WireCall::query("/verbs"),
            };
            Ok(call.variables(json!({ "x": 1 })))
        }),
    });
    ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .build_typed(Demo { users, misc })
        .unwrap()
}

#[tokio::test]
async fn typed_calls_resolve_to_their_types() {
    let addr = backend(Arc::default()).await;
    let caller = Caller::new(api(addr)).unwrap();

    let user: User = caller.users().get(UserId(7)).await.unwrap();
    assert_eq!(
        user,
        User {
            id: 7,
            name: "user 7".into()
        }
    );

    let created = caller
        .users()
        .create(NewUser { name: "Ada".into() })
        .await
        .unwrap();
    assert_eq!(created.name, "Ada");

    let count: u64 = caller.users().posts().count(UserId(5)).await.unwrap();
    assert_eq!(count, 15);

    let whole = caller.users().raw().get(UserId(8)).await.unwrap();
    assert_eq!(whole.status, 200);
    assert_eq!(whole.headers["content-type"], "application/json");
    assert_eq!(whole.data.id, 8);
}

#[tokio::test]
async fn no_content_gives_unit_or_none() {
    let addr = backend(Arc::default()).await;
    let caller = Caller::new(api(addr)).unwrap();
    let (): () = caller.users().remove(UserId(1)).await.unwrap();
    let maybe: Option<User> = caller.misc().maybe(UserId(1)).await.unwrap();
    assert_eq!(maybe, None);
}

#[tokio::test]
async fn with_sets_a_per_call_timeout() {
    let addr = backend(Arc::default()).await;
    let caller = Caller::new(api(addr)).unwrap();
    let err = caller
        .users()
        .with(CallOptions::new().timeout(Duration::from_millis(100)))
        .get(UserId(999))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.endpoint(), Some("users.get"));
}

#[tokio::test]
async fn a_form_uploads_as_multipart() {
    let addr = backend(Arc::default()).await;
    let caller = Caller::new(api(addr)).unwrap();
    let form = Form::new().text("id", "4").file(
        "avatar",
        FilePart::new(vec![1u8; 3000])
            .filename("a.png")
            .content_type("image/png"),
    );
    let res = caller.users().avatar(form).await.unwrap();
    assert_eq!(res, json!({ "id": 4, "parts": [["avatar", 3000]] }));
}

#[tokio::test]
async fn a_streamed_body_arrives_unread() {
    let addr = backend(Arc::default()).await;
    let caller = Caller::new(api(addr)).unwrap();
    let stream = caller.misc().export().await.unwrap();
    let bytes = stream.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(bytes, "a,b\n1,2\n");
}

#[tokio::test]
async fn via_uses_every_verb_of_the_request_client() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let addr = backend(seen.clone()).await;
    let caller = Caller::new(api(addr)).unwrap();
    for verb in [
        "get", "post", "put", "patch", "del", "head", "options", "query",
    ] {
        let res = caller
            .misc()
            .raw()
            .any_verb(Verb { verb: verb.into() })
            .await
            .unwrap();
        assert_eq!(res.status, 200, "{verb}");
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "GET /verbs?x=1 ",
            "POST /verbs {\"x\":1}",
            "PUT /verbs {\"x\":1}",
            "PATCH /verbs {\"x\":1}",
            "DELETE /verbs?x=1 ",
            "HEAD /verbs?x=1 ",
            "OPTIONS /verbs?x=1 ",
            "QUERY /verbs {\"x\":1}",
        ]
    );
}
