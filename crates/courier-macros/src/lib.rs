//! Derives for courier's typed face: `#[derive(courier::Group)]`, `#[derive(courier::Api)]` and
//! `#[derive(courier::TypeScript)]`.
//!
//! Use them through the facade crate `courier`; the generated code names everything by
//! `::courier::…` paths. Like clap's derive, they only write calls into the runtime tree and the
//! typed views of `courier::typed`. Their guide — an example, its hand-written twin, the
//! attributes and the rules — is on `courier::Group` in the facade's docs (`docs/DERIVE.md`).

mod api;
mod attrs;
mod errors;
mod group;
mod input;
mod typescript;
mod view;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Implements `courier::typed::GroupSpec` for a struct of endpoints and groups, and writes its
/// typed view (`UsersView` for `Users`).
#[proc_macro_derive(Group, attributes(courier))]
pub fn derive_group(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    group::expand(&input).into()
}

/// Implements `courier::typed::ApiSpec` for a struct of groups, and writes its owned root client
/// (`ExampleClient<C>` for `Example`) and borrowed root view (`ExampleView`). The guide to the
/// derives is on `courier::Group`.
#[proc_macro_derive(Api, attributes(courier))]
pub fn derive_api(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    api::expand(&input).into()
}

/// Implements `courier::routes::types::TypeScript` for a `courier::Group` or `courier::Api` struct:
/// each field's TypeScript types for the routes module (`courier::routes::types`). Needs
/// courier's `typescript` feature, and every endpoint's variables, response and send types
/// deriving `ts_rs::TS`.
#[proc_macro_derive(TypeScript, attributes(courier))]
pub fn derive_typescript(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    typescript::expand(&input).into()
}
