//! SPEC section 7, measured as ratios within one run (`cargo bench`).
//!
//! 1. Binding and dispatching valid arguments against a hand-written
//!    `serde_json::from_str::<Args>` plus a direct call: target at most 1.3x.
//! 2. Listing the definitions of 1,000 tools, cold (first rendering) and
//!    warm (cached): the warm listing must do no schema generation.
//! 3. 100 concurrent calls of a tool that sleeps 50 ms: well under a second.
//!
//! The contenders run in alternating batches and the median of the per-batch
//! ratios is reported, so load from elsewhere on the machine hits both alike.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tool_runtime::format::{Format, Selection};
use tool_runtime::{BoundArguments, CallScope, Tool, ToolDefinition, ToolRegistry, tool};

/// Search the workspace for files whose path matches a glob pattern.
#[tool]
async fn search_files(
    #[param(description = "Glob pattern")] pattern: String,
    #[param(description = "Match case", default = true)] case_sensitive: bool,
    #[param(description = "Largest number of paths", default = 100, min = 1, max = 10_000)] max_results: u32,
    #[param(description = "Only below this folder")] root: Option<String>,
    #[param(description = "Extensions to keep", default)] extensions: Vec<String>,
) -> String {
    black_box((&pattern, case_sensitive, max_results, &root, &extensions));
    pattern
}

/// The hand-written equivalent: an argument struct and serde.
#[derive(Deserialize)]
struct SearchArgs {
    pattern: String,
    #[serde(default = "yes")]
    case_sensitive: bool,
    #[serde(default = "hundred")]
    max_results: u32,
    root: Option<String>,
    #[serde(default)]
    extensions: Vec<String>,
}

fn yes() -> bool {
    true
}

fn hundred() -> u32 {
    100
}

const ARGS: &str = r#"{"pattern": "src/**/*.rs", "case_sensitive": false, "max_results": 50, "root": "crates", "extensions": ["rs", "toml"]}"#;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn bind_and_dispatch(runtime: &tokio::runtime::Runtime) {
    let mut registry = ToolRegistry::new();
    registry.register(SearchFiles).unwrap();
    const BATCH: usize = 2_000;
    let mut ratios = Vec::new();
    let (mut ours_total, mut base_total) = (Duration::ZERO, Duration::ZERO);
    runtime.block_on(async {
        for round in 0..40 {
            let start = Instant::now();
            for _ in 0..BATCH {
                let args: SearchArgs = serde_json::from_str(black_box(ARGS)).unwrap();
                let out = search_files(
                    args.pattern,
                    args.case_sensitive,
                    args.max_results,
                    args.root,
                    args.extensions,
                )
                .await;
                black_box(out);
            }
            let base = start.elapsed();
            let start = Instant::now();
            for _ in 0..BATCH {
                let result = registry.call("search_files", black_box(ARGS)).await;
                black_box(result);
            }
            let ours = start.elapsed();
            if round >= 5 {
                ratios.push(ours.as_secs_f64() / base.as_secs_f64());
                ours_total += ours;
                base_total += base;
            }
        }
    });
    let per = |d: Duration| d.as_nanos() as f64 / (35 * BATCH) as f64;
    println!(
        "bind+dispatch: registry.call {:.0} ns, from_str + direct call {:.0} ns, median ratio {:.2}x (target <= 1.3x)",
        per(ours_total),
        per(base_total),
        median(ratios)
    );
}

/// A tool defined at run time, for the 1,000-tool listing.
struct Generated(ToolDefinition);

impl Tool for Generated {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn invoke(
        &self,
        _: BoundArguments,
        _: &CallScope<'_>,
    ) -> Result<tool_runtime::ToolFuture, Vec<tool_runtime::CallError>> {
        Ok(Box::pin(async { tool_runtime::ToolOutput::text("ok") }))
    }
}

fn listing() {
    let template = SearchFiles.definition();
    let mut registry = ToolRegistry::new();
    for i in 0..1_000 {
        let definition = ToolDefinition::new(
            format!("tool_{i}"),
            template.description(),
            template.params().fields.clone(),
        );
        registry.register(Generated(definition)).unwrap();
    }
    for format in [Format::Anthropic, Format::OpenAiChatStrict, Format::Gemini] {
        let start = Instant::now();
        black_box(registry.definitions(format, &Selection::all()));
        let cold = start.elapsed();
        let mut warm = Vec::new();
        for _ in 0..20 {
            let start = Instant::now();
            black_box(registry.definitions(format, &Selection::all()));
            warm.push(start.elapsed().as_secs_f64());
        }
        let warm = median(warm);
        let mut serialized = Vec::new();
        for _ in 0..20 {
            let start = Instant::now();
            black_box(serde_json::to_string(&registry.definitions(format, &Selection::all())).unwrap());
            serialized.push(start.elapsed().as_secs_f64());
        }
        println!(
            "listing 1,000 tools ({format:?}): first {:.2} ms (renders), cached {:.3} ms (no rendering), cached and serialized to request JSON {:.2} ms",
            cold.as_secs_f64() * 1e3,
            warm * 1e3,
            median(serialized) * 1e3
        );
    }
}

/// Sleep for 50 ms.
#[tool]
async fn nap() -> &'static str {
    tokio::time::sleep(Duration::from_millis(50)).await;
    "rested"
}

fn concurrency(runtime: &tokio::runtime::Runtime) {
    let mut registry = ToolRegistry::new().with_concurrency(100);
    registry.register(Nap).unwrap();
    let calls: Vec<_> = (0..100)
        .map(|i| tool_runtime::ToolCall::new("nap", Value::Null).with_id(format!("c{i}")))
        .collect();
    let start = Instant::now();
    let results = runtime.block_on(registry.call_all(calls));
    let elapsed = start.elapsed();
    assert!(results.iter().all(|r| !r.is_error));
    println!(
        "100 concurrent calls of a 50 ms tool: {:.0} ms (sequentially: 5000 ms; target: well under 1000 ms)",
        elapsed.as_secs_f64() * 1e3
    );
}

/// `cargo bench --bench dispatch -- [bind|listing|concurrency]` runs one part.
fn main() {
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if wanted("bind") {
        bind_and_dispatch(&runtime);
    }
    if wanted("listing") {
        listing();
    }
    if wanted("concurrency") {
        concurrency(&runtime);
    }
}
