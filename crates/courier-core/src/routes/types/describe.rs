//! How a typed API gives its endpoints' TypeScript types to [`Types`]: the traits
//! `#[derive(courier::TypeScript)]` implements, and their impls for the typed heads.

use super::Types;
use crate::typed::Group;

/// A `courier::Group` or `courier::Api` struct whose endpoints name their TypeScript types:
/// what `#[derive(courier::TypeScript)]` implements, and [`Types::of`] reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not name its endpoints' TypeScript types",
    label = "derive `courier::TypeScript` on `{Self}`",
    note = "derive `courier::TypeScript` on the API struct and each of its groups (courier's `typescript` feature) and `ts_rs::TS` on the endpoints' types, so the routes module types the page's calls",
    note = "an API that cannot have types writes every one `unknown` with `courier::routes::Command::untyped(source, api.def())`"
)]
pub trait TypeScript {
    /// Records every endpoint's types, the struct being at the dotted `path` (empty for an
    /// API's root).
    fn describe(types: &mut Types, path: &str);
}

/// A field of a [`TypeScript`] struct: an endpoint whose types implement `ts_rs::TS` (with
/// courier's `typescript` feature), or a group that derives `courier::TypeScript` too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot name its TypeScript types",
    label = "its types must derive `ts_rs::TS`, or its group `courier::TypeScript`",
    note = "enable courier's `typescript` feature, derive `ts_rs::TS` for the endpoint's variables, response and send types, and `courier::TypeScript` on nested groups"
)]
pub trait Describe {
    /// Records the field's types under its dotted `path`.
    fn describe(types: &mut Types, path: &str);
}

impl<T: TypeScript> Describe for Group<T> {
    fn describe(types: &mut Types, path: &str) {
        T::describe(types, path);
    }
}

#[cfg(feature = "typescript")]
mod with_types {
    use super::*;
    use crate::routes::types::SendType;
    use crate::typed::{Channel, Http, NoSend, Stream};
    use ts_rs::TS;

    impl<R: TS + 'static, V: TS + 'static, K> Describe for Http<R, V, K> {
        fn describe(types: &mut Types, path: &str) {
            types.add::<V, R, NoSend>(path);
        }
    }

    impl<R: TS + 'static, V: TS + 'static> Describe for Stream<R, V> {
        fn describe(types: &mut Types, path: &str) {
            types.add::<V, R, NoSend>(path);
        }
    }

    impl<R: TS + 'static, V: TS + 'static, S: SendType> Describe for Channel<R, V, S> {
        fn describe(types: &mut Types, path: &str) {
            types.add::<V, R, S>(path);
        }
    }
}
