//! A runtime tree's endpoints as `tower::Service`s of JSON variables: [`Client::service`],
//! [`Client::stream_service`] and [`Client::channel_service`].

use super::Client;
use courier_core::typed::{Channel, EndpointService, Http, Stream};
use courier_core::ConfigurationError;
use serde_json::Value;

impl Client {
    /// The HTTP endpoint at dotted `path` (`users.posts.list`) as a `tower::Service` of its JSON
    /// variables, answering the body as JSON ([`EndpointService::raw`] for the whole
    /// [`HttpResponse`](courier_core::HttpResponse), as [`Client::call`] gives it). A call runs
    /// as [`Client::call`] runs it, through the endpoint's whole stack; the service stacks
    /// tower's layers as any other (see [`EndpointService`]).
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::error::ErrorCode;
    /// use courier::{ApiDef, Client, GroupDef, HttpEndpoint};
    /// use serde_json::json;
    /// use tower::ServiceExt;
    ///
    /// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// # let addr = listener.local_addr()?;
    /// # let app = axum::Router::new().route(
    /// #     "/users/{id}",
    /// #     axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u64>| async move {
    /// #         axum::Json(json!({ "id": id }))
    /// #     }),
    /// # );
    /// # tokio::spawn(async move { axum::serve(listener, app).await });
    /// let api = ApiDef::builder()
    ///     .base_url(format!("http://{addr}"))
    ///     .group("users", GroupDef::new().prefix("/users").endpoint("get", HttpEndpoint::get("/:id")))
    ///     .build()?;
    /// let client = Client::new(api)?;
    ///
    /// let get = client.service("users.get")?;             // a Service<serde_json::Value>
    /// assert_eq!(get.clone().oneshot(json!({ "id": 7 })).await?, json!({ "id": 7 }));
    /// assert_eq!(get.raw().oneshot(json!({ "id": 8 })).await?.status, 200);
    ///
    /// let unknown = client.service("users.gone").unwrap_err();
    /// assert_eq!(unknown.code(), ErrorCode::EndpointNotInRoutes);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the API lacks; `INVALID_OPTION` when the endpoint
    /// there is a stream or a channel. Nothing is sent.
    pub fn service(
        &self,
        path: &str,
    ) -> Result<EndpointService<Client, Http<Value, Value>>, ConfigurationError> {
        EndpointService::<Client, Http<Value, Value>>::at(self, path)
    }

    /// The stream at dotted `path` as a `tower::Service` of its JSON variables, answering the
    /// subscription, events' data as JSON: what [`Client::stream`] opens.
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the API lacks; `INVALID_OPTION` when the endpoint
    /// there is not a stream.
    pub fn stream_service(
        &self,
        path: &str,
    ) -> Result<EndpointService<Client, Stream<Value, Value>>, ConfigurationError> {
        EndpointService::<Client, Stream<Value, Value>>::at(self, path)
    }

    /// The channel at dotted `path` as a `tower::Service` of its JSON variables, answering the
    /// connection, messages as JSON both ways: what [`Client::channel`] opens.
    ///
    /// # Errors
    ///
    /// `ENDPOINT_NOT_IN_ROUTES` for a path the API lacks; `INVALID_OPTION` when the endpoint
    /// there is not a channel.
    pub fn channel_service(
        &self,
        path: &str,
    ) -> Result<EndpointService<Client, Channel<Value, Value, Value>>, ConfigurationError> {
        EndpointService::<Client, Channel<Value, Value, Value>>::at(self, path)
    }
}
