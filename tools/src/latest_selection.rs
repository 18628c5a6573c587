//! `getLatestSelection`: the `claude` CLI's older name for the selection,
//! answered from `getCurrentSelection`'s builder.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::context::EditorPorts;
use crate::current_selection::{CurrentSelection, SelectionState};

/// The message of the failure result, as the IDE extensions word it.
pub const NO_SELECTION: &str = "No selection available";

/// The `getLatestSelection` result: `getCurrentSelection`'s success object,
/// or `{"success": false, "message": "No selection available"}`.
#[derive(Clone, Debug, Default)]
pub struct LatestSelection(pub SelectionState);

impl Serialize for LatestSelection {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.result() {
            active @ CurrentSelection::Active(_) => active.serialize(serializer),
            CurrentSelection::NoActiveEditor => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("success", &false)?;
                map.serialize_entry("message", NO_SELECTION)?;
                map.end()
            }
        }
    }
}

/// Returns the user's latest selection in the editor, as `getCurrentSelection`
/// does: `{"success": true, "text", "filePath", "fileUrl", "selection":
/// {"start", "end", "isEmpty"}}`; without one, `{"success": false, "message":
/// "No selection available"}`.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub fn get_latest_selection(cx: &EditorPorts) -> LatestSelection {
    LatestSelection(SelectionState::read(cx))
}

#[cfg(test)]
mod tests {
    use lsp_types::Position;

    use super::*;
    use crate::current_selection::get_current_selection;
    use crate::ports::BufferId;
    use crate::test_util::{hello_world, text_of_value};

    #[test]
    fn the_current_selection_under_its_older_name() {
        assert_eq!(
            text_of_value(get_latest_selection(&EditorPorts::empty())),
            r#"{"success":false,"message":"No selection available"}"#
        );
        let ws = hello_world();
        let cx = ws.editor_ports().build();
        assert_eq!(
            text_of_value(get_latest_selection(&cx)),
            r#"{"success":false,"message":"No selection available"}"#
        );
        ws.select(BufferId(7), Position::new(0, 6), Position::new(0, 11));
        let latest = text_of_value(get_latest_selection(&cx));
        assert_eq!(latest, text_of_value(get_current_selection(&cx)));
        assert!(
            latest.starts_with(r#"{"success":true,"text":"world","#),
            "{latest}"
        );
    }
}
