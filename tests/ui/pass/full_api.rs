//! A full API through both derives: every member kind, renames, a raw identifier, a nested
//! group, and a view and its services used over a small caller. The generated items carry docs of their own.
#![deny(missing_docs, unreachable_pub)]

use courier::typed::{channel, endpoint, stream, Channel, Group, Http, Mutation, Stream};
use courier::response::{FromResponse, HttpResponse, ResponseBody};
use courier::typed::dispatch::{Dispatch, HttpCallRequest, IntoVariables};
use courier::{Api, ApiDef, CallOptions, ConfigurationError};
use serde::{Deserialize, Serialize};
use std::future::Future;

/// A user.
#[derive(Debug, Deserialize)]
pub struct User {
    /// Its id.
    pub id: u64,
}
/// A user's id.
#[derive(Serialize)]
pub struct UserId(pub u64);
/// A new user.
#[derive(Serialize)]
pub struct NewUser {
    /// The name.
    pub name: String,
}
/// A user event.
#[derive(Deserialize)]
pub struct UserEvent;
/// A room.
#[derive(Serialize, Deserialize)]
pub struct RoomId(pub String);
/// A chat message from the server.
#[derive(Deserialize)]
pub struct ChatOut;
/// A chat message to the server.
#[derive(Serialize)]
pub struct ChatIn;
/// A post.
#[derive(Deserialize)]
pub struct Post;

/// The users.
#[derive(courier::Group)]
pub struct Users {
    /// One user.
    pub get: Http<User, UserId>,
    /// The current user.
    pub me: Http<User>,
    /// A new user.
    pub create: Http<User, NewUser, Mutation>,
    /// Users by name, sent as POST.
    #[courier(rename = "searchByName")]
    pub search: Http<Vec<User>, NewUser>,
    /// The kind of user.
    pub r#type: Http<String, ()>,
    /// What happens to users.
    pub events: Stream<UserEvent>,
    /// A chat room.
    pub room: Channel<ChatOut, RoomId, ChatIn>,
    /// The user's posts.
    pub posts: Group<Posts>,
}

/// A user's posts.
#[derive(courier::Group)]
#[courier(view = "PostsOfUser", services = "PostServices")]
pub struct Posts {
    /// Lists them.
    pub list: Http<Vec<Post>, UserId>,
}

/// The example API.
#[derive(courier::Api)]
pub struct Example {
    /// The users.
    pub users: Group<Users>,
}

/// Builds it.
pub fn api() -> Result<Api<Example>, ConfigurationError> {
    let users = Group::new(Users {
        get: endpoint().get("/:id"),
        me: endpoint().get("/me"),
        create: endpoint().post("").expose(true),
        search: endpoint().post("/search").reads(),
        r#type: endpoint().get("/type"),
        events: stream().get("/events"),
        room: channel().connect("/rooms/:id").send(),
        posts: Group::new(Posts {
            list: endpoint().get(""),
        })
        .prefix("/:id/posts"),
    })
    .prefix("/users");
    ApiDef::builder()
        .base_url("http://127.0.0.1:9000")
        .build_typed(Example { users })
}

/// Answers every call with `{"id": 1}`.
#[derive(Clone)]
pub struct One(ApiDef);

impl Dispatch for One {
    type Error = ConfigurationError;
    fn api(&self) -> &ApiDef {
        &self.0
    }
    fn http<R, V>(
        &self,
        _request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<HttpResponse<R>, ConfigurationError>> + Send
    where
        R: FromResponse,
        V: IntoVariables + Send,
    {
        let data = R::from_response(ResponseBody::Value(serde_json::json!({ "id": 1 })))
            .expect("a user");
        std::future::ready(Ok(HttpResponse {
            status: Default::default(),
            headers: Default::default(),
            data,
        }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), ConfigurationError> {
    let client = ExampleClient::from(One(api()?.into_def()));
    let user: User = client.users().get(UserId(1)).await?;
    let me: HttpResponse<User> = client.raw().users().me().await?;
    let fast = client
        .with(CallOptions::new())
        .users()
        .with(CallOptions::new());
    let created: User = fast.create(NewUser { name: "Ada".into() }).await?;
    assert_eq!((user.id, me.data.id, created.id), (1, 1, 1));
    let posts: PostsOfUser<'_, One> = client.users().posts();
    let _ = (
        posts.list(UserId(1)),
        client.users().search(NewUser { name: "A".into() }),
    );
    let _ = (
        client.users().r#type(),
        client.users().events(),
        client.users().room(RoomId("a".into())),
    );

    // The same endpoints as tower services, in either mode, named as the view's methods are.
    let get = client.users().services().get()?;
    let user: User = tower::ServiceExt::oneshot(get, UserId(2)).await?;
    let me = client.raw().users().services().me()?;
    let me: HttpResponse<User> = tower::ServiceExt::oneshot(me, ()).await?;
    let posts: PostServices<'_, One> = client.users().posts().services();
    let _ = (posts.list()?, client.users().services().r#type()?);
    assert_eq!((user.id, me.data.id), (1, 1));
    Ok(())
}
