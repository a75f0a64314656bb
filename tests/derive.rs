//! The derives end to end: the runtime tree they register, and the typed views they write, run
//! over a recording `Dispatch` (the unit test of the view layer; calls over the network are the
//! HTTP client's tests).

// The test's own types go undocumented; that the generated items carry docs is checked by
// `tests/ui/pass`, under `#![deny(missing_docs)]`.
#![allow(missing_docs)]

use courier::encode::Variables;
use courier::error::ErrorCode;
use courier::response::{FromResponse, HttpResponse, ResponseBody};
use courier::tree::Kind;
use courier::typed::dispatch::{Dispatch, HttpCallRequest, IntoVariables};
use courier::typed::{
    channel, endpoint, stream, ApiSpec, Channel, Data, Group, Http, Mutation, Scope, Stream,
};
use courier::{Api, ApiDef, CallOptions, ConfigurationError, GroupDef, HttpEndpoint};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

// ---- the API ----------------------------------------------------------------------------------

#[derive(Debug, PartialEq, Deserialize)]
pub struct User {
    pub id: u64,
    pub name: String,
}

#[derive(Serialize)]
pub struct UserId(pub u64);

#[derive(Serialize)]
pub struct NewUser {
    pub name: String,
}

#[derive(Serialize)]
pub struct Search {
    pub q: String,
}

#[derive(Serialize)]
pub struct Email(pub String);

#[derive(Deserialize)]
pub struct UserEvent;

#[derive(Debug, PartialEq, Serialize)]
pub struct Filter {
    pub kind: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct RoomId {
    pub id: String,
}

#[derive(Deserialize)]
pub struct ChatOut;

#[derive(Serialize)]
pub struct ChatIn;

#[derive(Debug, PartialEq, Deserialize)]
pub struct Post {
    pub id: u64,
    pub title: String,
}

#[derive(Serialize)]
pub struct PostRef {
    pub id: u64,
    pub post: u64,
}

#[derive(Debug, PartialEq, Deserialize)]
pub struct Comment {
    pub text: String,
}

#[derive(Debug, PartialEq, Deserialize)]
pub struct Stats {
    pub users: u64,
}

#[derive(courier::Group)]
pub struct Users {
    /// One user by id.
    pub get: Http<User, UserId>,
    pub me: Http<User>,
    pub create: Http<User, NewUser, Mutation>,
    pub search: Http<Vec<User>, Search>,
    #[courier(rename = "getByEmail")]
    pub by_email: Http<User, Email>,
    pub r#type: Http<String, ()>,
    pub events: Stream<UserEvent, Filter>,
    pub ticks: Stream<u64>,
    pub room: Channel<ChatOut, RoomId, ChatIn>,
    pub posts: Group<Posts>,
}

#[derive(courier::Group)]
pub struct Posts {
    pub list: Http<Vec<Post>, UserId>,
    pub comments: Group<Comments>,
}

#[derive(courier::Group)]
#[courier(view = "CommentsOfPost")]
pub struct Comments {
    pub list: Http<Vec<Comment>, PostRef>,
    pub delete: Http<(), PostRef, Mutation>,
}

#[derive(courier::Group)]
pub struct Admin {
    pub stats: Http<Stats>,
    /// A field may be called `options` when its endpoint is named otherwise.
    #[courier(rename = "preferences")]
    pub options: Http<Value>,
}

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
    pub admin: Group<Admin>,
}

fn users() -> Group<Users> {
    let comments = Group::new(Comments {
        list: endpoint().get(""),
        delete: endpoint().del("/:comment"),
    })
    .prefix("/:post/comments");
    let posts = Group::new(Posts {
        list: endpoint().get(""),
        comments,
    })
    .prefix("/:id/posts");
    Group::new(Users {
        get: endpoint().get("/:id"),
        me: endpoint().get("/me"),
        create: endpoint().post("").expose(true),
        search: endpoint().post("/search").reads(),
        by_email: endpoint().get("/by-email/:email"),
        r#type: endpoint().get("/type"),
        events: stream().get("/events"),
        ticks: stream().get("/ticks"),
        room: channel().connect("/rooms/:id").send(),
        posts,
    })
    .prefix("/users")
}

fn admin() -> Group<Admin> {
    Group::new(Admin {
        stats: endpoint().get("/stats"),
        options: endpoint().get("/options"),
    })
    .prefix("/admin")
    .expose(true)
}

fn api() -> Result<Api<Example>, ConfigurationError> {
    ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .build_typed(Example {
            users: users(),
            admin: admin(),
        })
}

// ---- a recording caller -----------------------------------------------------------------------

#[derive(Debug)]
#[allow(dead_code)] // the payloads are read through `Debug`, when a test fails
enum TestError {
    Configuration(ConfigurationError),
    Variables(serde_json::Error),
    Decode(courier::response::DecodeError),
    NoAnswer,
}

impl From<ConfigurationError> for TestError {
    fn from(error: ConfigurationError) -> Self {
        Self::Configuration(error)
    }
}

/// One call as the caller saw it.
#[derive(Debug)]
struct Call {
    path: String,
    variables: Value,
    options: Option<CallOptions>,
}

/// Records each call and answers with the next queued JSON body (and status 200 unless queued
/// otherwise).
struct Recorder {
    api: ApiDef,
    answers: Mutex<VecDeque<(u16, Value)>>,
    calls: Mutex<Vec<Call>>,
}

impl Recorder {
    fn new(api: ApiDef) -> Self {
        Self {
            api,
            answers: Mutex::default(),
            calls: Mutex::default(),
        }
    }

    fn answer(&self, body: Value) -> &Self {
        self.answer_with(200, body)
    }

    fn answer_with(&self, status: u16, body: Value) -> &Self {
        self.answers.lock().unwrap().push_back((status, body));
        self
    }

    fn calls(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn respond<R: FromResponse, V: IntoVariables>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> Result<HttpResponse<R>, TestError> {
        let variables = match request
            .variables
            .into_variables()
            .map_err(TestError::Variables)?
        {
            Variables::Json(value) => value,
            Variables::None => Value::Null,
            Variables::Form(_) => json!("<form>"),
        };
        self.calls.lock().unwrap().push(Call {
            path: request.endpoint.path().to_owned(),
            variables,
            options: request.options.cloned(),
        });
        let (status, body) = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .ok_or(TestError::NoAnswer)?;
        let mut response = HttpResponse {
            status: status.try_into().expect("a valid status"),
            headers: Default::default(),
            data: R::from_response(ResponseBody::Value(body)).map_err(TestError::Decode)?,
        };
        response
            .headers
            .insert("x-request-id", "req-1".parse().expect("a valid value"));
        Ok(response)
    }
}

impl Dispatch for Recorder {
    type Error = TestError;

    fn api(&self) -> &ApiDef {
        &self.api
    }

    fn http<R, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<HttpResponse<R>, TestError>> + Send
    where
        R: FromResponse,
        V: IntoVariables + Send,
    {
        std::future::ready(self.respond(request))
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

/// What a caller such as `Caller<Example>` derefs to.
fn client() -> ExampleClient<Recorder> {
    let api = api().expect("the example API builds");
    ExampleClient::from(Recorder::new(api.into_def()))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---- the tree ---------------------------------------------------------------------------------

#[test]
fn registers_every_field_under_its_name() {
    let api = api().unwrap();
    let paths: Vec<&str> = api.endpoints().iter().map(|e| e.path()).collect();
    assert_eq!(
        paths,
        [
            "admin.preferences",
            "admin.stats",
            "users.create",
            "users.events",
            "users.get",
            "users.getByEmail",
            "users.me",
            "users.posts.comments.delete",
            "users.posts.comments.list",
            "users.posts.list",
            "users.room",
            "users.search",
            "users.ticks",
            "users.type",
        ]
    );
    let template = |path: &str| {
        let endpoint = api.endpoint(path).unwrap();
        endpoint.template().map(|t| t.as_str().to_owned())
    };
    assert_eq!(template("users.get").as_deref(), Some("/users/:id"));
    assert_eq!(
        template("users.getByEmail").as_deref(),
        Some("/users/by-email/:email")
    );
    assert_eq!(
        template("users.posts.list").as_deref(),
        Some("/users/:id/posts")
    );
    assert_eq!(
        template("users.posts.comments.delete").as_deref(),
        Some("/users/:id/posts/:post/comments/:comment")
    );
    assert_eq!(template("users.events").as_deref(), Some("/users/events"));
    assert_eq!(template("users.room").as_deref(), Some("/users/rooms/:id"));
    assert_eq!(
        api.endpoint_in("users.posts", "list").unwrap().group_path(),
        "users.posts"
    );
}

#[test]
fn kinds_and_exposure_come_from_the_definitions() {
    let api = api().unwrap();
    let endpoint = |path: &str| api.endpoint(path).unwrap();
    assert_eq!(endpoint("users.get").kind(), Some(Kind::Query));
    assert_eq!(endpoint("users.create").kind(), Some(Kind::Mutation));
    assert_eq!(
        endpoint("users.search").kind(),
        Some(Kind::Query),
        "a POST declared `.reads()`"
    );
    assert_eq!(
        endpoint("users.posts.comments.delete").kind(),
        Some(Kind::Mutation)
    );
    assert_eq!(endpoint("users.events").kind(), None);
    assert!(endpoint("users.events").definition().as_stream().is_some());
    let room = endpoint("users.room").definition().as_channel().unwrap();
    assert!(room.is_bidirectional());

    assert!(
        endpoint("users.create").is_exposed(),
        "the endpoint's own `.expose(true)`"
    );
    assert!(!endpoint("users.get").is_exposed());
    assert!(
        endpoint("admin.stats").is_exposed(),
        "the group's `.expose(true)`"
    );
    assert!(endpoint("admin.preferences").is_exposed());
}

#[test]
fn a_dotted_rename_reaches_the_builder_and_fails_there() {
    #[derive(courier::Group)]
    struct Odd {
        #[courier(rename = "get.user")]
        get: Http<User, UserId>,
    }
    #[derive(courier::Api)]
    struct OddApi {
        odd: Group<Odd>,
    }
    let err = ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .build_typed(OddApi {
            odd: Group::new(Odd {
                get: endpoint().get("/:id"),
            }),
        })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DottedName);
    assert_eq!(err.path(), Some("odd.get.user"));
}

#[test]
fn a_renamed_group_is_registered_under_its_new_name() {
    #[derive(courier::Api)]
    #[courier(client = "RenamedClient", view = "RenamedRoot")]
    struct Renamed {
        #[courier(rename = "people")]
        users: Group<Users>,
        /// A field may not be called `client`, but a group may.
        #[courier(rename = "client")]
        client_group: Group<Admin>,
    }
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .build_typed(Renamed {
            users: users(),
            client_group: admin(),
        })
        .unwrap();
    assert!(api.endpoint("people.posts.list").is_some());
    assert!(api.endpoint("client.stats").is_some());
    assert!(api.endpoint("users.get").is_none());

    let client = RenamedClient::from(Recorder::new(api.into_def()));
    let _: RenamedRoot<'_, Recorder> = client.with(CallOptions::new());
    assert_eq!(client.users().as_ref().path(), "people");
    assert_eq!(client.client_group().as_ref().path(), "client");
}

#[test]
fn the_reserved_names_are_those_the_derive_refuses() {
    // The derive's own lists (courier-macros, `input.rs`) must match the builder's.
    assert_eq!(courier_core::RESERVED_GROUP_NAMES, ["raw", "with"]);
    assert_eq!(
        courier_core::RESERVED_ENDPOINT_NAMES,
        ["options", "raw", "with"]
    );
}

// ---- the views --------------------------------------------------------------------------------

#[tokio::test]
async fn a_call_resolves_to_the_typed_body() {
    let client = client();
    client
        .client()
        .answer(json!({ "id": 7, "name": "Ada" }))
        .answer(json!({ "id": 1, "name": "Me" }));

    let user: User = client.users().get(UserId(7)).await.unwrap();
    assert_eq!(
        user,
        User {
            id: 7,
            name: "Ada".into()
        }
    );
    let me = client.users().me().await.unwrap();
    assert_eq!(me.name, "Me");

    let calls = client.client().calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].path, "users.get");
    assert_eq!(calls[0].variables, json!(7));
    assert!(calls[0].options.is_none());
    assert_eq!(calls[1].path, "users.me");
    assert_eq!(calls[1].variables, Value::Null);
}

#[tokio::test]
async fn a_body_of_the_wrong_shape_is_the_callers_error() {
    let client = client();
    client.client().answer(json!({ "id": "seven" }));
    let err = client.users().get(UserId(7)).await.unwrap_err();
    assert!(matches!(err, TestError::Decode(_)), "{err:?}");
}

#[tokio::test]
async fn raw_resolves_to_the_whole_response() {
    let client = client();
    client
        .client()
        .answer_with(201, json!({ "id": 2, "name": "Bo" }))
        .answer(json!({ "users": 3 }));

    let whole: HttpResponse<User> = client
        .users()
        .raw()
        .create(NewUser { name: "Bo".into() })
        .await
        .unwrap();
    assert_eq!(whole.status.as_u16(), 201);
    assert_eq!(whole.headers["x-request-id"], "req-1");
    assert_eq!(whole.data.id, 2);

    let stats: HttpResponse<Stats> = client.raw().admin().stats().await.unwrap();
    assert_eq!(stats.data, Stats { users: 3 });

    let calls = client.client().calls();
    assert_eq!(calls[0].path, "users.create");
    assert_eq!(calls[0].variables, json!({ "name": "Bo" }));
    assert_eq!(calls[1].path, "admin.stats");
}

#[tokio::test]
async fn with_reaches_the_caller_and_merges() {
    let client = client();
    let ada = || json!({ "id": 7, "name": "Ada" });
    client
        .client()
        .answer(ada())
        .answer(ada())
        .answer(json!([]))
        .answer(ada());

    client
        .users()
        .with(CallOptions::new().timeout(ms(200)))
        .get(UserId(7))
        .await
        .unwrap();

    // Nested `.with()` merges, the later one winning.
    let tenant = || "x-tenant".parse().unwrap();
    client
        .with(CallOptions::new().timeout(ms(100)).coalesce(false))
        .users()
        .with(
            CallOptions::new()
                .timeout(ms(300))
                .header(tenant(), "acme".parse().unwrap()),
        )
        .get(UserId(7))
        .await
        .unwrap();

    // Options set at the root reach nested groups, and survive `.raw()`.
    client
        .with(CallOptions::new().timeout(ms(50)))
        .raw()
        .users()
        .posts()
        .with(CallOptions::new().coalesce(true))
        .raw()
        .list(UserId(7))
        .await
        .unwrap();

    // A view without `.with()` carries none.
    client.users().get(UserId(7)).await.unwrap();

    let calls = client.client().calls();
    let options: Vec<_> = calls.iter().map(|c| c.options.as_ref()).collect();
    assert_eq!(
        options[0].unwrap().get_settings().get_timeout(),
        Some(ms(200))
    );
    let merged = options[1].unwrap();
    assert_eq!(merged.get_settings().get_timeout(), Some(ms(300)));
    assert_eq!(merged.get_settings().get_coalesce(), Some(false));
    assert_eq!(merged.headers()["x-tenant"], "acme");
    assert_eq!(calls[2].path, "users.posts.list");
    assert_eq!(
        options[2].unwrap().get_settings().get_timeout(),
        Some(ms(50))
    );
    assert_eq!(
        options[2].unwrap().get_settings().get_coalesce(),
        Some(true)
    );
    assert!(options[3].is_none());
}

#[tokio::test]
async fn nested_groups_call_by_their_dotted_path() {
    let client = client();
    client
        .client()
        .answer(json!([{ "id": 1, "title": "Hello" }]))
        .answer(json!([{ "text": "First" }]))
        .answer(json!(null));

    let posts = client.users().posts();
    let list: Vec<Post> = posts.list(UserId(7)).await.unwrap();
    assert_eq!(
        list,
        [Post {
            id: 1,
            title: "Hello".into()
        }]
    );
    let comments: Vec<Comment> = posts
        .comments()
        .list(PostRef { id: 7, post: 1 })
        .await
        .unwrap();
    assert_eq!(comments[0].text, "First");
    let (): () = posts
        .comments()
        .delete(PostRef { id: 7, post: 1 })
        .await
        .unwrap();

    let calls = client.client().calls();
    let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "users.posts.list",
            "users.posts.comments.list",
            "users.posts.comments.delete"
        ]
    );
    assert_eq!(calls[1].variables, json!({ "id": 7, "post": 1 }));
}

#[tokio::test]
async fn renamed_and_raw_identifier_fields_call_their_tree_names() {
    let client = client();
    client
        .client()
        .answer(json!({ "id": 3, "name": "Cy" }))
        .answer(json!("admin"))
        .answer(json!({ "theme": "dark" }))
        .answer(json!([]));

    client
        .users()
        .by_email(Email("cy@example.com".into()))
        .await
        .unwrap();
    let kind: String = client.users().r#type().await.unwrap();
    assert_eq!(kind, "admin");
    let prefs: Value = client.admin().options().await.unwrap();
    assert_eq!(prefs["theme"], "dark");
    let found: Vec<User> = client
        .users()
        .search(Search { q: "ada".into() })
        .await
        .unwrap();
    assert!(found.is_empty());

    let calls = client.client().calls();
    let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "users.getByEmail",
            "users.type",
            "admin.preferences",
            "users.search"
        ]
    );
    assert_eq!(calls[0].variables, json!("cy@example.com"));
    assert_eq!(calls[3].variables, json!({ "q": "ada" }));
}

#[tokio::test]
async fn an_endpoint_the_callers_tree_lacks_is_endpoint_not_in_routes() {
    // A caller whose tree holds only `users.get`, as a proxy caller's routes might.
    let partial = ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id")),
        )
        .build()
        .unwrap();
    let client = ExampleClient::from(Recorder::new(partial));
    client.client().answer(json!({ "id": 7, "name": "Ada" }));

    client.users().get(UserId(7)).await.unwrap();

    let missing = |err: TestError| match err {
        TestError::Configuration(err) => {
            assert_eq!(err.code(), ErrorCode::EndpointNotInRoutes);
            err.path().map(str::to_owned)
        }
        other => panic!("expected ENDPOINT_NOT_IN_ROUTES, got {other:?}"),
    };
    let err = client.users().me().await.unwrap_err();
    assert_eq!(missing(err).as_deref(), Some("users.me"));
    let err = client
        .users()
        .posts()
        .comments()
        .list(PostRef { id: 1, post: 2 })
        .await;
    assert_eq!(
        missing(err.unwrap_err()).as_deref(),
        Some("users.posts.comments.list")
    );
    let err = client.raw().admin().stats().await.unwrap_err();
    assert_eq!(missing(err).as_deref(), Some("admin.stats"));

    let calls = client.client().calls();
    assert_eq!(
        calls.len(),
        1,
        "nothing reaches the caller for a missing endpoint"
    );
}

#[test]
fn streams_and_channels_give_typed_requests() {
    let client = client();
    let filter = || Filter {
        kind: "login".into(),
    };

    let events = client.users().events(filter());
    assert_eq!(events.name(), "events");
    assert_eq!(events.variables(), &filter());
    assert_eq!(events.scope().path(), "users");

    // Streams have no raw form: `.raw()` changes nothing for them, `.with()` is carried.
    let events = client
        .users()
        .with(CallOptions::new().timeout(ms(5)))
        .raw()
        .events(filter());
    assert_eq!(
        events
            .scope()
            .options()
            .unwrap()
            .get_settings()
            .get_timeout(),
        Some(ms(5))
    );

    let ticks = client.users().ticks();
    let ((), name) = (*ticks.variables(), ticks.name());
    assert_eq!(name, "ticks");

    let room = client.users().room(RoomId { id: "lobby".into() });
    assert_eq!(room.name(), "room");
    let (scope, name, variables) = room.into_parts();
    assert_eq!((scope.path(), name), ("users", "room"));
    assert_eq!(variables, RoomId { id: "lobby".into() });
    assert!(scope
        .endpoint(name)
        .unwrap()
        .definition()
        .as_channel()
        .is_some());
}

#[test]
fn views_clone_and_show_their_scope() {
    let client = client();
    let posts = client
        .users()
        .with(CallOptions::new().timeout(ms(9)))
        .posts();
    let copy = posts.clone();
    let shown = format!("{copy:?}");
    assert!(shown.starts_with("PostsView { scope: Scope {"), "{shown}");
    assert!(shown.contains("\"users.posts\""), "{shown}");
    let comments: CommentsOfPost<'_, Recorder> = posts.comments();
    assert_eq!(comments.as_ref().path(), "users.posts.comments");
    assert!(format!("{:?}", client.raw()).starts_with("ExampleView"));
    assert!(format!("{client:?}").starts_with("ExampleClient { client: "));
}

#[tokio::test]
async fn the_spec_traits_name_the_generated_types() {
    // Generic code (a caller type) reaches the client and the root view through `ApiSpec`.
    fn client_of<T: ApiSpec, C: Dispatch>(caller: C) -> T::Client<C> {
        T::Client::from(caller)
    }
    let recorder = Recorder::new(api().unwrap().into_def());
    recorder.answer(json!({ "users": 1 }));
    let root = <Example as ApiSpec>::View::<'_, Recorder, Data>::from(Scope::root(&recorder));
    assert_eq!(root.admin().stats().await.unwrap(), Stats { users: 1 });

    let client = client_of::<Example, _>(recorder);
    client.client().answer(json!({ "users": 2 }));
    assert_eq!(client.admin().stats().await.unwrap().users, 2);
    assert_eq!(client.into_client().calls().len(), 2);
}

// ---- the hand-written twin --------------------------------------------------------------------

/// What `#[derive(courier::Group)]` writes, by hand, as the macro crate's docs show it: the
/// twin and the derive give the same tree and the same calls.
mod twin {
    use super::{Post, UserId};
    use courier::typed::dispatch::Dispatch;
    use courier::typed::{Data, Endpoint, GroupSpec, Http, Member, Mode, Raw, Scope};
    use courier::{CallOptions, GroupDef};

    pub struct Posts {
        pub list: Http<Vec<Post>, UserId>,
    }

    impl GroupSpec for Posts {
        type View<'a, C: Dispatch + 'a, M: Mode> = PostsView<'a, C, M>;
        fn register(self, group: GroupDef) -> GroupDef {
            // One `Member::add_to` per field, in declaration order.
            Member::add_to(self.list, "list", group)
        }
    }

    pub struct PostsView<'a, C, M = Data> {
        scope: Scope<'a, C, M>,
    }

    impl<'a, C, M> From<Scope<'a, C, M>> for PostsView<'a, C, M> {
        fn from(scope: Scope<'a, C, M>) -> Self {
            Self { scope }
        }
    }

    impl<'a, C: Dispatch + 'a, M: Mode> PostsView<'a, C, M> {
        pub fn list(
            &self,
            variables: <Http<Vec<Post>, UserId> as Endpoint>::Vars,
        ) -> <Http<Vec<Post>, UserId> as Endpoint>::Call<'a, C, M> {
            <Http<Vec<Post>, UserId> as Endpoint>::call(&self.scope, "list", variables)
        }

        pub fn with(&self, options: CallOptions) -> Self {
            Self {
                scope: self.scope.with(options),
            }
        }

        pub fn raw(&self) -> PostsView<'a, C, Raw> {
            PostsView {
                scope: self.scope.raw(),
            }
        }
    }
}

#[derive(courier::Api)]
pub struct Twins {
    pub derived: Group<Posts>,
    pub by_hand: Group<twin::Posts>,
}

#[tokio::test]
async fn the_hand_written_twin_matches_the_derive() {
    let derived = Group::new(Posts {
        list: endpoint().get(""),
        comments: Group::new(Comments {
            list: endpoint().get(""),
            delete: endpoint().del(""),
        }),
    });
    let by_hand = Group::new(twin::Posts {
        list: endpoint().get(""),
    });
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .build_typed(Twins {
            derived: derived.prefix("/derived"),
            by_hand: by_hand.prefix("/by-hand"),
        })
        .unwrap();
    assert_eq!(
        api.endpoint("by_hand.list")
            .unwrap()
            .template()
            .unwrap()
            .as_str(),
        "/by-hand"
    );

    let client = TwinsClient::from(Recorder::new(api.into_def()));
    client.client().answer(json!([])).answer(json!([]));
    let a: Vec<Post> = client.derived().list(UserId(1)).await.unwrap();
    let b: HttpResponse<Vec<Post>> = client
        .by_hand()
        .with(CallOptions::new())
        .raw()
        .list(UserId(1))
        .await
        .unwrap();
    assert_eq!((a.len(), b.data.len()), (0, 0));
    let paths: Vec<String> = client
        .client()
        .calls()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(paths, ["derived.list", "by_hand.list"]);
}

#[derive(courier::Group)]
pub struct Shelf {
    /// `GET /books`: the shelf's books, called as an endpoint...
    #[courier(rename = "books")]
    pub all_books: Http<Vec<String>>,
    /// ...and `books` read as a group too, named the same.
    pub books: Group<Books>,
}

#[derive(courier::Group)]
pub struct Books {
    pub get: Http<String, u64>,
}

#[derive(courier::Api)]
pub struct Library {
    pub shelf: Group<Shelf>,
}

#[tokio::test]
async fn a_member_named_like_its_contained_group_is_both_endpoint_and_group() {
    let app = axum::Router::new()
        .route(
            "/books",
            axum::routing::get(|| async { axum::Json(json!(["Dune"])) }),
        )
        .route(
            "/books/{id}",
            axum::routing::get(
                |axum::extract::Path(id): axum::extract::Path<u64>| async move {
                    axum::Json(json!(format!("book {id}")))
                },
            ),
        );
    let addr = courier_test_support::serve(app).await;
    let shelf = Group::new(Shelf {
        all_books: endpoint().get("/books"),
        books: Group::new(Books {
            get: endpoint().get("/:id"),
        })
        .prefix("/books"),
    });
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .build_typed(Library { shelf })
        .unwrap();
    assert!(api.def().endpoint("shelf.books").is_some());
    assert!(api.def().endpoint("shelf.books.get").is_some());

    let caller = courier::Caller::new(api).unwrap();
    assert_eq!(caller.shelf().all_books().await.unwrap(), ["Dune"]);
    assert_eq!(caller.shelf().books().get(7).await.unwrap(), "book 7");
}
