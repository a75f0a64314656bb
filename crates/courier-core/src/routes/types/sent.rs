//! What a page sends: the declarations of the variables' and messages' types with every
//! `Option` field an optional property (`done?: boolean | null`), under the module's
//! `Sent` namespace.
//!
//! ts-rs writes a type as serde writes it, `None` as `null` with its key present: right for a
//! response, too strict for what a page sends, since courier leaves a `null` out of a query and
//! serde reads a missing `Option` field as `None` (the [module docs](super) give the wire's
//! rules). The declarations ts-rs writes are text, so the sent forms are too: a struct field is
//! `name: type,` (always with its comma: that is how an enum's `{ "Variant": T }` wrapper, whose
//! key must stay, is told apart), and an `Option` is `T | null`. A field whose type is a union
//! with `null` gets a `?`; `null` alone (a `()`), a named type that may be null
//! (`serde_json::Value`, a newtype of an `Option`) and an index signature keep theirs, as serde
//! needs their keys.
//!
//! The namespace holds, under the same names, the types whose sent form differs and those that
//! use one of them, directly or not; inside it, a name resolves to the namespace's type when it
//! has one and to the module's otherwise, so the declarations are copied with no name changed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The namespace of the sent forms.
const NAMESPACE: &str = "Sent";

/// The sent forms of the routed endpoints' types.
#[derive(Debug)]
pub(in crate::routes) struct Sent<'a> {
    /// Name → sent declaration (`export type …`), for each type whose sent form is not the
    /// module's.
    forms: BTreeMap<&'a str, String>,
}

impl<'a> Sent<'a> {
    /// The sent forms of `candidates` (name → declaration: the types variables and messages
    /// use, each with every type it uses).
    pub(in crate::routes) fn of(candidates: &BTreeMap<&'a str, &'a str>) -> Self {
        let mut forms: BTreeMap<&str, String> = candidates
            .iter()
            .filter_map(|(&name, declaration)| Some((name, optional_fields(declaration)?)))
            .collect();
        // A type that uses a type of the namespace must be in it too, to resolve to it. Words
        // count, whatever they are (a field's key named like a type too): one more copy at worst.
        loop {
            let users: Vec<&str> = candidates
                .iter()
                .filter(|(name, declaration)| {
                    !forms.contains_key(*name)
                        && words(declaration).any(|word| forms.contains_key(word))
                })
                .map(|(&name, _)| name)
                .collect();
            if users.is_empty() {
                break;
            }
            for name in users {
                forms.insert(name, candidates[name].to_owned());
            }
        }
        Self { forms }
    }

    /// Writes the namespace, when it has a type.
    pub(in crate::routes) fn write(&self, out: &mut String) {
        if self.forms.is_empty() {
            return;
        }
        out.push_str(
            "// What a page sends, where it differs from what serde writes: an `Option` field may\n\
             // be left out (courier leaves a `null` out of a query; serde reads a missing one as `None`).\n",
        );
        let _ = writeln!(out, "export namespace {NAMESPACE} {{");
        for declaration in self.forms.values() {
            let _ = writeln!(out, "  {declaration}");
        }
        out.push_str("}\n\n");
    }

    /// `expression` (an endpoint's variables or send type) naming the sent forms:
    /// `Sent.ListTodos` for `ListTodos`.
    pub(in crate::routes) fn qualify<'e>(&self, expression: &'e str) -> Cow<'e, str> {
        let tokens = tokens(expression);
        let mut out = String::new();
        let mut copied = 0;
        for (k, token) in tokens.iter().enumerate() {
            let word = &expression[token.start..token.end];
            let before = k.checked_sub(1).map(|k| tokens[k].kind);
            let after = tokens.get(k + 1).map(|t| &expression[t.start..t.end]);
            let binder = before == Some(Kind::Open(b'[')) && after == Some("in");
            if token.kind == Kind::Word
                && self.forms.contains_key(word)
                && before != Some(Kind::Punct(b'.'))
                && !matches!(after, Some(":" | "?"))
                && !binder
            {
                out.push_str(&expression[copied..token.start]);
                out.push_str(NAMESPACE);
                out.push('.');
                copied = token.start;
            }
        }
        if out.is_empty() {
            return Cow::Borrowed(expression);
        }
        out.push_str(&expression[copied..]);
        Cow::Owned(out)
    }
}

/// `declaration` with a `?` after the key of every struct field whose type is a union with
/// `null`; `None` when it has none.
fn optional_fields(declaration: &str) -> Option<String> {
    let tokens = tokens(declaration);
    // Open brackets; for a `{`, where its current member starts.
    let mut open: Vec<(Kind, usize)> = Vec::new();
    let mut keys = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        match token.kind {
            Kind::Open(_) => open.push((token.kind, k + 1)),
            Kind::Close(_) => {
                open.pop();
            }
            Kind::Punct(b',') => {
                if let Some((Kind::Open(b'{'), start)) = open.last_mut() {
                    keys.extend(optional_key(declaration, &tokens[*start..k]));
                    *start = k + 1;
                }
            }
            _ => {}
        }
    }
    if keys.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(declaration.len() + keys.len());
    let mut copied = 0;
    for end in keys {
        out.push_str(&declaration[copied..end]);
        out.push('?');
        copied = end;
    }
    out.push_str(&declaration[copied..]);
    Some(out)
}

/// Where a `?` goes in `member` (a struct field, `key: type`): after its key, when the type is
/// a union with `null` and the field is not optional already.
fn optional_key(text: &str, member: &[Token]) -> Option<usize> {
    let [key, colon, ty @ ..] = member else {
        return None;
    };
    let named = matches!(key.kind, Kind::Word | Kind::Text);
    (named && colon.kind == Kind::Punct(b':') && nullable(text, ty)).then_some(key.end)
}

/// Whether `ty` is a union with `null` among its members, at its top level.
fn nullable(text: &str, ty: &[Token]) -> bool {
    let mut depth = 0usize;
    let mut members: Vec<&[Token]> = Vec::new();
    let mut start = 0;
    for (k, token) in ty.iter().enumerate() {
        match token.kind {
            Kind::Open(_) => depth += 1,
            Kind::Close(_) => depth = depth.saturating_sub(1),
            Kind::Punct(b'|') if depth == 0 => {
                members.push(&ty[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    members.push(&ty[start..]);
    members.retain(|member| !member.is_empty());
    members.len() > 1
        && members
            .iter()
            .any(|member| matches!(member, [t] if &text[t.start..t.end] == "null"))
}

/// The words of `text` (names, keywords, numbers), outside strings and comments.
fn words(text: &str) -> impl Iterator<Item = &str> {
    tokens(text)
        .into_iter()
        .filter(|token| token.kind == Kind::Word)
        .map(move |token| &text[token.start..token.end])
}

/// What the rewriting tells apart in a TypeScript type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `{`, `[`, `(`, `<`.
    Open(u8),
    /// `}`, `]`, `)`, `>`.
    Close(u8),
    /// A name, keyword or number.
    Word,
    /// A string literal (a quoted key, a literal type).
    Text,
    /// `=>`, which is no bracket.
    Arrow,
    /// Any other character.
    Punct(u8),
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The tokens of TypeScript type text; whitespace and comments left out.
fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let kind = match (bytes[i], bytes.get(i + 1)) {
            (b, _) if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            (b'/', Some(b'*')) => {
                i = find(text, i + 2, "*/").map_or(bytes.len(), |end| end + 2);
                continue;
            }
            (b'/', Some(b'/')) => {
                i = find(text, i + 2, "\n").unwrap_or(bytes.len());
                continue;
            }
            (quote @ (b'"' | b'\'' | b'`'), _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                out.push(Token {
                    kind: Kind::Text,
                    start,
                    end: i,
                });
                continue;
            }
            (b'=', Some(b'>')) => {
                i += 1;
                Kind::Arrow
            }
            (b @ (b'{' | b'[' | b'(' | b'<'), _) => Kind::Open(b),
            (b @ (b'}' | b']' | b')' | b'>'), _) => Kind::Close(b),
            (b, _) if word(b) => {
                while i + 1 < bytes.len() && word(bytes[i + 1]) {
                    i += 1;
                }
                Kind::Word
            }
            (b, _) => Kind::Punct(b),
        };
        i += 1;
        out.push(Token {
            kind,
            start,
            end: i,
        });
    }
    out
}

fn find(text: &str, from: usize, needle: &str) -> Option<usize> {
    text.get(from..)?.find(needle).map(|at| at + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(declaration: &str) -> String {
        optional_fields(declaration).unwrap_or_else(|| declaration.to_owned())
    }

    #[test]
    fn an_option_field_is_optional() {
        assert_eq!(
            sent("export type ListTodos = { done: boolean | null, };"),
            "export type ListTodos = { done?: boolean | null, };"
        );
        assert_eq!(
            sent(r#"export type T = { "e-mail": string | null, id: number, };"#),
            r#"export type T = { "e-mail"?: string | null, id: number, };"#
        );
        // At any depth: a struct variant's fields, an inlined struct.
        assert_eq!(
            sent(r#"export type E = { "A": { x: number | null, } } | "B";"#),
            r#"export type E = { "A": { x?: number | null, } } | "B";"#
        );
        assert_eq!(
            sent("export type P<T> = { items: Array<T>, next: Array<T | null> | null, };"),
            "export type P<T> = { items: Array<T>, next?: Array<T | null> | null, };"
        );
        // `Option<Option<T>>`, `Option<()>`, a union written first.
        assert_eq!(
            sent("type T = { a: number | null | null, b: null | null, c: null | string, };"),
            "type T = { a?: number | null | null, b?: null | null, c?: null | string, };"
        );
        // A field's doc comment, with what looks like a field in it.
        assert_eq!(
            sent("type T = { \n/**\n * `{ x: y | null, }`\n */\nnote: string | null, };"),
            "type T = { \n/**\n * `{ x: y | null, }`\n */\nnote?: string | null, };"
        );
    }

    #[test]
    fn what_serde_needs_keeps_its_key() {
        for declaration in [
            // Already optional (`#[ts(optional)]`, `skip_serializing_if` with `default`).
            "type T = { pad?: string, b?: string | null, };",
            // `()`, `serde_json::Value`, a newtype of an `Option`: serde wants the key.
            "type T = { unit: null, value: JsonValue, id: MaybeId, };",
            // Null only inside: an array of options, a map's values, a tuple's slot.
            "type T = { a: Array<number | null>, m: { [key in string]: number | null }, t: [number | null, string], };",
            // An enum's newtype variant: the key is the variant.
            r#"type E = { "A": number | null } | { "t": "B", "c": string | null };"#,
            // A string that looks like a field.
            r#"type T = { a: "x: y | null,", };"#,
            "type Id = number;",
        ] {
            assert_eq!(optional_fields(declaration), None, "{declaration}");
        }
    }

    #[test]
    fn the_namespace_holds_what_differs_and_what_uses_it() {
        let candidates = BTreeMap::from([
            ("Filter", "export type Filter = { done: boolean | null, };"),
            (
                "Query",
                "export type Query = { filter: Filter, page: number, };",
            ),
            ("Deep", "export type Deep = { queries: Array<Query>, };"),
            ("Plain", "export type Plain = { id: number, };"),
        ]);
        let sent = Sent::of(&candidates);
        assert_eq!(
            sent.forms.keys().copied().collect::<Vec<_>>(),
            ["Deep", "Filter", "Query"]
        );
        assert_eq!(
            sent.forms["Query"], candidates["Query"],
            "copied as it is: `Filter` resolves in the namespace"
        );
        let mut out = String::new();
        sent.write(&mut out);
        assert!(out.contains(
            "export namespace Sent {\n  export type Deep = { queries: Array<Query>, };\n  \
             export type Filter = { done?: boolean | null, };\n"
        ));
        assert_eq!(sent.qualify("Query"), "Sent.Query");
        assert_eq!(sent.qualify("Plain"), "Plain");
        assert_eq!(
            sent.qualify("Array<Filter> | Plain | null"),
            "Array<Sent.Filter> | Plain | null"
        );
        assert_eq!(
            sent.qualify("{ [key in string]: Filter }"),
            "{ [key in string]: Sent.Filter }"
        );
        let mut none = String::new();
        Sent::of(&BTreeMap::from([("Plain", candidates["Plain"])])).write(&mut none);
        assert_eq!(none, "", "no namespace when nothing differs");
    }
}
