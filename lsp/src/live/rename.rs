//! `renamePreview`: `textDocument/prepareRename` where the server has it
//! (its refusal is the model's error), then `textDocument/rename`, whose
//! `WorkspaceEdit` comes back as diffs ([`edit`](super::edit)), applied
//! nowhere.

use ide_mcp_tools::{CharPosition, LspFeature};
use serde_json::{Value, json};

use super::asking::Asking;
use super::host::ServerHost;

/// The `message` of a JSON-RPC error as the server sent it (the whole
/// error when it has none).
fn error_message(error: &str) -> String {
    const PREFIX: &str = "the language server answered with an error: ";
    let raw = error.strip_prefix(PREFIX).unwrap_or(error);
    serde_json::from_str::<Value>(raw)
        .ok()
        .and_then(|e| e["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| raw.to_owned())
}

impl<H: ServerHost> Asking<'_, H> {
    /// `{changes}`: what renaming the symbol at `at` to `new_name` changes.
    pub(super) async fn rename(&self, at: CharPosition, new_name: &str) -> Result<Value, String> {
        let place = format!("{}:{}:{}", self.path.display(), at.line, at.character);
        let position = self.position(at);
        let document = self.document();
        if self
            .facts()
            .provider_option(LspFeature::Rename, "prepareProvider")
        {
            let params = json!({"textDocument": document, "position": position});
            let prepared = self
                .send("textDocument/prepareRename", &params)
                .await
                .map_err(|error| {
                    format!(
                        "the language server will not rename the symbol at {place}: {}",
                        error_message(&error)
                    )
                })?;
            if prepared.is_null() {
                return Err(format!(
                    "the language server will not rename anything at {place}: no symbol there can be renamed"
                ));
            }
        }
        let params = json!({"textDocument": document, "position": position, "newName": new_name});
        let edit = self
            .send(LspFeature::Rename.method(), &params)
            .await
            .map_err(|error| {
                format!(
                    "the language server did not rename the symbol at {place}: {}",
                    error_message(&error)
                )
            })?;
        if edit.is_null() {
            return Err(format!(
                "the language server has nothing to rename at {place}"
            ));
        }
        Ok(json!({"changes": self.preview(&edit)?}))
    }
}

#[cfg(test)]
mod tests {
    use super::error_message;

    #[test]
    fn a_server_s_error_reads_as_its_message() {
        assert_eq!(
            error_message(
                r#"the language server answered with an error: {"code":-32001,"message":"Cannot rename symbol: it is a keyword"}"#
            ),
            "Cannot rename symbol: it is a keyword"
        );
        assert_eq!(
            error_message("the language server did not answer within 10 s"),
            "the language server did not answer within 10 s"
        );
    }
}
