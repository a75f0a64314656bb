//! `#[courier(key = "value", …)]`: the only attribute the derives read.

use crate::errors::Errors;
use syn::{Attribute, LitStr};

/// The settings of one struct or field, each key at most once, every key one its place accepts.
pub(crate) struct Settings(Vec<(String, LitStr)>);

impl Settings {
    /// Reads every `#[courier(...)]` of `attrs`. `allowed` names the keys this place takes and
    /// `place` says what it is, for the message about a key it does not take.
    pub(crate) fn parse(
        attrs: &[Attribute],
        allowed: &[&str],
        place: &str,
        errors: &mut Errors,
    ) -> Self {
        let mut settings = Vec::new();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("courier")) {
            let parsed = attr.parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .filter(|key| allowed.contains(&key.as_str()))
                    .ok_or_else(|| meta.error(unknown_key(&meta.path, allowed, place)))?;
                if settings.iter().any(|(seen, _)| *seen == key) {
                    return Err(meta.error(format!("`{key}` is set twice")));
                }
                let value: LitStr = meta.value()?.parse()?;
                settings.push((key, value));
                Ok(())
            });
            if let Err(error) = parsed {
                errors.push(error);
            }
        }
        Self(settings)
    }

    /// The value of `key`, if set.
    pub(crate) fn get(&self, key: &str) -> Option<&LitStr> {
        self.0
            .iter()
            .find_map(|(seen, value)| (seen == key).then_some(value))
    }
}

fn unknown_key(path: &syn::Path, allowed: &[&str], place: &str) -> String {
    let key = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    let takes = allowed
        .iter()
        .map(|key| format!("`{key} = \"…\"`"))
        .collect::<Vec<_>>()
        .join(" and ");
    format!("unknown `courier` attribute `{key}`: {place} takes {takes}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn parse(attrs: &[Attribute]) -> (Settings, String) {
        let mut errors = Errors::default();
        let settings = Settings::parse(attrs, &["rename"], "a field", &mut errors);
        (settings, errors.into_tokens().to_string())
    }

    #[test]
    fn reads_the_keys_its_place_takes() {
        let (settings, errors) = parse(&[
            parse_quote!(#[doc = "docs are not ours"]),
            parse_quote!(#[courier(rename = "getUser")]),
        ]);
        assert_eq!(errors, "");
        assert_eq!(
            settings.get("rename").map(LitStr::value).as_deref(),
            Some("getUser")
        );
        assert!(settings.get("view").is_none());
    }

    #[test]
    fn refuses_unknown_repeated_and_malformed_keys() {
        for attr in [
            parse_quote!(#[courier(view = "Name")]),
            parse_quote!(#[courier(rename = "a", rename = "b")]),
            parse_quote!(#[courier(rename = 5)]),
            parse_quote!(#[courier(rename)]),
            parse_quote!(#[courier]),
            parse_quote!(#[courier(a::b = "c")]),
        ] {
            let (_, errors) = parse(&[attr]);
            assert!(errors.contains("compile_error"), "{errors}");
        }
    }
}
