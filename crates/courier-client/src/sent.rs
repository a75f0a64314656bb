//! [`Sent`]: a call's variables, kept on its request for a mock to record.

use crate::transport::TransportCache;
use courier_core::encode::{Part, Variables};
use courier_core::Body;
use http::Request;
use serde_json::{Map, Value};

/// The variables a call was made with, as JSON, in the extensions of its request when the
/// client answers through a mock (`ClientBuilder::mock`): what the mock matches its answers on
/// and records. No other client puts it there.
#[derive(Clone, Debug)]
pub(crate) struct Sent(
    // Read by the mock only.
    #[cfg_attr(not(feature = "mock"), allow(dead_code))] pub(crate) Value,
);

impl Sent {
    /// The variables to keep on a call's request: `Some` only when `transports` answers through
    /// a mock, so that a client without one spends a branch.
    pub(crate) fn kept(transports: &TransportCache, variables: &Variables) -> Option<Self> {
        transports.is_mocked().then(|| Self::of(variables))
    }

    /// Puts `kept` ([`Sent::kept`]) in `request`'s extensions, when there is one.
    pub(crate) fn put(kept: Option<Self>, request: &mut Request<Body>) {
        if let Some(sent) = kept {
            request.extensions_mut().insert(sent);
        }
    }

    /// The JSON of `variables`: as they are; `null` for none; an upload's form as an object of
    /// its fields, a text field's value, a file's name (or `null`).
    fn of(variables: &Variables) -> Self {
        Self(match variables {
            Variables::None => Value::Null,
            Variables::Json(value) => value.clone(),
            Variables::Form(form) => {
                let fields = form.parts().iter().map(|(name, part)| {
                    let value = match part {
                        Part::Text(text) => Value::String(text.clone()),
                        Part::File(file) => file
                            .get_filename()
                            .map_or(Value::Null, |name| Value::String(name.to_owned())),
                    };
                    (name.clone(), value)
                });
                Value::Object(fields.collect::<Map<_, _>>())
            }
        })
    }
}
