//! What the crate's unit tests share.

use serde_json::Value;

/// The names in a `tools/list` result (`{"tools": [{"name", …}, …]}`), in
/// order.
pub(crate) fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}
