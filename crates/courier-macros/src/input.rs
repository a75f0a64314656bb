//! What both derives read from the struct: its named fields, each field's name in the tree, and
//! whether it is a group or an endpoint. Every rule the derives enforce is checked here.

use crate::attrs::Settings;
use crate::errors::Errors;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::{
    Attribute, Data, DeriveInput, Field, Fields, FieldsNamed, GenericArgument, Ident, Lifetime,
    PathArguments, Type,
};

/// Names a group may not take (`courier_core::RESERVED_GROUP_NAMES`).
const RESERVED_GROUP_NAMES: &[&str] = &["raw", "with"];
/// Names an endpoint may not take (`courier_core::RESERVED_ENDPOINT_NAMES`).
const RESERVED_ENDPOINT_NAMES: &[&str] = &["options", "raw", "with"];
/// The views' own methods: a field of that name would have no method of its own.
const VIEW_METHODS: &[&str] = &["raw", "with"];
/// The root client's own methods, besides the views'.
const CLIENT_METHODS: &[&str] = &["client", "into_client"];
/// A group view's own methods, besides `raw` and `with`: not reserved names in the tree, only
/// field names the view's methods take.
const GROUP_VIEW_METHODS: &[&str] = &["services"];

/// Which derive is reading.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derive {
    Group,
    Api,
}

impl Derive {
    fn name(self) -> &'static str {
        match self {
            Self::Group => "courier::Group",
            Self::Api => "courier::Api",
        }
    }
}

/// The named fields of the struct, or `None` (with the error pushed) when the input is not a
/// plain struct with named fields.
pub(crate) fn named_fields<'a>(
    input: &'a DeriveInput,
    derive: Derive,
    errors: &mut Errors,
) -> Option<&'a FieldsNamed> {
    let name = derive.name();
    let what = match derive {
        Derive::Group => "one per endpoint or group",
        Derive::Api => "one per group",
    };
    let refuse = |span: Span, why: String| {
        syn::Error::new(
            span,
            format!("`#[derive({name})]` needs a struct with named fields, {what}: {why}"),
        )
    };
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => Some(fields),
            Fields::Unnamed(fields) => {
                errors.push(refuse(
                    fields.paren_token.span.join(),
                    "a tuple struct has no field names to name its members by".into(),
                ));
                None
            }
            Fields::Unit => {
                errors.push(refuse(
                    input.ident.span(),
                    format!("`{}` is a unit struct", input.ident),
                ));
                None
            }
        },
        Data::Enum(data) => {
            errors.push(refuse(
                data.enum_token.span,
                format!("`{}` is an enum", input.ident),
            ));
            None
        }
        Data::Union(data) => {
            errors.push(refuse(
                data.union_token.span,
                format!("`{}` is a union", input.ident),
            ));
            None
        }
    }?;
    let generics = &input.generics;
    let refuse_generics = |tokens: &dyn ToTokens| {
        syn::Error::new_spanned(
            tokens,
            format!(
                "`#[derive({name})]` does not take generic parameters: write each field's types out"
            ),
        )
    };
    if !generics.params.is_empty() {
        errors.push(refuse_generics(generics));
        return None;
    }
    if let Some(clause) = &generics.where_clause {
        errors.push(refuse_generics(clause));
        return None;
    }
    Some(fields)
}

/// A group or an endpoint.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `Group<T>`.
    Group,
    /// Any other field type; `variables` is false when they are syntactically `()` or omitted.
    Endpoint { variables: bool },
}

/// One field, read.
pub(crate) struct Member<'a> {
    /// The field: the method's name, `r#` and all.
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    /// The name in the tree: the `rename`, else the field's name without `r#`.
    pub(crate) name: String,
    pub(crate) kind: Kind,
    /// The field's own doc comments.
    pub(crate) docs: Vec<&'a Attribute>,
    /// Whether the view gets a method for it (not when the field's own name is refused).
    pub(crate) method: bool,
    /// Whether it is registered (not an `Api` field that is not a group, nor a second field of
    /// the same name).
    pub(crate) register: bool,
}

/// Reads every field, pushing an error for each rule a field breaks. Fields with errors are
/// still returned, marked so the expansion leaves out only what would fail again.
pub(crate) fn members<'a>(
    fields: &'a FieldsNamed,
    derive: Derive,
    client: &Ident,
    errors: &mut Errors,
) -> Vec<Member<'a>> {
    let mut members: Vec<Member<'a>> = Vec::new();
    for field in &fields.named {
        let Some(ident) = &field.ident else { continue };
        let settings = Settings::parse(&field.attrs, &["rename"], "a field", errors);
        let rename = settings.get("rename");
        let rust = ident.unraw().to_string();
        let (name, name_span) = match rename {
            Some(lit) => (lit.value(), lit.span()),
            None => (rust.clone(), ident.span()),
        };
        let mut member = Member {
            ident,
            ty: &field.ty,
            kind: kind_of(&field.ty),
            name,
            docs: docs(field),
            method: true,
            register: true,
        };

        if derive == Derive::Api && member.kind != Kind::Group {
            errors.push(syn::Error::new_spanned(
                &field.ty,
                "fields of a `courier::Api` are groups: `Group<T>`, with `T` a \
                 `#[derive(courier::Group)]` struct",
            ));
            member.method = false;
            member.register = false;
        }

        let (what, reserved) = match member.kind {
            Kind::Group => ("group", RESERVED_GROUP_NAMES),
            Kind::Endpoint { .. } => ("endpoint", RESERVED_ENDPOINT_NAMES),
        };
        let listed = reserved
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if VIEW_METHODS.contains(&rust.as_str()) {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "`{rust}` is a reserved {what} name (reserved: {listed}), and the view's own \
                     `{rust}()` method: give the field another name; \
                     `#[courier(rename = \"…\")]` cannot make a reserved name legal"
                ),
            ));
            member.method = false;
        } else if reserved.contains(&rust.as_str()) && rename.is_none() {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "`{rust}` is a reserved {what} name (reserved: {listed}): give the field \
                     another name, or keep it and name the {what} with \
                     `#[courier(rename = \"…\")]`"
                ),
            ));
        } else if derive == Derive::Api && CLIENT_METHODS.contains(&rust.as_str()) {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "a field named `{rust}` would shadow `{client}::{rust}()`: give the field \
                     another name, and keep the group's name with \
                     `#[courier(rename = \"{rust}\")]`"
                ),
            ));
            member.method = false;
        } else if derive == Derive::Group && GROUP_VIEW_METHODS.contains(&rust.as_str()) {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "a field named `{rust}` would shadow the view's own `{rust}()`: give the field \
                     another name, and keep the {what}'s name with \
                     `#[courier(rename = \"{rust}\")]`"
                ),
            ));
            member.method = false;
        }
        if let Some(lit) = rename {
            if reserved.contains(&member.name.as_str()) {
                errors.push(syn::Error::new(
                    lit.span(),
                    format!(
                        "`{}` is a reserved {what} name (reserved: {listed}): choose another name",
                        member.name
                    ),
                ));
            }
        }
        // A group and an endpoint may share a name (a member named like a contained group is
        // callable as the endpoint, readable as the group); two of one kind may not.
        let same_kind =
            |m: &Member<'_>| matches!(m.kind, Kind::Group) == matches!(member.kind, Kind::Group);
        if let Some(first) = members
            .iter()
            .find(|m| m.name == member.name && same_kind(m))
        {
            errors.push(syn::Error::new(
                name_span,
                format!(
                    "field `{}` already takes the name `{}`: each member of a {} needs a name \
                     of its own",
                    first.ident,
                    member.name,
                    match derive {
                        Derive::Group => "group",
                        Derive::Api => "source",
                    }
                ),
            ));
            member.register = false;
        }
        members.push(member);
    }
    members
}

fn docs(field: &Field) -> Vec<&Attribute> {
    field
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .collect()
}

/// Looks through the invisible groups a `macro_rules!` `$t:ty` leaves, and parentheses.
fn peel(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(group) => ty = &group.elem,
            Type::Paren(paren) => ty = &paren.elem,
            _ => return ty,
        }
    }
}

/// `Group<…>` (by its last path segment) is a group; anything else an endpoint.
fn kind_of(ty: &Type) -> Kind {
    let Type::Path(path) = peel(ty) else {
        return Kind::Endpoint { variables: true };
    };
    let Some(last) = path.path.segments.last() else {
        return Kind::Endpoint { variables: true };
    };
    if path.qself.is_none() && last.ident == "Group" {
        return Kind::Group;
    }
    // `Http<R>`, `Stream<R>`, `Channel<R>` and `…<R, ()>` take no variables. Any other type (an
    // alias, say) takes `<T as Endpoint>::Vars`, even when that is `()`.
    let head = path.qself.is_none()
        && ["Http", "Stream", "Channel"].contains(&last.ident.to_string().as_str());
    let variables = match &last.arguments {
        PathArguments::AngleBracketed(args) if head => {
            let mut types = args.args.iter().filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            });
            match types.nth(1).map(peel) {
                None => false,
                Some(Type::Tuple(tuple)) => !tuple.elems.is_empty(),
                Some(_) => true,
            }
        }
        _ => true,
    };
    Kind::Endpoint { variables }
}

/// The generic parameters the expansion introduces: `'a`, `C`, `M`, unless the input or the
/// structs the expansion names already use one of these names (a type called `C`), which the
/// parameter would shadow.
pub(crate) struct Params {
    pub(crate) lifetime: Lifetime,
    pub(crate) client: Ident,
    pub(crate) mode: Ident,
}

impl Params {
    pub(crate) fn new(input: &DeriveInput, written: &[&Ident]) -> Self {
        let mut idents: HashSet<String> = written.iter().map(ToString::to_string).collect();
        let mut lifetimes = HashSet::new();
        collect(input.to_token_stream(), &mut idents, &mut lifetimes);
        let pick = |name: &str, taken: &HashSet<String>| {
            if taken.contains(name) {
                format!("__Courier{name}")
            } else {
                name.to_owned()
            }
        };
        Self {
            lifetime: Lifetime::new(
                &format!("'{}", pick("a", &lifetimes).to_lowercase()),
                Span::call_site(),
            ),
            client: Ident::new(&pick("C", &idents), Span::call_site()),
            mode: Ident::new(&pick("M", &idents), Span::call_site()),
        }
    }
}

fn collect(tokens: TokenStream, idents: &mut HashSet<String>, lifetimes: &mut HashSet<String>) {
    let mut quote = false;
    for token in tokens {
        match token {
            TokenTree::Group(group) => collect(group.stream(), idents, lifetimes),
            TokenTree::Ident(ident) if quote => {
                lifetimes.insert(ident.to_string());
            }
            TokenTree::Ident(ident) => {
                idents.insert(ident.to_string());
            }
            TokenTree::Punct(ref punct) => {
                quote = punct.as_char() == '\'';
                continue;
            }
            TokenTree::Literal(_) => {}
        }
        quote = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn read(input: &DeriveInput, derive: Derive) -> (Vec<(String, String, bool)>, String) {
        let mut errors = Errors::default();
        let client = Ident::new("ExampleClient", Span::call_site());
        let fields = named_fields(input, derive, &mut errors).expect("named fields");
        let members = members(fields, derive, &client, &mut errors)
            .into_iter()
            .map(|m| (m.ident.to_string(), m.name, m.method))
            .collect();
        (members, errors.into_tokens().to_string())
    }

    #[test]
    fn group_fields_are_known_by_their_last_segment() {
        let group = |ty: Type| kind_of(&ty);
        assert!(group(parse_quote!(Group<Posts>)) == Kind::Group);
        assert!(group(parse_quote!(::courier::typed::Group<Posts>)) == Kind::Group);
        assert!(group(parse_quote!(Groups<Posts>)) != Kind::Group);
    }

    #[test]
    fn variables_omitted_or_unit_take_no_argument() {
        let takes = |ty: Type| match kind_of(&ty) {
            Kind::Endpoint { variables } => variables,
            Kind::Group => panic!("not an endpoint"),
        };
        assert!(!takes(parse_quote!(Http<User>)));
        assert!(!takes(parse_quote!(Http<User, ()>)));
        assert!(!takes(parse_quote!(Http<User, (), Mutation>)));
        assert!(!takes(parse_quote!(courier::typed::Stream<Tick>)));
        assert!(!takes(parse_quote!(Channel<Out, (), In>)));
        assert!(!takes(parse_quote!(Http<User, (())>)));
        assert!(takes(parse_quote!(Http<User, UserId>)));
        assert!(takes(parse_quote!(Http<User, (u64, u64)>)));
        assert!(takes(parse_quote!(Channel<Out, RoomId, In>)));
        // Only the heads' own defaults are known; an alias takes `<T as Endpoint>::Vars`.
        assert!(takes(parse_quote!(GetMe)));
        assert!(takes(parse_quote!(Custom<User>)));
        assert!(takes(parse_quote!(<X as Trait>::Http<User>)));
    }

    #[test]
    fn a_raw_identifier_is_named_without_its_prefix() {
        let input: DeriveInput = parse_quote! {
            struct Users { r#type: Http<String>, #[courier(rename = "getUser")] get_user: Http<User, u64> }
        };
        let (members, errors) = read(&input, Derive::Group);
        assert_eq!(errors, "");
        assert_eq!(
            members,
            [
                ("r#type".into(), "type".into(), true),
                ("get_user".into(), "getUser".into(), true)
            ]
        );
    }

    #[test]
    fn reserved_names_are_refused_as_field_or_rename() {
        let input: DeriveInput = parse_quote! {
            struct Users {
                raw: Http<User>,
                #[courier(rename = "raw_data")] with: Http<User>,
                options: Http<User>,
                #[courier(rename = "preferences")] r#options: Http<User>,
                #[courier(rename = "with")] data: Http<User>,
                options_group: Group<Options>,
                #[courier(rename = "options")] settings: Group<Settings>,
            }
        };
        let (members, errors) = read(&input, Derive::Group);
        let methods: Vec<_> = members
            .iter()
            .filter(|m| m.2)
            .map(|m| m.0.as_str())
            .collect();
        assert_eq!(
            methods,
            ["options", "r#options", "data", "options_group", "settings"]
        );
        // `raw`, `with`, `options` without a rename, and the rename to `with`. The group renamed
        // `options` after the endpoint of that name is legal: a group and an endpoint may share
        // a name.
        assert_eq!(errors.matches("compile_error").count(), 4, "{errors}");
        assert!(!errors.contains("already takes the name"), "{errors}");
    }

    #[test]
    fn api_fields_are_groups_and_leave_the_clients_own_names() {
        let input: DeriveInput = parse_quote! {
            struct Example {
                users: Group<Users>,
                health: Http<String>,
                client: Group<Admin>,
                #[courier(rename = "client")] client_group: Group<Admin>,
            }
        };
        let (members, errors) = read(&input, Derive::Api);
        let methods: Vec<_> = members
            .iter()
            .filter(|m| m.2)
            .map(|m| m.0.as_str())
            .collect();
        assert_eq!(methods, ["users", "client_group"]);
        assert!(
            errors.contains("fields of a `courier::Api` are groups"),
            "{errors}"
        );
        assert!(
            errors.contains("would shadow `ExampleClient::client()`"),
            "{errors}"
        );
        assert!(
            errors.contains("field `client` already takes the name `client`"),
            "{errors}"
        );
    }

    #[test]
    fn a_group_field_leaves_the_views_services_method() {
        let named: DeriveInput = parse_quote! {
            struct Catalog { services: Http<Vec<String>> }
        };
        let (members, errors) = read(&named, Derive::Group);
        assert!(!members[0].2, "no method of its own");
        assert!(
            errors.contains("would shadow the view's own `services()`"),
            "{errors}"
        );
        // The tree's name `services` stays legal: only the field's name was refused.
        let renamed: DeriveInput = parse_quote! {
            struct Catalog {
                #[courier(rename = "services")] all_services: Http<Vec<String>>,
            }
        };
        let (members, errors) = read(&renamed, Derive::Group);
        assert_eq!(members[0], ("all_services".into(), "services".into(), true));
        assert!(errors.is_empty(), "{errors}");
    }

    #[test]
    fn only_structs_with_named_fields_and_no_generics() {
        for input in [
            parse_quote!(
                struct Users(Http<User>);
            ),
            parse_quote!(
                struct Users;
            ),
            parse_quote!(
                enum Users {
                    A,
                }
            ),
            parse_quote!(union Users { a: u8 }),
            parse_quote!(
                struct Users<T> {
                    get: Http<T>,
                }
            ),
            parse_quote!(
                struct Users<'a> {
                    get: Http<&'a str>,
                }
            ),
            parse_quote!(
                struct Users
                where
                    u8: Copy,
                {
                    get: Http<u8>,
                }
            ),
        ] {
            let mut errors = Errors::default();
            assert!(named_fields(&input, Derive::Group, &mut errors).is_none());
            assert!(!errors.into_tokens().is_empty());
        }
    }

    #[test]
    fn generic_names_step_aside_for_the_inputs_own() {
        let plain: DeriveInput = parse_quote!(
            struct Users {
                get: Http<User, UserId>,
            }
        );
        let params = Params::new(&plain, &[]);
        assert_eq!(
            (
                params.lifetime.to_string(),
                params.client.to_string(),
                params.mode.to_string()
            ),
            ("'a".into(), "C".into(), "M".into())
        );
        let shadowing: DeriveInput = parse_quote!(
            struct Users<'a> {
                get: Http<C, M>,
                a: Http<for<'b> fn(&'b u8)>,
            }
        );
        let params = Params::new(&shadowing, &[]);
        assert_eq!(
            (
                params.lifetime.to_string(),
                params.client.to_string(),
                params.mode.to_string()
            ),
            (
                "'__couriera".into(),
                "__CourierC".into(),
                "__CourierM".into()
            )
        );
        let view = Ident::new("M", Span::call_site());
        let params = Params::new(&plain, &[&view]);
        assert_eq!(params.mode.to_string(), "__CourierM");
    }
}
