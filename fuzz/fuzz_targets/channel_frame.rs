//! A browser's frames on a channel's socket: the announced first frame (a hello or the first
//! message) and message frames, as text or binary.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|input: &[u8]| {
    // A message is taken exactly when it is UTF-8 JSON; everything else closes the socket with
    // 1003, so a frame the proxy took that JSON refuses (or the reverse) is a bug.
    let json = std::str::from_utf8(input)
        .ok()
        .is_some_and(|text| serde_json::from_str::<Value>(text).is_ok());
    assert_eq!(courier_server::fuzzing::channel_frame(input), json);
});
