// A return type of several tokens that is neither `Serialize` nor `IntoToolOutput`: the error underlines all of it.

use tool_runtime::tool;

struct Report {
    lines: usize,
}

/// Count the lines of each text.
#[tool]
async fn count(#[param(description = "The texts")] texts: Vec<String>) -> Vec<Report> {
    texts.iter().map(|t| Report { lines: t.lines().count() }).collect()
}

fn main() {
    let _ = Count;
}
