//! What can be wrong with the linked tools, resources and prompts.

use crate::schema::{SchemaError, SchemaKind};
use crate::tool::SourceLocation;

/// Why the tools, resources and prompts cannot be served; every problem is listed.
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
    /// Two resources share a URI (or a template).
    DuplicateUri {
        /// The shared URI.
        uri: &'static str,
        /// Where the first was defined.
        first: SourceLocation,
        /// Where the second was defined.
        second: SourceLocation,
    },
    /// A resource template matches a fixed resource's URI: a read of it would be ambiguous.
    TemplateCollides {
        /// The template.
        template: &'static str,
        /// Where it was defined.
        template_at: SourceLocation,
        /// The fixed URI it matches.
        uri: &'static str,
        /// Where that resource was defined.
        uri_at: SourceLocation,
    },
    /// A resource's URI template cannot be parsed.
    BadTemplate {
        /// The template.
        template: &'static str,
        /// Where it was defined.
        at: SourceLocation,
        /// Why.
        error: crate::resource::TemplateError,
    },
    /// Two prompts share a name.
    DuplicatePrompt {
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
            Self::DuplicateUri { uri, first, second } => write!(
                f,
                "two resources have the URI `{uri}`: one in {first}, one in {second}; change one's `uri = \"...\"`"
            ),
            Self::TemplateCollides {
                template,
                template_at,
                uri,
                uri_at,
            } => write!(
                f,
                "the resource template `{template}` in {template_at} matches the URI `{uri}` of the resource in {uri_at}: a read of it would be ambiguous"
            ),
            Self::BadTemplate {
                template,
                at,
                error,
            } => write!(
                f,
                "the resource template `{template}` in {at} is unusable: {error}"
            ),
            Self::DuplicatePrompt {
                name,
                first,
                second,
            } => write!(
                f,
                "two prompts are named `{name}`: one in {first}, one in {second}; rename one with `#[mcp_prompt(name = \"...\")]`"
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

/// `defs` sorted by `key`, with each pair sharing a key pushed into
/// `problems` as `duplicate(key, first, second)`.
pub(crate) fn sorted_unique<T>(
    defs: impl IntoIterator<Item = &'static T>,
    key: fn(&T) -> &'static str,
    location: fn(&T) -> SourceLocation,
    duplicate: fn(&'static str, SourceLocation, SourceLocation) -> RegistryProblem,
    problems: &mut Vec<RegistryProblem>,
) -> Vec<&'static T> {
    let mut defs: Vec<&'static T> = defs.into_iter().collect();
    defs.sort_by_key(|def| key(def));
    for pair in defs.windows(2) {
        if key(pair[0]) == key(pair[1]) {
            problems.push(duplicate(
                key(pair[0]),
                location(pair[0]),
                location(pair[1]),
            ));
        }
    }
    defs
}
