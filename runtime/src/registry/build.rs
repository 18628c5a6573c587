//! The registry: every linked tool, resource and prompt, checked once, with
//! their lists pre-serialized.

use std::sync::OnceLock;

use serde_json::Value;

use super::problem::RegistryError;
use super::prompts::{Prompts, RegisteredPrompt};
use super::resources::{RegisteredTemplate, Resources};
use super::tools::{RegisteredTool, Tools};
use crate::prompt::PromptDef;
use crate::resource::{ResourceDef, ValueError};
use crate::tool::ToolDef;

/// Every tool, resource and prompt of the binary, checked, sorted, with the
/// lists serialized once.
#[derive(Debug)]
pub struct Registry {
    tools: Tools,
    resources: Resources,
    prompts: Prompts,
}

/// What a `resources/read` URI names.
#[derive(Debug)]
pub enum ResourceMatch<'r> {
    /// A fixed resource.
    Fixed(&'static ResourceDef),
    /// A template's instance, with its variables bound.
    Template(&'r RegisteredTemplate, Vec<(&'r str, String)>),
    /// A URI of a template's shape whose variable decodes to no name (bytes
    /// that are not UTF-8, a control character): refused, never read.
    BadValue(&'r RegisteredTemplate, ValueError),
}

impl Registry {
    /// The registry of every `#[mcp_tool]`, `#[mcp_resource]` and
    /// `#[mcp_prompt]` linked into this binary, built on first use.
    ///
    /// A crate the binary never references may be dropped by the linker,
    /// and its items with it: reference each such crate from the binary
    /// (`use my_tools as _;`, or [`link!`](crate::link)).
    pub fn global() -> Result<&'static Self, &'static RegistryError> {
        static GLOBAL: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                Self::from_items(
                    crate::tool::tools().iter().filter(|t| t.face.is_none()),
                    crate::resource::resources(),
                    crate::prompt::prompts(),
                )
            })
            .as_ref()
    }

    /// The registry of one face (an agent's own protocol): the linked tools
    /// marked `#[mcp_tool(face = "<face>")]` and nothing else, checked as
    /// the global one is.
    pub fn face(face: &str) -> Result<Self, RegistryError> {
        Self::from_tools(crate::tool::tools().iter().filter(|t| t.face == Some(face)))
    }

    /// A registry of the given tools and nothing else (for tests,
    /// benchmarks and hosts that pick tools).
    pub fn from_tools(
        defs: impl IntoIterator<Item = &'static ToolDef>,
    ) -> Result<Self, RegistryError> {
        Self::from_items(defs, [], [])
    }

    /// A registry of the given tools, resources and prompts.
    pub fn from_items(
        tools: impl IntoIterator<Item = &'static ToolDef>,
        resources: impl IntoIterator<Item = &'static ResourceDef>,
        prompts: impl IntoIterator<Item = &'static PromptDef>,
    ) -> Result<Self, RegistryError> {
        let mut problems = Vec::new();
        let registry = Self {
            tools: Tools::build(tools, &mut problems),
            resources: Resources::build(resources, &mut problems),
            prompts: Prompts::build(prompts, &mut problems),
        };
        if problems.is_empty() {
            Ok(registry)
        } else {
            Err(RegistryError { problems })
        }
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools.items
    }

    /// The sorted tool names.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.items.iter().map(|t| t.def.name)
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.index.get(name).map(|&i| &self.tools.items[i])
    }

    /// The `result` of `tools/list`, serialized once: `{"tools":[…]}`, one page, no cursor.
    pub fn list_result_bytes(&self) -> &[u8] {
        &self.tools.list_result
    }

    /// The `result` of `tools/list` as a JSON value (for printing and tests).
    pub fn list_result(&self) -> Value {
        serde_json::from_slice(&self.tools.list_result).expect("the cached list is valid JSON")
    }

    /// The resources with a fixed URI, sorted by URI.
    pub fn resources(&self) -> &[&'static ResourceDef] {
        &self.resources.fixed
    }

    /// The resource templates, sorted.
    pub fn resource_templates(&self) -> &[RegisteredTemplate] {
        &self.resources.templates
    }

    /// Whether any resource (fixed or template) is registered.
    pub fn has_resources(&self) -> bool {
        !self.resources.fixed.is_empty() || !self.resources.templates.is_empty()
    }

    /// Whether a template lists resources from the host's state
    /// (`list = f`): `resources/list` then changes while the server runs,
    /// and the server advertises `listChanged`.
    pub fn has_listed_resources(&self) -> bool {
        self.resources
            .templates
            .iter()
            .any(|t| t.def.list.is_some())
    }

    /// What `uri` names: a fixed resource, else the first template (in
    /// sorted order) that matches it.
    pub fn find_resource(&self, uri: &str) -> Option<ResourceMatch<'_>> {
        if let Some(&i) = self.resources.by_uri.get(uri) {
            return Some(ResourceMatch::Fixed(self.resources.fixed[i]));
        }
        self.resources.templates.iter().find_map(|t| {
            Some(match t.template.bind(uri)? {
                Ok(bound) => ResourceMatch::Template(t, bound),
                Err(error) => ResourceMatch::BadValue(t, error),
            })
        })
    }

    /// The fixed resources' `resources/list` entries, serialized once and
    /// comma-separated, without the brackets (the templates' listed
    /// instances follow them).
    pub fn fixed_resource_entries(&self) -> &[u8] {
        &self.resources.fixed_entries
    }

    /// The `result` of `resources/templates/list`, serialized once.
    pub fn templates_list_bytes(&self) -> &[u8] {
        &self.resources.templates_list
    }

    /// The prompts, sorted by name.
    pub fn prompts(&self) -> &[RegisteredPrompt] {
        &self.prompts.items
    }

    /// The prompt called `name`.
    pub fn prompt(&self, name: &str) -> Option<&RegisteredPrompt> {
        self.prompts
            .index
            .get(name)
            .map(|&i| &self.prompts.items[i])
    }

    /// The `result` of `prompts/list`, serialized once.
    pub fn prompts_list_bytes(&self) -> &[u8] {
        &self.prompts.list_result
    }
}
