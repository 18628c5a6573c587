//! URI templates of RFC 6570 level 1 (`file:///{path}`), read backwards: a
//! URI is matched against the template and its variables are bound.
//!
//! Level 1 is literal text and `{name}` variables. Matching is the inverse
//! of expansion with one relaxation that file URIs need: a value may
//! contain `/` (a path), so a variable runs up to the first occurrence of
//! the literal after it, and the last one to the end. Values are
//! percent-decoded (by the `percent-encoding` crate, which leaves a `%` not
//! followed by two hex digits as it is), and a value that decodes to
//! something no name holds (bytes that are not UTF-8, a control character)
//! is refused rather than passed on.

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

/// Why a URI that matches a template cannot be read: one of its variables
/// decodes to bytes that are not UTF-8, or to a control character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    variable: String,
    /// The control character, or `None` for bytes that are not UTF-8.
    control: Option<char>,
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variable = &self.variable;
        match self.control {
            Some(c) => write!(
                f,
                "`{variable}` decodes to the control character U+{:04X}",
                u32::from(c)
            ),
            None => write!(f, "`{variable}` does not decode to UTF-8"),
        }
    }
}

impl std::error::Error for ValueError {}

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
    /// when `uri` does not match or a value would be empty; an error when it
    /// matches but a value decodes to bytes that are not UTF-8 or to a
    /// control character.
    pub fn bind(&self, uri: &str) -> Option<Result<Vec<(&str, String)>, ValueError>> {
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
                    bound.push((name.as_str(), &rest[..end]));
                    rest = &rest[end..];
                }
            }
        }
        if !rest.is_empty() {
            return None;
        }
        Some(
            bound
                .into_iter()
                .map(|(name, raw)| Ok((name, decode(name, raw)?)))
                .collect(),
        )
    }
}

/// `raw` percent-decoded, refused when it is not UTF-8 or holds a control
/// character.
fn decode(variable: &str, raw: &str) -> Result<String, ValueError> {
    let refuse = |control| ValueError {
        variable: variable.to_owned(),
        control,
    };
    let value = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| refuse(None))?;
    match value.chars().find(|c| c.is_control()) {
        Some(c) => Err(refuse(Some(c))),
        None => Ok(value.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind<'a>(template: &'a UriTemplate, uri: &str) -> Option<Vec<(&'a str, String)>> {
        template.bind(uri).map(Result::unwrap)
    }

    fn refusal(template: &UriTemplate, uri: &str) -> String {
        template.bind(uri).unwrap().unwrap_err().to_string()
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
        // A `%` without two hex digits after it is a `%`.
        assert_eq!(
            bind(&t, "file:///100%25%%ZZ%4"),
            Some(vec![("path", "100%%%ZZ%4".to_owned())])
        );
    }

    #[test]
    fn values_that_decode_to_no_name_are_refused() {
        let t = UriTemplate::parse("file:///{path}").unwrap();
        let control = "`path` decodes to the control character";
        assert_eq!(refusal(&t, "file:///a%01b"), format!("{control} U+0001"));
        assert_eq!(refusal(&t, "file:///a%0A"), format!("{control} U+000A"));
        assert_eq!(refusal(&t, "file:///%7F"), format!("{control} U+007F"));
        assert_eq!(refusal(&t, "file:///%C2%85"), format!("{control} U+0085"));
        assert_eq!(refusal(&t, "file:///a\tb"), format!("{control} U+0009"));
        // A sign is no hex digit: `%+1` is those three characters.
        assert_eq!(
            bind(&t, "file:///a%+1"),
            Some(vec![("path", "a%+1".to_owned())])
        );
        let not_utf8 = "`path` does not decode to UTF-8";
        assert_eq!(refusal(&t, "file:///%FF"), not_utf8);
        assert_eq!(refusal(&t, "file:///caf%C3"), not_utf8);
        assert_eq!(refusal(&t, "file:///%ED%A0%80"), not_utf8);
        // Every variable is checked, not only the first.
        let two = UriTemplate::parse("repo://{owner}/{name}").unwrap();
        assert_eq!(
            refusal(&two, "repo://me/%00"),
            "`name` decodes to the control character U+0000"
        );
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
