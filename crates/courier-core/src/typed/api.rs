use super::group::{Group, GroupSpec};
use super::view::{Mode, Scope};
use crate::{ApiBuilder, ApiDef, ConfigurationError, Dispatch};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

/// A struct of groups: what `#[derive(courier::Api)]` implements.
///
/// The derive writes [`ApiSpec::register`] as one `ApiBuilder::group` call per field, an owned
/// client struct (`ExampleClient<C>` for `Example`) that a caller derefs to, and a borrowed view
/// (`ExampleView`) for `.with()` and `.raw()` at the root.
pub trait ApiSpec: Sized {
    /// The owned root client over a caller `C`.
    type Client<C: Dispatch>: From<C>;
    /// The borrowed root view.
    type View<'a, C: Dispatch + 'a, M: Mode>: From<Scope<'a, C, M>>;
    /// Adds every group to `api`.
    fn register(self, api: ApiBuilder) -> ApiBuilder;
}

/// A field of an API: a group.
pub trait ApiMember {
    /// Adds the group to `api` under `name`.
    fn add_to_api(self, name: &str, api: ApiBuilder) -> ApiBuilder;
}

impl<T: GroupSpec> ApiMember for Group<T> {
    fn add_to_api(self, name: &str, api: ApiBuilder) -> ApiBuilder {
        api.group(name, self.into_def())
    }
}

/// A built, validated source whose shape is the struct `T`: the runtime [`ApiDef`] plus the
/// type the typed views come from. Derefs to the `ApiDef`.
pub struct Api<T> {
    def: ApiDef,
    _spec: PhantomData<fn() -> T>,
}

impl<T: ApiSpec> Api<T> {
    /// Builds the source from its groups and options; the same validation as
    /// [`ApiBuilder::build`].
    ///
    /// # Errors
    ///
    /// The first [`ConfigurationError`] of the tree.
    pub fn new(spec: T, options: ApiBuilder) -> Result<Self, ConfigurationError> {
        let def = spec.register(options).build()?;
        Ok(Self {
            def,
            _spec: PhantomData,
        })
    }
}

impl<T> Api<T> {
    /// The runtime tree.
    pub fn def(&self) -> &ApiDef {
        &self.def
    }

    /// The runtime tree, owned.
    pub fn into_def(self) -> ApiDef {
        self.def
    }
}

impl ApiBuilder {
    /// Builds a typed source from the struct of its groups: `api.build_typed(Example { .. })`.
    ///
    /// # Errors
    ///
    /// The first [`ConfigurationError`] of the tree.
    pub fn build_typed<T: ApiSpec>(self, spec: T) -> Result<Api<T>, ConfigurationError> {
        Api::new(spec, self)
    }
}

impl<T> Deref for Api<T> {
    type Target = ApiDef;
    fn deref(&self) -> &ApiDef {
        &self.def
    }
}

impl<T> Clone for Api<T> {
    fn clone(&self) -> Self {
        Self {
            def: self.def.clone(),
            _spec: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Api<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Api").field(&self.def).finish()
    }
}
