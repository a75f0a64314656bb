//! The TypeScript types of a typed API's endpoints, for the routes module a browser imports.
//!
//! [`Types::of`] collects, for each endpoint of a `#[derive(courier::Api)]` struct, the
//! TypeScript of its variables and response (and a two-way channel's send type), generated from
//! the Rust types by [ts-rs](https://docs.rs/ts-rs) with the `typescript` feature.
//! [`Routes::to_typescript_with`](super::Routes::to_typescript_with) writes them into the
//! module, so `tsc` checks a page's calls against the Rust API:
//!
//! ```ignore
//! #[derive(serde::Deserialize, ts_rs::TS)]
//! pub struct User { pub id: u32, pub name: String }
//!
//! #[derive(courier::Group, courier::TypeScript)]
//! pub struct Users { pub get: Http<User, u32> }
//!
//! #[derive(courier::Api, courier::TypeScript)]
//! pub struct Example { pub users: Group<Users> }
//!
//! let module = Routes::from_api("demo", &api).to_typescript_with(&Types::of::<Example>())?;
//! // export type User = { id: number, name: string, };
//! // export interface Endpoints { "users.get": { variables: number; response: User }; … }
//! ```
//!
//! (`tests/typescript.rs` runs this whole; `js/`'s type tests run `tsc` over such a module, the
//! browser fixture's `js/test/routes.gen.ts`.)
//!
//! Rules:
//!
//! - Types are opt-in per struct: `#[derive(courier::TypeScript)]` on the API struct and each
//!   of its groups. Every endpoint's variables, response and send types then implement
//!   `ts_rs::TS` (derive it next to `Serialize` / `Deserialize`; ts-rs reads serde's
//!   attributes). `()` — no variables — is `null`, which the browser caller takes as "called
//!   with no argument".
//! - 64-bit integers are `number`: they travel as JSON numbers.
//! - A named type is declared once, with those it depends on, and only when a routed (exposed)
//!   endpoint uses it: nothing of an internal endpoint ships to the browser.
//! - An API that is not typed (a config file's), or an endpoint `Types` has nothing for, is
//!   `unknown`.
//! - What a page reads is typed as serde writes it, and what it sends as serde reads it; they
//!   differ in the `Option` fields of structs. A response's `Option<bool>` field is
//!   `done: boolean | null`: serde writes `None` as `null`, key present (unless the type's own
//!   serde attributes skip it, which ts-rs follows). In the variables and a channel's send type
//!   it is `done?: boolean | null`, at any depth: courier leaves a `null` out of a query, and
//!   serde reads a missing `Option` field as `None`. The module declares those sent forms, where
//!   they differ, under the same names in its `Sent` namespace, and `Endpoints` names them
//!   (`variables: Sent.ListTodos`), so a type used both ways has each shape in its place. The
//!   wire's rules behind this are in the derives' guide (`courier::Group`, `docs/DERIVE.md`).

mod describe;
mod sent;

pub(super) use self::sent::Sent;

use crate::error::{ConfigurationError, ErrorCode};
use std::collections::BTreeMap;

/// The TypeScript types of an API's endpoints, by dotted path. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Types {
    endpoints: BTreeMap<String, EndpointTypes>,
}

/// One endpoint's TypeScript types and the declarations they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct EndpointTypes {
    pub(super) variables: String,
    pub(super) response: String,
    pub(super) send: Option<String>,
    /// `(name, declaration)` of every named type the three use, directly or not.
    pub(super) declarations: Vec<(String, String)>,
    /// The names of those the variables and the send type use: what a page sends.
    pub(super) sent: Vec<String>,
}

impl Types {
    /// No types: every endpoint is `unknown`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The types of the endpoints of `A`, a `#[derive(courier::Api, courier::TypeScript)]`
    /// struct.
    pub fn of<A: TypeScript>() -> Self {
        let mut types = Self::new();
        A::describe(&mut types, "");
        types
    }

    /// Whether no endpoint has types.
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// Whether the endpoint at the dotted `path` has types.
    pub fn covers(&self, path: &str) -> bool {
        self.endpoints.contains_key(path)
    }

    /// Sets `path`'s types by hand: TypeScript type expressions, and the declarations
    /// (`export type …` lines) they need. For an endpoint whose Rust types cannot derive `TS`.
    pub fn set(
        &mut self,
        path: impl Into<String>,
        variables: impl Into<String>,
        response: impl Into<String>,
        send: Option<String>,
    ) -> &mut Self {
        self.endpoints.insert(
            path.into(),
            EndpointTypes {
                variables: variables.into(),
                response: response.into(),
                send,
                declarations: Vec::new(),
                sent: Vec::new(),
            },
        );
        self
    }

    /// `name` under the group path `path` (derive plumbing).
    #[doc(hidden)]
    pub fn join(path: &str, name: &str) -> String {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    }

    pub(super) fn get(&self, path: &str) -> Option<&EndpointTypes> {
        self.endpoints.get(path)
    }
}

/// The declarations the routed endpoints need, each once, sorted by name; two different types
/// of one name are an error (`INVALID_OPTION`), since the module could hold only one.
pub(super) fn declarations<'a>(
    used: impl IntoIterator<Item = (&'a str, &'a EndpointTypes)>,
) -> Result<BTreeMap<&'a str, &'a str>, ConfigurationError> {
    let mut all: BTreeMap<&str, &str> = BTreeMap::new();
    for (path, types) in used {
        for (name, declaration) in &types.declarations {
            match all.insert(name, declaration) {
                Some(other) if other != declaration => {
                    return Err(ConfigurationError::new(
                        ErrorCode::InvalidOption,
                        format!(
                            "two different types are named `{name}` in the routes' types; \
                             rename one for TypeScript with `#[ts(rename = \"…\")]`"
                        ),
                    )
                    .at(path))
                }
                _ => {}
            }
        }
    }
    Ok(all)
}

/// The sent forms of the types the routed endpoints' variables and send types use, among
/// `declarations` (those of [`declarations`]).
pub(super) fn sent<'a>(
    used: impl IntoIterator<Item = &'a EndpointTypes>,
    declarations: &BTreeMap<&'a str, &'a str>,
) -> Sent<'a> {
    let candidates = used
        .into_iter()
        .flat_map(|types| &types.sent)
        .filter_map(|name| declarations.get_key_value(name.as_str()))
        .map(|(&name, &declaration)| (name, declaration))
        .collect();
    Sent::of(&candidates)
}

#[cfg(feature = "typescript")]
mod generate {
    use super::{EndpointTypes, Types};
    use std::any::TypeId;
    use std::collections::HashSet;
    use ts_rs::{Config, TypeVisitor, TS};

    /// JSON numbers: a 64-bit integer is a `number` in the browser, not a `bigint`.
    fn config() -> Config {
        Config::new().with_large_int("number")
    }

    /// Collects the declarations of `T` and of every type it depends on.
    struct Declarations<'a> {
        config: &'a Config,
        seen: HashSet<TypeId>,
        out: Vec<(String, String)>,
    }

    impl TypeVisitor for Declarations<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if !self.seen.insert(TypeId::of::<T>()) {
                return;
            }
            // A type ts-rs would write to a file of its own is a named declaration; built-in
            // types (numbers, strings, arrays, options) are written inline.
            if T::output_path().is_some() {
                let declaration = T::decl(self.config);
                self.out
                    .push((T::ident(self.config), format!("export {declaration}")));
            }
            T::visit_dependencies(self);
            T::visit_generics(self);
        }
    }

    impl Types {
        /// Records an endpoint's types: `V` its variables, `R` its response, `S` a two-way
        /// channel's send type.
        pub fn add<V, R, S>(&mut self, path: impl Into<String>)
        where
            V: TS + 'static + ?Sized,
            R: TS + 'static + ?Sized,
            S: SendType,
        {
            let config = config();
            let mut declarations = Declarations {
                config: &config,
                seen: HashSet::new(),
                out: Vec::new(),
            };
            // What a page sends first: the types those reach are the ones with sent forms.
            declarations.visit::<V>();
            S::visit(&mut declarations);
            let sent = declarations
                .out
                .iter()
                .map(|(name, _)| name.clone())
                .collect();
            declarations.visit::<R>();
            let send = S::name(&config);
            self.endpoints.insert(
                path.into(),
                EndpointTypes {
                    variables: V::name(&config),
                    response: R::name(&config),
                    send,
                    declarations: declarations.out,
                    sent,
                },
            );
        }
    }

    /// A form's variables are a `FormData` in the browser: files and fields, sent as
    /// `multipart/form-data`.
    impl TS for crate::encode::Form {
        type WithoutGenerics = Self;
        type OptionInnerType = Self;
        fn name(_: &Config) -> String {
            "FormData".to_owned()
        }
        fn inline(config: &Config) -> String {
            <Self as TS>::name(config)
        }
    }

    /// A channel's send type: a `TS` type, or [`NoSend`](crate::typed::NoSend) for a push-only
    /// channel (which has no send type in the routes module).
    pub trait SendType {
        /// Visits the type, for its declarations.
        fn visit(visitor: &mut impl TypeVisitor);
        /// Its TypeScript name; `None` for a push-only channel.
        fn name(config: &Config) -> Option<String>;
    }

    impl SendType for crate::typed::NoSend {
        fn visit(_: &mut impl TypeVisitor) {}
        fn name(_: &Config) -> Option<String> {
            None
        }
    }

    impl<T: TS + 'static> SendType for T {
        fn visit(visitor: &mut impl TypeVisitor) {
            visitor.visit::<T>();
        }
        fn name(config: &Config) -> Option<String> {
            Some(T::name(config))
        }
    }
}

pub use self::describe::{Describe, TypeScript};
#[cfg(feature = "typescript")]
pub use self::generate::SendType;
