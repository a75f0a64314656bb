//! Reading a query string back into nested variables.

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use crate::encode::SearchParamsError;

/// Parses `a=1&tags=x&tags=y&filter[name]=z` into `{"a": "1", "tags": ["x", "y"],
/// "filter": {"name": "z"}}`.
///
/// Keys and values are decoded first (`+` as a space, `%XX` as bytes, invalid UTF-8 replaced by
/// U+FFFD), so encoded and raw brackets mean the same. A trailing `[]` (`ids[]=1`), the PHP and
/// Rails way, makes an array even of one element.
pub(super) fn parse(query: &str) -> Result<Map<String, Value>, SearchParamsError> {
    let mut root = Map::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key);
        let (path, append) = key_path(&key)?;
        insert(&mut root, &key, &path, append, decode(value))?;
    }
    Ok(root)
}

fn decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// Splits `a[b][c]` into `["a", "b", "c"]`; the flag says whether it ended in `[]`.
fn key_path(key: &str) -> Result<(Vec<&str>, bool), SearchParamsError> {
    let malformed = || {
        SearchParamsError::new(format!(
            "key {key:?} is not of the form name[field][field]... (brackets must pair up and \
             enclose a name; only a final [] may be empty)"
        ))
    };
    let Some(open) = key.find('[') else {
        return if key.contains(']') {
            Err(malformed())
        } else {
            Ok((vec![key], false))
        };
    };
    let base = &key[..open];
    if base.is_empty() || base.contains(']') {
        return Err(malformed());
    }
    let mut path = vec![base];
    let mut rest = &key[open..];
    let mut append = false;
    while let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']').ok_or_else(malformed)?;
        let field = &inner[..close];
        rest = &inner[close + 1..];
        if field.contains('[') || append {
            return Err(malformed());
        }
        if field.is_empty() {
            append = true;
        } else {
            path.push(field);
        }
    }
    if !rest.is_empty() {
        return Err(malformed());
    }
    Ok((path, append))
}

/// Puts `value` at `path`, turning a repeated key into an array.
fn insert(
    root: &mut Map<String, Value>,
    key: &str,
    path: &[&str],
    append: bool,
    value: String,
) -> Result<(), SearchParamsError> {
    let conflict = || {
        SearchParamsError::new(format!(
            "key {key:?} conflicts with an earlier key: one name cannot hold both a value and \
             fields"
        ))
    };
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut map = root;
    for parent in parents {
        map = match map
            .entry(*parent)
            .or_insert_with(|| Value::Object(Map::new()))
        {
            Value::Object(fields) => fields,
            _ => return Err(conflict()),
        };
    }
    match map.get_mut(*last) {
        None if append => {
            map.insert((*last).to_owned(), Value::Array(vec![Value::String(value)]));
        }
        None => {
            map.insert((*last).to_owned(), Value::String(value));
        }
        Some(Value::Array(items)) => items.push(Value::String(value)),
        Some(slot @ Value::String(_)) => {
            let first = slot.take();
            *slot = Value::Array(vec![first, Value::String(value)]);
        }
        Some(_) => return Err(conflict()),
    }
    Ok(())
}
