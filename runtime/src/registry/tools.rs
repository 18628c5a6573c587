//! The registry's tools: checked once, sorted, with `tools/list` pre-serialized.

use rustc_hash::FxHashMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::problem::{RegistryProblem, sorted_unique};
use crate::context::ToolContext;
use crate::extract::Call;
use crate::result::{Outcome, ResultOut, RpcError};
use crate::schema::{self, SchemaKind};
use crate::tool::{Arguments, CallOutcome, ToolDef};

/// A tool as the registry serves it: its definition and cleaned schemas.
#[derive(Debug)]
pub struct RegisteredTool {
    /// The definition `#[mcp_tool]` emitted.
    pub def: &'static ToolDef,
    /// The cleaned input schema.
    pub input_schema: Value,
    /// The cleaned output schema, for structured tools.
    pub output_schema: Option<Value>,
}

impl RegisteredTool {
    /// Calls the tool through its shim without a session, as `tools/call`
    /// does, and returns its `CallToolResult` JSON object.
    ///
    /// `arguments` is the call's `arguments` object (`None` when absent);
    /// the tool takes its states from `context`. An async tool's future is
    /// awaited; a blocking tool runs on the caller's thread, and the
    /// per-request extractors get what [`Call::new`] gives them (no request
    /// id, no progress, never cancelled). A tool's own failure, and
    /// arguments that do not decode, are error results (`isError`), as on
    /// the wire; a tool that panics panics here: only a server catches it.
    ///
    /// For an editor that embeds the runtime and calls a tool itself, and
    /// for tests.
    ///
    /// ```
    /// use ide_mcp_runtime::{Registry, ToolContext, mcp_tool};
    /// use serde_json::value::RawValue;
    ///
    /// /// Multiplies two numbers.
    /// #[mcp_tool]
    /// fn multiply(a: i64, b: i64) -> i64 {
    ///     a * b
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = Registry::global().unwrap();
    /// let args = RawValue::from_string(r#"{"a": 2, "b": 3}"#.to_owned()).unwrap();
    /// let result = registry.get("multiply").unwrap().call(&ToolContext::new(), Some(&args)).await;
    /// assert_eq!(result, br#"{"content":[{"type":"text","text":"6"}]}"#);
    /// # });
    /// ```
    pub async fn call(&self, context: &ToolContext, arguments: Option<&RawValue>) -> Vec<u8> {
        let mut out = Vec::new();
        let called = (self.def.call)(
            &Call::new(context),
            arguments.map(Arguments::from),
            &mut ResultOut::new(&mut out),
        );
        let outcome = match called {
            CallOutcome::Done(outcome) => outcome,
            CallOutcome::Pending(future) => future.await(&mut ResultOut::new(&mut out)),
        };
        match outcome {
            Outcome::Written => {}
            // A tool fails with a result, never a JSON-RPC error: a
            // hand-built shim's error is given as one.
            Outcome::Invalid(message) | Outcome::RpcError(RpcError { message, .. }) => {
                ResultOut::new(&mut out).error_text(&message);
            }
        }
        out
    }
}

/// The tools, sorted by name, with the `tools/list` result serialized once.
#[derive(Debug, Default)]
pub(crate) struct Tools {
    pub(crate) items: Vec<RegisteredTool>,
    /// Each tool's place in `tools`, by name: a call names its tool.
    pub(crate) index: FxHashMap<&'static str, usize>,
    pub(crate) list_result: Box<[u8]>,
}

impl Tools {
    /// Checks and sorts `defs`, pushing every problem into `problems`.
    pub(crate) fn build(
        defs: impl IntoIterator<Item = &'static ToolDef>,
        problems: &mut Vec<RegistryProblem>,
    ) -> Self {
        let defs = sorted_unique(
            defs,
            |def: &ToolDef| def.name,
            |def| def.location,
            |name, first, second| RegistryProblem::DuplicateName {
                name,
                first,
                second,
            },
            problems,
        );
        let mut tools = Vec::with_capacity(defs.len());
        for def in defs {
            let input_schema =
                schema::clean((def.input_schema)(), SchemaKind::Input).map_err(|error| {
                    RegistryProblem::Schema {
                        tool: def.name,
                        kind: SchemaKind::Input,
                        error,
                    }
                });
            let output_schema = def
                .output_schema
                .map(|f| schema::clean(f(), SchemaKind::Output))
                .transpose()
                .map_err(|error| RegistryProblem::Schema {
                    tool: def.name,
                    kind: SchemaKind::Output,
                    error,
                });
            match (input_schema, output_schema) {
                (Ok(input_schema), Ok(output_schema)) => tools.push(RegisteredTool {
                    def,
                    input_schema,
                    output_schema,
                }),
                (i, o) => problems.extend(i.err().into_iter().chain(o.err())),
            }
        }
        let list_result = serde_json::to_vec(&list_result(&tools))
            .expect("a JSON value serializes")
            .into_boxed_slice();
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, tool)| (tool.def.name, i))
            .collect();
        Self {
            items: tools,
            index,
            list_result,
        }
    }
}

fn list_result(tools: &[RegisteredTool]) -> Value {
    let tools = tools.iter().map(tool_entry).collect();
    let mut result = Map::new();
    result.insert("tools".into(), Value::Array(tools));
    Value::Object(result)
}

fn tool_entry(tool: &RegisteredTool) -> Value {
    let def = tool.def;
    let mut entry = Map::new();
    entry.insert("name".into(), def.name.into());
    if let Some(title) = def.annotations.title {
        entry.insert("title".into(), title.into());
    }
    entry.insert("description".into(), def.description.into());
    entry.insert("inputSchema".into(), tool.input_schema.clone());
    if let Some(output) = &tool.output_schema {
        entry.insert("outputSchema".into(), output.clone());
    }
    if !def.annotations.is_empty() {
        let a = &def.annotations;
        let mut annotations = Map::new();
        let hints = [
            ("readOnlyHint", a.read_only_hint),
            ("destructiveHint", a.destructive_hint),
            ("idempotentHint", a.idempotent_hint),
            ("openWorldHint", a.open_world_hint),
        ];
        if let Some(title) = a.title {
            annotations.insert("title".into(), title.into());
        }
        for (key, hint) in hints {
            if let Some(hint) = hint {
                annotations.insert(key.into(), hint.into());
            }
        }
        entry.insert("annotations".into(), Value::Object(annotations));
    }
    Value::Object(entry)
}
