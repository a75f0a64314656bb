//! `#[derive(courier::Group)]`: `GroupSpec::register` and the group's view.

use crate::attrs::Settings;
use crate::errors::Errors;
use crate::input::{self, Derive, Params};
use crate::view::View;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident};

pub(crate) fn expand(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let settings = Settings::parse(
        &input.attrs,
        &["view", "services"],
        "a `courier::Group` struct",
        &mut errors,
    );
    let spec = &input.ident;
    let view = ident_setting(&settings, "view", &mut errors)
        .unwrap_or_else(|| format_ident!("{}View", spec));
    let services = ident_setting(&settings, "services", &mut errors)
        .unwrap_or_else(|| format_ident!("{}Services", spec));
    let params = Params::new(input, &[&view, &services]);
    let Some(fields) = input::named_fields(input, Derive::Group, &mut errors) else {
        let placeholder = placeholder(input, &params);
        let errors = errors.into_tokens();
        return quote!(#placeholder #errors);
    };
    let members = input::members(fields, Derive::Group, spec, &mut errors);

    let register = members.iter().map(|member| {
        let field = member.ident;
        let name = &member.name;
        if member.register {
            quote_spanned! {member.ty.span()=>
                let group = ::courier::typed::Member::add_to(self.#field, #name, group);
            }
        } else {
            quote!(let _ = self.#field;)
        }
    });
    let Params {
        lifetime: a,
        client: c,
        mode: m,
    } = &params;
    let view_struct = View {
        vis: &input.vis,
        ident: &view,
        doc: format!(
            "Typed view of [`{spec}`]: one method per endpoint or group, `with` for per-call \
             options, `raw` for whole responses and `services` for the endpoints as \
             `tower::Service`s. Written by `#[derive(courier::Group)]`."
        ),
        params: &params,
        services: Some(&services),
    }
    .expand(&members);
    let errors = errors.into_tokens();
    quote! {
        #[automatically_derived]
        impl ::courier::typed::GroupSpec for #spec {
            type View<#a, #c: ::courier::typed::dispatch::Dispatch + #a, #m: ::courier::typed::Mode> =
                #view<#a, #c, #m>;

            fn register(self, group: ::courier::GroupDef) -> ::courier::GroupDef {
                #(#register)*
                group
            }
        }

        #view_struct
        #errors
    }
}

/// A `view = "Name"`-style setting, as an identifier.
pub(crate) fn ident_setting(settings: &Settings, key: &str, errors: &mut Errors) -> Option<Ident> {
    let lit = settings.get(key)?;
    match lit.parse::<Ident>() {
        Ok(ident) => Some(ident),
        Err(_) => {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "`{key}` names a struct: `{}` is no Rust identifier",
                    lit.value()
                ),
            ));
            None
        }
    }
}

/// What stands in for the impl when the input cannot be read, so that code using the struct
/// reports nothing further.
fn placeholder(input: &DeriveInput, params: &Params) -> TokenStream {
    let spec = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let Params {
        lifetime: a,
        client: c,
        mode: m,
    } = params;
    quote! {
        #[automatically_derived]
        impl #impl_generics ::courier::typed::GroupSpec for #spec #ty_generics #where_clause {
            type View<#a, #c: ::courier::typed::dispatch::Dispatch + #a, #m: ::courier::typed::Mode> =
                ::courier::typed::Scope<#a, #c, #m>;

            fn register(self, group: ::courier::GroupDef) -> ::courier::GroupDef {
                group
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn expands_to_items() {
        let input: DeriveInput = parse_quote! {
            #[courier(view = "UsersApi")]
            pub struct Users {
                /// One user.
                pub get: Http<User, UserId>,
                pub me: Http<User>,
                pub posts: Group<Posts>,
            }
        };
        let tokens = expand(&input);
        let file: syn::File = syn::parse2(tokens.clone()).expect("items");
        assert_eq!(
            file.items.len(),
            11,
            "GroupSpec, the view and its 5 impls, the services view and its 3 impls"
        );
        let text = tokens.to_string();
        assert!(!text.contains("compile_error"), "{text}");
        assert!(text.contains("pub struct UsersApi"), "{text}");
        assert!(text.contains("\" One user.\""), "the field's docs: {text}");
        assert!(text.contains("Calls the `me` endpoint."), "{text}");
        assert!(text.contains("pub struct UsersServices"), "{text}");
        assert!(
            text.contains("The `get` endpoint as a `tower::Service`"),
            "{text}"
        );
        assert!(
            !text.contains("The `posts` endpoint"),
            "a nested group has no service: {text}"
        );
    }

    #[test]
    fn an_unreadable_input_still_implements_the_trait() {
        let input: DeriveInput = parse_quote!(
            pub enum Users {
                A,
            }
        );
        let text = expand(&input).to_string();
        assert!(text.contains("GroupSpec for Users"), "{text}");
        assert!(text.contains("compile_error"), "{text}");
    }

    #[test]
    fn a_view_name_must_be_an_identifier() {
        let input: DeriveInput = parse_quote! {
            #[courier(view = "Users View")]
            pub struct Users { pub me: Http<User> }
        };
        let text = expand(&input).to_string();
        assert!(text.contains("is no Rust identifier"), "{text}");
        assert!(
            text.contains("struct UsersView"),
            "the default name stands in: {text}"
        );
    }
}
