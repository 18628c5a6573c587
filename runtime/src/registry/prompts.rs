//! The registry's prompts: checked once, sorted, with `prompts/list` pre-serialized.

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::Value;

use super::problem::{RegistryProblem, sorted_unique};
use crate::prompt::PromptDef;

/// One argument of a prompt, as `prompts/list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is for (its `#[arg(description)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given (not an `Option`).
    pub required: bool,
}

/// A prompt as the registry serves it: its definition and its arguments.
#[derive(Debug)]
pub struct RegisteredPrompt {
    /// The definition `#[mcp_prompt]` emitted.
    pub def: &'static PromptDef,
    /// The arguments, sorted by name.
    pub arguments: Vec<PromptArgument>,
}

/// The prompts, sorted by name, with `prompts/list` serialized once.
#[derive(Debug, Default)]
pub(crate) struct Prompts {
    pub(crate) items: Vec<RegisteredPrompt>,
    pub(crate) index: FxHashMap<&'static str, usize>,
    pub(crate) list_result: Box<[u8]>,
}

impl Prompts {
    /// Checks and sorts `defs`, pushing every problem into `problems`.
    pub(crate) fn build(
        defs: impl IntoIterator<Item = &'static PromptDef>,
        problems: &mut Vec<RegistryProblem>,
    ) -> Self {
        #[derive(Serialize)]
        struct Entry<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            description: &'a str,
            arguments: &'a [PromptArgument],
        }
        #[derive(Serialize)]
        struct List<'a> {
            prompts: &'a [Entry<'a>],
        }
        let prompts: Vec<RegisteredPrompt> = sorted_unique(
            defs,
            |def: &PromptDef| def.name,
            |def| def.location,
            |name, first, second| RegistryProblem::DuplicatePrompt {
                name,
                first,
                second,
            },
            problems,
        )
        .into_iter()
        .map(|def| RegisteredPrompt {
            def,
            arguments: arguments(&(def.arguments)().to_value()),
        })
        .collect();
        let entries: Vec<Entry<'_>> = prompts
            .iter()
            .map(|p| Entry {
                name: p.def.name,
                title: p.def.title,
                description: p.def.description,
                arguments: &p.arguments,
            })
            .collect();
        let list_result = serde_json::to_vec(&List { prompts: &entries })
            .expect("strings serialize")
            .into_boxed_slice();
        Self {
            index: prompts
                .iter()
                .enumerate()
                .map(|(i, p)| (p.def.name, i))
                .collect(),
            items: prompts,
            list_result,
        }
    }
}

/// The arguments an object schema describes, sorted by name.
fn arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            description: property["description"].as_str().map(str::to_owned),
            required: required.contains(&name.as_str()),
        })
        .collect()
}
