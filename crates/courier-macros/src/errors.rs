//! Collecting every error of a derive, so one run reports each mistake once.

use proc_macro2::TokenStream;

/// The errors met so far; expanded as `compile_error!`s next to the (placeholder) impls.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn into_tokens(self) -> TokenStream {
        self.0
            .map(|error| error.to_compile_error())
            .unwrap_or_default()
    }
}
