//! Every schema of every registered tool — the five read tools and the
//! downstream fixture's — passes the lint: valid JSON Schema 2020-12 and
//! acceptable to the Claude, Gemini and OpenAI-strict profiles.

use fixture_tools as _;
use ide_mcp_runtime::Registry;
use ide_mcp_runtime::lint::lint_registry;

#[test]
fn every_registered_schema_passes_the_lint() {
    let registry = Registry::global().expect("the global registry is valid");
    let names: Vec<&str> = registry.names().collect();
    for &tool in ide_mcp_tools::TOOL_NAMES {
        assert!(names.contains(&tool), "{tool} is registered: {names:?}");
    }
    assert!(
        names.len() > ide_mcp_tools::TOOL_NAMES.len(),
        "the fixture's tools are linked too: {names:?}"
    );
    let findings: Vec<String> = lint_registry(registry)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        findings.is_empty(),
        "lint findings:\n{}",
        findings.join("\n")
    );
}

#[test]
fn the_lint_reads_the_schemas_the_registry_serves() {
    // A structured fixture tool has an output schema; the lint must see it.
    let registry = Registry::global().expect("the global registry is valid");
    assert!(
        registry.tools().iter().any(|t| t.output_schema.is_some()),
        "some linked tool declares an output schema"
    );
    for tool in registry.tools() {
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.def.name);
        assert!(
            tool.input_schema["properties"].is_object(),
            "{}",
            tool.def.name
        );
    }
}
