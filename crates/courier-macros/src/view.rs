//! The typed view both derives write: a struct around a `Scope`, one method per member, and the
//! views' own `with` and `raw`; for a group, its services view too (one `EndpointService` per
//! endpoint), reached with `services`.

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
    /// The services view's name, for a group's view (the root of an API has no endpoints).
    pub(crate) services: Option<&'a Ident>,
}

impl View<'_> {
    /// The struct, its `From<Scope>`, `Clone`, `Debug` and `AsRef<Scope>` impls, and its methods.
    pub(crate) fn expand(&self, members: &[Member<'_>]) -> TokenStream {
        let Self {
            vis,
            ident,
            doc,
            params,
            services,
        } = self;
        let Params {
            lifetime: a,
            client: c,
            mode: m,
        } = params;
        let debug_name = ident.to_string();
        let (services_method, services_view) = match services {
            Some(services) => (
                services_method(vis, ident, services, params),
                services_view(vis, ident, services, params, members),
            ),
            None => (quote!(), quote!()),
        };
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
            impl<#a, #c: ::courier::typed::dispatch::Dispatch + #a, #m: ::courier::typed::Mode> #ident<#a, #c, #m> {
                #(#methods)*

                #[doc = "The same view with `options` set for every call made through it, merged"]
                #[doc = "over those set so far (the later `.with()` wins)."]
                #vis fn with(&self, options: ::courier::CallOptions) -> Self {
                    Self {
                        scope: self.scope.with(options),
                    }
                }

                #[doc = "The same view, its HTTP calls resolving to the whole"]
                #[doc = "[`HttpResponse`](::courier::response::HttpResponse) (status, headers and body)"]
                #[doc = "instead of the body. Streams and channels are the same in either mode."]
                #vis fn raw(&self) -> #ident<#a, #c, ::courier::typed::Raw> {
                    #ident {
                        scope: self.scope.raw(),
                    }
                }

                #services_method
            }

            #services_view
        }
    }
}

/// The view's `services()`, which reaches its services view.
fn services_method(
    vis: &Visibility,
    view: &Ident,
    services: &Ident,
    params: &Params,
) -> TokenStream {
    let Params {
        lifetime: a,
        client: c,
        mode: m,
    } = params;
    let doc = format!(
        "The same endpoints as `tower::Service`s ([`{services}`]): one \
         [`EndpointService`](::courier::typed::EndpointService) per endpoint, with this view's \
         options and mode. See [`{view}`]'s endpoints for what each takes and gives."
    );
    quote! {
        #[doc = #doc]
        #vis fn services(&self) -> #services<#a, #c, #m> {
            #services {
                scope: ::core::clone::Clone::clone(&self.scope),
            }
        }
    }
}

/// The services view: a struct around the same `Scope`, one method per endpoint that makes its
/// `EndpointService`.
fn services_view(
    vis: &Visibility,
    view: &Ident,
    services: &Ident,
    params: &Params,
    members: &[Member<'_>],
) -> TokenStream {
    let Params {
        lifetime: a,
        client: c,
        mode: m,
    } = params;
    let debug_name = services.to_string();
    let doc = format!(
        "The endpoints of [`{view}`] as `tower::Service`s, reached with its `services()`: each \
         method makes the endpoint's [`EndpointService`](::courier::typed::EndpointService), \
         which owns a clone of the caller. Written by `#[derive(courier::Group)]`."
    );
    let methods = members
        .iter()
        .filter(|member| member.method && matches!(member.kind, Kind::Endpoint { .. }))
        .map(|member| {
            let Member { ident, ty, .. } = member;
            let doc = format!(
                "The `{}` endpoint as a `tower::Service` of its variables.\n\n\
                 # Errors\n\n\
                 `ENDPOINT_NOT_IN_ROUTES` when the caller cannot reach it (a proxy caller whose \
                 routes leave it out).",
                member.name
            );
            let span = ty.span();
            let mut name = Literal::string(&member.name);
            name.set_span(span);
            quote_spanned! {span=>
                #[doc = #doc]
                #vis fn #ident(&self) -> ::core::result::Result<
                    ::courier::typed::EndpointService<#c, #ty, #m>,
                    ::courier::ConfigurationError,
                > {
                    ::courier::typed::EndpointService::<#c, #ty, #m>::new(&self.scope, #name)
                }
            }
        });
    quote! {
        #[doc = #doc]
        #vis struct #services<#a, #c, #m = ::courier::typed::Data> {
            scope: ::courier::typed::Scope<#a, #c, #m>,
        }

        #[automatically_derived]
        impl<#a, #c, #m> ::core::clone::Clone for #services<#a, #c, #m> {
            fn clone(&self) -> Self {
                Self {
                    scope: ::core::clone::Clone::clone(&self.scope),
                }
            }
        }

        #[automatically_derived]
        impl<#a, #c, #m> ::core::fmt::Debug for #services<#a, #c, #m> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#debug_name).field("scope", &self.scope).finish()
            }
        }

        // The return types name the field's type inside `EndpointService` inside `Result`,
        // which clippy would blame on the user's field.
        #[allow(dead_code, clippy::type_complexity)]
        impl<#a, #c: ::courier::typed::dispatch::Dispatch + ::core::clone::Clone + #a, #m: ::courier::typed::Mode>
            #services<#a, #c, #m>
        {
            #(#methods)*
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
