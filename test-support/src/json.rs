//! JSON helpers of the MCP tests: parse an answer, read a `tools/list`
//! result's names and a tool result's JSON text.

use serde_json::Value;

/// `text` parsed as JSON; panics, quoting it, when it is not.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The names in a `tools/list` result, in order.
pub fn tool_names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list}"))
        .iter()
        .map(|tool| tool["name"].as_str().expect("a tool's name"))
        .collect()
}

/// The JSON text of a `tools/call` result (its first content block),
/// parsed.
pub fn tool_text(result: &Value) -> Value {
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"));
    json(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_text_are_read_from_results() {
        let list = json!({"tools": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(tool_names(&list), ["a", "b"]);
        let result = json!({"content": [{"type": "text", "text": "{\"x\":1}"}]});
        assert_eq!(tool_text(&result), json!({"x": 1}));
    }
}
