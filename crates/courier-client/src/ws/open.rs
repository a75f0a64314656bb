//! Opening a channel: the clients' [`ChannelDispatch`] and [`Client::channel`].

use super::connection::{Alive, Connection, ConnectionState, Queue, Shared, INCOMING};
use super::dial::{AuthFailed, Dialer};
use super::task::{run, run_local};
use crate::caller::Client;
use crate::error::Error;
use crate::opener::Opener;
use crate::proxy::ProxyClient;
use crate::read;
use courier_core::encode::Variables;
use courier_core::CancellationToken;
use courier_core::{
    CallOptions, ChannelDispatch, ChannelSource, HttpCallRequest, IntoVariables, ResolvedEndpoint,
    WsOptions,
};
use courier_live::JoinOptions;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch, Notify};

impl ChannelDispatch for Client {
    type Connection<R: DeserializeOwned + Send + 'static, S: Send + 'static> = Connection<R, S>;

    async fn connect<R, S, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> Result<Connection<R, S>, Error>
    where
        R: DeserializeOwned + Send + 'static,
        S: Send + 'static,
        V: IntoVariables + Send,
    {
        connect_typed(self, self.ws_options(), request).await
    }
}

impl ChannelDispatch for ProxyClient {
    type Connection<R: DeserializeOwned + Send + 'static, S: Send + 'static> = Connection<R, S>;

    async fn connect<R, S, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> Result<Connection<R, S>, Error>
    where
        R: DeserializeOwned + Send + 'static,
        S: Send + 'static,
        V: IntoVariables + Send,
    {
        connect_typed(self, self.ws_options(), request).await
    }
}

/// A typed view's connection through `client`, with its socket settings `ws`.
async fn connect_typed<C, R, S, V>(
    client: &C,
    ws: &WsOptions,
    request: HttpCallRequest<'_, V>,
) -> Result<Connection<R, S>, Error>
where
    C: Opener + Clone,
    V: IntoVariables,
{
    let variables = client.variables(request.endpoint, request.variables)?;
    let endpoint = Arc::clone(request.endpoint);
    let options = request.options.cloned();
    connect(
        Arc::new(client.clone()),
        endpoint,
        variables,
        options,
        ws.clone(),
    )
    .await
}

impl Client {
    /// Connects to the channel at `path` with JSON `variables`: its messages as JSON, and JSON
    /// messages sent. What the CLI and the proxy use; typed views connect through
    /// [`ChannelDispatch`].
    ///
    /// # Errors
    ///
    /// An unknown path (`ENDPOINT_NOT_IN_ROUTES`) or one that is not a channel, and every way
    /// the first connection can fail.
    pub async fn channel(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
    ) -> Result<Connection<Value, Value>, Error> {
        self.channel_with(path, variables, options, self.ws_options().clone())
            .await
    }

    /// [`Client::channel`] with socket settings of its own instead of the client's: what the
    /// proxy uses to pass a browser's `auth` on to the upstream.
    ///
    /// # Errors
    ///
    /// As [`Client::channel`].
    pub async fn channel_with(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
        ws: WsOptions,
    ) -> Result<Connection<Value, Value>, Error> {
        let endpoint = self.endpoint_at(path)?;
        let variables = Variables::Json(variables);
        connect(
            Arc::new(self.clone()),
            endpoint,
            variables,
            options.cloned(),
            ws,
        )
        .await
    }
}

/// Opens a connection to the channel `endpoint` through `opener`; see
/// [`ChannelDispatch::connect`].
async fn connect<R, S>(
    opener: Arc<dyn Opener>,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
    ws: WsOptions,
) -> Result<Connection<R, S>, Error> {
    let path: Arc<str> = endpoint.path().into();
    first_connection(opener, endpoint, variables, options, ws)
        .await
        .map_err(|e| e.with_endpoint(&path))
}

/// [`connect`], its errors not yet named after the endpoint.
async fn first_connection<R, S>(
    opener: Arc<dyn Opener>,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
    ws: WsOptions,
) -> Result<Connection<R, S>, Error> {
    let path: Arc<str> = endpoint.path().into();
    let Some(channel) = endpoint.definition().as_channel() else {
        return Err(courier_core::ConfigurationError::new(
            courier_core::ErrorCode::InvalidOption,
            format!("`{path}` is not a channel"),
        )
        .at(&*path)
        .into());
    };
    let variables = read::json_variables(variables)?;
    let options = crate::opener::capture_served(options);
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            messages: VecDeque::new(),
            bytes: 0,
            closed: false,
        }),
        queued: Notify::new(),
        max_count: ws.message_queue.max_count,
        max_bytes: ws.message_queue.max_bytes,
        max_message: ws.max_message_size,
    });
    let (incoming, receiver) = mpsc::channel(INCOMING);
    let (state, watching) = watch::channel(ConnectionState::Open);
    let stop = CancellationToken::new();
    // The call's or the source's signal closes the connection as `close()` does.
    let signals = [
        options.as_ref().and_then(CallOptions::get_signal).cloned(),
        opener.api().options().signal.clone(),
    ];
    for signal in signals.into_iter().flatten() {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = signal.cancelled() => stop.cancel(),
                () = stop.cancelled() => {}
            }
        });
    }
    let connection = Connection {
        incoming: receiver,
        shared: Arc::clone(&shared),
        state: watching,
        alive: Arc::new(Alive(stop.clone())),
        endpoint: Arc::clone(&path),
        _types: PhantomData,
    };
    // A proxy caller reaches even an implemented channel through the proxy.
    if let (ChannelSource::Implemented(_), Some(hub)) = (channel.source(), opener.hub()) {
        let mut options = JoinOptions::default().buffer(INCOMING);
        // In process, `auth`'s parameters reach the handlers as they would from a socket.
        if let Some(auth) = &ws.auth {
            let params = auth
                .params()
                .await
                .map_err(|e| Error::path_options(Box::new(AuthFailed(e))))?;
            if let Some(params) = params {
                options = options.auth(params);
            }
        }
        let member = hub
            .join(&path, channel, variables, options)
            .await
            .map_err(|e| Error::closed(1008, e.to_string()))?;
        tokio::spawn(run_local(member, shared, incoming, state, stop));
        return Ok(connection);
    }
    // A proxy caller speaks courier's wire, whose channels give positions to a client that
    // keeps them; a socket of another server's is written nothing it did not ask for.
    let kept = opener.hello_headers().is_some().then(Arc::default);
    let dialer = Dialer {
        opener,
        endpoint,
        variables,
        options,
        ws,
        kept,
    };
    let socket = dialer.first().await?;
    tokio::spawn(run(dialer, socket, shared, incoming, state, stop));
    Ok(connection)
}
