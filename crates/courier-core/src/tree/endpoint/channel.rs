use super::{common_builders, ChannelHandler, EndpointOptions, Via};
use crate::body::BoxError;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Where a channel is served.
#[derive(Clone, Debug)]
pub enum ChannelSource {
    /// By another process at this path template (`.connect(path)`).
    Path(String),
    /// By another process at an address computed from the variables (`.via()`).
    Via(Via),
    /// By this process (`.implement()`).
    Implemented(ChannelHandler),
}

type TopicFn = dyn Fn(&Value) -> String + Send + Sync;

/// What subscribers of a served channel share a topic by.
#[derive(Clone, Default)]
pub enum Topic {
    /// All the variables (the default): subscribers with equal variables share a topic.
    #[default]
    AllVariables,
    /// These variables, by name.
    Variables(Vec<String>),
    /// A key computed from the variables.
    Key(Arc<TopicFn>),
}

impl Topic {
    /// The topic key of a subscriber with these variables: canonical JSON of the chosen
    /// variables, or the computed key.
    pub fn key(&self, variables: &Value) -> String {
        match self {
            Self::AllVariables => variables.to_string(),
            Self::Variables(names) => {
                let picked: serde_json::Map<String, Value> = names
                    .iter()
                    .map(|n| (n.clone(), variables.get(n).cloned().unwrap_or(Value::Null)))
                    .collect();
                Value::Object(picked).to_string()
            }
            Self::Key(f) => f(variables),
        }
    }
}

impl fmt::Debug for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AllVariables => f.write_str("AllVariables"),
            Self::Variables(names) => f.debug_tuple("Variables").field(names).finish(),
            Self::Key(_) => f.write_str("Key(..)"),
        }
    }
}

/// A WebSocket channel descriptor: pushes responses, and takes messages once it has `.send()`.
///
/// ```
/// use courier::ChannelEndpoint;
///
/// let room = ChannelEndpoint::connect("/rooms/:id").send();
/// assert!(room.is_bidirectional());
/// ```
#[derive(Clone, Debug)]
pub struct ChannelEndpoint {
    source: ChannelSource,
    bidirectional: bool,
    topic: Topic,
    check: Option<VariablesCheck>,
    pub(crate) options: EndpointOptions,
}

type CheckFn = dyn Fn(&Value) -> Result<(), BoxError> + Send + Sync;

/// A check of a subscriber's variables, run before it joins a channel served here.
#[derive(Clone)]
struct VariablesCheck(Arc<CheckFn>);

impl fmt::Debug for VariablesCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VariablesCheck(..)")
    }
}

impl ChannelEndpoint {
    /// A channel another process serves at `path` (relative to the group prefix).
    pub fn connect(path: impl Into<String>) -> Self {
        Self::from_source(ChannelSource::Path(path.into()))
    }

    /// A channel whose address the closure computes from the variables.
    pub fn via<F>(f: F) -> Self
    where
        F: Fn(Value) -> Result<super::WireCall, BoxError> + Send + Sync + 'static,
    {
        Self::from_source(ChannelSource::Via(Via::new(f)))
    }

    /// A channel this process serves. A [`ChannelHandler::Duplex`] handler implies `.send()`.
    pub fn implement(handler: ChannelHandler) -> Self {
        let bidirectional = matches!(handler, ChannelHandler::Duplex(_));
        let mut channel = Self::from_source(ChannelSource::Implemented(handler));
        channel.bidirectional = bidirectional;
        channel
    }

    fn from_source(source: ChannelSource) -> Self {
        Self {
            source,
            bidirectional: false,
            topic: Topic::AllVariables,
            check: None,
            options: EndpointOptions::default(),
        }
    }

    /// Checks a subscriber's variables before it joins (the typed heads check that they parse
    /// as the channel's variables type); a failed check refuses the subscriber with close code
    /// 1008.
    #[must_use]
    pub fn check_variables<F>(mut self, check: F) -> Self
    where
        F: Fn(&Value) -> Result<(), BoxError> + Send + Sync + 'static,
    {
        self.check = Some(VariablesCheck(Arc::new(check)));
        self
    }

    /// Runs the variables check, if any.
    ///
    /// # Errors
    ///
    /// The check's own.
    pub fn checked(&self, variables: &Value) -> Result<(), BoxError> {
        match &self.check {
            Some(check) => (check.0)(variables),
            None => Ok(()),
        }
    }

    /// Declares that the caller may send on the channel.
    #[must_use]
    pub fn send(mut self) -> Self {
        self.bidirectional = true;
        self
    }

    /// Subscribers share a topic by these variables. For a channel this process implements:
    /// on one another process serves (`.connect()`, `.via()`), which decides that itself, the
    /// API refuses to build (`INVALID_OPTION`).
    #[must_use]
    pub fn topic_variables<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.topic = Topic::Variables(names.into_iter().map(Into::into).collect());
        self
    }

    /// Subscribers share a topic by a key computed from the variables. For a channel this
    /// process implements, as [`topic_variables`](Self::topic_variables).
    #[must_use]
    pub fn topic<F>(mut self, key: F) -> Self
    where
        F: Fn(&Value) -> String + Send + Sync + 'static,
    {
        self.topic = Topic::Key(Arc::new(key));
        self
    }

    /// Where it is served.
    pub fn source(&self) -> &ChannelSource {
        &self.source
    }

    /// Whether the caller may send on it.
    pub fn is_bidirectional(&self) -> bool {
        self.bidirectional
    }

    /// What subscribers share a topic by.
    pub fn topic_spec(&self) -> &Topic {
        &self.topic
    }
}

common_builders!([] ChannelEndpoint; this => this.options);
