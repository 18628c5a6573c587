//! A lint over tool schemas: each must be valid JSON Schema 2020-12 and pass
//! the rules of the clients that are strictest about schemas.
//!
//! The profiles record what each client family is known to reject:
//!
//! | profile | rejects |
//! |---|---|
//! | `meta-schema` | anything the JSON Schema 2020-12 meta-schema rejects |
//! | `claude` | an input root that is not `{"type": "object", "properties": {…}}`; `$schema`; `$ref`/`$defs` |
//! | `gemini` | `$ref`/`$defs`/`$schema`; type arrays (`"type": ["string", "null"]`); `nullable`; non-standard `format`s |
//! | `openai-strict` | `allOf`, `not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `patternProperties`, `unevaluatedProperties`, `$dynamicRef`; a root `anyOf`/`oneOf` |
//!
//! OpenAI's strict mode also wants every property required; clients that
//! enable it rewrite optional properties themselves, so that is not checked.
//! The Gemini rules apply to input schemas, the ones sent as function
//! declarations; output schemas may say `null`.
//!
//! Behind the runtime's `lint` feature: the meta-schema check needs
//! `boon` and its regex engine, which a server that only serves its
//! tools should not compile. The CLI (`ide-mcp tools --lint`) and the test
//! suites turn it on.

use serde_json::Value;

use crate::registry::Registry;
use crate::schema::SchemaKind;

/// A client family whose rules a schema is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// The JSON Schema 2020-12 meta-schema.
    MetaSchema,
    /// Claude (the API and the `claude` CLI).
    Claude,
    /// Gemini function declarations.
    Gemini,
    /// OpenAI structured outputs in strict mode.
    OpenAiStrict,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Self; 4] = [
        Self::MetaSchema,
        Self::Claude,
        Self::Gemini,
        Self::OpenAiStrict,
    ];

    /// The profile's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::MetaSchema => "meta-schema",
            Self::Claude => "claude",
            Self::Gemini => "gemini",
            Self::OpenAiStrict => "openai-strict",
        }
    }
}

/// One rule broken by one schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintFinding {
    /// The tool.
    pub tool: String,
    /// Whether the input or the output schema.
    pub kind: SchemaKind,
    /// The client family whose rule is broken.
    pub profile: Profile,
    /// JSON pointer to the offending node (`""` is the root).
    pub pointer: String,
    /// The rule, in words.
    pub rule: String,
}

impl std::fmt::Display for LintFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = match self.kind {
            SchemaKind::Input => "inputSchema",
            SchemaKind::Output => "outputSchema",
        };
        write!(
            f,
            "{}: {which}{} [{}] {}",
            self.tool,
            if self.pointer.is_empty() {
                String::new()
            } else {
                format!(" at {}", self.pointer)
            },
            self.profile.name(),
            self.rule
        )
    }
}

/// Lints every schema of every tool in `registry`; empty means all clients accept them.
pub fn lint_registry(registry: &Registry) -> Vec<LintFinding> {
    let mut findings = Vec::new();
    for tool in registry.tools() {
        findings.extend(lint_schema(
            tool.def.name,
            SchemaKind::Input,
            &tool.input_schema,
        ));
        if let Some(output) = &tool.output_schema {
            findings.extend(lint_schema(tool.def.name, SchemaKind::Output, output));
        }
    }
    findings
}

/// Lints one schema against every profile.
pub fn lint_schema(tool: &str, kind: SchemaKind, schema: &Value) -> Vec<LintFinding> {
    let mut findings = Vec::new();
    let mut report = |profile: Profile, pointer: &str, rule: String| {
        findings.push(LintFinding {
            tool: tool.to_owned(),
            kind,
            profile,
            pointer: pointer.to_owned(),
            rule,
        });
    };
    root_rules(kind, schema, &mut report);
    walk(schema, &mut String::new(), &mut |pointer, key, value| {
        keyword_rules(kind, pointer, key, value, &mut report);
    });
    findings
}

/// A finding's profile, the pointer into the schema, and the rule broken.
type Report<'a> = dyn FnMut(Profile, &str, String) + 'a;

/// The rules about the whole schema: valid JSON Schema, an object at the
/// root of the arguments, no union at the root.
fn root_rules(kind: SchemaKind, schema: &Value, report: &mut Report<'_>) {
    if let Err((pointer, why)) = meta_schema_check(schema) {
        report(
            Profile::MetaSchema,
            &pointer,
            format!("not valid JSON Schema 2020-12: {why}"),
        );
    }
    let root_ok = schema.get("type") == Some(&Value::from("object"))
        && schema.get("properties").is_some_and(Value::is_object);
    if kind == SchemaKind::Input && !root_ok {
        report(
            Profile::Claude,
            "",
            "the root must be `{\"type\": \"object\", \"properties\": {…}}`".into(),
        );
    }
    for key in ["anyOf", "oneOf"] {
        if schema.get(key).is_some() {
            report(Profile::OpenAiStrict, "", format!("`{key}` at the root"));
        }
    }
}

/// The rules about one keyword `key` (with its `value`) at `pointer`.
fn keyword_rules(
    kind: SchemaKind,
    pointer: &str,
    key: &str,
    value: &Value,
    report: &mut Report<'_>,
) {
    let input = kind == SchemaKind::Input;
    match key {
        "$schema" => {
            report(Profile::Claude, pointer, "`$schema` is not allowed".into());
            report(Profile::Gemini, pointer, "`$schema` is not allowed".into());
        }
        "$ref" | "$defs" | "definitions" => {
            let rule = format!("`{key}`: subschemas must be inlined");
            report(Profile::Claude, pointer, rule.clone());
            report(Profile::Gemini, pointer, rule);
        }
        "type" if input && value.is_array() => {
            report(
                Profile::Gemini,
                pointer,
                "type arrays are not allowed".into(),
            );
        }
        "nullable" if input => {
            report(Profile::Gemini, pointer, "`nullable` is not allowed".into());
        }
        "format" if input => {
            if let Some(format) = value.as_str()
                && !crate::schema::is_standard_format(format)
            {
                report(
                    Profile::Gemini,
                    pointer,
                    format!("non-standard format `{format}`"),
                );
            }
        }
        "allOf"
        | "not"
        | "if"
        | "then"
        | "else"
        | "dependentRequired"
        | "dependentSchemas"
        | "patternProperties"
        | "unevaluatedProperties"
        | "$dynamicRef" => {
            report(
                Profile::OpenAiStrict,
                pointer,
                format!("`{key}` is not supported"),
            );
        }
        _ => {}
    }
}

/// Compiles `schema` as JSON Schema 2020-12, which validates it against the
/// meta-schema first; on failure, the pointer (into the schema) of the first
/// innermost violation and the validator's message.
fn meta_schema_check(schema: &Value) -> Result<(), (String, String)> {
    const LOCATION: &str = "urn:ide-mcp:lint";
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    let outcome = match compiler.add_resource(LOCATION, schema.clone()) {
        Ok(()) => compiler.compile(LOCATION, &mut boon::Schemas::new()),
        Err(error) => Err(error),
    };
    match outcome {
        Ok(_) => Ok(()),
        Err(boon::CompileError::ValidationError { src, .. }) => {
            let mut leaf = &src;
            while let Some(cause) = leaf.causes.first() {
                leaf = cause;
            }
            Err((leaf.instance_location.to_string(), leaf.kind.to_string()))
        }
        Err(other) => Err((String::new(), other.to_string())),
    }
}

/// Calls `visit(pointer_of_object, keyword, value)` for every keyword of every
/// subschema. Property names, `default`, `examples`, `const` and `enum`
/// values are data, not keywords, and are not visited as such.
fn walk(value: &Value, pointer: &mut String, visit: &mut dyn FnMut(&str, &str, &Value)) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                visit(pointer, key, child);
                let len = pointer.len();
                push_token(pointer, key);
                match key.as_str() {
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" => {
                        if let Value::Object(props) = child {
                            for (name, sub) in props {
                                let len = pointer.len();
                                push_token(pointer, name);
                                walk(sub, pointer, visit);
                                pointer.truncate(len);
                            }
                        }
                    }
                    "default" | "examples" | "const" | "enum" => {}
                    _ => walk(child, pointer, visit),
                }
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                walk(item, pointer, visit);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: &Value) -> Vec<(Profile, String, String)> {
        lint_schema("t", SchemaKind::Input, schema)
            .into_iter()
            .map(|f| (f.profile, f.pointer, f.rule))
            .collect()
    }

    #[test]
    fn a_clean_schema_passes_every_profile() {
        let schema =
            json!({"type": "object", "properties": {"uri": {"type": "string", "format": "uri"}}});
        assert_eq!(rules(&schema), vec![]);
    }

    #[test]
    fn each_profile_reports_its_rules_with_pointers() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"$ref": "#/$defs/B"},
                "c": {"type": "integer", "format": "uint32"},
                "d": {"allOf": [{"type": "string"}]}
            },
            "$defs": {"B": {"type": "string"}}
        });
        let found = rules(&schema);
        let has = |p: Profile, ptr: &str, rule: &str| {
            found
                .iter()
                .any(|(fp, fptr, frule)| *fp == p && fptr == ptr && frule.contains(rule))
        };
        assert!(has(Profile::Claude, "", "`$schema`"), "{found:?}");
        assert!(
            has(Profile::Gemini, "/properties/a", "type arrays"),
            "{found:?}"
        );
        assert!(has(Profile::Claude, "/properties/b", "`$ref`"), "{found:?}");
        assert!(
            has(Profile::Gemini, "/properties/c", "`uint32`"),
            "{found:?}"
        );
        assert!(
            has(Profile::OpenAiStrict, "/properties/d", "`allOf`"),
            "{found:?}"
        );
    }

    #[test]
    fn property_names_are_not_keywords() {
        let schema = json!({"type": "object", "properties": {"not": {"type": "string"}, "format": {"type": "string"}}});
        assert_eq!(rules(&schema), vec![]);
    }

    #[test]
    fn invalid_json_schema_fails_the_meta_schema() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "strin"}}});
        let found = rules(&schema);
        assert!(
            found.iter().any(|(p, _, _)| *p == Profile::MetaSchema),
            "{found:?}"
        );
    }

    #[test]
    fn the_input_root_must_be_an_object() {
        let found = rules(&json!({"type": "string"}));
        assert!(
            found
                .iter()
                .any(|(p, _, r)| *p == Profile::Claude && r.contains("root")),
            "{found:?}"
        );
    }
}
