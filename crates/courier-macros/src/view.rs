//! The typed view both derives write: a struct around a `Scope`, one method per member, and the
//! views' own `with` and `raw`.

use crate::input::{Kind, Member, Params};
use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Visibility};

/// A view struct to write.
pub(crate) struct View<'a> {
    pub(crate) vis: &'a Visibility,
    pub(crate) ident: &'a Ident,
    /// The struct's doc comment.
    pub(crate) doc: String,
    pub(crate) params: &'a Params,
}

impl View<'_> {
    /// The struct, its `From<Scope>`, `Clone`, `Debug` and `AsRef<Scope>` impls, and its methods.
    pub(crate) fn expand(&self, members: &[Member<'_>]) -> TokenStream {
        let Self {
            vis,
            ident,
            doc,
            params,
        } = self;
        let Params {
            lifetime: a,
            client: c,
            mode: m,
        } = params;
        let debug_name = ident.to_string();
        let methods =
            members
                .iter()
                .filter(|member| member.method)
                .map(|member| match member.kind {
                    Kind::Group => {
                        group_method(member, vis, &quote!(#a, #c, #m), &quote!(self.scope.group))
                    }
                    Kind::Endpoint { variables } => endpoint_method(member, vis, params, variables),
                });
        quote! {
            #[doc = #doc]
            #vis struct #ident<#a, #c, #m = ::courier::typed::Data> {
                scope: ::courier::typed::Scope<#a, #c, #m>,
            }

            #[automatically_derived]
            impl<#a, #c, #m> ::core::convert::From<::courier::typed::Scope<#a, #c, #m>>
                for #ident<#a, #c, #m>
            {
                fn from(scope: ::courier::typed::Scope<#a, #c, #m>) -> Self {
                    Self { scope }
                }
            }

            #[automatically_derived]
            impl<#a, #c, #m> ::core::convert::AsRef<::courier::typed::Scope<#a, #c, #m>>
                for #ident<#a, #c, #m>
            {
                fn as_ref(&self) -> &::courier::typed::Scope<#a, #c, #m> {
                    &self.scope
                }
            }

            #[automatically_derived]
            impl<#a, #c, #m> ::core::clone::Clone for #ident<#a, #c, #m> {
                fn clone(&self) -> Self {
                    Self {
                        scope: ::core::clone::Clone::clone(&self.scope),
                    }
                }
            }

            #[automatically_derived]
            impl<#a, #c, #m> ::core::fmt::Debug for #ident<#a, #c, #m> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(#debug_name).field("scope", &self.scope).finish()
                }
            }

            #[allow(dead_code)]
            impl<#a, #c: ::courier::Dispatch + #a, #m: ::courier::typed::Mode> #ident<#a, #c, #m> {
                #(#methods)*

                #[doc = "The same view with `options` set for every call made through it, merged"]
                #[doc = "over those set so far (the later `.with()` wins)."]
                #vis fn with(&self, options: ::courier::CallOptions) -> Self {
                    Self {
                        scope: self.scope.with(options),
                    }
                }

                #[doc = "The same view, its HTTP calls resolving to the whole"]
                #[doc = "[`HttpResponse`](::courier::HttpResponse) (status, headers and body)"]
                #[doc = "instead of the body. Streams and channels are the same in either mode."]
                #vis fn raw(&self) -> #ident<#a, #c, ::courier::typed::Raw> {
                    #ident {
                        scope: self.scope.raw(),
                    }
                }
            }
        }
    }
}

/// The member's doc comments, or `default` when it has none.
fn docs(member: &Member<'_>, default: String) -> TokenStream {
    if member.docs.is_empty() {
        quote!(#[doc = #default])
    } else {
        let docs = &member.docs;
        quote!(#(#docs)*)
    }
}

/// `fn posts(&self) -> PostsView<…> { From::from(scope.group("posts")) }`; `generics` are the
/// view's lifetime, caller and mode, `group` reaches the nested scope.
pub(crate) fn group_method(
    member: &Member<'_>,
    vis: &Visibility,
    generics: &TokenStream,
    group: &TokenStream,
) -> TokenStream {
    let Member { ident, ty, .. } = member;
    let doc = docs(member, format!("The `{}` group.", member.name));
    // Spanned at the field's type, as an endpoint's method is.
    let span = ty.span();
    let mut name = Literal::string(&member.name);
    name.set_span(span);
    quote_spanned! {span=>
        #doc
        #vis fn #ident(&self)
            -> <<#ty as ::courier::typed::GroupMember>::Spec as ::courier::typed::GroupSpec>::View<#generics>
        {
            ::core::convert::From::from(#group(#name))
        }
    }
}

/// `fn get(&self, variables: V) -> HttpCall<…>`, or with no argument when the variables are `()`.
fn endpoint_method(
    member: &Member<'_>,
    vis: &Visibility,
    params: &Params,
    variables: bool,
) -> TokenStream {
    let Member { ident, ty, .. } = member;
    let Params {
        lifetime: a,
        client: c,
        mode: m,
    } = params;
    let doc = docs(member, format!("Calls the `{}` endpoint.", member.name));
    // The whole method is spanned at the field's type, name included: a type that is no
    // endpoint (or whose variables do not serialize) is reported once, there.
    let span = ty.span();
    let mut name = Literal::string(&member.name);
    name.set_span(span);
    let endpoint = quote_spanned!(span=> <#ty as ::courier::typed::Endpoint>);
    let (argument, value) = if variables {
        (
            quote_spanned!(span=> variables: #endpoint::Vars),
            quote_spanned!(span=> variables),
        )
    } else {
        (quote!(), quote_spanned!(span=> ()))
    };
    quote_spanned! {span=>
        #doc
        #vis fn #ident(&self, #argument) -> #endpoint::Call<#a, #c, #m> {
            #endpoint::call(&self.scope, #name, #value)
        }
    }
}
