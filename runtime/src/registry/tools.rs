//! The registry's tools: checked once, sorted, with `tools/list` pre-serialized.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::problem::{RegistryProblem, sorted_unique};
use crate::schema::{self, SchemaKind};
use crate::tool::ToolDef;

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
