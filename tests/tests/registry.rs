//! The registry as a downstream crate sees it: tools added by annotation in
//! `fixture-tools` are linked, listed, checked and callable; its resources
//! and prompt are linked the same way.

use std::sync::Arc;

use ide_mcp_runtime::server::MissingStateForTool;
use ide_mcp_runtime::{
    BuildError, Registry, RegistryProblem, Server, SourceLocation, ToolContext, ToolDef, tools,
};
use serde_json::value::RawValue;

// Without a reference, the linker may drop the crate and its tools with it.
use fixture_tools as _;
ide_mcp_runtime::link!(ide_mcp_tools);
use fixture_tools::FixtureState;

/// The fixture's tools. The binary may link other tool crates (ide-mcp-tools
/// is a dependency of this test crate), so the fixture's are picked by crate.
fn fixture_defs() -> impl Iterator<Item = &'static ToolDef> {
    tools()
        .iter()
        .filter(|t| t.location.crate_name == "fixture-tools")
}

fn fixture_registry() -> Registry {
    Registry::from_tools(fixture_defs()).expect("the fixture's tools are valid")
}

fn context() -> ToolContext {
    ToolContext::new().with(FixtureState {
        greeting: "Hello".into(),
    })
}

/// Calls a registered tool through its generated shim, as the runtime does.
fn call(name: &str, args: Option<&str>) -> String {
    let registry = Registry::global().expect("the global registry is valid");
    let tool = registry
        .get(name)
        .unwrap_or_else(|| panic!("`{name}` is registered"));
    let args = args.map(|a| RawValue::from_string(a.to_owned()).expect("valid JSON"));
    String::from_utf8(block_on(tool.call(&context(), args.as_deref()))).expect("UTF-8")
}

/// Runs `future` to its end on a runtime of its own.
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

#[test]
fn fixture_tools_are_linked_and_sorted_by_name() {
    let registry = Registry::global().expect("the global registry is valid");
    let names: Vec<_> = registry
        .tools()
        .iter()
        .filter(|t| t.def.location.crate_name == "fixture-tools")
        .map(|t| t.def.name)
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "countWords",
            "divide",
            "fixture.echo",
            "forgetEverything",
            "greet"
        ]
    );
}

#[test]
fn tools_list_of_the_fixture() {
    insta::assert_json_snapshot!(fixture_registry().list_result());
}

#[test]
fn definitions_carry_execution_states_and_location() {
    use ide_mcp_runtime::Execution;
    let registry = fixture_registry();
    let def = |name| registry.get(name).expect("registered").def;
    assert_eq!(def("add").execution, Execution::Inline);
    assert_eq!(def("divide").execution, Execution::Blocking);
    assert_eq!(def("fixture.echo").execution, Execution::Async);
    let states = |name| {
        let mut states = Vec::new();
        (def(name).states)(&mut states);
        states.iter().map(|s| s.type_name).collect::<Vec<_>>()
    };
    assert_eq!(states("greet"), ["fixture_tools::FixtureState"]);
    assert!(states("add").is_empty());
    let location = def("add").location;
    assert_eq!(location.crate_name, "fixture-tools");
    assert!(location.file.ends_with("lib.rs"), "{location}");
    let source = include_str!("../fixture-tools/src/lib.rs");
    let line = source
        .lines()
        .nth(location.line as usize - 1)
        .expect("the line exists");
    assert!(
        line.starts_with("pub fn add("),
        "the location is the function's line: {line}"
    );
}

/// Calls each `(tool, arguments)` and checks the result's exact bytes.
fn assert_calls(cases: &[(&str, Option<&str>, &str)]) {
    for &(name, args, expected) in cases {
        assert_eq!(call(name, args), expected, "{name} {args:?}");
    }
}

#[test]
fn sync_tool_results_are_exact_bytes() {
    assert_calls(&[
        (
            "add",
            Some(r#"{"a": 40, "b": 2}"#),
            r#"{"content":[{"type":"text","text":"42"}]}"#,
        ),
        (
            "add",
            Some(r#"{"a": 1}"#),
            r#"{"content":[{"type":"text","text":"1"}]}"#,
        ),
        (
            "greet",
            Some(r#"{"name": "Ada", "loud": true}"#),
            r#"{"content":[{"type":"text","text":"\"HELLO, ADA\""}]}"#,
        ),
        (
            "greet",
            None,
            r#"{"content":[{"type":"text","text":"\"Hello, stranger\""}]}"#,
        ),
        (
            "forgetEverything",
            None,
            r#"{"content":[{"type":"text","text":"forgotten"}]}"#,
        ),
    ]);
}

#[test]
fn async_tool_runs_in_its_future() {
    assert_calls(&[(
        "fixture.echo",
        Some(r#"{"text": "hi"}"#),
        r#"{"content":[{"type":"text","text":"\"Hello: hi\""}]}"#,
    )]);
}

#[test]
fn result_and_structured_tools() {
    assert_calls(&[
        (
            "divide",
            Some(r#"{"numerator": 1, "denominator": 4}"#),
            r#"{"content":[{"type":"text","text":"0.25"}]}"#,
        ),
        (
            "divide",
            Some(r#"{"numerator": 1, "denominator": 0}"#),
            r#"{"content":[{"type":"text","text":"cannot divide 1 by zero"}],"isError":true}"#,
        ),
        (
            "countWords",
            Some(r#"{"text": "a b a"}"#),
            r#"{"content":[{"type":"text","text":"{\"a\":2,\"b\":1}"}],"structuredContent":{"a":2,"b":1}}"#,
        ),
    ]);
}

#[test]
fn bad_arguments_are_tool_errors_naming_the_argument() {
    assert_calls(&[
        (
            "add",
            Some(r#"{"a": "one"}"#),
            r#"{"content":[{"type":"text","text":"invalid arguments for tool `add`: `a`: invalid type: string \"one\", expected i64"}],"isError":true}"#,
        ),
        (
            "add",
            None,
            r#"{"content":[{"type":"text","text":"invalid arguments for tool `add`: missing field `a`"}],"isError":true}"#,
        ),
    ]);
}

#[test]
fn a_missing_state_is_an_error_result_not_a_panic() {
    let registry = fixture_registry();
    for name in ["greet", "fixture.echo"] {
        let tool = registry.get(name).expect("registered");
        let args = RawValue::from_string(r#"{"text": "x"}"#.to_owned()).expect("valid JSON");
        // An async tool takes its extractors when it runs: its future writes the error.
        let out = block_on(tool.call(&ToolContext::new(), Some(&args)));
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            r#"{"content":[{"type":"text","text":"the server has no state of type `fixture_tools::FixtureState`"}],"isError":true}"#
        );
    }
}

#[test]
fn duplicate_names_are_reported_with_both_locations() {
    let registry = fixture_registry();
    let add = registry.get("add").expect("registered").def;
    let divide = registry.get("divide").expect("registered").def;
    // A second tool named `add`, defined where `divide` is.
    let impostor: &'static ToolDef = Box::leak(Box::new(ToolDef {
        name: "add",
        description: divide.description,
        annotations: divide.annotations,
        input_schema: divide.input_schema,
        output_schema: divide.output_schema,
        states: divide.states,
        execution: divide.execution,
        call: divide.call,
        face: None,
        location: divide.location,
    }));
    let err = Registry::from_tools([add, impostor]).expect_err("two tools are named `add`");
    assert_eq!(
        err.problems,
        [RegistryProblem::DuplicateName {
            name: "add",
            first: add.location,
            second: divide.location,
        }]
    );
    let at = |l: SourceLocation| format!("fixture-tools ({}:{})", l.file, l.line);
    assert_eq!(
        err.to_string(),
        format!(
            "two tools are named `add`: one in {}, one in {}; rename one with `#[mcp_tool(name = \"...\")]`",
            at(add.location),
            at(divide.location)
        )
    );
}

#[test]
fn building_without_a_needed_state_names_tool_and_type() {
    let registry = Arc::new(fixture_registry());
    let err = Server::builder("test", "0")
        .registry(Arc::clone(&registry))
        .build()
        .expect_err("the fixture state is missing");
    let BuildError::MissingStates(missing) = &err else {
        panic!("unexpected error: {err}");
    };
    let missing_state = |tool| MissingStateForTool {
        kind: "tool",
        tool,
        type_name: "fixture_tools::FixtureState",
    };
    assert_eq!(
        *missing,
        [missing_state("fixture.echo"), missing_state("greet")]
    );
    assert!(
        err.to_string()
            .starts_with("tool `fixture.echo` needs a state of type `fixture_tools::FixtureState`"),
        "{err}"
    );
    let server = Server::builder("test", "0")
        .registry(registry)
        .state(FixtureState {
            greeting: "Hi".into(),
        })
        .build();
    assert!(server.is_ok());
}

#[test]
fn fixture_resources_and_prompt_are_linked_by_annotation() {
    use ide_mcp_runtime::registry::ResourceMatch;
    let registry = Registry::global().expect("the global registry is valid");
    let Some(ResourceMatch::Fixed(greeting)) = registry.find_resource("fixture://greeting") else {
        panic!("fixture://greeting is a fixed resource");
    };
    assert_eq!(
        (greeting.name, greeting.location.crate_name),
        ("greeting", "fixture-tools")
    );
    let Some(ResourceMatch::Template(_, variables)) =
        registry.find_resource("fixture://notes/a%2Fb")
    else {
        panic!("fixture://notes/{{topic}} is a template");
    };
    assert_eq!(variables, [("topic", "a/b".to_owned())]);
    let prompt = registry.prompt("introduce").expect("introduce is linked");
    let arguments: Vec<_> = prompt
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("name", true), ("style", false)]);
}

/// A tool of a face of this test's own, named as a global tool is.
#[ide_mcp_runtime::mcp_tool(name = "add", face = "fixture-face")]
fn face_add() -> u32 {
    0
}

#[test]
fn a_face_s_tools_are_listed_on_that_face_only() {
    let global = Registry::global().expect("the global registry is valid");
    let add = global.get("add").expect("the fixture's `add`");
    assert_eq!(add.def.location.crate_name, "fixture-tools");
    assert_eq!(add.def.face, None);
    let face = Registry::face("fixture-face").expect("the face's registry is valid");
    assert_eq!(face.names().collect::<Vec<_>>(), ["add"]);
    assert_eq!(face.get("add").unwrap().def.face, Some("fixture-face"));
    assert_eq!(face_add(), 0, "still an ordinary function");
    // Gemini's own tools, beside Claude's of the same name.
    let gemini = Registry::face("gemini").expect("Gemini's registry is valid");
    assert_eq!(
        gemini.names().collect::<Vec<_>>(),
        ["closeDiff", "openDiff"]
    );
    // Copilot's, in that CLI's own names.
    let copilot = Registry::face("copilot").expect("Copilot's registry is valid");
    assert_eq!(
        copilot.names().collect::<Vec<_>>(),
        [
            "close_diff",
            "get_diagnostics",
            "get_selection",
            "open_diff"
        ]
    );
    assert_eq!(Registry::face("no-such-face").unwrap().names().count(), 0);
}
