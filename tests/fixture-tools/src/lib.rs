//! A downstream crate that adds tools by annotation only (test fixture).
//!
//! It depends on `ide-mcp-runtime` alone: no `linkme`, `serde`, `serde_json`
//! or `schemars`. Every shape of tool the attribute supports without a
//! user-defined serde type is here; `tests/tests/registry.rs` lists and calls
//! them through the registry.

use std::collections::BTreeMap;

use ide_mcp_runtime::{CallToolResult, mcp_prompt, mcp_resource, mcp_tool};

/// The state the fixture's context parameters take.
#[derive(Debug)]
pub struct FixtureState {
    /// How `greet` says hello.
    pub greeting: String,
}

/// Adds two integers.
#[mcp_tool(read_only, idempotent)]
pub fn add(
    a: i64,
    #[arg(description = "The second addend; 0 when absent", default)] b: i64,
) -> i64 {
    a + b
}

/// Greets someone with the host's greeting.
///
/// The name is optional.
#[mcp_tool(title = "Greeter")]
pub fn greet(
    state: &FixtureState,
    name: Option<String>,
    #[arg(rename = "loud")] shout: Option<bool>,
) -> String {
    let text = format!(
        "{}, {}",
        state.greeting,
        name.as_deref().unwrap_or("stranger")
    );
    if shout == Some(true) {
        text.to_uppercase()
    } else {
        text
    }
}

/// Echoes the text, asynchronously.
#[mcp_tool(name = "fixture.echo")]
pub async fn echo(state: &FixtureState, text: String) -> String {
    std::future::ready(()).await;
    format!("{}: {text}", state.greeting)
}

/// Divides two numbers; dividing by zero is the tool's own error.
#[mcp_tool(blocking)]
pub fn divide(numerator: f64, denominator: f64) -> Result<f64, String> {
    if denominator == 0.0 {
        Err(format!("cannot divide {numerator} by zero"))
    } else {
        Ok(numerator / denominator)
    }
}

/// Counts the words of a text.
#[mcp_tool(structured, read_only)]
pub fn count_words(text: String) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Forgets everything, returning a hand-made result.
#[mcp_tool(destructive, open_world)]
pub fn forget_everything() -> CallToolResult {
    CallToolResult::text("forgotten")
}

/// The host's greeting, as a resource.
#[mcp_resource(
    uri = "fixture://greeting",
    title = "Greeting",
    mime_type = "text/plain"
)]
pub fn greeting(state: &FixtureState) -> String {
    state.greeting.clone()
}

/// A note about a topic; any topic has one.
#[mcp_resource(uri = "fixture://notes/{topic}", mime_type = "text/markdown")]
pub fn note(topic: String) -> String {
    format!("# {topic}\n\nNothing noted about {topic} yet.")
}

/// Asks for a greeting of someone, in the host's words.
#[mcp_prompt(title = "Introduce")]
pub fn introduce(
    state: &FixtureState,
    #[arg(description = "Whom to greet")] name: String,
    #[arg(description = "How; plainly by default")] style: Option<String>,
) -> String {
    let style = style.unwrap_or_else(|| "plainly".to_owned());
    format!("Say \"{}, {name}\" {style}.", state.greeting)
}
