//! `#[derive(courier::Api)]`: `ApiSpec::register`, the owned root client and the root view.

use crate::attrs::Settings;
use crate::errors::Errors;
use crate::group::ident_setting;
use crate::input::{self, Derive, Params};
use crate::view::{group_method, View};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

pub(crate) fn expand(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let settings = Settings::parse(
        &input.attrs,
        &["client", "view"],
        "a `courier::Api` struct",
        &mut errors,
    );
    let spec = &input.ident;
    let vis = &input.vis;
    let client = ident_setting(&settings, "client", &mut errors)
        .unwrap_or_else(|| format_ident!("{}Client", spec));
    let view = ident_setting(&settings, "view", &mut errors)
        .unwrap_or_else(|| format_ident!("{}View", spec));
    let params = Params::new(input, &[&client, &view]);
    let Some(fields) = input::named_fields(input, Derive::Api, &mut errors) else {
        let placeholder = placeholder(input, &params);
        let errors = errors.into_tokens();
        return quote!(#placeholder #errors);
    };
    let members = input::members(fields, Derive::Api, &client, &mut errors);

    let register = members.iter().map(|member| {
        let field = member.ident;
        let name = &member.name;
        if member.register {
            quote_spanned! {member.ty.span()=>
                let api = ::courier::typed::ApiMember::add_to_api(self.#field, #name, api);
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
    let root = |mode: TokenStream| quote!(::courier::typed::Scope::<#c, #mode>::root(&self.client));
    let data = quote!(::courier::typed::Data);
    let root_data = root(data.clone());
    let root_raw = root(quote!(::courier::typed::Raw));
    let groups = members.iter().filter(|member| member.method).map(|member| {
        group_method(
            member,
            vis,
            &quote!('_, #c, #data),
            &quote!(#root_data.group),
        )
    });
    let client_doc = format!(
        "The typed client of [`{spec}`] over a caller `{c}`: one method per group, `with` for \
         per-call options and `raw` for whole responses. A caller derefs to it. Written by \
         `#[derive(courier::Api)]`."
    );
    let client_debug = client.to_string();
    let view_struct = View {
        vis,
        ident: &view,
        doc: format!(
            "Typed view of the root of [`{spec}`], borrowed from a [`{client}`] by its `with` \
             and `raw`. Written by `#[derive(courier::Api)]`."
        ),
        params: &params,
        services: None,
    }
    .expand(&members);
    let errors = errors.into_tokens();
    quote! {
        #[automatically_derived]
        impl ::courier::typed::ApiSpec for #spec {
            type Client<#c: ::courier::typed::dispatch::Dispatch> = #client<#c>;
            type View<#a, #c: ::courier::typed::dispatch::Dispatch + #a, #m: ::courier::typed::Mode> =
                #view<#a, #c, #m>;

            fn register(self, api: ::courier::ApiBuilder) -> ::courier::ApiBuilder {
                #(#register)*
                api
            }
        }

        #[doc = #client_doc]
        #vis struct #client<#c> {
            client: #c,
        }

        #[automatically_derived]
        impl<#c> ::core::convert::From<#c> for #client<#c> {
            fn from(client: #c) -> Self {
                Self { client }
            }
        }

        #[automatically_derived]
        impl<#c: ::core::clone::Clone> ::core::clone::Clone for #client<#c> {
            fn clone(&self) -> Self {
                Self {
                    client: ::core::clone::Clone::clone(&self.client),
                }
            }
        }

        #[automatically_derived]
        impl<#c: ::core::fmt::Debug> ::core::fmt::Debug for #client<#c> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#client_debug).field("client", &self.client).finish()
            }
        }

        #[allow(dead_code)]
        impl<#c: ::courier::typed::dispatch::Dispatch> #client<#c> {
            #(#groups)*

            #[doc = "A view of the root with `options` set for every call made through it."]
            #vis fn with(&self, options: ::courier::CallOptions) -> #view<'_, #c, #data> {
                ::core::convert::From::from(#root_data.with(options))
            }

            #[doc = "A view of the root whose HTTP calls resolve to the whole"]
            #[doc = "[`HttpResponse`](::courier::response::HttpResponse) instead of the body."]
            #vis fn raw(&self) -> #view<'_, #c, ::courier::typed::Raw> {
                ::core::convert::From::from(#root_raw)
            }

            #[doc = "The caller."]
            #vis fn client(&self) -> &#c {
                &self.client
            }

            #[doc = "The caller, owned."]
            #vis fn into_client(self) -> #c {
                self.client
            }
        }

        #view_struct
        #errors
    }
}

/// What stands in for the impl when the input cannot be read.
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
        impl #impl_generics ::courier::typed::ApiSpec for #spec #ty_generics #where_clause {
            type Client<#c: ::courier::typed::dispatch::Dispatch> = #c;
            type View<#a, #c: ::courier::typed::dispatch::Dispatch + #a, #m: ::courier::typed::Mode> =
                ::courier::typed::Scope<#a, #c, #m>;

            fn register(self, api: ::courier::ApiBuilder) -> ::courier::ApiBuilder {
                api
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
            #[courier(client = "Remote")]
            pub struct Example { pub users: Group<Users>, #[courier(rename = "root")] pub admin: Group<Admin> }
        };
        let tokens = expand(&input);
        let file: syn::File = syn::parse2(tokens.clone()).expect("items");
        assert_eq!(
            file.items.len(),
            12,
            "ApiSpec, the client and its 4 impls, the view and its 5"
        );
        let text = tokens.to_string();
        assert!(!text.contains("compile_error"), "{text}");
        assert!(text.contains("pub struct Remote"), "{text}");
        assert!(text.contains("pub struct ExampleView"), "{text}");
        assert!(text.contains("group (\"root\")"), "{text}");
    }

    #[test]
    fn an_unreadable_input_still_implements_the_trait() {
        let input: DeriveInput = parse_quote!(
            pub struct Example(Group<Users>);
        );
        let text = expand(&input).to_string();
        assert!(text.contains("ApiSpec for Example"), "{text}");
        assert!(text.contains("compile_error"), "{text}");
    }
}
