//! Decoding tool arguments with errors that name the argument.

use std::fmt;

use serde::de::DeserializeOwned;

/// Arguments that do not fit the tool's schema.
#[derive(Debug)]
pub struct ArgsError {
    /// Where in the arguments, as `serde_path_to_error` writes it (`filePath`,
    /// `items[0].start`); empty at the root.
    path: String,
    /// serde's message, without its position.
    message: String,
}

impl ArgsError {
    /// Where in the arguments the error is; empty at the root.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong, in serde's words.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ArgsError {}

/// Decodes `json` into `T`, naming the path of the offending argument.
pub(crate) fn decode<T: DeserializeOwned>(json: &str) -> Result<T, ArgsError> {
    // The common case first: valid arguments need no path tracking.
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = match err.path().to_string() {
            root if root == "." => String::new(),
            path => path,
        };
        ArgsError {
            path,
            message: without_position(&err.into_inner()),
        }
    })
}

/// serde's message without its " at line 1 column 13": the position in a
/// one-line arguments object (or params cut out of a message) helps nobody,
/// the argument's name does.
pub(crate) fn without_position(err: &serde_json::Error) -> String {
    let mut message = err.to_string();
    if err.line() != 0
        && let Some(at) = message.rfind(" at line ")
    {
        message.truncate(at);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Args {
        file_path: String,
        line: Option<u32>,
    }

    #[test]
    fn errors_name_the_argument() {
        let err = decode::<Args>(r#"{"filePath": 3}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`filePath`: invalid type: integer `3`, expected a string"
        );
        let err = decode::<Args>(r"{}").unwrap_err();
        assert_eq!(err.to_string(), "missing field `filePath`");
        let err = decode::<Args>(r#"{"filePath": "a", "line": -1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`line`: invalid value: integer `-1`, expected u32"
        );
        let err = decode::<Args>(r"[1]").unwrap_err();
        assert!(err.to_string().contains("expected"), "{err}");
    }
}
