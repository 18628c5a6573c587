use super::out::in_string_for_tests as in_string;
use super::*;

fn written(r: impl IntoToolResult) -> serde_json::Value {
    let mut buf = Vec::new();
    r.write_tool_result(&mut ResultOut::new(&mut buf));
    serde_json::from_slice(&buf).expect("valid JSON")
}

#[test]
fn serializable_values_become_json_text() {
    let v = written(Json(
        serde_json::json!({"a": "q\"uote\\ \u{1} ü 😀", "n": [1, 2]}),
    ));
    let text = v["content"][0]["text"].as_str().unwrap();
    assert_eq!(v["content"][0]["type"], "text");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).unwrap(),
        serde_json::json!({"a": "q\"uote\\ \u{1} ü 😀", "n": [1, 2]})
    );
    assert!(v.get("isError").is_none());
}

#[test]
fn in_string_formatter_equals_escaping_the_compact_json() {
    let raw = serde_json::value::RawValue::from_string(r#"{"r": "a\"b", "n": [1, 2.5e3]}"#.into())
        .unwrap();
    let values = [
        serde_json::json!({"quote\"key": "a\"b\\c/d\n\r\t\u{8}\u{c}\u{1}\u{1f} ü 😀 \u{2028}"}),
        serde_json::json!([null, true, -1, 1.5, u64::MAX, "", {}, []]),
        serde_json::json!({"nested": {"deep": ["\\\"", "\"\\"]}}),
    ];
    for value in &values {
        let mut ours = Vec::new();
        in_string(&mut ours, value).unwrap();
        let mut reference = Vec::new();
        JsonStringWriter::new(&mut reference).push_str(&serde_json::to_string(value).unwrap());
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(reference).unwrap()
        );
    }
    let mut ours = Vec::new();
    in_string(&mut ours, &raw).unwrap();
    let mut reference = Vec::new();
    JsonStringWriter::new(&mut reference).push_str(raw.get());
    assert_eq!(ours, reference);
}

#[test]
fn a_result_err_is_an_error_result_wherever_it_is_written() {
    let err: Result<Json<u32>, String> = Err("no \"such\"\nthing".into());
    let expected = serde_json::json!({"content": [{"type": "text", "text": "no \"such\"\nthing"}], "isError": true});
    assert_eq!(written(err.clone()), expected);
    let prepared = PreparedResult::from_result(err);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(prepared.as_bytes()).unwrap(),
        expected
    );
    assert_eq!(
        written(Ok::<_, String>(CallToolResult::text("t"))),
        serde_json::json!({"content": [{"type": "text", "text": "t"}]})
    );
}

#[test]
fn each_write_replaces_the_one_before() {
    let mut buf = b"prefix".to_vec();
    let mut out = ResultOut::new(&mut buf);
    assert!(!out.is_written());
    out.json_text(&1);
    out.error_text(&"second");
    assert!(out.is_written());
    assert_eq!(
        buf,
        br#"prefix{"content":[{"type":"text","text":"second"}],"isError":true}"#
    );
}

#[test]
fn call_tool_result_and_structured() {
    assert_eq!(
        written(CallToolResult::error("x")),
        serde_json::json!({"content": [{"type": "text", "text": "x"}], "isError": true})
    );
    let mut buf = Vec::new();
    ResultOut::new(&mut buf).structured(&serde_json::json!({"k": 1}));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&buf).unwrap(),
        serde_json::json!({"content": [{"type": "text", "text": "{\"k\":1}"}], "structuredContent": {"k": 1}})
    );
}

#[test]
fn unserializable_values_become_errors() {
    let mut map = std::collections::BTreeMap::new();
    map.insert(vec![1], 2);
    let v = written(Json(map));
    assert_eq!(v["isError"], true);
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("could not be serialized")
    );
}
