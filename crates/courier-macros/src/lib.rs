//! Derives for courier's typed face: `#[derive(courier::Group)]` and `#[derive(courier::Api)]`.
//!
//! Use them through the facade crate `courier`, whose docs hold a runnable example; the
//! generated code names everything by `::courier::…` paths. Like clap's derive, they only write
//! calls into the runtime tree and the typed views of `courier::typed`: everything they write
//! can be written by hand, and the twin below shows how.
//!
//! # An example
//!
//! ```ignore
//! use courier::typed::{channel, endpoint, stream, Channel, Group, Http, Mutation, Stream};
//! use courier::{Api, ApiDef, ConfigurationError};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Deserialize)] pub struct User { pub id: u64 }
//! # #[derive(Serialize)] pub struct UserId(pub u64);
//! # #[derive(Serialize)] pub struct NewUser { pub name: String }
//! # #[derive(Deserialize)] pub struct UserEvent;
//! # #[derive(Deserialize)] pub struct ChatOut;
//! # #[derive(Serialize, Deserialize)] pub struct RoomId(pub String);
//! # #[derive(Serialize)] pub struct ChatIn;
//! # #[derive(Deserialize)] pub struct Post;
//!
//! #[derive(courier::Group)]
//! pub struct Users {
//!     /// One user by id.
//!     pub get: Http<User, UserId>,
//!     pub me: Http<User>,                            // no variables: `users().me()`
//!     pub create: Http<User, NewUser, Mutation>,
//!     pub events: Stream<UserEvent>,
//!     pub room: Channel<ChatOut, RoomId, ChatIn>,
//!     #[courier(rename = "userPosts")]               // the name in the tree and on the wire
//!     pub posts: Group<Posts>,
//! }
//!
//! #[derive(courier::Group)]
//! pub struct Posts {
//!     pub list: Http<Vec<Post>, UserId>,
//! }
//!
//! #[derive(courier::Api)]
//! pub struct Example {
//!     pub users: Group<Users>,
//! }
//!
//! pub fn api() -> Result<Api<Example>, ConfigurationError> {
//!     let posts = Group::new(Posts { list: endpoint().get("") }).prefix("/:id/posts");
//!     let users = Group::new(Users {
//!         get: endpoint().get("/:id"),
//!         me: endpoint().get("/me"),
//!         create: endpoint().post("").expose(),
//!         events: stream().get("/events"),
//!         room: channel().connect("/rooms/:id").send(),
//!         posts,
//!     })
//!     .prefix("/users");
//!     ApiDef::builder().base_url("https://api.example.com").build_typed(Example { users })
//! }
//!
//! // Over any caller `C: courier::Dispatch`, `ExampleClient<C>` gives typed calls:
//! async fn calls<C: courier::Dispatch>(client: &ExampleClient<C>) -> Result<(), C::Error> {
//!     let user: User = client.users().get(UserId(7)).await?;
//!     let whole = client.users().raw().me().await?;          // HttpResponse<User>
//!     let posts: Vec<Post> = client.users().posts().list(UserId(user.id)).await?;
//!     # let _ = (whole, posts);
//!     Ok(())
//! }
//! ```
//!
//! # The hand-written twin
//!
//! What the derives write for `Posts` and `Example` above (`Users` is the same, one method per
//! field). The generated structs and methods take the input struct's visibility; the generic
//! parameters are named `'a`, `C` and `M` unless the struct already uses those names. A view's
//! scope is reached through `AsRef<Scope>` rather than a method, so that no field name is taken.
//!
//! ```ignore
//! use courier::typed::{ApiMember, ApiSpec, Data, Endpoint, GroupMember, GroupSpec, Member};
//! use courier::typed::{Mode, Raw, Scope};
//! use courier::{ApiBuilder, CallOptions, Dispatch, GroupDef};
//!
//! impl GroupSpec for Posts {
//!     type View<'a, C: Dispatch + 'a, M: Mode> = PostsView<'a, C, M>;
//!     fn register(self, group: GroupDef) -> GroupDef {
//!         // One `Member::add_to` per field, in declaration order.
//!         Member::add_to(self.list, "list", group)
//!     }
//! }
//!
//! /// Typed view of [`Posts`]: …
//! pub struct PostsView<'a, C, M = Data> {
//!     scope: Scope<'a, C, M>,
//! }
//! // `From<Scope>`, `AsRef<Scope>`, and `Clone` and `Debug` with no bounds on `C` or `M`.
//! impl<'a, C, M> From<Scope<'a, C, M>> for PostsView<'a, C, M> {
//!     fn from(scope: Scope<'a, C, M>) -> Self {
//!         Self { scope }
//!     }
//! }
//!
//! impl<'a, C: Dispatch + 'a, M: Mode> PostsView<'a, C, M> {
//!     /// Calls the `list` endpoint.            (or the field's own doc comment)
//!     pub fn list(
//!         &self,
//!         variables: <Http<Vec<Post>, UserId> as Endpoint>::Vars,
//!     ) -> <Http<Vec<Post>, UserId> as Endpoint>::Call<'a, C, M> {
//!         <Http<Vec<Post>, UserId> as Endpoint>::call(&self.scope, "list", variables)
//!     }
//!     // An endpoint with no variables (`me` above) takes no argument and passes `()`;
//!     // a nested group (`posts` above, renamed) is reached by the field's name:
//!     //
//!     // pub fn posts(&self)
//!     //     -> <<Group<Posts> as GroupMember>::Spec as GroupSpec>::View<'a, C, M> {
//!     //     From::from(self.scope.group("userPosts"))
//!     // }
//!
//!     pub fn with(&self, options: CallOptions) -> Self {
//!         Self { scope: self.scope.with(options) }
//!     }
//!
//!     pub fn raw(&self) -> PostsView<'a, C, Raw> {
//!         PostsView { scope: self.scope.raw() }
//!     }
//! }
//!
//! impl ApiSpec for Example {
//!     type Client<C: Dispatch> = ExampleClient<C>;
//!     type View<'a, C: Dispatch + 'a, M: Mode> = ExampleView<'a, C, M>;
//!     fn register(self, api: ApiBuilder) -> ApiBuilder {
//!         let api = ApiMember::add_to_api(self.users, "users", api);
//!         api
//!     }
//! }
//!
//! /// The typed client of [`Example`] over a caller `C`: …
//! pub struct ExampleClient<C> {
//!     client: C,
//! }
//! // `From<C>`; `Clone` when `C: Clone`, `Debug` when `C: Debug`.
//!
//! impl<C: Dispatch> ExampleClient<C> {
//!     pub fn users(&self) -> <<Group<Users> as GroupMember>::Spec as GroupSpec>::View<'_, C, Data> {
//!         From::from(Scope::<C, Data>::root(&self.client).group("users"))
//!     }
//!     pub fn with(&self, options: CallOptions) -> ExampleView<'_, C, Data> {
//!         From::from(Scope::<C, Data>::root(&self.client).with(options))
//!     }
//!     pub fn raw(&self) -> ExampleView<'_, C, Raw> {
//!         From::from(Scope::<C, Raw>::root(&self.client))
//!     }
//!     pub fn client(&self) -> &C {
//!         &self.client
//!     }
//!     pub fn into_client(self) -> C {
//!         self.client
//!     }
//! }
//!
//! // `ExampleView<'a, C, M>`, the root after `with` or `raw`, is written like `PostsView`:
//! // one method per group, `with` and `raw`.
//! ```
//!
//! # Attributes
//!
//! | where | attribute | does |
//! |---|---|---|
//! | `Group` struct | `#[courier(view = "Name")]` | names the view (default: the struct's name + `View`) |
//! | `Api` struct | `#[courier(view = "Name")]`, `#[courier(client = "Name")]` | name the root view (`…View`) and client (`…Client`) |
//! | field | `#[courier(rename = "name")]` | the member's name in the tree (`getUser` for a JavaScript front end); the method keeps the field's name |
//!
//! # Rules
//!
//! Each is a compile error at the offending field or attribute; the rest of the expansion is
//! still written, so one mistake gives one error.
//!
//! - The input is a struct with named fields and no generic parameters.
//! - A field whose type's last path segment is `Group` is a nested group; any other field is an
//!   endpoint (`Http`, `Stream`, `Channel`). `Http<R>`, `Stream<R>`, `Channel<R>` and those whose
//!   variables are written `()` get a method without an argument. Every field of an `Api` is a
//!   `Group<T>`.
//! - Reserved names (`raw`, `with` for groups; `options`, `raw`, `with` for endpoints) are
//!   refused, whether they are the field's name or its `rename`. A field named `raw` or `with`
//!   is refused even when renamed: its method would be the view's own `raw()` or `with()`. A
//!   field named `options` may keep its name when `rename` gives the endpoint another.
//! - In an `Api`, fields named `client` and `into_client` would shadow the client's own
//!   methods: name the field otherwise and keep the group's name with `rename`.
//! - Two fields may not take the same name, but for a group and an endpoint: a member named like
//!   a contained group is both callable as the endpoint and readable as the group. The two
//!   fields keep their own methods (`#[courier(rename = "posts")] all_posts: Http<…>` beside
//!   `posts: Group<Posts>` calls `users.posts` with `all_posts()` and reads the group with
//!   `posts()`).
//! - A raw identifier is named without its `r#`: `r#type` is the endpoint `type`.
//!
//! A name with a dot is not refused here: it reaches the builder, which refuses it with
//! `DOTTED_NAME`.

mod api;
mod attrs;
mod errors;
mod group;
mod input;
mod typescript;
mod view;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Implements `courier::typed::GroupSpec` for a struct of endpoints and groups, and writes its
/// typed view (`UsersView` for `Users`). See the [crate docs](crate) for the expansion.
#[proc_macro_derive(Group, attributes(courier))]
pub fn derive_group(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    group::expand(&input).into()
}

/// Implements `courier::typed::ApiSpec` for a struct of groups, and writes its owned root client
/// (`ExampleClient<C>` for `Example`) and borrowed root view (`ExampleView`). See the
/// [crate docs](crate) for the expansion.
#[proc_macro_derive(Api, attributes(courier))]
pub fn derive_api(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    api::expand(&input).into()
}

/// Implements `courier::typed::TypeScript` for a `courier::Group` or `courier::Api` struct:
/// each field's TypeScript types for the routes module (`courier::routes::types`). Needs
/// courier's `typescript` feature, and every endpoint's variables, response and send types
/// deriving `ts_rs::TS`.
#[proc_macro_derive(TypeScript, attributes(courier))]
pub fn derive_typescript(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    typescript::expand(&input).into()
}
