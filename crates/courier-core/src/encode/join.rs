//! Address composition: base path, group prefixes (outer to inner), endpoint path.

/// Joins address pieces with exactly one `/` at each joint.
///
/// Empty pieces add nothing. Where two pieces meet, the slashes on both sides collapse to one,
/// and one is added if neither side has it. The result starts with `/` unless it is empty, and
/// keeps the last non-empty piece's trailing `/`, since `/users/` and `/users` can be different
/// resources on a server.
///
/// | pieces | result |
/// |---|---|
/// | `["/users", "/:id"]` | `/users/:id` |
/// | `["users", ""]` | `/users` |
/// | `["/a/", "/b/"]` | `/a/b/` |
/// | `["api", "v1", "users"]` | `/api/v1/users` |
/// | `["", ""]` | `` (empty) |
pub fn join_path(pieces: &[&str]) -> String {
    let mut out = String::new();
    for piece in pieces.iter().filter(|piece| !piece.is_empty()) {
        if out.is_empty() {
            out.push_str(piece);
        } else {
            out.truncate(out.trim_end_matches('/').len());
            out.push('/');
            out.push_str(piece.trim_start_matches('/'));
        }
    }
    if !out.is_empty() && !out.starts_with('/') {
        out.insert(0, '/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::join_path;

    #[test]
    fn brief_examples() {
        assert_eq!(join_path(&["/users", "/:id"]), "/users/:id");
        assert_eq!(join_path(&["users", ""]), "/users");
        assert_eq!(join_path(&["/a/", "/b/"]), "/a/b/");
        assert_eq!(join_path(&["", ""]), "");
        assert_eq!(join_path(&[]), "");
    }

    #[test]
    fn adds_or_collapses_one_slash_per_joint() {
        assert_eq!(join_path(&["a", "b", "c"]), "/a/b/c");
        assert_eq!(join_path(&["/a/", "b"]), "/a/b");
        assert_eq!(join_path(&["/a", "b/"]), "/a/b/");
        assert_eq!(join_path(&["/a//", "//b"]), "/a/b");
        assert_eq!(join_path(&["", "/a", "", "b", ""]), "/a/b");
    }

    #[test]
    fn slash_only_pieces() {
        assert_eq!(join_path(&["/"]), "/");
        assert_eq!(join_path(&["/", "/"]), "/");
        assert_eq!(join_path(&["/a", "/"]), "/a/");
        assert_eq!(join_path(&["/", "b"]), "/b");
        assert_eq!(join_path(&["/a", "/", "b"]), "/a/b");
    }

    #[test]
    fn keeps_trailing_slash_of_last_non_empty_piece() {
        assert_eq!(join_path(&["/users/", ""]), "/users/");
        assert_eq!(join_path(&["/users/", "", ""]), "/users/");
    }
}
