use super::view::{Mode, Scope};
use crate::transport::{Dispatcher, Fetch};
use crate::{Dispatch, GroupDef, PathOptions};
use std::fmt;

/// A struct of endpoints and groups: what `#[derive(courier::Group)]` implements.
///
/// The derive writes [`GroupSpec::register`] as one [`Member::add_to`] call per field, and a
/// view struct (`UsersView` for `Users`) with one method per field plus `with`, `raw` and
/// `services` (its endpoints as [`EndpointService`](super::EndpointService)s, in a second
/// struct, `UsersServices`).
pub trait GroupSpec: Sized {
    /// The typed view of the group.
    type View<'a, C: Dispatch + 'a, M: Mode>: From<Scope<'a, C, M>>;
    /// Adds every field to `group`.
    fn register(self, group: GroupDef) -> GroupDef;
}

/// A field of a group: an endpoint or a nested group.
pub trait Member {
    /// Adds the member to `group` under `name`.
    fn add_to(self, name: &str, group: GroupDef) -> GroupDef;
}

/// A field that is a nested group; names its spec for the derived view.
pub trait GroupMember {
    /// The group's struct.
    type Spec: GroupSpec;
}

/// A typed group: the struct of its members and the group's own options.
///
/// ```
/// use courier::typed::{endpoint, Group, GroupSpec, Http, Member};
/// use courier::GroupDef;
///
/// // What `#[derive(courier::Group)]` writes, by hand:
/// struct Users { get: Http<serde_json::Value, u64> }
/// impl GroupSpec for Users {
///     type View<'a, C: courier::typed::dispatch::Dispatch + 'a, M: courier::typed::Mode> =
///         courier::typed::Scope<'a, C, M>;
///     fn register(self, group: GroupDef) -> GroupDef {
///         self.get.add_to("get", group)
///     }
/// }
/// let users = Group::new(Users { get: endpoint().get("/:id") }).prefix("/users");
/// let def = users.into_def();
/// assert_eq!(def.prefix_path(), "/users");
/// assert!(def.endpoints().contains_key("get"));
/// ```
pub struct Group<T> {
    spec: T,
    def: GroupDef,
}

impl<T> Group<T> {
    /// A group of these members, with no prefix.
    pub fn new(spec: T) -> Self {
        Self {
            spec,
            def: GroupDef::new(),
        }
    }

    /// See [`GroupDef::prefix`].
    #[must_use]
    pub fn prefix(self, prefix: impl Into<String>) -> Self {
        self.map(|d| d.prefix(prefix))
    }

    /// See [`GroupDef::path_options`].
    #[must_use]
    pub fn path_options(self, options: PathOptions) -> Self {
        self.map(|d| d.path_options(options))
    }

    /// See [`GroupDef::expose`].
    #[must_use]
    pub fn expose(self, expose: bool) -> Self {
        self.map(|d| d.expose(expose))
    }

    /// See [`GroupDef::fetch`].
    #[must_use]
    pub fn fetch(self, fetch: Fetch) -> Self {
        self.map(|d| d.fetch(fetch))
    }

    /// See [`GroupDef::dispatcher`].
    #[must_use]
    pub fn dispatcher(self, dispatcher: Dispatcher) -> Self {
        self.map(|d| d.dispatcher(dispatcher))
    }

    fn map(self, f: impl FnOnce(GroupDef) -> GroupDef) -> Self {
        Self {
            spec: self.spec,
            def: f(self.def),
        }
    }

    /// The members.
    pub fn spec(&self) -> &T {
        &self.spec
    }
}

impl<T: GroupSpec> Group<T> {
    /// The runtime group: its options and every member.
    pub fn into_def(self) -> GroupDef {
        self.spec.register(self.def)
    }
}

impl<T: GroupSpec> Member for Group<T> {
    fn add_to(self, name: &str, group: GroupDef) -> GroupDef {
        group.group(name, self.into_def())
    }
}

impl<T: GroupSpec> GroupMember for Group<T> {
    type Spec = T;
}

impl<T: fmt::Debug> fmt::Debug for Group<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("spec", &self.spec)
            .field("def", &self.def)
            .finish()
    }
}
