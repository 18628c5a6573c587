//! The registry: every linked tool, checked once, sorted, with `tools/list` pre-serialized.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use crate::schema::{self, SchemaError, SchemaKind};
use crate::tool::{SourceLocation, ToolDef};

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

/// Every tool of the binary, checked and sorted by name, with the `tools/list`
/// result serialized once.
#[derive(Debug)]
pub struct Registry {
    tools: Vec<RegisteredTool>,
    /// Each tool's place in `tools`, by name: a call names its tool.
    index: FxHashMap<&'static str, usize>,
    list_result: Box<[u8]>,
}

/// Why the tools cannot be served; every problem is listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError {
    /// One line per problem.
    pub problems: Vec<RegistryProblem>,
}

/// One problem found while building the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryProblem {
    /// Two tools share a wire name.
    DuplicateName {
        /// The shared name.
        name: &'static str,
        /// Where the first was defined.
        first: SourceLocation,
        /// Where the second was defined.
        second: SourceLocation,
    },
    /// A tool's schema cannot be cleaned for clients.
    Schema {
        /// The tool.
        tool: &'static str,
        /// Input or output.
        kind: SchemaKind,
        /// Why.
        error: SchemaError,
    },
}

impl std::fmt::Display for RegistryProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two tools are named `{name}`: one in {first}, one in {second}; rename one with `#[mcp_tool(name = \"...\")]`"
            ),
            Self::Schema { tool, kind, error } => {
                let which = match kind {
                    SchemaKind::Input => "arguments",
                    SchemaKind::Output => "result",
                };
                write!(
                    f,
                    "the {which} schema of tool `{tool}` is unusable: {error}"
                )
            }
        }
    }
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}

impl Registry {
    /// The registry of every `#[mcp_tool]` linked into this binary, built on first use.
    ///
    /// A tool crate the binary never references may be dropped by the linker,
    /// and its tools with it: reference each tool crate from the binary
    /// (`use my_tools as _;`, or [`link!`](crate::link)).
    pub fn global() -> Result<&'static Self, &'static RegistryError> {
        static GLOBAL: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Self::from_tools(crate::tool::tools()))
            .as_ref()
    }

    /// A registry of the given tools (for tests, benchmarks and hosts that pick tools).
    pub fn from_tools(
        defs: impl IntoIterator<Item = &'static ToolDef>,
    ) -> Result<Self, RegistryError> {
        let mut defs: Vec<&'static ToolDef> = defs.into_iter().collect();
        defs.sort_by(|a, b| a.name.cmp(b.name));
        let mut problems = Vec::new();
        for pair in defs.windows(2) {
            if pair[0].name == pair[1].name {
                problems.push(RegistryProblem::DuplicateName {
                    name: pair[0].name,
                    first: pair[0].location,
                    second: pair[1].location,
                });
            }
        }
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
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let list_result = serde_json::to_vec(&list_result(&tools))
            .expect("a JSON value serializes")
            .into_boxed_slice();
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, tool)| (tool.def.name, i))
            .collect();
        Ok(Self {
            tools,
            index,
            list_result,
        })
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// The sorted tool names.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.def.name)
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The `result` of `tools/list`, serialized once: `{"tools":[…]}`, one page, no cursor.
    pub fn list_result_bytes(&self) -> &[u8] {
        &self.list_result
    }

    /// The `result` of `tools/list` as a JSON value (for printing and tests).
    pub fn list_result(&self) -> Value {
        serde_json::from_slice(&self.list_result).expect("the cached list is valid JSON")
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
