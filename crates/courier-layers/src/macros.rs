//! The one piece of boilerplate every layer's service repeats.

/// `get_ref`, `get_mut` and `into_inner` on a layer's service, whose inner service is the field
/// `inner` of type `S` (tower-http's `define_inner_service_accessors!`). Used inside the
/// service's `impl` block.
#[allow(unused_macros)] // with no layer's feature on, no layer uses it
macro_rules! define_inner_service_accessors {
    () => {
        /// The inner service.
        pub fn get_ref(&self) -> &S {
            &self.inner
        }

        /// The inner service, mutably.
        pub fn get_mut(&mut self) -> &mut S {
            &mut self.inner
        }

        /// Unwraps the inner service.
        pub fn into_inner(self) -> S {
            self.inner
        }
    };
}
