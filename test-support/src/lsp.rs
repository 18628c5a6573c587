//! LSP framing for the tests that speak to a language server or a proxy
//! over pipes: a body framed with its `Content-Length`, as an editor
//! writes it. (Reading frames back is the product's own reader's job:
//! `ide_mcp_lsp::framing::SyncMessageReader`.)

use serde_json::Value;

/// `body` framed as LSP: the `Content-Length` header, then the body.
pub fn frame(body: &str) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// One LSP message: `value` as the body, framed (see [`frame`]).
pub fn message(value: &Value) -> Vec<u8> {
    frame(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_framed_with_its_length_in_bytes() {
        assert_eq!(
            frame("{\"é\":1}"),
            b"Content-Length: 8\r\n\r\n{\"\xc3\xa9\":1}"
        );
        assert_eq!(
            message(&serde_json::json!({"a": [1]})),
            b"Content-Length: 9\r\n\r\n{\"a\":[1]}"
        );
    }
}
