//! What this measures: the pure cost of turning a call into an `http::Request` — address,
//! variables, defaults and headers — with `build_request`, for a typical read, a JSON write and a
//! small multipart upload. No I/O: this is the per-call floor courier adds before a transport.
//!
//! Run: `cargo bench --bench encode`

use courier::encode::{FilePart, Form, Variables};
use courier::{ApiDef, GroupDef, HttpEndpoint};
// Request building is courier's own step, below the public API: measured through the core crate.
use courier_core::build_request;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Map};
use std::hint::black_box;

fn api() -> ApiDef {
    ApiDef::builder()
        .base_url("http://127.0.0.1:9000/v1")
        .header("x-api-key", "secret")
        .default_query_params(json!({ "lang": "en" }))
        .default_body(json!({ "client": "web" }))
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("create", HttpEndpoint::post(""))
                .endpoint("avatar", HttpEndpoint::post("/:id/avatar")),
        )
        .build()
        .expect("a valid tree")
}

fn bench(c: &mut Criterion) {
    let api = api();
    let get = api.endpoint("users.get").expect("defined");
    let create = api.endpoint("users.create").expect("defined");
    let avatar = api.endpoint("users.avatar").expect("defined");
    let none = Map::new();

    let mut group = c.benchmark_group("build_request");
    group.bench_function("get /users/:id?fields&tags", |b| {
        b.iter(|| {
            let vars = json!({ "id": 7, "fields": "name,email", "tags": ["a", "b"] });
            build_request(&api, get, black_box(vars).into(), &none, None, None).expect("encodes")
        })
    });
    group.bench_function("post json", |b| {
        b.iter(|| {
            let vars =
                json!({ "name": "Ada Lovelace", "email": "ada@example.com", "roles": ["admin"] });
            build_request(&api, create, black_box(vars).into(), &none, None, None).expect("encodes")
        })
    });
    group.bench_function("post multipart 4 KiB", |b| {
        let file = vec![7u8; 4096];
        b.iter(|| {
            let form = Form::new().text("id", "7").file(
                "avatar",
                FilePart::new(file.clone())
                    .filename("a.png")
                    .content_type("image/png"),
            );
            build_request(
                &api,
                avatar,
                Variables::Form(black_box(form)),
                &none,
                None,
                None,
            )
            .expect("encodes")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
