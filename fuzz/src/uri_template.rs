//! The `uri_template` target: templates, URIs and values through
//! `ide_mcp_runtime::resource::UriTemplate`'s parsing and matching.

use ide_mcp_runtime::resource::UriTemplate;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// A template's parts as its text spells them: literals and variable names.
enum Part<'t> {
    Literal(&'t str),
    Variable(&'t str),
}

/// The `uri_template` target: the input (lossily UTF-8) split at `\n`: the
/// first line a template, the second a URI, each further line a value.
///
/// Properties: nothing panics; a URI that binds gives each of the
/// template's variables, in order, a value that is not empty and holds no
/// control character; and the template's own expansion of the values (each
/// percent-encoded but for letters and digits) binds back to exactly those
/// values whenever the expansion cannot be split elsewhere, or, when a value
/// holds a control character, is refused naming the first such variable.
pub fn uri_template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let Ok(template) = UriTemplate::parse(lines.next().unwrap_or_default()) else {
        return;
    };
    let source = text.split('\n').next().unwrap_or_default();
    let names: Vec<&str> = template.variables().collect();
    if let Some(Ok(bound)) = template.bind(lines.next().unwrap_or_default()) {
        let bound_names: Vec<&str> = bound.iter().map(|(n, _)| *n).collect();
        assert_eq!(bound_names, names);
        for (name, value) in &bound {
            assert!(!value.is_empty(), "`{name}` is empty");
            assert!(!value.chars().any(char::is_control), "`{name}`: {value:?}");
        }
    }
    let values: Vec<&str> = lines.filter(|v| !v.is_empty()).collect();
    if values.is_empty() {
        return;
    }
    round_trip(&template, &parts(source), &values);
}

/// The parts of a template that parsed (so its braces pair up).
fn parts(template: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let close = open + rest[open..].find('}').expect("a parsed template");
        parts.push(Part::Variable(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    parts
}

/// Expands `parts` with `values` (taken in turn, again from the first when
/// they run out) and binds the expansion back.
fn round_trip(template: &UriTemplate, parts: &[Part<'_>], values: &[&str]) {
    let mut uri = String::new();
    let mut given: Vec<(&str, &str)> = Vec::new();
    // Where each variable's encoded value ends in `uri`, and the literal
    // after it, if any: the split is unambiguous when that literal's first
    // occurrence from the value's start is right after the value.
    let mut splits: Vec<(usize, usize, Option<&str>)> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Literal(text) => uri.push_str(text),
            Part::Variable(name) => {
                let value = values[given.len() % values.len()];
                let start = uri.len();
                uri.extend(utf8_percent_encode(value, NON_ALPHANUMERIC));
                let next = match parts.get(i + 1) {
                    Some(Part::Literal(text)) => Some(*text),
                    _ => None,
                };
                splits.push((start, uri.len(), next));
                given.push((name, value));
            }
        }
    }
    let unambiguous = splits.iter().all(|&(start, end, next)| {
        next.is_none_or(|literal| uri[start..].find(literal) == Some(end - start))
    });
    if !unambiguous {
        return;
    }
    let bound = template
        .bind(&uri)
        .expect("an expansion matches its template");
    match given
        .iter()
        .find(|(_, value)| value.chars().any(char::is_control))
    {
        None => {
            let bound = bound.unwrap_or_else(|e| panic!("{uri}: {e}"));
            let bound: Vec<(&str, &str)> = bound.iter().map(|(n, v)| (*n, v.as_str())).collect();
            assert_eq!(bound, given, "{uri}");
        }
        Some((name, _)) => {
            let error = bound.expect_err("a control character is refused");
            assert!(
                error.to_string().starts_with(&format!("`{name}` ")),
                "{uri}: {error}"
            );
        }
    }
}
