//! A call's variables, as handed to [`encode`](super::encode).

use serde_json::Value;

use super::Form;

/// What a call passes: nothing, a JSON value, or a multipart form.
///
/// `Json` is usually an object, whose keys fill path parameters and then become search
/// parameters or body fields. It may also be a single string, number or boolean when the path
/// template has exactly one parameter, which it then fills: that is how a newtype such as
/// `UserId(7)`, serialized to `7`, addresses `/users/:id`. `Json(Value::Null)` means the same as
/// `None`.
#[derive(Debug, Default)]
pub enum Variables {
    /// No variables.
    #[default]
    None,
    /// Variables serialized to JSON.
    Json(Value),
    /// A multipart form, for uploads.
    Form(Form),
}

impl From<Value> for Variables {
    fn from(value: Value) -> Self {
        Variables::Json(value)
    }
}

impl From<Form> for Variables {
    fn from(form: Form) -> Self {
        Variables::Form(form)
    }
}
