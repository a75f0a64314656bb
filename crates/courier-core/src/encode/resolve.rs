//! Where path values come from, and which variables are left to send.

use serde_json::{Map, Value};

use super::text::kind;
use super::{EncodeError, Form, PathTemplate, Variables};

/// The variables left after path substitution.
pub(super) enum Rest {
    /// An object's remaining keys.
    Map(Map<String, Value>),
    /// A form's remaining parts.
    Form(Form),
}

/// Renders `template` and returns what is left of `variables`.
///
/// Each parameter takes its value from `path_options` first, then from the variables. Variables
/// named like a `path_options` key are dropped outright, so a caller can neither replace nor
/// smuggle a server-set value; variables used by the path are consumed.
pub(super) fn render_path(
    template: &PathTemplate,
    path_options: &Map<String, Value>,
    variables: Variables,
) -> Result<(String, Rest), EncodeError> {
    let params = template.distinct_params();
    let mut rest = match variables {
        Variables::None | Variables::Json(Value::Null) => Rest::Map(Map::new()),
        Variables::Json(Value::Object(map)) => Rest::Map(map),
        // A scalar fills the one parameter there is: `UserId(7)` for `/users/:id`.
        Variables::Json(scalar @ (Value::String(_) | Value::Number(_) | Value::Bool(_)))
            if params.len() == 1 =>
        {
            Rest::Map(Map::from_iter([(params[0].to_owned(), scalar)]))
        }
        Variables::Json(other) => {
            return Err(EncodeError::VariablesNotObject {
                found: kind(&other),
                path_params: params.len(),
            })
        }
        Variables::Form(form) => Rest::Form(form),
    };

    let mut taken = Map::new();
    match &mut rest {
        Rest::Map(map) => {
            // Rebuilt rather than `remove`d from: with serde_json's `preserve_order`, `remove`
            // swaps the last key into the hole and would reorder the search parameters.
            for (name, value) in std::mem::take(map) {
                if path_options.contains_key(&name) {
                    continue;
                } else if params.contains(&name.as_str()) {
                    taken.insert(name, value);
                } else {
                    map.insert(name, value);
                }
            }
        }
        Rest::Form(form) => {
            form.retain(|name, _| !path_options.contains_key(name));
            for name in &params {
                if let Some(text) = form.first_text(name) {
                    taken.insert((*name).to_owned(), Value::String(text.to_owned()));
                } else if form.contains(name) {
                    return Err(EncodeError::PathParamNotScalar {
                        name: (*name).to_owned(),
                        found: "a file",
                    });
                }
            }
            form.retain(|name, part| {
                !(matches!(part, super::Part::Text(_)) && taken.contains_key(name))
            });
        }
    }

    let path = template.render(&|name| path_options.get(name).or_else(|| taken.get(name)))?;
    Ok((path, rest))
}
