//! `format::mcp::tool_call` on any JSON: no panic; on `Ok`, the call has a
//! name (MCP calls carry no id: the JSON-RPC request id is the transport's).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_runtime::format::mcp;
use tool_runtime_fuzz::{check_calls, json_input};

fuzz_target!(|data: &[u8]| {
    let Some(params) = json_input(data) else {
        return;
    };
    if let Ok(call) = mcp::tool_call(&params) {
        assert!(call.id.is_none(), "an MCP call with an id: {call:?}");
        check_calls(std::slice::from_ref(&call), false);
    }
});
