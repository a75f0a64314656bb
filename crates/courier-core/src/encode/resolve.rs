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

/// Renders `template` onto `out` and returns what is left of `variables`.
///
/// Each parameter takes its value from `path_options` first, then from the variables. Variables
/// named like a `path_options` key are dropped outright, so a caller can neither replace nor
/// smuggle a server-set value; variables used by the path are consumed.
pub(super) fn render_path(
    out: &mut String,
    template: &PathTemplate,
    path_options: &Map<String, Value>,
    variables: Variables,
) -> Result<Rest, EncodeError> {
    match variables {
        Variables::None | Variables::Json(Value::Null) => {
            template.render_into(out, &|name| path_options.get(name))?;
            Ok(Rest::Map(Map::new()))
        }
        Variables::Json(Value::Object(mut map)) => {
            template.render_into(out, &|name| {
                path_options.get(name).or_else(|| map.get(name))
            })?;
            // `retain` keeps the order of what is left, with serde_json's `preserve_order` too
            // (where `remove` would swap the last key into the hole).
            map.retain(|name, _| !path_options.contains_key(name) && !template.has_param(name));
            Ok(Rest::Map(map))
        }
        // A scalar fills the one parameter there is: `UserId(7)` for `/users/:id`. A path
        // option of that name wins, and the scalar is dropped like any shadowed variable.
        Variables::Json(scalar @ (Value::String(_) | Value::Number(_) | Value::Bool(_)))
            if template.distinct_len() == 1 =>
        {
            template.render_into(out, &|name| path_options.get(name).or(Some(&scalar)))?;
            Ok(Rest::Map(Map::new()))
        }
        Variables::Json(other) => Err(EncodeError::VariablesNotObject {
            found: kind(&other),
            path_params: template.distinct_len(),
        }),
        Variables::Form(mut form) => {
            let params = template.distinct_params();
            let mut taken = Map::new();
            form.leave_out(path_options.keys().map(String::as_str), false);
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
            form.leave_out(taken.keys().map(String::as_str), true);
            template.render_into(out, &|name| {
                path_options.get(name).or_else(|| taken.get(name))
            })?;
            Ok(Rest::Form(form))
        }
    }
}
