//! Compile-time behaviour of the derives: what they refuse, with which message and where, and
//! that a mistake in a call's types does not compile. Each case's expected compiler output is
//! the `.stderr` file next to it; regenerate with `TRYBUILD=overwrite cargo test --test ui` and
//! read the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
