// The macro reports its error but still emits the function as written (and a
// stub struct that implements `Tool`): calling the function and using the
// struct add no error of their own.

use tool_runtime::{Tool, tool};

#[tool]
fn add(#[param(description = "The first addend")] a: i64, #[param(description = "The second addend")] b: i64) -> i64 {
    a + b
}

fn takes_tool(_: impl Tool) {}

fn main() {
    let sum: i64 = add(1, 2);
    assert_eq!(sum, 3);
    takes_tool(Add);
}
