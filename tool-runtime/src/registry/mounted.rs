//! Tools whose set changes while the registry is in use (a mounted MCP
//! server's): one group per source, shared between the registry and
//! whoever refreshes it, and replaced as a whole snapshot.
//!
//! A call looks up the registry's own table first, so a native tool's call
//! never touches a group; only a name the table lacks reads the groups'
//! current snapshots. A snapshot is never changed once published: a call or
//! a listing that holds one keeps seeing the set it started with.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{NameHash, RegistryError};
use crate::format::{self, Format};
use crate::schema::Schema;
use crate::tool::{Tool, is_valid_tool_name};

/// A replaceable set of tools: the registry reads it, its source replaces
/// it. Its tools must not be `sequential` (the registry's gate only knows
/// the tools registered with it).
pub(crate) struct ToolGroup {
    current: Mutex<Arc<Snapshot>>,
    /// Counts each replacement, once the group is in a registry.
    changes: OnceLock<tokio::sync::watch::Sender<u64>>,
    /// What replaces the set (a server's connection), kept alive while the
    /// registry holds the group, even when the set is empty.
    _source: Arc<dyn Any + Send + Sync>,
}

/// One published set of a group's tools, with their definitions rendered
/// in each format on first use.
pub(crate) struct Snapshot {
    entries: Vec<Shared>,
    index: HashMap<String, usize, NameHash>,
    /// A clash of one of its names with another tool was reported.
    clash_reported: AtomicBool,
}

struct Shared {
    tool: Arc<dyn Tool>,
    rendered: [OnceLock<Arc<Schema>>; Format::ALL.len()],
}

// Only MCP mounts groups today; the tests below use them without it.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
impl ToolGroup {
    /// A group holding `tools`, the valid ones of [`ToolGroup::check`],
    /// kept up to date by `source`.
    pub(crate) fn new(tools: Vec<Arc<dyn Tool>>, source: Arc<dyn Any + Send + Sync>) -> Arc<Self> {
        Arc::new(ToolGroup {
            current: Mutex::new(Arc::new(Snapshot::new(tools))),
            changes: OnceLock::new(),
            _source: source,
        })
    }

    /// Publishes `tools` as the group's new set; calls and listings that
    /// start afterwards see it.
    pub(crate) fn replace(&self, tools: Vec<Arc<dyn Tool>>) {
        let snapshot = Arc::new(Snapshot::new(tools));
        *self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = snapshot;
        if let Some(changes) = self.changes.get() {
            changes.send_modify(|count| *count = count.wrapping_add(1));
        }
    }

    /// Has each later [`replace`](Self::replace) counted on `changes` (the
    /// registry's, which its servers watch).
    pub(crate) fn report_changes_to(&self, changes: tokio::sync::watch::Sender<u64>) {
        let _ = self.changes.set(changes);
    }

    /// The current set.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Splits `tools` into those a group can hold and the reasons the others
    /// cannot: an invalid name, or a name an earlier tool of the list has.
    pub(crate) fn check(tools: Vec<Arc<dyn Tool>>) -> (Vec<Arc<dyn Tool>>, Vec<RegistryError>) {
        let mut seen = std::collections::HashSet::new();
        let mut problems = Vec::new();
        let tools = tools
            .into_iter()
            .filter(|tool| {
                let name = tool.definition().name();
                let problem = if !is_valid_tool_name(name) {
                    RegistryError::InvalidName(name.to_owned())
                } else if !seen.insert(name.to_owned()) {
                    RegistryError::DuplicateName(name.to_owned())
                } else {
                    return true;
                };
                problems.push(problem);
                false
            })
            .collect();
        (tools, problems)
    }
}

impl Snapshot {
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        let (tools, _) = ToolGroup::check(tools);
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, tool)| (tool.definition().name().to_owned(), i))
            .collect();
        let entries = tools
            .into_iter()
            .map(|tool| Shared {
                tool,
                rendered: Default::default(),
            })
            .collect();
        Snapshot {
            entries,
            index,
            clash_reported: AtomicBool::new(false),
        }
    }

    /// The tool of this name.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.index.get(name).map(|&i| &self.entries[i].tool)
    }

    /// The `i`th tool.
    pub(crate) fn tool(&self, i: usize) -> &Arc<dyn Tool> {
        &self.entries[i].tool
    }

    /// The tools, in the order their source gave them.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|e| &e.tool)
    }

    /// The `i`th tool's definition in `format`, rendered once per snapshot.
    pub(crate) fn rendered(&self, i: usize, format: Format) -> Arc<Schema> {
        let entry = &self.entries[i];
        entry.rendered[format.slot()]
            .get_or_init(|| {
                let definition = entry.tool.definition();
                Arc::new(Schema::new(
                    format::render(definition, format),
                    &definition.object_shapes(),
                ))
            })
            .clone()
    }

    /// Whether this is the first time a clash in this snapshot is seen
    /// (so it is reported once, not at every listing).
    pub(crate) fn first_clash(&self) -> bool {
        !self.clash_reported.swap(true, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bind::BoundArguments;
    use crate::codes::CallError;
    use crate::context::CallScope;
    use crate::format::Selection;
    use crate::output::ToolOutput;
    use crate::registry::ToolRegistry;
    use crate::tool::{ToolDefinition, ToolFuture};

    /// Answers with its own name and a tag, so a test sees which one ran.
    struct Named {
        definition: ToolDefinition,
        answer: &'static str,
    }

    impl Tool for Named {
        fn definition(&self) -> &ToolDefinition {
            &self.definition
        }

        fn invoke(&self, _: BoundArguments, _: &CallScope<'_>) -> Result<ToolFuture, Vec<CallError>> {
            let answer = self.answer;
            Ok(Box::pin(async move { ToolOutput::text(answer) }))
        }
    }

    fn tool(name: &str, answer: &'static str) -> Arc<dyn Tool> {
        Arc::new(Named {
            definition: ToolDefinition::new(name, format!("The tool {name}."), Vec::new()),
            answer,
        })
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_replaced_group_is_what_listings_and_calls_see() {
        let mut registry = ToolRegistry::new();
        registry.register_arc(tool("native", "native")).unwrap();
        let group = ToolGroup::new(vec![tool("m__a", "a"), tool("m__b", "b")], Arc::new(()));
        registry.add_group(group.clone()).unwrap();
        assert_eq!(registry.names(), ["native", "m__a", "m__b"]);
        assert_eq!(registry.len(), 3);
        let before = registry.definitions(Format::Anthropic, &Selection::all());

        group.replace(vec![tool("m__b", "b2"), tool("m__c", "c"), tool("native", "shadowed")]);
        assert_eq!(registry.names(), ["native", "m__b", "m__c"], "a taken name is left out");
        assert_eq!(registry.len(), 3);
        let after = registry.definitions(Format::Anthropic, &Selection::all()).to_json();
        assert_eq!(after.as_array().unwrap().len(), 3);
        assert_eq!(after[2]["name"], json!("m__c"));
        // A listing made before keeps the set it was made from.
        assert_eq!(before.len(), 3);
        assert_eq!(before[1]["name"], json!("m__a"));

        block_on(async {
            assert_eq!(registry.call("m__b", json!({})).await.text(), "b2");
            assert_eq!(registry.call("m__c", json!({})).await.text(), "c");
            assert_eq!(registry.call("native", json!({})).await.text(), "native");
            let gone = registry.call("m__a", json!({})).await;
            assert_eq!(gone.error_codes(), ["unknown_tool:m__a"]);
        });
        assert!(registry.get("m__c").is_some() && registry.get("m__a").is_none());
    }

    #[test]
    fn taken_names_are_refused_on_adding_and_registering() {
        let mut registry = ToolRegistry::new();
        registry.register_arc(tool("x", "x")).unwrap();
        let clash = ToolGroup::new(vec![tool("x", "other")], Arc::new(()));
        assert_eq!(
            registry.add_group(clash),
            Err(RegistryError::DuplicateName("x".to_owned()))
        );
        registry
            .add_group(ToolGroup::new(vec![tool("y", "y")], Arc::new(())))
            .unwrap();
        let error = registry.register_arc(tool("y", "native y")).unwrap_err();
        assert_eq!(error, RegistryError::DuplicateName("y".to_owned()));
        // The group mounted first keeps a name both offer.
        let second = ToolGroup::new(vec![tool("z", "second")], Arc::new(()));
        registry.add_group(second.clone()).unwrap();
        second.replace(vec![tool("y", "second y"), tool("z", "second")]);
        assert_eq!(registry.names(), ["x", "y", "z"]);
        block_on(async { assert_eq!(registry.call("y", json!({})).await.text(), "y") });
    }

    #[test]
    fn check_leaves_out_invalid_and_repeated_names() {
        let (kept, problems) = ToolGroup::check(vec![tool("ok", ""), tool("bad name", ""), tool("ok", "")]);
        assert_eq!(kept.len(), 1);
        assert_eq!(
            problems,
            [
                RegistryError::InvalidName("bad name".to_owned()),
                RegistryError::DuplicateName("ok".to_owned())
            ]
        );
    }
}
