//! `format::gemini::tool_calls` on any JSON: no panic; on `Ok`, every call has a
//! name, and ids are distinct where present (Gemini's are optional).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_runtime::format::gemini;
use tool_runtime_fuzz::{check_calls, json_input};

fuzz_target!(|data: &[u8]| {
    let Some(message) = json_input(data) else {
        return;
    };
    if let Ok(calls) = gemini::tool_calls(&message) {
        check_calls(&calls, false);
    }
});
