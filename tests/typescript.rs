//! The routes module's TypeScript types, generated from a typed API's Rust types (ts-rs, the
//! `typescript` feature): what each endpoint's entry says, which declarations ship, and the
//! errors. `js/` type-checks a page against such a module (`npm run typecheck`).

// The types exist to be described, not read.
#![allow(dead_code)]

use courier::encode::Form;
use courier::error::ErrorCode;
use courier::options::CacheOptions;
use courier::routes::{types::Types, Command, Routes};
use courier::typed::{channel, endpoint, stream, Channel, Group, Http, Mutation, Stream};
use courier::ApiDef;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use ts_rs::TS;

/// A user, as the upstream answers it.
#[derive(Serialize, Deserialize, TS)]
struct User {
    id: u64,
    name: String,
    #[serde(rename = "emailAddress")]
    email: Option<String>,
    roles: Vec<Role>,
}

#[derive(Serialize, Deserialize, TS)]
enum Role {
    Admin,
    Member,
}

#[derive(Serialize, TS)]
struct UserId {
    id: u64,
}

#[derive(Serialize, TS)]
struct NewUser {
    name: String,
}

#[derive(Deserialize, TS)]
struct Presence {
    online: bool,
}

/// Both the channel's message out and its message in.
#[derive(Serialize, Deserialize, TS)]
struct Say {
    text: String,
    reply_to: Option<u64>,
}

/// A to-do: read, and sent back whole.
#[derive(Serialize, Deserialize, TS)]
struct Todo {
    id: u64,
    title: String,
    done: Option<bool>,
}

/// Which to-dos: all of them without `done`.
#[derive(Serialize, Deserialize, TS)]
struct ListTodos {
    done: Option<bool>,
}

/// A filter nested in variables, with no `Option` of its own.
#[derive(Serialize, Deserialize, TS)]
struct Page {
    filter: ListTodos,
    after: u64,
}

/// Only an internal endpoint uses it: it must not ship.
#[derive(Serialize, Deserialize, TS)]
struct AuditLog {
    entries: Vec<String>,
}

#[derive(courier::Group, courier::TypeScript)]
struct Users {
    get: Http<User, UserId>,
    me: Http<User>,
    create: Http<User, NewUser, Mutation>,
    avatar: Http<User, Form, Mutation>,
    presence: Stream<Presence, UserId>,
    #[courier(rename = "chatRoom")]
    room: Channel<Say, String, Say>,
    news: Channel<Say, String>,
    /// Named like the contained group below: both an endpoint and a group.
    #[courier(rename = "settings")]
    all_settings: Http<Vec<String>>,
    settings: Group<Settings>,
}

#[derive(courier::Group, courier::TypeScript)]
struct Settings {
    theme: Http<String, (), Mutation>,
}

#[derive(courier::Group, courier::TypeScript)]
struct Todos {
    list: Http<Vec<Todo>, ListTodos>,
    page: Http<Vec<Todo>, Page>,
    update: Http<Todo, Todo, Mutation>,
    bulk: Http<Vec<Todo>, Vec<Todo>, Mutation>,
}

#[derive(courier::Group, courier::TypeScript)]
struct Admin {
    audit: Http<AuditLog>,
}

#[derive(courier::Api, courier::TypeScript)]
struct Example {
    users: Group<Users>,
    todos: Group<Todos>,
    admin: Group<Admin>,
}

fn api() -> courier::Api<Example> {
    api_on(ApiDef::builder().base_url("http://127.0.0.1:9"))
}

fn api_on(builder: courier::ApiBuilder) -> courier::Api<Example> {
    let settings = Group::new(Settings {
        theme: endpoint().post("/theme"),
    });
    let users = Group::new(Users {
        get: endpoint().get("/:id").cache(CacheOptions::new()),
        me: endpoint().get("/me"),
        create: endpoint().post(""),
        avatar: endpoint().post("/avatar"),
        presence: stream().get("/presence"),
        room: channel().connect("/room/:id").send(),
        news: channel().connect("/news/:id"),
        all_settings: endpoint().get("/settings"),
        settings,
    })
    .expose(true);
    let todos = Group::new(Todos {
        list: endpoint().get("/todos"),
        page: endpoint().get("/todos/page"),
        update: endpoint().put("/todos/:id"),
        bulk: endpoint().post("/todos/bulk"),
    })
    .expose(true);
    let admin = Group::new(Admin {
        audit: endpoint().get("/audit"),
    });
    builder
        .build_typed(Example {
            users,
            todos,
            admin,
        })
        .unwrap()
}

#[test]
fn the_routes_command_types_an_api_built_for_its_routes_without_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("routes.ts");
    let out_arg = out.to_str().unwrap();

    // No base URL: the routes are the API's shape.
    let api = api_on(ApiDef::builder().for_routes());
    let code = Command::new("demo", &api).run_with(["--ts", "--out", out_arg]);
    assert_eq!(code, ExitCode::SUCCESS);
    let module = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        module,
        Routes::from_api("demo", &api)
            .to_typescript_with(&Types::of::<Example>())
            .unwrap()
    );
    assert!(
        module.contains(r#""users.get": { variables: UserId; response: User };"#),
        "{module}"
    );
    assert_eq!(
        Command::new("demo", &api).run_with(["--ts", "--out", out_arg, "--check"]),
        ExitCode::SUCCESS
    );

    // The untyped command writes `unknown`, and the module it writes is not the typed one.
    assert_eq!(
        Command::untyped("demo", api.def()).run_with(["--ts", "--out", out_arg, "--check"]),
        ExitCode::from(1)
    );

    // What is built for its routes cannot be called: a client and a proxy refuse it, naming
    // `base_url`.
    let err = courier::Client::new(api.def().clone()).unwrap_err();
    let config = err.configuration().expect("a configuration error");
    assert_eq!(
        (config.code(), config.path()),
        (ErrorCode::InvalidBaseUrl, Some("base_url"))
    );
    let err = courier::server::Proxy::new()
        .source("demo", api.def().clone())
        .into_router()
        .unwrap_err();
    assert!(err.to_string().contains("no `base_url`"), "{err}");
}

#[test]
fn each_exposed_endpoint_carries_its_rust_types() {
    let module = Routes::from_api("demo", &api())
        .to_typescript_with(&Types::of::<Example>())
        .unwrap();
    for entry in [
        r#""users.get": { variables: UserId; response: User };"#,
        // No variables: `null`, which the browser caller takes as "no argument".
        r#""users.me": { variables: null; response: User };"#,
        r#""users.create": { variables: NewUser; response: User };"#,
        r#""users.avatar": { variables: FormData; response: User };"#,
        r#""users.presence": { variables: UserId; response: Presence };"#,
        // Renamed: the tree's name, not the field's. What the page sends is `Sent.Say`.
        r#""users.chatRoom": { variables: string; response: Say; send: Sent.Say };"#,
        // Push-only: no `send`.
        r#""users.news": { variables: string; response: Say };"#,
        r#""users.settings.theme": { variables: null; response: string };"#,
        // The endpoint named like the group beside it.
        r#""users.settings": { variables: null; response: Array<string> };"#,
    ] {
        assert!(module.contains(entry), "{entry}\n{module}");
    }
    // Declared once each, serde's renames kept, 64-bit integers as JSON numbers.
    assert!(
        module.contains(
            "export type User = { id: number, name: string, emailAddress: string | null, roles: Array<Role>, };"
        ),
        "{module}"
    );
    assert!(
        module.contains(r#"export type Role = "Admin" | "Member";"#),
        "{module}"
    );
    assert_eq!(
        module
            .lines()
            .filter(|line| line.starts_with("export type Say ="))
            .count(),
        1,
        "{module}"
    );
    // Nothing of the endpoint the proxy does not expose.
    assert!(!module.contains("admin.audit"), "{module}");
    assert!(!module.contains("AuditLog"), "{module}");
    assert!(module
        .contains("export const routes: typeof record & { readonly types?: Endpoints } = record;"));
}

/// The module's `Sent` namespace, one declaration a line.
fn sent_namespace(module: &str) -> &str {
    let start = module
        .find("export namespace Sent {\n")
        .unwrap_or_else(|| panic!("no namespace\n{module}"));
    let end = start + module[start..].find("\n}\n").unwrap();
    &module[start..end]
}

#[test]
fn an_option_field_may_be_left_out_of_what_a_page_sends() {
    let module = Routes::from_api("demo", &api())
        .to_typescript_with(&Types::of::<Example>())
        .unwrap();
    let sent = sent_namespace(&module);
    // Variables: `done?:`, in the type a page sends, nested types and arrays alike.
    for entry in [
        r#""todos.list": { variables: Sent.ListTodos; response: Array<Todo> };"#,
        r#""todos.page": { variables: Sent.Page; response: Array<Todo> };"#,
        // Used both ways: sent as `Sent.Todo`, answered as `Todo`.
        r#""todos.update": { variables: Sent.Todo; response: Todo };"#,
        r#""todos.bulk": { variables: Array<Sent.Todo>; response: Array<Todo> };"#,
    ] {
        assert!(module.contains(entry), "{entry}\n{module}");
    }
    for declaration in [
        "  export type ListTodos = { done?: boolean | null, };",
        "  export type Todo = { id: number, title: string, done?: boolean | null, };",
        "  export type Say = { text: string, reply_to?: number | null, };",
        // No `Option` of its own: copied as it is, so that its `ListTodos` is the sent one.
        "  export type Page = { filter: ListTodos, after: number, };",
    ] {
        assert!(sent.contains(declaration), "{declaration}\n{module}");
    }
    // Responses: `done: boolean | null`, a required key, as serde writes `None`.
    for declaration in [
        "export type Todo = { id: number, title: string, done: boolean | null, };",
        "export type Say = { text: string, reply_to: number | null, };",
        "export type ListTodos = { done: boolean | null, };",
    ] {
        assert!(
            module.lines().any(|line| line == declaration),
            "{declaration}\n{module}"
        );
    }
    // Only what differs, or uses what does: nothing of a type only read, nor of one sent with
    // no `Option` in it.
    for name in ["User", "UserId", "NewUser", "Presence", "Role"] {
        assert!(
            !sent.contains(&format!("export type {name} ")),
            "{name}\n{module}"
        );
        assert!(
            !module.contains(&format!("Sent.{name}")),
            "{name}\n{module}"
        );
    }
}

/// The wire facts the sent forms stand on: a page that leaves an `Option` field out sends
/// what serde reads as `None`, and so does one that sends `null`.
#[test]
fn a_left_out_option_and_a_null_read_as_none() {
    use courier::encode::{encode, DefaultSearchParams, EncodeInput, PathTemplate};
    use serde_json::{json, Map};

    let call = |method: http::Method, variables: serde_json::Value| {
        let path = PathTemplate::parse("/todos").unwrap();
        let encoded = encode(EncodeInput {
            method: &method,
            path: &path,
            path_options: &Map::new(),
            variables: variables.into(),
            default_query: None,
            default_body: None,
            body_serializer: None,
            search_params: &DefaultSearchParams,
        })
        .unwrap();
        let body = encoded.body.as_bytes().unwrap().clone();
        (encoded.path_and_query, body)
    };
    // A query leaves `null` out at any depth: left out or `null`, the same address.
    for variables in [
        json!({}),
        json!({ "done": null }),
        json!({ "filter": { "done": null } }),
    ] {
        assert_eq!(
            call(http::Method::GET, variables),
            ("/todos".into(), "".into())
        );
    }
    // A JSON body keeps what the page sent; serde reads a missing `Option` field and a `null`
    // alike, nested too.
    let (_, body) = call(
        http::Method::POST,
        json!({ "filter": { "done": null }, "after": 0 }),
    );
    assert_eq!(body, r#"{"after":0,"filter":{"done":null}}"#);
    for body in [
        r#"{"filter":{},"after":0}"#,
        r#"{"filter":{"done":null},"after":0}"#,
    ] {
        let page: Page = serde_json::from_str(body).unwrap();
        assert_eq!(page.filter.done, None, "{body}");
    }
    let page: Page = serde_json::from_str(r#"{"filter":{"done":true},"after":0}"#).unwrap();
    assert_eq!(page.filter.done, Some(true));
}

#[test]
fn an_api_without_types_is_unknown() {
    let module = Routes::from_api("demo", &api()).to_typescript();
    assert!(
        module.contains(r#""users.get": { variables: unknown; response: unknown };"#),
        "{module}"
    );
    assert!(
        module.contains(
            r#""users.chatRoom": { variables: unknown; response: unknown; send: unknown };"#
        ),
        "{module}"
    );
    assert!(!module.contains("export type User ="), "{module}");
}

mod first {
    #[derive(serde::Deserialize, ts_rs::TS)]
    pub(crate) struct Item {
        pub(crate) a: u8,
    }
}

mod second {
    #[derive(serde::Deserialize, ts_rs::TS)]
    pub(crate) struct Item {
        pub(crate) b: String,
    }
}

#[derive(courier::Group, courier::TypeScript)]
struct Clash {
    one: Http<first::Item>,
    two: Http<second::Item>,
}

#[derive(courier::Api, courier::TypeScript)]
struct Clashing {
    clash: Group<Clash>,
}

#[test]
fn two_types_of_one_name_are_refused_with_the_fix() {
    let clash = Group::new(Clash {
        one: endpoint().get("/1"),
        two: endpoint().get("/2"),
    })
    .expose(true);
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9")
        .build_typed(Clashing { clash })
        .unwrap();
    let err = Routes::from_api("demo", &api)
        .to_typescript_with(&Types::of::<Clashing>())
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidOption);
    assert!(
        err.to_string()
            .contains("two different types are named `Item`"),
        "{err}"
    );
    assert!(err.to_string().contains("#[ts(rename"), "{err}");
}

#[test]
fn the_record_names_the_csrf_token_and_not_its_key() {
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9")
        .session(
            courier::options::SessionOptions::new()
                .cookies(["sid"])
                .csrf_signed(
                    "csrf_token",
                    "x-csrf-token",
                    courier::options::CsrfKey::new([7u8; 32]),
                ),
        )
        .group(
            "users",
            courier::GroupDef::new()
                .expose(true)
                .endpoint("create", courier::HttpEndpoint::post("")),
        )
        .build()
        .unwrap();
    let routes = Routes::from_api("demo", &api);
    let json = routes.to_json();
    assert!(
        json.contains(r#""csrf":{"cookie":"csrf_token","header":"x-csrf-token"}"#),
        "{json}"
    );
    assert!(!json.contains("key"), "{json}");
    let back: Routes = serde_json::from_str(&json).unwrap();
    assert_eq!(back, routes);
}
