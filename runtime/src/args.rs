//! Decoding tool arguments with errors that name the argument.

use std::fmt;

use serde::de::DeserializeOwned;

/// Arguments that do not fit the tool's schema.
#[derive(Debug)]
pub struct ArgsError {
    path: String,
    inner: serde_json::Error,
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // serde_json appends " at line 1 column 13"; the position in a
        // one-line arguments object helps nobody, the argument's name does.
        let message = self.inner.to_string();
        let message = match message.rfind(" at line ") {
            Some(at) if self.inner.line() != 0 => &message[..at],
            _ => &message,
        };
        if self.path.is_empty() || self.path == "." {
            f.write_str(message)
        } else {
            write!(f, "`{}`: {message}", self.path)
        }
    }
}

impl std::error::Error for ArgsError {}

/// Decodes `json` into `T`, naming the path of the offending argument.
pub(crate) fn decode<T: DeserializeOwned>(json: &str) -> Result<T, ArgsError> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(de).map_err(|err| ArgsError {
        path: err.path().to_string(),
        inner: err.into_inner(),
    })?;
    Ok(value)
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
