//! "Did you mean …?": the known name closest to a mistyped one, for the messages that refuse a
//! name (a config file's unknown key, `courier call`'s unknown source or endpoint).

/// The name of `known` closest to `name`, when one is close enough to be what was meant: one
/// within a third of its length in edits (at least one), or one that starts the other (`del`
/// for `delete`).
///
/// ```
/// use courier_core::suggest::closest;
///
/// let keys = ["get", "post", "put", "patch", "del", "expose"];
/// assert_eq!(closest("expos", keys), Some("expose"));
/// assert_eq!(closest("delete", keys), Some("del"));
/// assert_eq!(closest("cache", keys), None);
/// ```
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    known
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let edits = distance(&name, &lower);
            let prefix = lower.len().min(name.len()) >= 3
                && (lower.starts_with(&name) || name.starts_with(&lower));
            let close = edits <= (name.chars().count() / 3).max(1);
            (edits > 0 && (close || prefix)).then_some((edits, candidate))
        })
        .min_by_key(|(edits, _)| *edits)
        .map(|(_, candidate)| candidate)
}

/// Edits from `a` to `b`, in characters: insertions, deletions, substitutions and swaps of two
/// neighbours (`dmeo` is one edit from `demo`), each counted once.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // rows[i][j]: edits from a[..i] to b[..j].
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, edits) in rows[0].iter_mut().enumerate() {
        *edits = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let substitute = rows[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut edits = substitute.min(rows[i - 1][j] + 1).min(rows[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                edits = edits.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = edits;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_counted_in_characters() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("é", "e"), 1);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("dmeo", "demo"), 1);
    }

    #[test]
    fn a_close_name_is_suggested_and_a_far_one_is_not() {
        let known = ["users.get", "users.create", "health.ping"];
        assert_eq!(closest("users.gte", known), Some("users.get"));
        assert_eq!(
            closest("Users.Get", known),
            None,
            "the same name: nothing to suggest"
        );
        assert_eq!(closest("orders.list", known), None);
        assert_eq!(
            closest("x", ["y"]),
            Some("y"),
            "one edit is close for a short name"
        );
        assert_eq!(closest("anything", []), None);
    }
}
