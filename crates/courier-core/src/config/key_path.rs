//! [`KeyPath`]: where in the file a value is, written as TOML would address it
//! (`sources.demo.groups.users.endpoints."a.b"`, `transport.root_certs[0]`).

use std::fmt;

/// A dotted key path into the config file. Keys that TOML could not write bare (a dot, a
/// space, an empty key) are quoted, so the path stays unambiguous.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct KeyPath(String);

impl KeyPath {
    /// The file's root: the empty path.
    pub(super) fn root() -> Self {
        Self::default()
    }

    /// This path, then `key`.
    pub(super) fn key(&self, key: &str) -> Self {
        let mut out = self.0.clone();
        if !out.is_empty() {
            out.push('.');
        }
        if is_bare(key) {
            out.push_str(key);
        } else {
            out.push_str(&quote(key));
        }
        Self(out)
    }

    /// This path, then an array index.
    pub(super) fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    /// This path, then a path that is already dotted (a builder error's).
    pub(super) fn join_dotted(&self, dotted: &str) -> String {
        match (self.0.is_empty(), dotted.is_empty()) {
            (_, true) => self.0.clone(),
            (true, false) => dotted.to_owned(),
            (false, false) => format!("{}.{dotted}", self.0),
        }
    }

    /// The path where serde stopped, as `serde_path_to_error` recorded it.
    pub(super) fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment;
        path.iter()
            .fold(Self::root(), |out, segment| match segment {
                Segment::Map { key } => out.key(key),
                Segment::Enum { variant } => out.key(variant),
                Segment::Seq { index } => out.index(*index),
                Segment::Unknown => out.key("?"),
            })
    }

    /// Whether the path's last key is `key`.
    pub(super) fn ends_with_key(&self, key: &str) -> bool {
        let last = if is_bare(key) {
            key.to_owned()
        } else {
            quote(key)
        };
        self.0 == last || self.0.ends_with(&format!(".{last}"))
    }

    /// The path as text.
    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn quote(key: &str) -> String {
    // A JSON string is a valid TOML basic string for every key.
    serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"))
}

#[cfg(test)]
mod tests {
    use super::KeyPath;

    #[test]
    fn bare_keys_are_dotted_and_others_quoted() {
        let path = KeyPath::root()
            .key("sources")
            .key("demo")
            .key("a.b")
            .key("")
            .key("root_certs")
            .index(1);
        assert_eq!(path.as_str(), r#"sources.demo."a.b"."".root_certs[1]"#);
        assert!(KeyPath::root().key("x").key("a.b").ends_with_key("a.b"));
        assert!(!KeyPath::root().key("xcach").ends_with_key("cach"));
    }

    #[test]
    fn dotted_paths_join() {
        let source = KeyPath::root().key("sources").key("demo");
        assert_eq!(source.join_dotted("users.get"), "sources.demo.users.get");
        assert_eq!(source.join_dotted(""), "sources.demo");
        assert_eq!(KeyPath::root().join_dotted("a"), "a");
    }
}
