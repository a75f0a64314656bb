//! `#[derive(courier::TypeScript)]`: `routes::types::TypeScript::describe`, one
//! `routes::types::Describe::describe` per field, for the routes module's types.

use crate::attrs::Settings;
use crate::errors::Errors;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// Expands the derive. Field rules (names, kinds) are the `Group` / `Api` derive's to report:
/// this one writes a call per named field and reports only what is its own.
pub(crate) fn expand(input: &DeriveInput) -> TokenStream {
    let spec = &input.ident;
    let Data::Struct(data) = &input.data else {
        return syn::Error::new(
            spec.span(),
            "`#[derive(courier::TypeScript)]` goes on a `courier::Group` or `courier::Api` struct",
        )
        .to_compile_error();
    };
    let Fields::Named(fields) = &data.fields else {
        return quote!();
    };
    let mut seen = Vec::new();
    let calls = fields.named.iter().filter_map(|field| {
        let ident = field.ident.as_ref()?;
        // The other derive reports a bad attribute; here it only must not fail twice.
        let mut ignored = Errors::default();
        let settings = Settings::parse(&field.attrs, &["rename"], "a field", &mut ignored);
        let name = settings
            .get("rename")
            .map(|lit| lit.value())
            .unwrap_or_else(|| ident.unraw().to_string());
        // A group and an endpoint may share a name; two of one kind are the other derive's
        // error, described once here.
        let group = matches!(&field.ty, syn::Type::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "Group"));
        if seen.contains(&(name.clone(), group)) {
            return None;
        }
        seen.push((name.clone(), group));
        let ty = &field.ty;
        Some(quote_spanned! {ty.span()=>
            <#ty as ::courier::routes::types::Describe>::describe(
                types,
                &::courier::routes::types::Types::join(path, #name),
            );
        })
    });
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics ::courier::routes::types::TypeScript for #spec #ty_generics #where_clause {
            fn describe(types: &mut ::courier::routes::types::Types, path: &str) {
                let _ = (&types, path);
                #(#calls)*
            }
        }
    }
}
