//! For a caller of your own: the traits the typed views run on.
//!
//! A view (`caller.users()`) does not send anything itself: it finds the endpoint in its
//! caller's tree and hands the call, as an [`HttpCallRequest`], to the caller's [`Dispatch`]
//! (HTTP calls), [`StreamDispatch`] (stream subscriptions) or [`ChannelDispatch`] (channel
//! connections). courier's `Client` and `ProxyClient` implement all three; a test double, or a
//! caller over another transport, implements them to run the same views. A call's variables
//! reach it as [`IntoVariables`]: JSON for any `Serialize` type, or a multipart form.
//!
//! A first program names none of these: the derives write the bounds, and `Caller::new` picks
//! the client. A test double is handed to the root client the derive wrote
//! (`ExampleClient::from(double)`), which is what a `Caller` derefs to.
//!
//! ```
//! use courier::response::{FromResponse, HttpResponse, ResponseBody};
//! use courier::typed::dispatch::{Dispatch, HttpCallRequest, IntoVariables};
//! use courier::typed::{endpoint, Group, Http};
//! use courier::{ApiDef, ConfigurationError};
//! use http::{HeaderMap, StatusCode};
//! use serde_json::json;
//! use std::future::{ready, Future};
//!
//! /// Answers every call with the same body, sending nothing.
//! struct Canned(ApiDef);
//!
//! impl Dispatch for Canned {
//!     type Error = ConfigurationError;
//!
//!     fn api(&self) -> &ApiDef {
//!         &self.0
//!     }
//!
//!     fn http<R, V>(
//!         &self,
//!         _request: HttpCallRequest<'_, V>,
//!     ) -> impl Future<Output = Result<HttpResponse<R>, ConfigurationError>> + Send
//!     where
//!         R: FromResponse,
//!         V: IntoVariables + Send,
//!     {
//!         let data = R::from_response(ResponseBody::Value(json!({ "id": 7 }))).expect("it fits");
//!         ready(Ok(HttpResponse { status: StatusCode::OK, headers: HeaderMap::new(), data }))
//!     }
//! }
//!
//! #[derive(serde::Deserialize)]
//! struct User { id: u64 }
//! #[derive(courier::Group)]
//! struct Users { get: Http<User, u64> }
//! #[derive(courier::Api)]
//! struct Example { users: Group<Users> }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let users = Group::new(Users { get: endpoint().get("/users/:id") });
//! let api = ApiDef::builder().base_url("http://127.0.0.1:1").build_typed(Example { users })?;
//! // The root client the derive wrote, over the double: what a `Caller` derefs to.
//! let client = ExampleClient::from(Canned(api.into_def()));
//! assert_eq!(client.users().get(7).await?.id, 7);
//! # Ok::<(), ConfigurationError>(()) }).unwrap();
//! ```

pub use crate::call::{ChannelDispatch, Dispatch, HttpCallRequest, IntoVariables, StreamDispatch};
