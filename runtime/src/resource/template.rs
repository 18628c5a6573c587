//! URI templates of RFC 6570 level 1 (`file:///{path}`), read backwards: a
//! URI is matched against the template and its variables are bound.
//!
//! Level 1 is literal text and `{name}` variables. Matching is the inverse
//! of expansion with one relaxation that file URIs need: a value may
//! contain `/` (a path), so a variable runs up to the first occurrence of
//! the literal after it, and the last one to the end. Values are
//! percent-decoded.

use std::fmt;

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

/// Why a template cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `template`: literals and `{name}` variables (letters, digits,
    /// `_`), at least one, never two side by side, no operators.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            let Some(open) = rest.find(['{', '}']) else {
                parts.push(Part::Literal(rest.to_owned()));
                break;
            };
            if rest.as_bytes()[open] == b'}' {
                return Err(TemplateError(format!("`}}` without `{{` in `{template}`")));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| TemplateError(format!("`{{` without `}}` in `{template}`")))?;
            let name = &after[..close];
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(TemplateError(format!(
                    "`{{{name}}}` in `{template}` is not a level-1 variable: write `{{name}}` with letters, digits and `_` only"
                )));
            }
            if matches!(parts.last(), Some(Part::Variable(_))) {
                return Err(TemplateError(format!(
                    "two variables side by side in `{template}` cannot be told apart: put literal text between them"
                )));
            }
            parts.push(Part::Variable(name.to_owned()));
            rest = &after[close + 1..];
        }
        if !parts.iter().any(|p| matches!(p, Part::Variable(_))) {
            return Err(TemplateError(format!("`{template}` has no `{{variable}}`")));
        }
        Ok(Self { parts })
    }

    /// The variables' names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Binds the variables to the parts of `uri`, percent-decoded; `None`
    /// when `uri` does not match or a value would be empty.
    pub fn bind(&self, uri: &str) -> Option<Vec<(&str, String)>> {
        let mut rest = uri;
        let mut bound = Vec::new();
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Variable(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    if end == 0 {
                        return None;
                    }
                    bound.push((name.as_str(), percent_decode(&rest[..end])?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(bound)
    }
}

/// `%XX` escapes decoded; `None` when they do not decode to UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind<'a>(template: &'a UriTemplate, uri: &str) -> Option<Vec<(&'a str, String)>> {
        template.bind(uri)
    }

    #[test]
    fn a_file_template_binds_whole_paths_decoded() {
        let t = UriTemplate::parse("file:///{path}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["path"]);
        assert_eq!(
            bind(&t, "file:///home/me/caf%C3%A9%20x.rs"),
            Some(vec![("path", "home/me/café x.rs".to_owned())])
        );
        assert_eq!(bind(&t, "file:///"), None);
        assert_eq!(bind(&t, "ide://diagnostics"), None);
        assert_eq!(bind(&t, "file:///bad%ZZ"), None);
    }

    #[test]
    fn literals_between_variables_split_them() {
        let t = UriTemplate::parse("repo://{owner}/{name}/readme").unwrap();
        assert_eq!(
            bind(&t, "repo://me/ide-mcp/readme"),
            Some(vec![
                ("owner", "me".to_owned()),
                ("name", "ide-mcp".to_owned())
            ])
        );
        assert_eq!(bind(&t, "repo://me/ide-mcp/readme/x"), None);
        assert_eq!(bind(&t, "repo://me/readme"), None);
    }

    #[test]
    fn bad_templates_say_why() {
        let errors = [
            "ide://diagnostics",
            "a://{x}{y}",
            "a://{x",
            "a://x}",
            "a://{+x}",
            "a://{}",
        ]
        .map(|t| UriTemplate::parse(t).unwrap_err().to_string());
        assert_eq!(
            errors,
            [
                "`ide://diagnostics` has no `{variable}`",
                "two variables side by side in `a://{x}{y}` cannot be told apart: put literal text between them",
                "`{` without `}` in `a://{x`",
                "`}` without `{` in `a://x}`",
                "`{+x}` in `a://{+x}` is not a level-1 variable: write `{name}` with letters, digits and `_` only",
                "`{}` in `a://{}` is not a level-1 variable: write `{name}` with letters, digits and `_` only",
            ]
        );
    }
}
