//! Builder methods every typed head shares, forwarding to the runtime descriptor.

macro_rules! typed_common_builders {
    ($ty:ident < $($g:ident),* >) => {
        // `timeout`, `attempt_timeout`, `coalesce`, `retry`, as the runtime heads have them.
        $crate::settings::layer_settings!(typed_setters($ty<$($g),*>));

        impl<$($g),*> $ty<$($g),*> {
            /// Marks the endpoint callable by a browser through the proxy.
            #[must_use]
            pub fn expose(self) -> Self {
                Self::from_def(self.def.expose())
            }

            /// Sets exposure explicitly.
            #[must_use]
            pub fn exposed(self, expose: bool) -> Self {
                Self::from_def(self.def.exposed(expose))
            }

            /// Adds header names to the source's allowed headers for this endpoint.
            #[must_use]
            pub fn headers<I, Name>(self, names: I) -> Self
            where
                I: IntoIterator<Item = Name>,
                Name: Into<String>,
            {
                Self::from_def(self.def.headers(names))
            }

            /// Adds a metadata entry.
            #[must_use]
            pub fn meta(self, key: impl Into<String>, value: serde_json::Value) -> Self {
                Self::from_def(self.def.meta(key, value))
            }

            /// Applies a tower layer to this endpoint's calls.
            #[must_use]
            pub fn layer<L>(self, layer: L) -> Self
            where
                L: tower::Layer<$crate::HttpService> + Send + Sync + 'static,
                L::Service: tower::Service<
                        ::http::Request<$crate::Body>,
                        Response = ::http::Response<$crate::Body>,
                    > + Clone
                    + Send
                    + Sync
                    + 'static,
                <L::Service as tower::Service<::http::Request<$crate::Body>>>::Error:
                    Into<$crate::BoxError>,
                <L::Service as tower::Service<::http::Request<$crate::Body>>>::Future:
                    Send + 'static,
            {
                Self::from_def(self.def.layer(layer))
            }

            /// Applies a type-erased tower layer; see
            /// [`Middleware::new`]($crate::Middleware::new).
            #[must_use]
            pub fn middleware(self, middleware: $crate::Middleware) -> Self {
                Self::from_def(self.def.middleware(middleware))
            }

            /// Sets how the endpoint takes part in the session.
            #[must_use]
            pub fn session(self, mode: impl Into<$crate::SessionMode>) -> Self {
                Self::from_def(self.def.session(mode))
            }

            /// `false` keeps forwarded headers off this endpoint's calls.
            #[must_use]
            pub fn forward(self, forward: bool) -> Self {
                Self::from_def(self.def.forward(forward))
            }
        }
    };
}
pub(crate) use typed_common_builders;
