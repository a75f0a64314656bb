//! The proxy, attacked. Each test plays one attack as a hostile page in a victim's browser, a
//! hostile user or a broken upstream would, over raw sockets against a real `Proxy` in front of
//! a recording upstream on 127.0.0.1, and asserts three things: the attack is refused (or
//! defused), nothing harmful reached the upstream, and the proxy still serves a normal call
//! afterwards. docs/SECURITY.md names the test behind each defence.

mod harness;
#[path = "../support/mod.rs"]
mod support;

mod body;
mod exposure;
mod files;
mod headers;
mod injection;
mod methods;
mod slow;
mod smuggling;
mod upstream;
mod web;
